"""SFT and action-aware SFT (GUI-Libra ASFT, docs/methods.md section 4).

Each recorded step becomes one example: the prompt is the step's chat
messages (:func:`guirl.rollout.history.window_prompt`, the prompt builder
rollout and evaluation use: instruction, the history window of the
configured builder - nA, nAO with screenshots, or CASC - and the
screenshot), the target is the step's action written in the model's
output format and coordinate frame, optionally preceded by its reasoning in
``<think>...</think>``. GUI-Libra mixes reasoning-then-action samples with
direct-action copies (reasoning removed): ``direct_fraction`` of the steps
that have reasoning are also added without it.

The loss is the weighted cross-entropy of ASFT: weight 1 on reasoning
tokens, ``alpha_action`` on action tokens and ``alpha_grounding`` on
coordinate tokens, ``sum(w * CE) / sum(w)`` over the whole optimiser step
(so it does not depend on micro-batch size). ``alpha_action = alpha_grounding
= 1`` is plain SFT. Labels cover only the answer (and its end-of-turn token).

Departure: ASFT's spans are defined on GUI-Libra's ``<answer>`` block; for
other formats the whole action text is the action span and the numbers after
a coordinate key are the grounding span (:func:`action_spans`).

An example may start its answer with a given ``prefix`` that is context, not target (its tokens follow the
prompt and carry no label): the teacher copies on the student's own prefixes of
:mod:`guirl.trainers.own_prefix` (``own_prefix_samples``), whose ``answer`` is the rest of the reference.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any, Literal

import torch
from PIL import Image
from pydantic import Field

from guirl.algorithms.sft import asft_spans, asft_token_weights, weighted_cross_entropy
from guirl.data.io import read_episodes
from guirl.data.schema import Episode, Step
from guirl.models.prompts import CascMode, PromptSpec
from guirl.rollout.history import history_builder, recorded_past, shows_images, window_prompt
from guirl.trainers.core import TrainerConfig
from guirl.trainers.sft_examples import (  # noqa: F401 (the examples' names, where SFT's users import them)
    Example,
    build_examples,
    guidance_text,
    guided_example,
    step_thought,
    target_action,
    target_text,
)

_COORD_KEY = re.compile(r"[\"'](?:coordinate2?|point_2d|position|end_position|point)[\"']\s*:\s*")


class SFTConfig(TrainerConfig):
    model: str = Field("runs/tiny-model", description="model directory (tiny or real Qwen-VL checkpoint)")
    train_data: list[str] = Field(default_factory=list, description="episodes .jsonl files to train on")
    eval_data: str | None = Field(None, description="held-out episodes .jsonl for periodic evaluation")
    eval_samples: int = Field(64, gt=0, description="held-out steps evaluated each time")
    format: str = Field("qwen_computer_use", description="output format the model writes (registered name)")
    history_window: int = Field(0, ge=0, description="previous steps shown in the prompt (nA / nAO history)")
    history_images: int = Field(0, ge=0, description="the last n shown steps keep their screenshots (nAO; 0: nA)")
    casc: CascMode = Field("off", description="CCPO CASC history compression (rollout/casc.py)")
    history_text: Literal["output", "action"] = Field(
        "output", description="a past step in the prompt: its raw output, or its action as the model writes it"
    )
    prompt_style: Literal["full", "compact"] = Field("full", description="system prompt: full, or one line for tiny models")
    reasoning_switch: bool = Field(
        False, description="tell the model in the prompt whether to think (on for samples with reasoning, off for direct ones)"
    )
    with_reasoning: bool = Field(True, description="put step reasoning before the action when the step has it")
    thought: Literal["recorded", "sub_goal"] = Field(
        "recorded", description="the <think> text: the step's recorded reasoning, or its current sub-goal (the "
        "world oracle's; the instruction on a step that has none), a short thought every step has"
    )
    direct_fraction: float = Field(0.5, ge=0, le=1, description="share of reasoning steps also added as direct-action copies")
    alpha_action: float = Field(1.0, gt=0, description="ASFT weight of action tokens (1 = plain SFT)")
    alpha_grounding: float = Field(1.0, gt=0, description="ASFT weight of coordinate tokens (1 = plain SFT)")
    asft_variant: Literal["paper", "code"] = Field("paper", description="paper: alpha_g on coordinates; code: alpha_a*alpha_g")
    lora_rank: int = Field(0, ge=0, description="LoRA rank on the language model (0 = full fine-tuning)")
    gradient_checkpointing: bool = Field(
        False, description="recompute activations in the backward pass (less memory, ~30% more compute)"
    )
    max_new_tokens: int = Field(64, gt=0, description="generation length for held-out evaluation")
    guidance_fraction: float = Field(
        0.0, ge=0, le=1, description="share of steps also added with a privileged reference-action block (a "
        "teacher for guided OPD learns to read it; the target agrees with the reference)"
    )
    guidance_shapes: list[Literal["single", "multi", "analyzer"]] = Field(
        default_factory=lambda: ["single", "multi"],
        description="block shapes of the guided copies: single (one reference of A*_t, the target) or multi "
        "(all of A*_t, target the recorded action); Most-Matched-GT has the single shape; analyzer (ComputerSD's "
        "Guide / Avoid block naming one reference of A*_t, the target, and half the time an element to avoid)",
    )
    own_prefix_samples: list[str] = Field(
        default_factory=list, description="student samples of train_data's steps (`guirl datagen own-prefix`'s "
        "samples.jsonl): each sample that leaves its Most-Matched reference adds a guided copy whose answer starts "
        "with the student's own tokens through the first one that differs (context, not in the loss) and goes on "
        "with the reference's (guirl/trainers/own_prefix.py)",
    )


def action_spans(text: str) -> dict[str, list[tuple[int, int]]]:
    """Character spans of the action and of its coordinates in a target text.

    GUI-Libra ``<answer>`` targets use :func:`guirl.algorithms.sft.asft_spans`;
    other formats: everything after ``</think>`` is the action, and the list
    after a coordinate key (``"coordinate"``, ``"point_2d"``, ...) is grounding.
    """
    if "<answer>" in text:
        return asft_spans(text)
    start = text.find("</think>")
    start = start + len("</think>") if start >= 0 else 0
    grounding = []
    for m in _COORD_KEY.finditer(text, start):
        close = text.find("]", m.end())
        grounding.append((m.end(), close + 1 if close >= 0 else len(text)))
    return {"action": [(start, len(text))], "grounding": grounding}


def token_weights(offsets, text: str, cfg: SFTConfig) -> list[float]:
    return asft_token_weights(
        text, offsets, alpha_action=cfg.alpha_action, alpha_grounding=cfg.alpha_grounding,
        variant=cfg.asft_variant, spans=action_spans(text),
    ).tolist()


def prompt_spec(cfg: SFTConfig) -> PromptSpec:
    """How the SFT model is prompted (saved with it, so rollout and evaluation prompt it the same way)."""
    # with the switch, inference asks for what most samples had: a thought on every step (sub-goal thoughts, or
    # recorded reasoning without direct copies: InfiGUI-R1's reasoning injection) or direct answers (GUI-Libra's
    # mixed recorded reasoning)
    reasoning = (cfg.thought == "sub_goal" or cfg.direct_fraction == 0) if cfg.reasoning_switch else None
    return PromptSpec(fmt=cfg.format, style=cfg.prompt_style, history_window=cfg.history_window,
                      reasoning=reasoning, history_images=cfg.history_images, casc=cfg.casc,
                      history_text=cfg.history_text)


class SFTCollator:
    """Screenshots + chat-templated prompts -> model inputs, labels and ASFT weights."""

    def __init__(self, processor, frame_for, cfg: SFTConfig):
        self.processor, self.frame_for, self.cfg = processor, frame_for, cfg
        self.spec = prompt_spec(cfg)
        self.tokenizer = processor.tokenizer
        self.end_ids = self.tokenizer("<|im_end|>\n", add_special_tokens=False)["input_ids"]

    def encode(self, ex: Example) -> dict[str, Any]:
        image = Image.open(ex.root / ex.step.screenshot.path).convert("RGB")
        frame = self.frame_for(*image.size)
        spec = self.spec
        past = recorded_past(ex.episode, ex.step, ex.root, images=spec.history_window if shows_images(spec) else 0)
        prompt = window_prompt(
            spec, frame, ex.step.instruction or ex.episode.instruction, image, history_builder(spec)(past),
            reasoning=bool(ex.reasoning) if self.cfg.reasoning_switch else None,
            guidance=guidance_text(ex, self.cfg.format, frame),
        )
        messages, images = prompt.messages, prompt.images
        prompt = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        prompt_inputs = self.processor(text=[prompt], images=images, return_tensors="pt")
        text = target_text(ex, self.cfg.format, frame)
        prefix = ex.prefix or ""  # context: after the prompt, no labels; spans are found in prefix + text
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = [(s + len(prefix), e + len(prefix)) for s, e in enc["offset_mapping"]]
        weights = token_weights(offsets, prefix + text, self.cfg) + [1.0] * len(self.end_ids)
        target_ids = enc["input_ids"] + self.end_ids
        prompt_ids = prompt_inputs["input_ids"][0].tolist()
        # token kinds for M-RoPE (1 = image token); the answer is text (0)
        kinds = prompt_inputs["mm_token_type_ids"][0].tolist() if "mm_token_type_ids" in prompt_inputs else None
        if prefix:
            prefix_ids = self.tokenizer(prefix, add_special_tokens=False)["input_ids"]
            prompt_ids += prefix_ids
            kinds = kinds + [0] * len(prefix_ids) if kinds is not None else None
        return {
            "mm_token_type_ids": kinds + [0] * len(target_ids) if kinds is not None else None,
            "input_ids": prompt_ids + target_ids,
            "labels": [-100] * len(prompt_ids) + target_ids,
            "weights": [0.0] * len(prompt_ids) + weights,
            "pixel_values": prompt_inputs["pixel_values"],
            "image_grid_thw": prompt_inputs["image_grid_thw"],
        }

    def __call__(self, examples: list[Example]) -> dict[str, torch.Tensor]:
        rows = [self.encode(ex) for ex in examples]
        width = max(len(r["input_ids"]) for r in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

        def padded(key, fill, dtype):
            return torch.tensor([r[key] + [fill] * (width - len(r[key])) for r in rows], dtype=dtype)

        batch = {
            "input_ids": padded("input_ids", pad, torch.long),
            "labels": padded("labels", -100, torch.long),
            "weights": padded("weights", 0.0, torch.float32),
            "attention_mask": torch.tensor([[1] * len(r["input_ids"]) + [0] * (width - len(r["input_ids"])) for r in rows]),
            "pixel_values": torch.cat([r["pixel_values"] for r in rows]),
            "image_grid_thw": torch.cat([r["image_grid_thw"] for r in rows]),
        }
        if rows[0]["mm_token_type_ids"] is not None:
            batch["mm_token_type_ids"] = padded("mm_token_type_ids", 0, torch.long)
        return batch


def sft_loss(model, batch: dict[str, torch.Tensor], step_batches: list[dict[str, torch.Tensor]]):
    """ASFT weighted CE of one micro-batch, normalised by the whole step's weight sum."""
    keys = ("input_ids", "attention_mask", "pixel_values", "image_grid_thw", "mm_token_type_ids")
    inputs = {k: batch[k] for k in keys if k in batch}
    logits = model(**inputs, use_cache=False).logits  # [B, T, V]
    labels = batch["labels"][:, 1:]  # position t predicts token t + 1
    weights = batch["weights"][:, 1:]
    total_weight = sum(float((b["weights"][:, 1:] * (b["labels"][:, 1:] != -100)).sum()) for b in step_batches)
    return weighted_cross_entropy(logits[:, :-1], labels, weights, normaliser=total_weight)


def heldout_step_metrics(policy, steps: list[tuple[Episode, Step, Path]], cfg: SFTConfig) -> dict[str, float]:
    """Greedy predictions on held-out steps (batched, :func:`guirl.eval.steps.evaluate_steps`): parse rate,
    type match, grounding and step success rates; prompted as in training (``policy.prompt``)."""
    from guirl.eval.steps import evaluate_steps
    from guirl.rollout.hf_engine import HFEngine

    engine = HFEngine.from_policy(policy)
    return evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=cfg.max_new_tokens)


def enable_gradient_checkpointing(model: torch.nn.Module) -> None:
    """Activation checkpointing through transformers (non-reentrant, so frozen
    embeddings under LoRA still pass gradients); the KV cache is off while training."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    kwargs = {"use_reentrant": False}
    if hasattr(base, "activation_checkpointing_enable"):  # the name since transformers 5.x
        base.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    base.config.use_cache = False


def train_sft(cfg: SFTConfig) -> dict[str, Any]:
    """Run SFT / ASFT as configured; saves the final model to ``output_dir/final``."""
    from guirl.models.load import default_lora_config, load_policy
    from guirl.trainers.core import process_state, train

    if not cfg.train_data:
        raise ValueError("train_data is empty: pass episodes .jsonl files (train_data=[path, ...])")
    torch.manual_seed(cfg.seed)
    lora = default_lora_config(rank=cfg.lora_rank, alpha=2 * cfg.lora_rank) if cfg.lora_rank else None
    policy = load_policy(cfg.model, lora=lora)
    policy.prompt = prompt_spec(cfg)
    if lora is None:
        policy.model.requires_grad_(True)
    if cfg.gradient_checkpointing:
        enable_gradient_checkpointing(policy.model)
    examples = build_examples(cfg.train_data, cfg, cfg.seed)
    if cfg.own_prefix_samples:
        from guirl.trainers.own_prefix import own_prefix_data

        examples += own_prefix_data(cfg, policy.processor.tokenizer, policy.frame_for)
    collate = SFTCollator(policy.processor, policy.frame_for, cfg)
    evaluate = None
    if cfg.eval_data and cfg.eval_every:
        root = Path(cfg.eval_data).parent
        held = [(ep, st, root) for ep in read_episodes(cfg.eval_data) for st in ep.steps if st.valid_actions]
        held = random.Random(cfg.seed).sample(held, min(cfg.eval_samples, len(held)))

        def evaluate(model, step):
            policy.model = model
            return heldout_step_metrics(policy, held, cfg)

    result = train(cfg, policy.model, examples, collate, sft_loss, evaluate=evaluate)
    final = Path(cfg.output_dir) / "final"
    model = result["model"]
    if lora is not None:
        model = model.merge_and_unload()  # a plain checkpoint that loads without peft
    state = process_state()
    if state.is_main_process:  # one writer; the other processes wait for the files
        model.save_pretrained(final)
        policy.processor.save_pretrained(final)
        policy.prompt.save(final)
    state.wait_for_everyone()
    if evaluate is not None and state.is_main_process:
        policy.model = model
        result["final_eval"] = heldout_step_metrics(policy, held, cfg)
    result["final_dir"] = final
    return result

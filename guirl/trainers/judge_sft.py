"""SFT of a judge model on expert answers (``guirl train judge_sft``): ComputerSD's GUI analyzer (docs/methods.md section 2).

The paper's analyzer is a VLM fine-tuned to answer the analyzer prompt the way an expert does. Each record
of :mod:`guirl.datagen.analyzer_data` becomes one example, chat-templated exactly as the ``checkpoint``
judge will prompt the model (:func:`guirl.judges.checkpoint.judge_messages`):

- system: the judge system prompt (:data:`guirl.judges.prompts.JUDGE_SYSTEM` unless ``system_prompt`` says
  otherwise; the checkpoint judge must then be built with the same one);
- user: the record's two screenshots (before, after) then its prompt text (the analyzer role prompt with
  the step's data block);
- assistant: the expert's answer text (``AnalyzerVerdict.to_json()``) and the end-of-turn token.

The loss is the token-mean cross-entropy over the answer tokens only (prompt and images are labelled
-100), normalised by the answer tokens of the whole optimiser step, through the trainer core
(:func:`guirl.trainers.core.train`: accumulation, checkpoints, exact resume, logging). The final model
goes to ``output_dir/final`` (LoRA merged), loadable by :func:`guirl.models.load.load_policy` and usable as
``make_judge("checkpoint", model_dir=.../final, max_new_tokens=...)``; ``final/judge.json`` records the
role, system prompt and answer length it was trained for.

LoRA: ``lora_rank`` 0 (full fine-tuning) is the tiny CPU default; the paper's GPU setting is LoRA r 32 /
alpha 64 on the language model (``lora_rank=32 lora_alpha=64``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import torch
from pydantic import Field

from guirl.judges.prompts import JUDGE_SYSTEM
from guirl.trainers.core import TrainerConfig


class JudgeSFTConfig(TrainerConfig):
    model: str = Field("checkpoints/base-agent-tiny", description="starting model directory (a Qwen-VL checkpoint)")
    train_data: list[str] = Field(default_factory=list, description="analyzer-data .jsonl files to train on "
                                  "(guirl.datagen.analyzer_data)")
    eval_data: str | None = Field(None, description="held-out analyzer-data .jsonl for periodic agreement checks")
    eval_samples: int = Field(16, gt=0, description="held-out steps judged at each evaluation")
    max_records: int | None = Field(None, gt=0, description="train on at most this many records (None: all)")
    role: str = Field("analyzer", description="the judge role the records answer (checked against each record)")
    system_prompt: str = Field(JUDGE_SYSTEM, description="system message (the checkpoint judge's default)")
    lora_rank: int = Field(0, ge=0, description="LoRA rank on the language model (0 = full fine-tuning; the "
                           "paper's GPU setting: 32)")
    lora_alpha: int | None = Field(None, gt=0, description="LoRA alpha (default 2 x rank; paper: 64)")
    gradient_checkpointing: bool = Field(False, description="recompute activations in the backward pass")
    max_new_tokens: int = Field(256, gt=0, description="answer length cap of the judge in evaluation (an "
                                "analyzer answer with a reference action is ~130 tiny-tokenizer tokens)")


class JudgeSFTCollator:
    """Records -> model inputs with labels on the answer tokens (and the end-of-turn token) only."""

    def __init__(self, processor, system_prompt: str = JUDGE_SYSTEM):
        self.processor, self.system_prompt = processor, system_prompt
        self.tokenizer = processor.tokenizer
        self.end_ids = self.tokenizer("<|im_end|>\n", add_special_tokens=False)["input_ids"]

    def encode(self, record: dict[str, Any]) -> dict[str, Any]:
        from guirl.datagen.analyzer_data import record_images
        from guirl.judges.checkpoint import judge_messages

        images = record_images(record)
        messages = judge_messages(record["prompt"], len(images), self.system_prompt)
        text = self.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        inputs = self.processor(text=[text], images=images or None, return_tensors="pt")
        prompt_ids = inputs["input_ids"][0].tolist()
        target_ids = self.tokenizer(record["answer"], add_special_tokens=False)["input_ids"] + self.end_ids
        kinds = inputs["mm_token_type_ids"][0].tolist() if "mm_token_type_ids" in inputs else None
        return {
            "input_ids": prompt_ids + target_ids,
            "labels": [-100] * len(prompt_ids) + target_ids,
            "mm_token_type_ids": kinds + [0] * len(target_ids) if kinds is not None else None,
            "pixel_values": inputs.get("pixel_values"),
            "image_grid_thw": inputs.get("image_grid_thw"),
        }

    def __call__(self, records: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        rows = [self.encode(r) for r in records]
        width = max(len(r["input_ids"]) for r in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0

        def padded(key, fill):
            return torch.tensor([r[key] + [fill] * (width - len(r[key])) for r in rows], dtype=torch.long)

        batch = {
            "input_ids": padded("input_ids", pad),
            "labels": padded("labels", -100),
            "attention_mask": torch.tensor([[1] * len(r["input_ids"]) + [0] * (width - len(r["input_ids"]))
                                            for r in rows]),
        }
        if rows[0]["pixel_values"] is not None:
            batch["pixel_values"] = torch.cat([r["pixel_values"] for r in rows])
            batch["image_grid_thw"] = torch.cat([r["image_grid_thw"] for r in rows])
        if rows[0]["mm_token_type_ids"] is not None:
            batch["mm_token_type_ids"] = padded("mm_token_type_ids", 0)
        return batch


def answer_loss(model, batch: dict[str, torch.Tensor], step_batches: list[dict[str, torch.Tensor]]):
    """Cross-entropy on the answer tokens of one micro-batch, normalised by the whole step's answer tokens."""
    from guirl.algorithms.sft import weighted_cross_entropy

    keys = ("input_ids", "attention_mask", "pixel_values", "image_grid_thw", "mm_token_type_ids")
    logits = model(**{k: batch[k] for k in keys if k in batch}, use_cache=False).logits
    labels = batch["labels"][:, 1:]  # position t predicts token t + 1
    total = sum(float((b["labels"][:, 1:] != -100).sum()) for b in step_batches)
    return weighted_cross_entropy(logits[:, :-1], labels, torch.ones_like(labels, dtype=torch.float32),
                                  normaliser=max(total, 1.0))


def load_training_records(cfg: JudgeSFTConfig) -> list[dict[str, Any]]:
    from guirl.datagen.analyzer_data import read_records

    if not cfg.train_data:
        raise ValueError("train_data is empty: pass analyzer-data .jsonl files (train_data=[path, ...]); collect "
                         "them with guirl.datagen.analyzer_data.collect_analyzer_data")
    records = [r for path in cfg.train_data for r in read_records(path)]
    for r in records:
        if r.get("role", "analyzer") != cfg.role or not isinstance(r["answer"], str) or not r["answer"]:
            raise ValueError(f"record {r.get('id', '?')!r} in {cfg.train_data} has no answer text for role {cfg.role!r}")
    if not records:
        raise ValueError(f"no records in {cfg.train_data}: the collection kept no step")
    return records[: cfg.max_records] if cfg.max_records else records


def save_judge(model, policy, final: Path, cfg: JudgeSFTConfig) -> Path:
    """``final``: model, processor, prompt spec and ``judge.json``, written next to it and then moved in place."""
    tmp = final.with_name(final.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(tmp)
    policy.processor.save_pretrained(tmp)
    policy.prompt.save(tmp)
    (tmp / "judge.json").write_text(json.dumps({"role": cfg.role, "system_prompt": cfg.system_prompt,
                                                "max_new_tokens": cfg.max_new_tokens, "base": cfg.model,
                                                "train_data": cfg.train_data, "steps": cfg.max_steps}, indent=1))
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def train_judge_sft(cfg: JudgeSFTConfig) -> dict[str, Any]:
    """Fine-tune ``cfg.model`` on the expert answers of ``cfg.train_data``; saves ``output_dir/final``."""
    from guirl.models.load import default_lora_config, load_policy
    from guirl.trainers.core import process_state, train

    records = load_training_records(cfg)
    torch.manual_seed(cfg.seed)
    lora = (default_lora_config(rank=cfg.lora_rank, alpha=cfg.lora_alpha or 2 * cfg.lora_rank)
            if cfg.lora_rank else None)
    policy = load_policy(cfg.model, lora=lora)
    if lora is None:
        policy.model.requires_grad_(True)
    if cfg.gradient_checkpointing:
        from guirl.trainers.sft import enable_gradient_checkpointing

        enable_gradient_checkpointing(policy.model)
    evaluate, held = None, []
    if cfg.eval_data and cfg.eval_every:
        from guirl.datagen.analyzer_data import read_records

        held = read_records(cfg.eval_data)
        held = random.Random(cfg.seed).sample(held, min(cfg.eval_samples, len(held)))

        def evaluate(model, step):
            return heldout_agreement(policy, model, held, cfg)

    collate = JudgeSFTCollator(policy.processor, cfg.system_prompt)
    result = train(cfg, policy.model, records, collate, answer_loss, evaluate=evaluate)
    model = result["model"]
    if lora is not None:
        model = model.merge_and_unload()  # a plain checkpoint that loads without peft
    final = Path(cfg.output_dir) / "final"
    state = process_state()
    if state.is_main_process:
        save_judge(model, policy, final, cfg)
    state.wait_for_everyone()
    if evaluate is not None and state.is_main_process:
        result["final_eval"] = heldout_agreement(policy, model, held, cfg)
    result["final_dir"] = final
    return result


def heldout_agreement(policy, model, records: list[dict[str, Any]], cfg: JudgeSFTConfig) -> dict[str, float]:
    """Valid-output rate and agreement with the expert of ``model`` as a checkpoint judge on ``records``."""
    from guirl.eval.analyzer_agreement import analyzer_agreement
    from guirl.judges.checkpoint import CheckpointJudge

    was_training = model.training
    model.eval()
    policy.model = model
    judge = CheckpointJudge(policy=policy, max_new_tokens=cfg.max_new_tokens, system_prompt=cfg.system_prompt)
    scores = analyzer_agreement(judge, records)
    model.train(was_training)
    keys = ("valid_rate", "vote_agreement", "consistency_agreement", "effectiveness_agreement")
    return {f"eval/{k}": float(scores[k]) for k in keys}


__all__ = ["JudgeSFTCollator", "JudgeSFTConfig", "answer_loss", "heldout_agreement", "save_judge", "train_judge_sft"]

"""Score given completion tokens under given prompts: old, reference, teacher and privileged log-probs.

``score_completions(model, processor, prompts, completions, prompt_index)``
computes, for ``N`` rows ``(prompts[prompt_index[i]], completions[i])``,
``log pi(y_j | prompt, y_<j)`` at every completion position, in one forward
pass (``[N, T]``). Rows may have different prompts (LiteGUI Most-Matched
guidance, ComputerSD privileged rescoring); rows sharing a prompt share its
encoding:

- each distinct prompt is tokenised and its images preprocessed once
  (:func:`encode_prompt`, reusable across calls via :class:`EncodedPrompt`);
- the vision tower runs once per distinct prompt (its features are handed
  to the language model through transformers' ``mm_encoder_outputs``, so a
  GRPO group of G samples encodes its screenshot once, not G times);
  gradients flow back through the shared features;
- logits are computed only at completion positions (``logits_to_keep``);
- optionally the entropy, the top-k log-probs (and their token ids), the
  log-probs of given token ids (a teacher scored at the student's top-k) or
  the full distribution at each position, for the full-vocabulary and top-k
  distillation losses (:mod:`guirl.algorithms.distill`).

Layout: prompts left-padded to a common end, completions right-padded after
it (so every completion starts at the same column, as TRL lays out GRPO
batches); ``mm_token_type_ids`` are built for this layout, not by the
processor (the processor's ids assume its own padding side: TRL's padding-side bug).

It works on the model as the trainer holds it (plain, peft-wrapped or
accelerate/DDP-wrapped): the forward pass goes through the wrapper.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from guirl.models.prompts import Prompt


@dataclass
class EncodedPrompt:
    """A prompt as token ids, token types and preprocessed images (batch of one, on CPU)."""

    input_ids: list[int]  # [L]
    mm_token_type_ids: list[int]  # [L], 1 on image tokens
    pixel_values: torch.Tensor | None  # [P, D] patches of all images of the prompt
    image_grid_thw: torch.Tensor | None  # [I, 3]

    @property
    def num_images(self) -> int:
        return 0 if self.image_grid_thw is None else int(self.image_grid_thw.shape[0])


def encode_prompt(processor: Any, prompt: Prompt | EncodedPrompt) -> EncodedPrompt:
    """Chat template (with the generation prompt) + processor, once per prompt."""
    if isinstance(prompt, EncodedPrompt):
        return prompt
    text = processor.apply_chat_template(prompt.messages, add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[text], images=list(prompt.images) or None, return_tensors="pt")
    ids = inputs["input_ids"][0].tolist()
    image_token = getattr(processor, "image_token_id", None)
    if "mm_token_type_ids" in inputs:
        types = inputs["mm_token_type_ids"][0].tolist()
    else:
        types = [int(t == image_token) for t in ids]
    return EncodedPrompt(ids, types, inputs.get("pixel_values"), inputs.get("image_grid_thw"))


#: Vision placeholder tokens: a completion holding one would be read as an image slot on rescoring (and a
#: model's garbage must never crash the scorer), so engines never sample them and every log-prob is taken
#: over the rest of the vocabulary.
VISION_TOKENS = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")


def forbidden_token_ids(processor: Any) -> list[int]:
    """Ids of :data:`VISION_TOKENS` in ``processor``'s vocabulary (the tokens no completion may contain)."""
    tokenizer = getattr(processor, "tokenizer", processor)
    vocab = tokenizer.get_vocab()
    return sorted({vocab[t] for t in VISION_TOKENS if t in vocab})


#: What forbidden logits become: finite, so that p * log p and p * (log p - log q) stay 0 there (with -inf
#: they would be NaN in entropies and full-vocabulary KLs), yet exp() of it is exactly 0 in float32.
FORBIDDEN_LOGIT = -1e9


def mask_forbidden(scores: torch.Tensor, forbidden: Sequence[int]) -> torch.Tensor:
    """``scores`` (``[..., V]``) with the forbidden token columns set to :data:`FORBIDDEN_LOGIT`."""
    if not forbidden:
        return scores
    scores = scores.clone()
    scores[..., list(forbidden)] = FORBIDDEN_LOGIT
    return scores


def base_model(model: torch.nn.Module) -> torch.nn.Module:
    """The Hugging Face model under DDP / accelerate / peft wrappers (for ``get_image_features``)."""
    while hasattr(model, "module"):
        model = model.module
    if hasattr(model, "get_base_model"):
        model = model.get_base_model()
    return model


def vision_for_rows(model: torch.nn.Module, encoded: Sequence[EncodedPrompt], row_prompt: Sequence[int]):
    """Encode each distinct prompt's images once; return (mm_encoder_outputs, image_grid_thw) for the rows.

    ``row_prompt[i]`` is the index in ``encoded`` of row ``i``'s prompt. The
    features of a prompt used by several rows are the same tensors repeated
    (autograd sums their gradients). None, None when no prompt has an image.
    """
    with_images = sorted({p for p in row_prompt if encoded[p].num_images})
    if not with_images:
        return None, None
    hf = base_model(model)
    device = next(hf.parameters()).device
    pixels = torch.cat([encoded[p].pixel_values for p in with_images]).to(device)
    grids = torch.cat([encoded[p].image_grid_thw for p in with_images]).to(device)
    vision = hf.get_image_features(pixels, grids, return_dict=True)
    # per-image features -> per-prompt slices, then in row order
    start, slices = 0, {}
    for p in with_images:
        slices[p] = (start, start + encoded[p].num_images)
        start += encoded[p].num_images
    order = [i for p in row_prompt if p in slices for i in range(*slices[p])]
    rows = copy.copy(vision)
    rows.pooler_output = tuple(vision.pooler_output[i] for i in order)
    deepstack = getattr(vision, "deepstack_features", None)
    if deepstack is not None:
        rows.deepstack_features = [tuple(layer[i] for i in order) for layer in deepstack]
    grid_rows = torch.cat([encoded[p].image_grid_thw for p in row_prompt if p in slices]).to(device)
    return {"image": rows}, grid_rows


def left_padded_prompts(encoded: Sequence[EncodedPrompt], row_prompt: Sequence[int], pad_id: int):
    """``input_ids``, ``attention_mask``, ``mm_token_type_ids`` ([R, L]) with every prompt ending at column L."""
    width = max(len(encoded[p].input_ids) for p in row_prompt)
    ids, mask, types = [], [], []
    for p in row_prompt:
        e = encoded[p]
        gap = width - len(e.input_ids)
        ids.append([pad_id] * gap + e.input_ids)
        mask.append([0] * gap + [1] * len(e.input_ids))
        types.append([0] * gap + e.mm_token_type_ids)
    as_long = lambda rows: torch.tensor(rows, dtype=torch.long)  # noqa: E731
    return as_long(ids), as_long(mask), as_long(types)


@dataclass
class ScoreOutput:
    """Scores of ``N`` completions, ``T`` = longest; padded positions hold 0 (``mask`` 0)."""

    logprobs: torch.Tensor  # [N, T] log-prob of each given token
    mask: torch.Tensor  # [N, T] 1 on real completion tokens
    entropy: torch.Tensor | None = None  # [N, T]
    topk_logprobs: torch.Tensor | None = None  # [N, T, k]
    topk_ids: torch.Tensor | None = None  # [N, T, k]
    gathered_logprobs: torch.Tensor | None = None  # [N, T, k] at the given ids
    full_logprobs: torch.Tensor | None = None  # [N, T, V]


def score_completions(
    model: torch.nn.Module,
    processor: Any,
    prompts: Sequence[Prompt | EncodedPrompt],
    completions: Sequence[Sequence[int] | torch.Tensor],
    prompt_index: Sequence[int] | None = None,
    temperature: float = 1.0,
    top_k: int = 0,
    gather_ids: torch.Tensor | None = None,
    full_distribution: bool = False,
    entropy: bool = False,
) -> ScoreOutput:
    """Log-probs of ``completions[i]`` under ``prompts[prompt_index[i]]`` (default: row i's own prompt).

    Logits are divided by ``temperature`` before the log-softmax (the
    engine's convention). ``top_k`` > 0 adds the k most likely tokens and
    their log-probs per position; ``gather_ids`` (``[N, T, k]``) adds the
    log-probs of those token ids (e.g. the student's top-k scored by the
    teacher); ``full_distribution`` returns all ``[N, T, V]`` log-probs (only
    for small vocabularies: it materialises the whole tensor). Gradients flow
    when enabled by the caller.
    """
    rows = [torch.as_tensor(c, dtype=torch.long).reshape(-1).cpu() for c in completions]
    if not rows or any(len(r) == 0 for r in rows):
        raise ValueError("every completion needs at least one token to score (got an empty one or none)")
    forbidden = forbidden_token_ids(processor)
    if forbidden and any(bool(torch.isin(r, torch.tensor(forbidden)).any()) for r in rows):
        raise ValueError(f"a completion holds a vision placeholder token ({VISION_TOKENS}); engines never sample "
                         "them: drop or re-sample such completions")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0 to score tokens, got {temperature}")
    index = list(range(len(rows))) if prompt_index is None else [int(i) for i in prompt_index]
    if len(index) != len(rows) or not all(0 <= i < len(prompts) for i in index):
        raise ValueError(f"prompt_index needs one entry in [0, {len(prompts)}) per completion ({len(rows)} rows)")
    encoded = [encode_prompt(processor, p) for p in prompts]
    pad = processor.tokenizer.pad_token_id if processor.tokenizer.pad_token_id is not None else 0
    device = next(model.parameters()).device
    ids, attention, types = left_padded_prompts(encoded, index, pad)  # [N, L]
    mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(r) for r in rows], batch_first=True)  # [N, T]
    tokens = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=pad)  # [N, T]
    length = tokens.shape[1]
    vision, grid = vision_for_rows(model, encoded, index)
    inputs = {
        "input_ids": torch.cat([ids, tokens], 1).to(device),  # [N, L + T]
        "attention_mask": torch.cat([attention, mask], 1).to(device),
        "mm_token_type_ids": torch.cat([types, torch.zeros_like(tokens)], 1).to(device),
    }
    if vision is not None:
        inputs |= {"mm_encoder_outputs": vision, "image_grid_thw": grid}
    logits = model(**inputs, use_cache=False, logits_to_keep=length + 1).logits  # [N, T + 1, V]
    scores = logits[:, :-1].float() / temperature  # [N, T, V]: column j predicts completion token j
    logp_all = torch.log_softmax(mask_forbidden(scores, forbidden_token_ids(processor)), dim=-1)
    mask = mask.to(device)
    tokens = tokens.to(device)
    out = ScoreOutput(logprobs=logp_all.gather(-1, tokens.unsqueeze(-1)).squeeze(-1) * mask, mask=mask)
    if entropy:
        out.entropy = -(logp_all.exp() * logp_all).sum(-1) * mask
    if top_k:
        out.topk_logprobs, out.topk_ids = logp_all.topk(top_k, dim=-1)
    if gather_ids is not None:
        out.gathered_logprobs = logp_all.gather(-1, gather_ids.to(device))
    if full_distribution:
        out.full_logprobs = logp_all
    return out

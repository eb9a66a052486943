"""Sample actions from a policy, and score given tokens under any prompt.

``generate_actions`` runs Hugging Face ``generate`` on one step's prompt
(:func:`guirl.models.prompts.build_messages`) and parses every sample with
``guirl.actions.parse_action`` in the policy's frame, then converts it to
screen pixels of the screenshot. Sampling is seeded without touching the
caller's global RNG state.

``completion_logprobs`` scores completion tokens under a prompt in one
forward pass: the teacher side of on-policy distillation (LiteGUI guided
OPD; ComputerSD privileged rescoring), where the same sampled tokens are
scored under a different (privileged) prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
from PIL import Image

from guirl.actions import Action, Frame, ParseFailure, parse_action
from guirl.data.schema import HistoryItem
from guirl.models.load import LoadedPolicy
from guirl.models.prompts import Message, build_messages


class Generation(NamedTuple):
    """One sample: raw text, parsed action in screen pixels (or why not), sampled token ids."""

    text: str
    action: Action | ParseFailure
    token_ids: list[int]


def prepare_inputs(policy: LoadedPolicy, messages: list[Message], images: Sequence[Image.Image]) -> dict[str, Any]:
    """Chat template + processor: model inputs (batch of one) on the policy's device."""
    text = policy.processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    inputs = policy.processor(text=[text], images=list(images) or None, return_tensors="pt")
    return {k: v.to(policy.device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def _fork_rng(device: torch.device):
    devices = [device] if device.type == "cuda" else []
    return torch.random.fork_rng(devices=devices)


@torch.no_grad()
def sample_completions(
    policy: LoadedPolicy,
    messages: list[Message],
    images: Sequence[Image.Image],
    num_samples: int = 1,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_new_tokens: int = 128,
    seed: int = 0,
) -> list[list[int]]:
    """Token ids of ``num_samples`` completions of one prompt (``temperature=0``: greedy).

    Rows may end with a stop token followed by padding; :func:`decode_generation`
    cuts them. The checkpoint's own sampling defaults are overridden, so with
    ``top_p=1`` tokens are drawn from exactly the distribution that
    :func:`completion_logprobs` (same ``temperature``) scores. Seeded inside a forked RNG, so the caller's RNG state is kept.
    """
    if num_samples < 1:
        raise ValueError(f"num_samples must be >= 1, got {num_samples}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    inputs = prepare_inputs(policy, messages, images)
    greedy = temperature == 0
    # Override the checkpoint's generation_config (real Qwen ones set top_k, top_p and a repetition
    # penalty): samples then follow softmax(logits / temperature), which completion_logprobs scores.
    from guirl.models.scoring import forbidden_token_ids

    sampling = {"repetition_penalty": 1.0, "suppress_tokens": forbidden_token_ids(policy.processor) or None}
    if not greedy:
        sampling |= {"temperature": temperature, "top_p": top_p, "top_k": 0}
    with _fork_rng(policy.device):
        torch.manual_seed(seed)
        output = policy.model.generate(
            **inputs,
            do_sample=not greedy,
            num_return_sequences=num_samples,
            max_new_tokens=max_new_tokens,
            **sampling,
        )
    return output[:, inputs["input_ids"].shape[1] :].tolist()  # [num_samples, T]


def generate_actions(
    policy: LoadedPolicy,
    screenshot: Image.Image,
    instruction: str,
    history: Sequence[HistoryItem] = (),
    fmt: str | None = None,
    num_samples: int = 1,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_new_tokens: int = 128,
    seed: int = 0,
    history_window: int | None = None,
) -> list[Generation]:
    """Sample ``num_samples`` outputs for one step; ``temperature=0`` is greedy.

    The prompt asks for coordinates in the policy's frame
    (:meth:`LoadedPolicy.frame_for`); every action comes back in
    ``Frame.screen(width, height)`` of ``screenshot``; unparsable text gives a
    ParseFailure (never an exception). ``fmt`` and ``history_window``
    default to the policy's :class:`~guirl.models.prompts.PromptSpec` (how it
    was trained), as does the system-prompt style.
    """
    width, height = screenshot.size
    fmt = fmt or policy.prompt.fmt
    messages, images = build_messages(
        instruction,
        screenshot,
        history,
        fmt=fmt,
        frame=policy.frame_for(width, height),
        history_window=policy.prompt.history_window if history_window is None else history_window,
        style=policy.prompt.style,
        reasoning=policy.prompt.reasoning,
        history_text=policy.prompt.history_text,
    )
    rows = sample_completions(policy, messages, images, num_samples, temperature, top_p, max_new_tokens, seed)
    return [decode_generation(policy, row, fmt, width, height) for row in rows]


def decode_generation(policy: LoadedPolicy, token_ids: Sequence[int], fmt: str, width: int, height: int) -> Generation:
    """Sampled ``token_ids`` -> text (up to the first stop token) and action in screen pixels.

    ``width`` x ``height`` is the screenshot the model saw; the text is parsed
    in the policy's frame for that size, then converted to ``Frame.screen``.
    """
    ids = list(token_ids)
    stops = eos_ids(policy) | {policy.tokenizer.pad_token_id}
    end = next((i for i, token in enumerate(ids) if token in stops), None)
    if end is not None:  # keep the stop token (the policy chose it), drop the padding after it
        ids = ids[: end + 1]
    text = policy.tokenizer.decode(ids[:end] if end is not None else ids, skip_special_tokens=False)
    parsed = parse_action(text, fmt, policy.frame_for(width, height))
    if parsed:
        try:
            parsed = parsed.to_frame(Frame.screen(width, height))
        except ValueError as err:  # a frame without size: report, never crash on model output
            parsed = ParseFailure(reason=f"cannot convert to screen pixels: {err}", raw=text[:200])
    return Generation(text=text, action=parsed, token_ids=ids)


def eos_ids(policy: LoadedPolicy) -> set[int]:
    eos = policy.model.generation_config.eos_token_id
    return set(eos if isinstance(eos, list) else [eos] if eos is not None else [])


def completion_logprobs(
    policy: LoadedPolicy,
    messages: list[Message],
    images: Sequence[Image.Image],
    completion_token_ids: Sequence[int] | torch.Tensor,
    temperature: float = 1.0,
) -> torch.Tensor:
    """``log pi(y_j | prompt, y_<j)`` for every completion token, shape ``[T]``.

    The prompt is ``messages`` + ``images`` with the generation prompt
    appended (as ``generate_actions`` builds it); ``completion_token_ids``
    (``[T]``) follow it. One forward pass; gradients flow if enabled by the
    caller. Logits are divided by ``temperature`` before the log-softmax.
    """
    logprobs, _ = batch_completion_logprobs(policy, messages, images, [completion_token_ids], temperature)
    return logprobs[0]


def batch_completion_logprobs(
    policy: LoadedPolicy,
    messages: list[Message],
    images: Sequence[Image.Image],
    completions: Sequence[Sequence[int] | torch.Tensor],
    temperature: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Score ``B`` completions of one prompt (e.g. a GRPO group) in one forward pass.

    Returns ``(logprobs, mask)``, both ``[B, T]`` with ``T`` the longest
    completion; completions are right-padded and ``mask`` is 1 on real tokens
    (padded positions hold 0 in ``logprobs``). One prompt of
    :func:`guirl.models.scoring.score_completions` (vision once, vision
    placeholder tokens outside the distribution).
    """
    from guirl.models.prompts import Prompt
    from guirl.models.scoring import score_completions

    out = score_completions(policy.model, policy.processor, [Prompt(list(messages), list(images))], completions,
                            [0] * len(completions), temperature=temperature)
    return out.logprobs, out.mask

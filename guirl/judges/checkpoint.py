"""A loaded guirl checkpoint as a judge (any role: planning, subgoal, outcome, ...).

The request's prompt (or, when empty, the role prompt built from its fields,
:func:`guirl.judges.prompts.request_text`) goes in one user turn after the
request's images, below a system message saying that the data block is
data, not instructions (:data:`guirl.judges.prompts.JUDGE_SYSTEM`). The
model answers greedily; its text must hold one JSON object that passes the
role's check (:func:`guirl.judges.prompts.read_verdict`). An untrained or
confused model gives ``ok=False`` with a reason, never an exception.

Generation goes through :func:`generate_text` only, so the sampler can be
switched (e.g. to a batched :class:`guirl.rollout.engine.GenerationEngine`)
in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from guirl.judges.base import JudgeRequest, JudgeResult, register_judge
from guirl.judges.prompts import JUDGE_SYSTEM, read_verdict, request_text

if TYPE_CHECKING:  # torch and transformers load only when a checkpoint judge is built
    from guirl.models.load import LoadedPolicy

Message = dict[str, Any]


def judge_messages(prompt: str, n_images: int, system_prompt: str) -> list[Message]:
    """System + user chat messages: the images first (``{"type": "image"}`` placeholders), then the prompt."""
    content: list[dict[str, Any]] = [{"type": "image"} for _ in range(n_images)]
    content.append({"type": "text", "text": prompt})
    return [
        {"role": "system", "content": [{"type": "text", "text": system_prompt}]},
        {"role": "user", "content": content},
    ]


def generate_text(
    policy: LoadedPolicy, messages: list[Message], images: Sequence[Image.Image], max_new_tokens: int
) -> str:
    """Greedy answer text of ``policy`` (special tokens and everything after the first stop token dropped)."""
    from guirl.models.generate import eos_ids, sample_completions

    ids = sample_completions(policy, messages, images, num_samples=1, temperature=0.0, max_new_tokens=max_new_tokens)[0]
    stops = eos_ids(policy) | {policy.tokenizer.pad_token_id}
    end = next((i for i, token in enumerate(ids) if token in stops), len(ids))
    return policy.tokenizer.decode(ids[:end], skip_special_tokens=True)


@register_judge("checkpoint")
class CheckpointJudge:
    """Judge backed by a guirl checkpoint (a fine-tuned or downloaded Qwen2.5-VL / Qwen3-VL directory).

    Args:
        model_dir: checkpoint directory, loaded with :func:`guirl.models.load.load_policy`.
        policy: an already loaded policy instead of ``model_dir`` (shared with other code; not modified).
        device: where to load ``model_dir`` (``cpu``, ``cuda``, ...).
        dtype: dtype name to load ``model_dir`` in.
        max_new_tokens: answer length cap (a verdict is short: ``{"score": 0.8}``).
        system_prompt: the system message (default: the data-not-instructions rule).
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        policy: LoadedPolicy | None = None,
        device: str = "cpu",
        dtype: str = "float32",
        max_new_tokens: int = 64,
        system_prompt: str = JUDGE_SYSTEM,
    ):
        if (model_dir is None) == (policy is None):
            raise ValueError("pass exactly one of model_dir (a checkpoint directory) and policy (a LoadedPolicy)")
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if policy is None:
            from guirl.models.load import load_policy

            policy = load_policy(model_dir, dtype=dtype, device=device)
        self.policy = policy
        self.max_new_tokens, self.system_prompt = max_new_tokens, system_prompt

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        messages = judge_messages(request_text(request), len(request.images), self.system_prompt)
        raw = generate_text(self.policy, messages, request.images, self.max_new_tokens)
        return read_verdict(raw, request.role)

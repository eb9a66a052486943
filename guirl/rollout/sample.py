"""The sample every RL trainer trains on (single-step, multi-turn and replayed alike).

A :class:`Sample` is one sampled completion with what the loss needs:

- a reference to its prompt (the :class:`~guirl.models.prompts.Prompt` or
  its :class:`~guirl.models.scoring.EncodedPrompt`, shared by the samples of
  a group, never a copy), the completion token ids, the behaviour log-probs
  the engine sampled them under and the policy version that sampled them
  (off-policy and stale samples are weighted against these);
- where it belongs: ``group_id`` (the G samples of one prompt or task),
  ``trajectory_id`` and ``step_index`` (multi-turn and replayed samples);
- after scoring: reward components and the total reward, the advantage
  (one scalar broadcast to every token, or per token), the loss mask
  (``trainable=False``: overlong-filtered or dropped), and any reference /
  teacher log-probs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from guirl.models.prompts import Prompt
from guirl.models.scoring import EncodedPrompt


@dataclass
class Sample:
    prompt: Prompt | EncodedPrompt
    completion_ids: list[int]  # [T]
    behaviour_logprobs: list[float]  # [T]
    policy_version: int
    group_id: str
    text: str = ""
    finish_reason: str = "stop"
    trajectory_id: str | None = None
    step_index: int = 0
    rewards: dict[str, float] = field(default_factory=dict)
    reward: float = 0.0
    advantage: float | list[float] = 0.0  # scalar, or [T] per token
    trainable: bool = True
    ref_logprobs: list[float] | None = None  # [T]
    teacher_logprobs: list[float] | None = None  # [T]
    teacher_prompt: Prompt | EncodedPrompt | None = None  # the privileged context the teacher scores under
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def num_tokens(self) -> int:
        return len(self.completion_ids)


def padded(rows: list[list[float]], dtype=torch.float32) -> torch.Tensor:
    """Right-pad float rows to ``[N, T]`` with 0."""
    width = max((len(r) for r in rows), default=0)
    return torch.tensor([list(r) + [0.0] * (width - len(r)) for r in rows], dtype=dtype)


def token_advantages(samples: list[Sample]) -> torch.Tensor:
    """``[N, T]`` advantages: a scalar advantage is broadcast over its completion's tokens."""
    rows = [s.advantage if isinstance(s.advantage, list) else [float(s.advantage)] * s.num_tokens for s in samples]
    return padded(rows)


def loss_mask(samples: list[Sample]) -> torch.Tensor:
    """``[N, T]``: 1 on the completion tokens of trainable samples."""
    return padded([[1.0 if s.trainable else 0.0] * s.num_tokens for s in samples])

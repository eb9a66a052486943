"""The generation engine: many prompts in, n samples each, with the log-probs they were drawn under.

One interface (:class:`GenerationEngine`) for every sampler of the RL layer
(docs/rl.md, "The RL layer"): single-step GRPO on recorded
states, online multi-turn episodes, replayed trajectories and data
generation all call ``engine.generate(prompts, params)``.

- In: a list of :class:`~guirl.models.prompts.Prompt` (chat messages + the
  images in the order their ``{"type": "image"}`` items appear; different
  prompts in one call) and :class:`SamplingParams` (n samples each,
  temperature, top-p, length limit, seed).
- Out: for every prompt, its ``n`` :class:`Completion` objects: token ids
  (ending with the stop token when the policy stopped), the per-token
  log-probs under which they were sampled, decoded text, finish reason
  (``"stop"`` or ``"length"``) and the policy version that produced them.

Log-prob convention (the one the trainers recompute, and TRL's):
``log softmax(logits / temperature)`` of the sampled token, *before* top-p
truncation; greedy decoding (``temperature=0``) reports the log-probs of
``softmax(logits)``. vLLM 0.32 reports log-probs either before temperature or
after top-p truncation, so its engine refuses ``top_p < 1`` (docs/vllm.md).

Implementations: :class:`HFEngine` (``guirl.rollout.hf_engine``: batched over
prompts with left padding, each prompt's images encoded once, seeded without
touching global RNG state), :class:`SequentialEngine` (one prompt and one
sample at a time through Hugging Face ``generate``: the simple second
implementation and the baseline of ``benchmarks/grpo_vs_trl.py``), and
``guirl.rollout.vllm_engine.VLLMEngine`` (optional extra ``guirl[vllm]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import torch

from guirl.models.prompts import Prompt

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample: ``n`` completions per prompt; ``temperature=0`` is greedy."""

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 128
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"SamplingParams.n must be >= 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"SamplingParams.temperature must be >= 0 (0 = greedy), got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"SamplingParams.top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"SamplingParams.max_new_tokens must be >= 1, got {self.max_new_tokens}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    @property
    def scoring_temperature(self) -> float:
        """The temperature log-probs are reported (and must be recomputed) at."""
        return 1.0 if self.greedy else self.temperature


@dataclass
class Completion:
    """One sampled completion of ``prompt_index``'s prompt (``sample_index`` of its n)."""

    prompt_index: int
    sample_index: int
    token_ids: list[int]  # [T], ends with the stop token when finish_reason == "stop"
    logprobs: list[float]  # [T], log-prob of each token under the sampling policy
    text: str  # decoded, up to (not including) the stop token
    finish_reason: FinishReason
    policy_version: int
    extra: dict = field(default_factory=dict)


@runtime_checkable
class GenerationEngine(Protocol):
    """What every sampler calls; see the module docstring for the contract."""

    policy_version: int

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """``[len(prompts)][params.n]`` completions, in prompt order."""
        ...

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        """Publish the trained ``model``'s weights to the sampler as policy ``version``."""
        ...

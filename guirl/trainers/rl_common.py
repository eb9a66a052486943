"""Pieces every RL trainer shares: recorded states, reward specs, the reference policy, the policy-gradient loss.

- :class:`RecordedState` / :func:`load_states`: recorded steps (guirl
  trajectory JSONL, or any layout a :mod:`guirl.data.adapters` adapter reads)
  as the states single-step RL samples from.
- :class:`RewardSpec` / :class:`WeightedRewards`: a weighted sum of registered
  rewards, each component logged; a component whose judge failed is masked
  (``RewardOutput.failed``) and counted.
- :class:`ReferencePolicy`: log-probs under the frozen reference: for a LoRA
  policy the same weights with the adapter disabled (no second copy), else a
  frozen copy made at the start.
- :func:`policy_gradient_loss`: one micro-batch of :class:`~guirl.rollout.sample.Sample`
  through the registered clipped loss, normalised by the whole optimiser step.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, Field

from guirl.algorithms import get_policy_loss, masked_mean
from guirl.data.schema import Episode, Step, StepLabel
from guirl.models.scoring import score_completions
from guirl.rollout.sample import Sample, loss_mask, padded, token_advantages
from guirl.trainers.core import TrainerConfig


@dataclass(frozen=True)
class RecordedState:
    """One recorded step to sample from, with its episode and the directory its images are relative to."""

    episode: Episode
    step: Step
    root: Path

    @property
    def key(self) -> str:
        return f"{self.episode.id}/{self.step.index}"


def read_recorded(path: str, data_format: str = "guirl", image_root: str | None = None):
    """``(episodes, image root)`` of a guirl trajectory JSONL or any adapter format."""
    if data_format == "guirl":
        from guirl.data.io import read_episodes

        return read_episodes(path), Path(path).parent
    from guirl.data.adapters import open_public

    return open_public(data_format, path, image_dir=image_root)


def load_states(paths: Sequence[str], data_format: str = "guirl", image_root: str | None = None,
                labels: Sequence[str] = ("correct", "error_escape", "back_on_track")) -> list[RecordedState]:
    """Every step of ``paths`` with a label in ``labels`` and a ground truth (A*_t or a recorded action)."""
    wanted = {StepLabel(label) for label in labels}
    states = []
    for path in paths:
        episodes, root = read_recorded(path, data_format, image_root)
        for episode in episodes:
            for step in episode.steps:
                if step.label in wanted and (step.valid_actions or step.action is not None):
                    states.append(RecordedState(episode, step, root))
    if not states:
        raise ValueError(f"no usable recorded steps in {list(paths)} (format {data_format!r}); "
                         "generate data with `guirl gen-data` or check the paths and the format")
    return states


class RecordedStatesConfig(TrainerConfig):
    """The fields every trainer on recorded states shares (GRPO family, OPD): policy, data, held-out split, prompt."""

    model: str = Field("checkpoints/base-agent-history-tiny", description="starting policy (model directory)")
    train_data: list[str] = Field(default_factory=list, description="recorded episodes to sample states from")
    data_format: str = Field("guirl", description="'guirl' trajectory JSONL, or a guirl.data.adapters format name")
    image_root: str | None = Field(None, description="image directory of adapter formats (default: next to the file)")
    step_labels: list[str] = Field(default_factory=lambda: ["correct", "error_escape", "back_on_track"],
                                   description="step labels used as training states")
    eval_data: str | list[str] | None = Field(
        None, description="held-out episodes .jsonl (one path or several) for periodic greedy evaluation")
    eval_samples: int = Field(64, gt=0, description="held-out steps evaluated each time")
    eval_online_tasks: list[str] = Field(default_factory=list, description=(
        "tasks played live (greedy) at each evaluation, logged as eval/online_success (empty: none)"))
    eval_online_env: str = Field("sim", description="registered environment of eval_online_tasks")
    eval_online_env_kwargs: dict[str, Any] = Field(default_factory=dict, description="its constructor arguments")
    eval_online_episodes: int = Field(4, gt=0, description="episodes per task at each online evaluation")
    eval_online_max_steps: int = Field(12, gt=0, description="step limit of an online evaluation episode")
    eval_online_seed: int = Field(70_000, ge=0, description="first episode seed of the online evaluation "
                                  "(the same episodes at every evaluation; keep it off the training seeds)")
    format: str | None = Field(None, description="output format (default: the model's PromptSpec)")
    history_window: int | None = Field(None, ge=0, description="previous steps in the prompt (default: the model's)")
    micro_batch_size: int = Field(8, gt=0, description="samples per forward/backward pass")
    lora_rank: int = Field(0, ge=0, description="LoRA rank on the language model (0 = full fine-tuning)")
    freeze_vision: bool = Field(False, description=(
        "full fine-tuning: keep the vision tower (and its merger) frozen, train the language model only "
        "(LoRA leaves it frozen anyway)"))
    engine_max_rows: int = Field(64, gt=0, description="rows per batched generation pass")


class RewardSpec(BaseModel):
    name: str = Field(description="registered reward name (guirl.rewards.available_rewards())")
    weight: float = Field(1.0, description="weight of this reward in the total")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="constructor arguments of the reward")


class WeightedRewards:
    """``R = sum_k w_k R_k`` over registered rewards, with every component's batch mean for logging.

    Each sample's named scores hold every reward's score under its name and each of its components
    under ``<name>/<component>`` (``guilibra/accuracy``): the columns a trainer can read besides the total
    (SNGS's success signal). A masked (nan) judge component is kept as nan there."""

    def __init__(self, specs: Sequence[RewardSpec]):
        from guirl.rewards import make_reward

        if not specs:
            raise ValueError("rewards is empty: list at least one registered reward, e.g. [{name: litegui_ms}]")
        self.specs = list(specs)
        self.rewards = [make_reward(spec.name, **spec.kwargs) for spec in self.specs]

    def __call__(self, completions: list[str], columns: dict[str, list]) -> tuple[list[float], list[dict], dict]:
        """Totals [N], per-sample named scores [N], and batch metrics."""
        total = [0.0] * len(completions)
        per_sample: list[dict[str, float]] = [{} for _ in completions]
        metrics: dict[str, float] = {}
        for spec, reward in zip(self.specs, self.rewards, strict=True):
            out = reward.score(completions, **columns)
            for i, value in enumerate(out.scores):
                value = 0.0 if value is None or math.isnan(value) else float(value)
                total[i] += spec.weight * value
                per_sample[i][spec.name] = value
            for component, values in out.components.items():
                for i, value in enumerate(values):
                    per_sample[i][f"{spec.name}/{component}"] = float(value)
            metrics |= out.metrics(spec.name)
        return total, per_sample, metrics


class ReferencePolicy:
    """Reference log-probs: the adapter-disabled LoRA policy, or a frozen copy of the starting model."""

    def __init__(self, model: torch.nn.Module, processor: Any, frozen: torch.nn.Module | None = None):
        """``frozen``: a frozen copy of the starting model made already (e.g. ComputerSD's ``opsd_teacher=start``),
        shared rather than copied again."""
        self.processor = processor
        self.lora = hasattr(model, "disable_adapter")
        self.frozen = None if self.lora else frozen if frozen is not None else \
            copy.deepcopy(model).eval().requires_grad_(False)

    @torch.no_grad()
    def logprobs(self, model: torch.nn.Module, samples: list[Sample], temperature: float) -> list[list[float]]:
        target = self.frozen if self.frozen is not None else model
        peft = target
        while hasattr(peft, "module"):
            peft = peft.module
        context = peft.disable_adapter() if self.lora else contextlib.nullcontext()
        with context:
            out = score_samples(target, self.processor, samples, temperature)
        return [out.logprobs[i, : s.num_tokens].tolist() for i, s in enumerate(samples)]


def score_samples(model, processor, samples: list[Sample], temperature: float, **kwargs):
    """Score ``samples`` (rows sharing a prompt object share its encoding and vision pass)."""
    prompts, index, seen = [], [], {}
    for s in samples:
        if id(s.prompt) not in seen:
            seen[id(s.prompt)] = len(prompts)
            prompts.append(s.prompt)
        index.append(seen[id(s.prompt)])
    return score_completions(model, processor, prompts, [s.completion_ids for s in samples], index,
                             temperature=temperature, **kwargs)


def micro_batches(samples: list[Sample], size: int, count: int) -> list[list[Sample]]:
    """``count`` micro-batches of at most ``size`` samples (trailing ones may be empty, so every process
    runs the same number of backward passes)."""
    out = [samples[i : i + size] for i in range(0, len(samples), size)]
    return out + [[] for _ in range(count - len(out))]


def policy_gradient_loss(model, processor, batch: list[Sample], step_batches: list[list[Sample]], *,
                         temperature: float, loss_name: str = "clipped", **loss_kwargs: Any):
    """The registered policy loss of one micro-batch, normalised by the whole step's tokens / sequences."""
    if not batch:  # an empty micro-batch still takes part in the backward pass (zero gradient)
        return sum(p.sum() for p in model.parameters() if p.requires_grad) * 0.0, {}
    everything = [s for b in step_batches for s in b if s.trainable]
    num_tokens = float(sum(s.num_tokens for s in everything))
    num_sequences = float(len(everything))
    out = score_samples(model, processor, batch, temperature, entropy=True)
    mask = loss_mask(batch).to(out.logprobs.device) * out.mask  # [N, T]
    old = padded([s.behaviour_logprobs for s in batch]).to(out.logprobs.device)
    advantages = token_advantages(batch).to(out.logprobs.device)
    ref = None
    if loss_kwargs.get("kl_coef", 0.0):
        ref = padded([s.ref_logprobs for s in batch]).to(out.logprobs.device)
    loss, metrics = get_policy_loss(loss_name)(
        out.logprobs, old, advantages, mask, ref_logprobs=ref, num_tokens=max(num_tokens, 1.0),
        num_sequences=max(num_sequences, 1.0), **loss_kwargs,
    )
    metrics["policy/entropy"] = float(masked_mean(out.entropy.detach(), mask))
    return loss, metrics

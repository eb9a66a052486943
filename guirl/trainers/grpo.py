"""The GRPO-family trainer on recorded steps (``guirl train grpo``).

One optimiser step (docs/methods.md section 1, 3, 4):

1. **sample**: the ``batch_size`` recorded states drawn by the trainer core
   become prompts (:func:`guirl.models.prompts.step_prompt`, the policy's
   own :class:`~guirl.models.prompts.PromptSpec`); the generation engine
   draws ``group_size`` completions of each, with their behaviour log-probs;
2. **score**: a weighted sum of registered rewards (columns from
   :func:`guirl.rewards.reward_columns`), the registered advantage estimator
   over each group (``grpo``, ``rloo``, ``sngs``), dynamic sampling (groups
   whose rewards are all equal are dropped; optionally more states are drawn
   to refill the batch), overlong filtering (completions cut by the length
   limit are masked out of the loss), reference log-probs when ``kl_coef > 0``;
3. **update**: ``mu`` optimiser steps on that batch, each a pass of the
   registered clipped loss (token or sequence ratio, eps_low / eps_high, KL
   to the reference) against the behaviour log-probs, through
   :func:`guirl.algorithms.aggregate_loss` normalised by the whole step.

The recipes of LiteGUI MD-GRPO, GUI-Libra KL-GRPO + SNGS and InfiGUI-R1 RLOO
are configurations of this loop (``recipes/*.yaml``).

Exact resume: the sampling seed of a step is a function of (seed, step,
process), and a batch is regenerated only at steps that are multiples of
``mu`` (checkpoints are taken there), so a run killed at any point and
resumed from its last checkpoint draws the same samples and losses.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field, model_validator

from guirl.algorithms import get_adv_est, informative_groups
from guirl.models.scoring import encode_prompt
from guirl.rollout.engine import SamplingParams
from guirl.rollout.sample import Sample
from guirl.trainers.rl_common import (
    RecordedState,
    RecordedStatesConfig,
    ReferencePolicy,
    RewardSpec,
    WeightedRewards,
    load_states,
    micro_batches,
    policy_gradient_loss,
)


class GRPOConfig(RecordedStatesConfig):
    group_size: int = Field(8, ge=2, description="G: completions sampled per state")
    temperature: float = Field(1.0, gt=0, description="sampling temperature (log-probs are taken at it)")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_new_tokens: int = Field(64, gt=0, description="completion length limit")
    rewards: list[RewardSpec] = Field(default_factory=lambda: [RewardSpec(name="litegui_ms")],
                                      description="weighted registered rewards summed into R")
    advantage: str = Field("grpo", description="registered advantage estimator: grpo, rloo, sngs")
    advantage_kwargs: dict[str, Any] = Field(default_factory=dict, description="arguments of the estimator")
    success_signal: str | None = Field(
        None, description="sngs only: the named reward column whose group mean is SNGS's success rate p_g, "
        "'<reward>/<component>' (e.g. 'guilibra/accuracy') or '<reward>' (its score); None: the total reward "
        "(a success rate only for 0/1 rewards)")
    dynamic_sampling: bool = Field(False, description="drop groups whose rewards are all equal (DAPO)")
    refill_rounds: int = Field(0, ge=0, description="extra sampling rounds to refill dropped groups")
    overlong_filter: bool = Field(False, description="mask completions cut by max_new_tokens out of the loss")
    mu: int = Field(1, ge=1, description="optimiser steps per generated batch (on the behaviour log-probs)")
    policy_loss: str = Field("clipped", description="registered policy loss")
    clip_eps_low: float = Field(0.2, ge=0, description="lower clip range 1 - eps_low")
    clip_eps_high: float = Field(0.2, ge=0, description="upper clip range 1 + eps_high")
    ratio_level: Literal["token", "sequence"] = Field("token", description="token ratio (GRPO) or sequence (GSPO)")
    loss_agg_mode: str = Field("token-mean", description="aggregate_loss mode")
    kl_coef: float = Field(0.0, ge=0, description="KL-to-reference coefficient (0: no reference pass)")
    kl_estimator: Literal["k1", "k2", "k3"] = Field("k3", description="KL estimator")
    ground_truth: Literal["all", "recorded"] = Field(
        "all", description="rewards see every valid action A*_t (multi-solution) or only the recorded action "
        "(single-solution: the ablation of LiteGUI's multi-solution reward)")

    @model_validator(mode="after")
    def _success_signal_names_a_reward(self) -> GRPOConfig:
        if self.success_signal is None:
            return self
        if self.advantage != "sngs":
            raise ValueError(f"success_signal is SNGS's p_g; advantage {self.advantage!r} does not read it")
        names = [r.name for r in self.rewards]
        if self.success_signal.split("/", 1)[0] not in names:
            raise ValueError(f"success_signal {self.success_signal!r} must name one of the rewards {names} "
                             "('<reward>' or '<reward>/<component>')")
        return self

    @model_validator(mode="after")
    def _mu_divides(self) -> GRPOConfig:
        for name in ("max_steps", "save_every"):
            if getattr(self, name) % self.mu:
                raise ValueError(f"{name}={getattr(self, name)} must be a multiple of mu={self.mu} "
                                 "(a batch is regenerated every mu steps; checkpoints fall on those steps)")
        return self


def is_informative(group: list[Sample]) -> bool:
    """Dynamic sampling (DAPO; LiteGUI MD-GRPO): a group whose rewards are all equal has zero advantage."""
    return len({s.reward for s in group}) > 1


def single_solution(states: list[RecordedState]) -> list[RecordedState]:
    """The states with A*_t cut to the recorded action (``ground_truth: recorded``): a sample that writes
    another valid action scores as wrong, as under a single annotated ground truth."""
    out = []
    for s in states:
        recorded = [s.step.action] if s.step.action is not None else s.step.valid_actions[:1]
        out.append(RecordedState(s.episode, s.step.model_copy(update={"valid_actions": recorded}), s.root))
    return out


def success_column(samples: list[Sample], name: str) -> torch.Tensor:
    """SNGS's success signal [N]: each sample's named reward column ``name`` (a masked, nan value counts 0)."""
    values = []
    for s in samples:
        if name not in s.rewards:
            raise ValueError(f"success_signal {name!r} is not among the named reward columns {sorted(s.rewards)}")
        value = float(s.rewards[name])
        values.append(0.0 if value != value else value)
    return torch.tensor(values, dtype=torch.float64)


def mark_overlong(samples: list[Sample]) -> int:
    """Overlong filtering: completions cut by the length limit leave the loss; returns how many."""
    cut = 0
    for s in samples:
        if s.finish_reason == "length":
            s.trainable, cut = False, cut + 1
    return cut


class GRPOSampler:
    """The ``prepare_step`` of the trainer core: sample, score, pack into micro-batches."""

    def __init__(self, cfg: GRPOConfig, policy, engine, states: list[RecordedState], rank: int = 0,
                 num_processes: int = 1):
        from guirl.rewards import columns_for, reward_columns

        self.cfg, self.policy, self.engine, self.states, self.rank = cfg, policy, engine, states, rank
        self.num_processes = num_processes
        self.rewards = WeightedRewards(cfg.rewards)
        self.reward_columns, self.columns_for = reward_columns, columns_for
        self.reference = ReferencePolicy(policy.model, policy.processor) if cfg.kl_coef else None
        self.cached: list[list[Sample]] = []
        self.cached_metrics: dict[str, float] = {}
        self.num_micro = -(-cfg.batch_size * cfg.grad_accum * cfg.group_size // cfg.micro_batch_size)

    def prompt_of(self, state: RecordedState):
        from guirl.rollout.history import recorded_prompt

        prompt, image = recorded_prompt(self.policy.prompt, self.policy.frame_for, state.episode, state.step, state.root)
        return encode_prompt(self.policy.processor, prompt), image

    def _round(self, model, states: list[RecordedState], step: int, round_index: int):
        """Sample G completions of each state and score them; returns groups of Samples."""
        cfg = self.cfg
        prompts, images = zip(*(self.prompt_of(s) for s in states))
        params = SamplingParams(n=cfg.group_size, temperature=cfg.temperature, top_p=cfg.top_p,
                                max_new_tokens=cfg.max_new_tokens,
                                seed=cfg.seed * 1_000_003 + step * 1_009 + round_index * 101 + self.rank)
        self.engine.update_weights(model, step)
        t0 = time.perf_counter()
        outputs = self.engine.generate(list(prompts), params)
        generate_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        columns = [self.reward_columns(s.step, s.episode, self.policy.frame_for(*img.size)) for s, img in zip(states, images)]
        texts = [c.text for group in outputs for c in group]
        per_completion = self.columns_for(columns, cfg.group_size)
        per_completion["completion_ids"] = [c.token_ids for group in outputs for c in group]
        totals, named, metrics = self.rewards(texts, per_completion)
        groups, k = [], 0
        for state, prompt, group in zip(states, prompts, outputs, strict=True):
            samples = []
            for c in group:
                samples.append(Sample(prompt, c.token_ids, c.logprobs, c.policy_version, state.key, c.text,
                                      c.finish_reason, rewards=named[k], reward=totals[k]))
                k += 1
            groups.append(samples)
        return groups, metrics, generate_s, time.perf_counter() - t0

    def __call__(self, model, step: int, batches: list[list[RecordedState]]):
        cfg = self.cfg
        if step % cfg.mu and self.cached:
            return self.cached, self.cached_metrics
        # sampling and reference scoring run on the plain module: under DDP every forward of the wrapper is a
        # collective, and processes decode different numbers of tokens
        model = getattr(model, "module", model)
        states = [s for batch in batches for s in batch]
        wanted = len(states)
        groups, metrics, generate_s, score_s = self._round(model, states, step, 0)
        drawn = len(groups)
        kept = groups
        if cfg.dynamic_sampling:
            kept = [g for g in groups if is_informative(g)]
            rng = random.Random(cfg.seed * 7_919 + step * 31 + self.rank)
            for round_index in range(1, cfg.refill_rounds + 1):
                if len(kept) >= wanted:
                    break
                extra, m, g_s, s_s = self._round(model, rng.sample(self.states, min(wanted, len(self.states))),
                                                 step, round_index)
                drawn += len(extra)
                generate_s, score_s = generate_s + g_s, score_s + s_s
                kept += [g for g in extra if is_informative(g)]
            kept = kept[:wanted]
        samples = [s for g in kept for s in g]
        all_samples = [s for g in groups for s in g]
        t0 = time.perf_counter()
        if samples:
            rewards = torch.tensor([s.reward for s in samples], dtype=torch.float64)
            kwargs = dict(cfg.advantage_kwargs)
            if cfg.success_signal is not None:
                kwargs["success"] = success_column(samples, cfg.success_signal)
            advantages, adv_metrics = get_adv_est(cfg.advantage)(rewards, cfg.group_size, **kwargs)
            metrics |= adv_metrics
            for s, a in zip(samples, advantages.tolist(), strict=True):
                s.advantage = a
            if cfg.overlong_filter:
                metrics["sampling/overlong_masked"] = float(mark_overlong(samples))
            if self.reference is not None:
                for i in range(0, len(samples), cfg.micro_batch_size):
                    chunk = samples[i : i + cfg.micro_batch_size]
                    for s, ref in zip(chunk, self.reference.logprobs(model, chunk, cfg.temperature), strict=True):
                        s.ref_logprobs = ref
        score_s += time.perf_counter() - t0
        lengths = [s.num_tokens for s in all_samples]
        rewards_all = torch.tensor([s.reward for s in all_samples])
        metrics |= {
            "rewards/total_mean": float(rewards_all.mean()),
            "rewards/total_std": float(rewards_all.std()) if len(all_samples) > 1 else 0.0,
            "sampling/groups_dropped_frac": 1.0 - len(kept) / max(1, drawn),
            "sampling/groups_trained": float(len(kept)),
            "sampling/groups_equal_reward_frac": float(1.0 - informative_groups(rewards_all, cfg.group_size)
                                                       .float().mean()),
            "completions/mean_length": sum(lengths) / max(1, len(lengths)),
            "completions/max_length": float(max(lengths, default=0)),
            "completions/clipped_frac": sum(s.finish_reason == "length" for s in all_samples) / max(1, len(all_samples)),
            "time/generate_s": generate_s,
            "time/score_s": score_s,
        }
        if self.num_processes > 1:  # every process runs the same forward/backward passes: dropped groups ride
            dropped = [s for g in groups if not any(g is k for k in kept) for s in g]  # along with no gradient
            for s in dropped[: max(0, wanted * cfg.group_size - len(samples))]:
                s.trainable, s.advantage = False, 0.0
                s.ref_logprobs = s.ref_logprobs or [0.0] * s.num_tokens
                samples.append(s)
        self.cached = micro_batches(samples, cfg.micro_batch_size, max(self.num_micro, 1))
        self.cached_metrics = metrics
        return self.cached, metrics


def load_rl_policy(cfg: GRPOConfig):
    """The policy to train (LoRA or full), prompted as the config says."""
    from guirl.models.load import default_lora_config, load_policy

    torch.manual_seed(cfg.seed)
    lora = default_lora_config(rank=cfg.lora_rank, alpha=2 * cfg.lora_rank) if cfg.lora_rank else None
    policy = load_policy(cfg.model, lora=lora)
    spec = policy.prompt
    window = spec.history_window if cfg.history_window is None else cfg.history_window
    # as trained (style, reasoning, history text); nA history here (semi_online adds screenshots / CASC itself)
    policy.prompt = replace(spec, fmt=cfg.format or spec.fmt, history_window=window, history_images=0, casc="off")
    if lora is None:
        policy.model.requires_grad_(True)
        if cfg.freeze_vision:
            vision_tower(policy.model).requires_grad_(False)
    return policy


def vision_tower(model: torch.nn.Module) -> torch.nn.Module:
    """The vision tower of a Qwen-VL model (``model.visual`` in transformers 5, ``visual`` before)."""
    for owner in (getattr(model, "model", None), model):
        if owner is not None and isinstance(getattr(owner, "visual", None), torch.nn.Module):
            return owner.visual
    raise ValueError(f"{type(model).__name__} has no vision tower (.visual): freeze_vision needs a Qwen-VL model")


def save_final(policy, model, out_dir: Path) -> Path:
    """Merge a LoRA adapter and save model, processor and prompt spec to ``out_dir/final``."""
    from guirl.trainers.core import process_state

    final = Path(out_dir) / "final"
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    state = process_state()
    if state.is_main_process:
        model.save_pretrained(final)
        policy.processor.save_pretrained(final)
        policy.prompt.save(final)
    state.wait_for_everyone()
    return final


def heldout_evaluator(cfg, policy, engine):
    """``evaluate(model, step)``: greedy batched step success on ``cfg.eval_samples`` held-out steps
    (``eval_data``) and greedy episode success on ``eval_online_tasks`` played live (``eval/online_success``,
    and per task); None when neither is configured. Also returns the held-out steps."""
    from guirl.eval.steps import evaluate_steps

    if not cfg.eval_data and not cfg.eval_online_tasks:
        return None, None
    held = []
    if cfg.eval_data:
        paths = [cfg.eval_data] if isinstance(cfg.eval_data, str) else list(cfg.eval_data)
        held = [(s.episode, s.step, s.root) for s in load_states(paths) if s.step.valid_actions]
        held = random.Random(cfg.seed).sample(held, min(cfg.eval_samples, len(held)))

    def evaluate(model, step):
        engine.update_weights(model, step)
        scores = {}
        if held:
            scores = evaluate_steps(engine, policy.prompt, policy.frame_for, held, max_new_tokens=cfg.max_new_tokens)
        if cfg.eval_online_tasks:
            scores |= online_success(cfg, policy, engine)
        return scores

    return evaluate, held


def online_success(cfg, policy, engine) -> dict[str, float]:
    """Greedy whole-episode success of the engine's current weights on ``cfg.eval_online_tasks``, every live
    episode's step generated in one batched engine call (:func:`guirl.rollout.online.run_online`)."""
    from guirl.envs.base import make_env
    from guirl.rollout.online import EnvSlots, run_online
    from guirl.rollout.online import online_success as success_of
    from guirl.rollout.runner import EpisodeSpec

    specs = [EpisodeSpec(task=t, seed=cfg.eval_online_seed + k)
             for t in cfg.eval_online_tasks for k in range(cfg.eval_online_episodes)]
    envs = EnvSlots(lambda: make_env(cfg.eval_online_env, **cfg.eval_online_env_kwargs))
    params = SamplingParams(n=1, temperature=0.0, max_new_tokens=cfg.max_new_tokens, seed=0)
    try:
        trajs, _ = run_online(engine, policy, envs, specs, params, cfg.eval_online_max_steps)
    finally:
        envs.close()
    return {"eval/online_" + k.replace("/all", ""): v for k, v in success_of(trajs).items()}


def train_grpo(cfg: GRPOConfig) -> dict[str, Any]:
    """Run the GRPO-family trainer as configured; the final model goes to ``output_dir/final``."""
    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.core import process_state, train

    if not cfg.train_data:
        raise ValueError("train_data is empty: pass recorded episodes (train_data=[path.jsonl, ...])")
    policy = load_rl_policy(cfg)
    states = load_states(cfg.train_data, cfg.data_format, cfg.image_root, cfg.step_labels)
    if cfg.ground_truth == "recorded":
        states = single_solution(states)
    engine = HFEngine.from_policy(policy, max_batch_rows=cfg.engine_max_rows)
    state = process_state()
    sampler = GRPOSampler(cfg, policy, engine, states, rank=state.process_index, num_processes=state.num_processes)
    evaluate, _ = heldout_evaluator(cfg, policy, engine)
    loss_kwargs = {"clip_eps_low": cfg.clip_eps_low, "clip_eps_high": cfg.clip_eps_high, "ratio_level": cfg.ratio_level,
                   "loss_agg_mode": cfg.loss_agg_mode, "kl_coef": cfg.kl_coef, "kl_estimator": cfg.kl_estimator,
                   "max_tokens": cfg.max_new_tokens}

    def compute_loss(model, batch, step_batches):
        return policy_gradient_loss(model, policy.processor, batch, step_batches, temperature=cfg.temperature,
                                    loss_name=cfg.policy_loss, **loss_kwargs)

    result = train(cfg, policy.model, states, list, compute_loss, evaluate=evaluate, prepare_step=sampler)
    result["final_dir"] = save_final(policy, result["model"], Path(cfg.output_dir))
    if evaluate is not None and process_state().is_main_process:
        result["final_eval"] = evaluate(result["model"], result["step"])
    return result

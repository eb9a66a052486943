"""Semi-online RL over recorded trajectories (UI-S1; CCPO, docs/methods.md section 5): ``guirl train semi_online``.

One optimiser step:

1. **roll out**: the trainer core draws ``batch_size`` recorded episodes; each is replayed by
   ``group_size`` rollouts (:class:`guirl.envs.replay.ReplayEnv`) in lock-step: at step ``t`` every
   live rollout's prompt is built from *its own* history (:func:`guirl.rollout.history.window_prompt`,
   the builder the policy's :class:`~guirl.models.prompts.PromptSpec` names: nA, nAO or CASC) and all
   of them are generated in one engine call. A rollout whose action matches the recorded one moves
   on; on a mismatch the expert action is patched into its history, up to ``patch_threshold`` times,
   and the next mismatch ends it. With CASC the G rollouts of an episode share one
   :class:`~guirl.rollout.casc.CoordinateHistory`: every rollout's step-``t`` prediction (and the
   annotated point) is in it before any step ``t + 1`` prompt is built (progressive rollout).
2. **score**: per-step rewards (default ``uis1_step``: format 0.1 + action 0.9; its
   ``coordinate_reward="distance"`` or ``ccpo_distance`` give CCPO's distance-based coordinate
   reward), then the ``semi_online`` advantage (episode-level normalised discounted return with
   gamma 0.5 reset at the first mismatch, plus step-level normalised reward) from the rollouts'
   step masks and match flags; every step of a rollout is one :class:`~guirl.rollout.sample.Sample`
   with its own advantage (patched steps are trained on with their own output, as UI-S1's trainer
   keeps every generated step).
3. **update**: the clipped policy-gradient loss of the GRPO trainer (``guirl.trainers.grpo``) on
   the behaviour log-probs, ``mu`` passes.

A sample's prompt is the encoded prompt it was generated from, so training scores exactly the
tokens and images of the rollout.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from pydantic import Field

from guirl.data.schema import Episode
from guirl.models.prompts import CascMode
from guirl.trainers.grpo import GRPOConfig, heldout_evaluator, load_rl_policy, save_final
from guirl.trainers.rl_common import (
    RewardSpec,
    WeightedRewards,
    micro_batches,
    policy_gradient_loss,
    read_recorded,
)


class SemiOnlineConfig(GRPOConfig):
    group_size: int = Field(4, ge=2, description="G: rollouts replaying each recorded episode")
    rewards: list[RewardSpec] = Field(
        default_factory=lambda: [RewardSpec(name="uis1_step", kwargs={"fmt": "qwen_computer_use"})],
        description="per-step rewards summed into r_t (uis1_step; distance-based: coordinate_reward=distance)")
    advantage: str = Field("semi_online", description="registered advantage estimator over [rollouts, steps]")
    advantage_kwargs: dict[str, Any] = Field(default_factory=lambda: {"gamma": 0.5},
                                             description="arguments of the estimator (gamma, weights, reset)")
    patch_threshold: int = Field(2, ge=-1, description="mismatches patched with the expert action (-1: all)")
    max_episode_steps: int = Field(30, gt=0, description="most steps replayed per rollout (the paper: 30)")
    history_images: int = Field(3, ge=0, description="nAO: the last n shown steps keep their screenshots")
    casc: CascMode = Field("off", description="CASC history compression of CCPO")
    match_rule: str = Field("uis1", description="point rule deciding a match (guirl.matching.rules)")
    value_rule: str = Field("substring", description="text rule deciding a match (UI-S1: substring)")
    direction_rule: str = Field("exact", description="scroll direction rule deciding a match")


@dataclass
class RecordedEpisode:
    """One recorded trajectory and the directory its screenshots are relative to."""

    episode: Episode
    root: Path

    @property
    def key(self) -> str:
        return self.episode.id


def load_episodes(paths: list[str], data_format: str = "guirl", image_root: str | None = None) -> list[RecordedEpisode]:
    """Every episode of ``paths`` whose steps all carry a ground truth and the label ``correct``."""
    from guirl.data.schema import StepLabel

    out = []
    for path in paths:
        episodes, root = read_recorded(path, data_format, image_root)
        for ep in episodes:
            if ep.steps and all((s.valid_actions or s.action is not None) and s.label == StepLabel.CORRECT
                                for s in ep.steps):
                out.append(RecordedEpisode(ep, Path(root)))
    if not out:
        raise ValueError(f"no replayable episodes in {paths} (format {data_format!r}): every step needs a ground "
                         "truth and the label 'correct'; generate trajectories with `guirl gen-data`")
    return out


@dataclass
class Rollout:
    """One replay of a recorded episode by the policy, step by step."""

    env: Any
    obs: Any
    group: int
    member: int
    builder: Any
    past: list = field(default_factory=list)
    samples: list = field(default_factory=list)
    matched: list[bool] = field(default_factory=list)
    done: bool = False


class SemiOnlineSampler:
    """The ``prepare_step`` of the trainer core: replay, score, pack into micro-batches."""

    def __init__(self, cfg: SemiOnlineConfig, policy, engine, rank: int = 0):
        from guirl.rewards import reward_columns

        self.cfg, self.policy, self.engine, self.rank = cfg, policy, engine, rank
        self.rewards = WeightedRewards(cfg.rewards)
        self.reward_columns = reward_columns
        self.cached: list[list] = []
        self.cached_metrics: dict[str, float] = {}

    def _start(self, drawn: list[RecordedEpisode]) -> tuple[list[Rollout], list]:
        from guirl.envs.replay import ReplayEnv
        from guirl.rollout.casc import CoordinateHistory
        from guirl.rollout.history import history_builder

        cfg = self.cfg
        rollouts, stores = [], []
        for b, rec in enumerate(drawn):
            store = CoordinateHistory() if cfg.casc != "off" else None
            stores.append(store)
            for g in range(cfg.group_size):
                env = ReplayEnv([rec.episode], rec.root, patch_threshold=cfg.patch_threshold, rule=cfg.match_rule,
                                value_rule=cfg.value_rule, direction_rule=cfg.direction_rule, check_images=False)
                obs = env.reset(options={"episode": 0})
                rollouts.append(Rollout(env, obs, b, g, history_builder(self.policy.prompt, store, rollout=g)))
        return rollouts, stores

    def rollout(self, model, drawn: list[RecordedEpisode], step: int) -> tuple[list[Rollout], dict[str, float]]:
        """Replay every drawn episode ``group_size`` times in lock-step; the rollouts with their Samples."""
        from guirl.actions import ParseFailure
        from guirl.models.scoring import encode_prompt
        from guirl.rollout.engine import SamplingParams
        from guirl.rollout.history import window_prompt
        from guirl.rollout.online import executed_action
        from guirl.rollout.sample import Sample
        from guirl.rollout.window import PastStep

        cfg, policy = self.cfg, self.policy
        self.engine.update_weights(model, step)
        rollouts, stores = self._start(drawn)
        generate_s = score_s = 0.0
        for t in range(cfg.max_episode_steps):
            live = [r for r in rollouts if not r.done]
            if not live:
                break
            prompts, frames, steps, sizes = [], [], [], []
            for r in live:
                rec = drawn[r.group]
                position = r.obs.info["position"]
                recorded = rec.episode.steps[position]
                frame = policy.frame_for(*r.obs.screenshot.size)
                prompt = window_prompt(policy.prompt, frame, r.obs.instruction, r.obs.screenshot, r.builder(r.past),
                                       key=f"{rec.key}/{recorded.index}")
                prompts.append(encode_prompt(policy.processor, prompt))
                sizes.append([im.size for im in prompt.images])
                frames.append(frame)
                steps.append(recorded)
                if stores[r.group] is not None:
                    stores[r.group].annotate(t, recorded.valid_actions or [recorded.action])
            params = SamplingParams(n=1, temperature=cfg.temperature, top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens,
                                    seed=cfg.seed * 1_000_003 + step * 1_009 + t * 101 + self.rank)
            t0 = time.perf_counter()
            outputs = self.engine.generate(prompts, params)
            generate_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            texts = [group[0].text for group in outputs]
            columns = [self.reward_columns(s, drawn[r.group].episode, f) for r, s, f in zip(live, steps, frames)]
            per = {k: [c[k] for c in columns] for k in columns[0]}
            per["completion_ids"] = [group[0].token_ids for group in outputs]
            totals, named, _ = self.rewards(texts, per)
            for r, prompt, frame, (c,), total, parts, image_sizes in zip(live, prompts, frames, outputs, totals, named,
                                                                          sizes, strict=True):
                executed, failure = executed_action(c.text, policy.prompt.fmt, frame, r.obs.frame)
                action = executed if executed is not None else ParseFailure(reason=failure)
                screenshot = r.obs.screenshot
                obs, _, terminated, truncated, info = r.env.step(action)
                if stores[r.group] is not None and action:
                    stores[r.group].add_prediction(t, action, rollout=r.member)
                matched = bool(info.get("matched"))
                r.samples.append(Sample(prompt, c.token_ids, c.logprobs, c.policy_version, drawn[r.group].key, c.text,
                                        c.finish_reason, trajectory_id=f"{drawn[r.group].key}/{r.member}",
                                        step_index=t, rewards=parts, reward=total,
                                        extra={"matched": matched, "patched": bool(info.get("patched")),
                                               "image_sizes": image_sizes}))
                r.matched.append(matched)
                shown = info.get("history_action", action if action else None)
                r.past.append(PastStep(t, screenshot, shown if shown else None,
                                       None if info.get("patched") else c.text))
                r.obs = obs
                r.done = bool(terminated or truncated)
            score_s += time.perf_counter() - t0
        return rollouts, {"time/generate_s": generate_s, "time/score_s": score_s}

    def score(self, rollouts: list[Rollout]) -> tuple[list, dict[str, float]]:
        """The semi-online advantage over ``[rollouts, steps]``; every step Sample gets its own."""
        from guirl.algorithms import get_adv_est
        from guirl.rollout.casc import image_tokens

        cfg = self.cfg
        width = max(len(r.samples) for r in rollouts)
        n = len(rollouts)
        rewards = torch.zeros(n, width, dtype=torch.float64)
        mask = torch.zeros(n, width, dtype=torch.bool)
        matched = torch.zeros(n, width, dtype=torch.bool)
        for i, r in enumerate(rollouts):
            for t, s in enumerate(r.samples):
                rewards[i, t], mask[i, t], matched[i, t] = s.reward, True, r.matched[t]
        adv, metrics = get_adv_est(cfg.advantage)(rewards, cfg.group_size, step_mask=mask, matched=matched,
                                                  **cfg.advantage_kwargs)
        samples = []
        for i, r in enumerate(rollouts):
            for t, s in enumerate(r.samples):
                s.advantage = float(adv[i, t])
                samples.append(s)
        steps = torch.tensor([len(r.samples) for r in rollouts], dtype=torch.float32)
        complete = [all(r.matched) and len(r.matched) == len(r.env.episodes[0].steps) for r in rollouts]
        metrics |= {
            "rollout/steps_mean": float(steps.mean()),
            "rollout/match_rate": float(matched[mask].float().mean()),
            "rollout/patched_frac": sum(s.extra["patched"] for s in samples) / max(1, len(samples)),
            "rollout/episode_success": sum(complete) / n,
            "rewards/total_mean": float(rewards[mask].mean()),
            "completions/mean_length": sum(s.num_tokens for s in samples) / max(1, len(samples)),
            "prompts/tokens_mean": sum(len(s.prompt.input_ids) for s in samples) / max(1, len(samples)),
            "prompts/image_tokens_mean": sum(sum(s.prompt.mm_token_type_ids) for s in samples) / max(1, len(samples)),
            "prompts/images_mean": sum(s.prompt.num_images for s in samples) / max(1, len(samples)),
            # what Qwen2.5-VL's default pixel budget would spend on the same images (the tiny processor caps
            # every image at 256 x 256 pixels, so its own counts cannot show what a crop saves)
            "prompts/qwen25vl_image_tokens_mean": sum(sum(image_tokens(z) for z in s.extra["image_sizes"])
                                                      for s in samples) / max(1, len(samples)),
            "completions/clipped_frac": sum(s.finish_reason == "length" for s in samples) / max(1, len(samples)),
        }
        return samples, metrics

    def __call__(self, model, step: int, batches: list[list[RecordedEpisode]]):
        cfg = self.cfg
        if step % cfg.mu and self.cached:
            return self.cached, self.cached_metrics
        model = getattr(model, "module", model)
        drawn = [e for batch in batches for e in batch]
        rollouts, metrics = self.rollout(model, drawn, step)
        samples, score_metrics = self.score(rollouts)
        metrics |= score_metrics
        if cfg.overlong_filter:
            for s in samples:
                if s.finish_reason == "length":
                    s.trainable = False
        metrics["sampling/step_samples"] = float(len(samples))
        num_micro = max(1, -(-len(samples) // cfg.micro_batch_size))
        self.cached = micro_batches(samples, cfg.micro_batch_size, num_micro)
        self.cached_metrics = metrics
        return self.cached, metrics


def train_semi_online(cfg: SemiOnlineConfig) -> dict[str, Any]:
    """Run semi-online RL as configured; the final model goes to ``output_dir/final``."""
    from dataclasses import replace

    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.core import process_state, train

    if not cfg.train_data:
        raise ValueError("train_data is empty: pass recorded trajectories (train_data=[path.jsonl, ...])")
    if process_state().num_processes > 1:
        raise ValueError("semi_online runs on one process for now (rollouts give each process a different number "
                         "of step samples); launch it without accelerate / torchrun")
    if cfg.kl_coef:
        raise ValueError("kl_coef > 0 is not supported by semi_online yet (UI-S1 trains without a KL term); set 0")
    policy = load_rl_policy(cfg)
    spec = policy.prompt
    policy.prompt = replace(spec, history_images=min(cfg.history_images, spec.history_window), casc=cfg.casc)
    episodes = load_episodes(cfg.train_data, cfg.data_format, cfg.image_root)
    engine = HFEngine.from_policy(policy, max_batch_rows=cfg.engine_max_rows)
    state = process_state()
    sampler = SemiOnlineSampler(cfg, policy, engine, rank=state.process_index)
    evaluate, _ = heldout_evaluator(cfg, policy, engine)
    loss_kwargs = {"clip_eps_low": cfg.clip_eps_low, "clip_eps_high": cfg.clip_eps_high, "ratio_level": cfg.ratio_level,
                   "loss_agg_mode": cfg.loss_agg_mode, "kl_coef": 0.0, "kl_estimator": cfg.kl_estimator,
                   "max_tokens": cfg.max_new_tokens}

    def compute_loss(model, batch, step_batches):
        return policy_gradient_loss(model, policy.processor, batch, step_batches, temperature=cfg.temperature,
                                    loss_name=cfg.policy_loss, **loss_kwargs)

    random.seed(cfg.seed)
    result = train(cfg, policy.model, episodes, list, compute_loss, evaluate=evaluate, prepare_step=sampler)
    result["final_dir"] = save_final(policy, result["model"], Path(cfg.output_dir))
    if evaluate is not None and process_state().is_main_process:
        result["final_eval"] = evaluate(result["model"], result["step"])
    return result

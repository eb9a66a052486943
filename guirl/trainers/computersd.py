"""ComputerSD (docs/methods.md section 2): online multi-turn RL with a GUI analyzer, ``guirl train computersd``.

Per optimiser step, four stages (one after the other with ``mode: sync``; each in its own thread,
overlapping the optimiser, with ``mode: async``, :mod:`guirl.trainers.async_pipeline`):

1. **rollout**: ``batch_size`` (task, seed) pairs, ``group_size`` episodes each, played online in
   lock-step (:func:`guirl.rollout.online.run_online`: one engine call per step across every live
   episode; the post-action observation and the policy version in every step record);
2. **analysis**: the GUI analyzer (:mod:`guirl.judges.analyzer`, any registered judge with the
   ``analyzer`` role) judges every executed step, ``analyzer_votes`` times; the step value
   ``s`` in {+1, -1, 0} (0: a tie or no readable verdict: the step's OPSD term is masked, counted);
   a call that fails or exceeds ``analyzer_timeout_s`` is one unreadable vote;
3. **privileged rescoring**: the teacher is the policy itself with the analyzer's guidance appended to
   the last user turn (``[PRIVILEGED_ACTION_GUIDANCE]`` / ``Guide:`` / ``Avoid:``); it scores the step's
   own tokens: ``log pi(y | h+)``;
4. **update**: ``L = L_GRPO + opsd_coef * L_OPSD``: trajectory-level GRPO on the environment's outcome
   (success 1 / 0, plus ``prm_weight * sum_t s_t`` for the GRPO + PRM baseline) broadcast to every token
   of every step, the clipped loss against the behaviour log-probs, KL to the reference (``kl_coef``);
   value-gated OPSD (:func:`guirl.algorithms.opsd.value_gated_opsd_loss`, paper or code form).

Baselines and ablations are configurations: outcome-only GRPO ``opsd_coef=0``; GRPO + PRM
``opsd_coef=0 prm_weight=...``; fixed guidance ``guidance=fixed``; gates ``opsd_gate=hard|reverse|none``;
prompt-only is an evaluation with ``eval_guidance`` and no training. Episodes that crash are lost alone
(counted in ``rollout/crashed``); finished ones are trained on.

Asynchronous mode: rollouts, analysis and rescoring use model replicas that load the weights the
trainer publishes after every update; each sample keeps the version that generated it, an item more
than ``max_staleness`` versions old is dropped (or kept, ``stale_policy=importance``); staleness is logged.
Resume restores the trainer exactly in sync mode; in async mode the rollouts after a resume differ
(thread timing decides which version generated which batch).

Separated cores (``rollout_cpus`` + ``trainer_cpus``, async): the rollout side (environments, generation,
analysis, rescoring: :class:`~guirl.trainers.async_process.ProcessPipeline`) runs in a process of its own,
pinned to ``rollout_cpus`` with one torch thread per core; its environment workers or browsers are its
children and inherit that mask. The trainer's process is pinned to ``trainer_cpus``. The weights travel in
shared memory; finished batches come back pickled. A process rather than a pinned thread because the GIL
is per process: two threads on two cores still take turns for every Python line (module calls, sampling,
the built-in world), which with a small model is most of a step.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import torch
from pydantic import Field, model_validator

from guirl.trainers.core import TrainerConfig

FIXED_GUIDANCE = ("Guide: read the task, find the element it names on the current screen and act on that element.\n"
                  "Avoid: repeating an action that did not change the screen.")


class ComputerSDConfig(TrainerConfig):
    model: str = Field("checkpoints/computersd-start-tiny", description="starting policy (it should read hints)")
    env: str = Field("sim", description="registered environment (sim, miniwob, ...)")
    env_kwargs: dict[str, Any] = Field(default_factory=lambda: {"preset": "coarse"},
                                       description="environment arguments")
    env_backend: Literal["local", "process", "ray"] = Field(
        "local", description="where training environments run: this process, worker processes or Ray actors (one "
        "per live episode: batch_size x grad_accum x group_size workers); evaluation runs them in this process")
    tasks: list[str] = Field(default_factory=lambda: ["desktop.open_file"], description="training task names")
    train_seeds: int = Field(1000, gt=0, description="episode seeds 0..N-1 of every training task")
    group_size: int = Field(8, ge=2, description="G: episodes per (task, seed)")
    max_episode_steps: int = Field(30, gt=0, description="step limit of a training episode (paper: 30)")
    format: str | None = Field(None, description="output format (default: the model's PromptSpec)")
    history_window: int | None = Field(None, ge=0, description="previous steps in the prompt (default: the model's)")
    history_images: int | None = Field(None, ge=0, description="of which keep screenshots (paper: 3)")
    temperature: float = Field(1.0, gt=0, description="rollout sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus mass")
    max_new_tokens: int = Field(64, gt=0, description="completion length limit")
    # analysis and OPSD
    analyzer: str = Field("ground_truth_analyzer", description="registered judge answering the analyzer role")
    analyzer_kwargs: dict[str, Any] = Field(default_factory=dict, description="judge constructor arguments")
    analyzer_votes: int = Field(1, ge=1, description="analyzer calls per step (majority vote)")
    analyzer_timeout_s: float = Field(60.0, gt=0, description="seconds per analyzer call before it counts as failed")
    analyzer_workers: int = Field(4, ge=1, description="analyzer calls in flight")
    guidance: Literal["realtime", "fixed"] = Field("realtime", description="analyzer guidance or FIXED_GUIDANCE")
    fixed_guidance: str = Field(FIXED_GUIDANCE, description="the pre-written guidance of guidance=fixed")
    opsd_coef: float = Field(0.01, ge=0, description="lambda_OPSD (0: outcome-only GRPO)")
    opsd_beta: float = Field(5.0, ge=0, description="beta_gate")
    opsd_gate: Literal["sigmoid", "hard", "reverse", "none"] = Field("sigmoid", description="gate ablation")
    opsd_variant: Literal["paper", "code"] = Field("paper", description="eq. 7 as written, or the authors' code")
    opsd_judge_direction: bool = Field(True, description="False: SEED mode (s replaced by +1 on scored steps)")
    opsd_loss: Literal["sampled_token", "topk"] = Field(
        "sampled_token", description="sampled-token value-gated OPSD (paper eq. 7), or the code's top-k + tail reverse "
        "KL to the privileged distribution gated by the KL itself (the step value only masks)")
    opsd_top_k: int = Field(50, gt=0, description="k of opsd_loss=topk (the privileged side keeps k log-probs per token)")
    opsd_teacher: Literal["policy", "start"] = Field(
        "policy", description="whose log-probs under the guidance context OPSD moves towards: the policy being "
        "trained (the paper's self-distillation) or a frozen copy of the starting policy (guirl's ablation)")
    prm_weight: float = Field(0.0, description="GRPO + PRM baseline: reward += prm_weight * sum_t s_t")
    # the GRPO part
    advantage: str = Field("grpo", description="registered advantage estimator over each group's trajectories")
    policy_loss: str = Field("clipped", description="registered policy loss")
    clip_eps_low: float = Field(0.2, ge=0)
    clip_eps_high: float = Field(0.2, ge=0)
    loss_agg_mode: str = Field("token-mean", description="aggregate_loss mode")
    kl_coef: float = Field(0.01, ge=0, description="KL to the reference policy (paper: 0.01)")
    kl_estimator: Literal["k1", "k2", "k3"] = Field("k3")
    micro_batch_size: int = Field(8, gt=0, description="step samples per forward/backward pass")
    engine_max_rows: int = Field(64, gt=0, description="rows per batched generation pass")
    lora_rank: int = Field(0, ge=0, description="LoRA rank (0 = full fine-tuning)")
    # pipeline
    mode: Literal["sync", "async"] = Field("sync", description="stages one after the other, or overlapped")
    max_staleness: int = Field(2, ge=0, description="most policy versions a trained-on batch may lag (async: "
                               "also the batches in flight, so 2 lets rollout, analysis + rescoring and the update overlap)")
    stale_policy: Literal["drop", "importance"] = Field("drop", description="what happens beyond max_staleness")
    rollout_cpus: list[int] = Field(
        default_factory=list, description="mode=async: run the rollout side (environments and their workers or "
        "browsers, generation, analysis, rescoring) in a process of its own pinned to these CPU cores, one torch "
        "thread per core; [] = threads of the trainer's process, unpinned. Needs trainer_cpus (disjoint)")
    trainer_cpus: list[int] = Field(
        default_factory=list, description="pin the trainer's process to these CPU cores with one torch thread per "
        "core (num_threads is set to their number); with mode=sync every stage runs there")
    # held-out evaluation (whole episodes, greedy)
    eval_tasks: list[str] | None = Field(None, description="held-out tasks (default: the training tasks)")
    eval_episodes: int = Field(0, ge=0, description="held-out episodes per task (0 = no evaluation)")
    eval_seed_start: int = Field(100_000, ge=0, description="first held-out seed (never a training seed)")
    eval_max_steps: int = Field(50, gt=0, description="step limit of an evaluation episode (paper: 50)")
    eval_guidance: str | None = Field(None, description="prompt-only baseline: this guidance in every eval prompt")

    #: spellings of earlier releases, accepted with a DeprecationWarning (one vocabulary with OPD's loss / top_k)
    DEPRECATED_FIELDS: ClassVar[dict[str, str]] = {"opsd_topk": "opsd_top_k"}
    DEPRECATED_VALUES: ClassVar[dict[str, dict[str, str]]] = {"opsd_loss": {"sampled": "sampled_token"}}

    @model_validator(mode="before")
    @classmethod
    def _deprecated_spellings(cls, data: Any) -> Any:
        from guirl.config import upgrade_deprecated

        return upgrade_deprecated(cls, data)

    @model_validator(mode="after")
    def _separated_cores(self) -> ComputerSDConfig:
        for name in ("rollout_cpus", "trainer_cpus"):
            cpus = getattr(self, name)
            if any(c < 0 for c in cpus) or len(set(cpus)) != len(cpus):
                raise ValueError(f"{name}={cpus}: distinct CPU core numbers >= 0")
        if self.rollout_cpus:
            if self.mode != "async":
                raise ValueError("rollout_cpus separates the rollout side from the trainer: it needs mode=async")
            if not self.trainer_cpus:
                raise ValueError("rollout_cpus needs trainer_cpus too (the trainer's cores, disjoint from them)")
            if set(self.rollout_cpus) & set(self.trainer_cpus):
                raise ValueError(f"rollout_cpus={self.rollout_cpus} and trainer_cpus={self.trainer_cpus} share "
                                 "cores; give each side its own")
            if self.env_backend == "ray":
                raise ValueError("rollout_cpus cannot pin Ray actors (the Ray runtime starts them): use "
                                 "env_backend=local or process")
        if self.trainer_cpus:
            self.num_threads = len(self.trainer_cpus)
        return self


@dataclass
class Batch:
    trajectories: list
    version: int
    timings: dict[str, float] = field(default_factory=dict)
    counts: dict[str, float] = field(default_factory=dict)


class ComputerSD:
    """The stage functions (shared by both modes) and the trainer-side scoring."""

    def __init__(self, cfg: ComputerSDConfig, policy, with_analyzer: bool = True):
        """``with_analyzer=False``: the trainer's side of separated cores (the rollout side's process has the
        analyzer; a checkpoint analyzer would otherwise be loaded twice)."""
        from guirl.judges import make_judge
        from guirl.judges.base import JUDGES

        self.cfg, self.policy = cfg, policy
        self.items = [(task, seed) for task in cfg.tasks for seed in range(cfg.train_seeds)]
        self.needs_analysis = cfg.opsd_coef > 0 or cfg.prm_weight != 0
        self.needs_rescoring = cfg.opsd_coef > 0
        self.analyzer = None
        # opsd_teacher=start: the privileged side is the policy as it starts, frozen (made here, before a trainer
        # or a resumed checkpoint moves the weights); only the side that rescores (the analyzer's) needs it
        self.teacher = None
        if self.needs_rescoring and with_analyzer and cfg.opsd_teacher == "start":
            self.teacher = copy.deepcopy(policy.model).eval().requires_grad_(False)
        if self.needs_analysis and with_analyzer:
            self.analyzer = make_judge(cfg.analyzer, **cfg.analyzer_kwargs)
        elif self.needs_analysis:  # an unknown name is said here rather than in the other process
            JUDGES.get(cfg.analyzer)

    # -- stage 1 ----------------------------------------------------------------------------------
    def specs(self, drawn: list[tuple[str, int]]):
        from guirl.rollout.runner import EpisodeSpec

        return [EpisodeSpec(task=t, seed=s, group=g) for t, s in drawn for g in range(self.cfg.group_size)]

    def rollout(self, engine, envs, drawn, version: int, seed: int) -> Batch:
        from guirl.rollout.engine import SamplingParams
        from guirl.rollout.online import run_online

        cfg = self.cfg
        params = SamplingParams(n=1, temperature=cfg.temperature, top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens,
                                seed=seed)
        t0 = time.perf_counter()
        trajs, timings = run_online(engine, self.policy, envs, self.specs(drawn), params, cfg.max_episode_steps)
        timings["rollout_s"] = time.perf_counter() - t0
        return Batch(trajs, version, timings, {"rollout/crashed": float(sum(t.crashed for t in trajs))})

    # -- stage 2 ----------------------------------------------------------------------------------
    def requests(self, tr) -> list:
        from guirl.judges.analyzer import trajectory_requests

        return trajectory_requests(tr, self.policy.prompt.fmt)

    def call_analyzer(self, requests: list) -> tuple[list[list], int]:
        """``analyzer_votes`` answers per request, None where a call raised or ran past ``analyzer_timeout_s``
        (measured from the call's own start); the number of such calls."""
        cfg = self.cfg
        results: list[list] = [[None] * cfg.analyzer_votes for _ in requests]
        started: dict[tuple[int, int], float] = {}

        def call(key, request):
            started[key] = time.perf_counter()
            return self.analyzer(request)

        pool = cf.ThreadPoolExecutor(max_workers=cfg.analyzer_workers, thread_name_prefix="guirl-analyzer")
        futures = {pool.submit(call, (i, v), r): (i, v) for i, r in enumerate(requests) for v in range(cfg.analyzer_votes)}
        pending, failed = set(futures), 0
        try:
            while pending:
                done, pending = cf.wait(pending, timeout=0.05, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    i, v = futures[fut]
                    try:
                        results[i][v] = fut.result()
                    except Exception:  # noqa: BLE001 - a failed call is an unreadable vote
                        failed += 1
                now = time.perf_counter()
                late = {f for f in pending if futures[f] in started and now - started[futures[f]] > cfg.analyzer_timeout_s}
                failed += len(late)
                pending -= late
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # a hung call is abandoned, not waited for
        return results, failed

    def analyze(self, batch: Batch) -> Batch:
        from guirl.judges.analyzer import chosen_verdict, guidance_block_of, read_votes, step_value

        if not self.needs_analysis:
            return batch
        cfg = self.cfg
        t0 = time.perf_counter()
        steps = [s for tr in batch.trajectories if not tr.crashed for s in tr.steps]
        requests = [r for tr in batch.trajectories if not tr.crashed for r in self.requests(tr)]
        results, failed = self.call_analyzer(requests)
        masked = 0
        for step, res in zip(steps, results, strict=True):
            votes = read_votes(res)
            step.value = step_value(votes)
            masked += step.value == 0
            verdict = chosen_verdict(votes, step.value)
            step.guidance = (cfg.fixed_guidance if cfg.guidance == "fixed" else guidance_block_of(verdict)) \
                if step.value else None
        n = max(1, len(steps))
        batch.counts |= {"analyzer/failed_calls": float(failed), "analyzer/masked_frac": masked / n,
                         "analyzer/good_frac": sum(s.value > 0 for s in steps) / n}
        batch.timings["analysis_s"] = time.perf_counter() - t0
        return batch

    # -- stage 3 ----------------------------------------------------------------------------------
    @torch.no_grad()
    def rescore(self, model, batch: Batch) -> Batch:
        from guirl.models.scoring import encode_prompt, score_completions
        from guirl.rollout.history import window_prompt

        if not self.needs_rescoring:
            return batch
        cfg, policy = self.cfg, self.policy
        t0 = time.perf_counter()
        steps = [s for tr in batch.trajectories if not tr.crashed for s in tr.steps if s.value and s.guidance]
        model = self.teacher if self.teacher is not None else model
        was_training = model.training
        model.eval()
        for i in range(0, len(steps), cfg.micro_batch_size):
            chunk = steps[i : i + cfg.micro_batch_size]
            prompts = [encode_prompt(policy.processor, window_prompt(policy.prompt, s.frame, s.before.instruction,
                                                                     s.before.screenshot, s.window, guidance=s.guidance))
                       for s in chunk]
            topk = cfg.opsd_top_k if cfg.opsd_loss == "topk" else 0
            out = score_completions(model, policy.processor, prompts, [s.sample.completion_ids for s in chunk],
                                    temperature=cfg.temperature, top_k=topk)
            for j, s in enumerate(chunk):
                n = s.sample.num_tokens
                s.sample.teacher_logprobs = out.logprobs[j, :n].tolist()
                s.sample.teacher_prompt = prompts[j]
                if topk:  # O(k) numbers per token: the ids and the privileged log-probs of its top-k
                    s.sample.extra["teacher_topk"] = (out.topk_ids[j, :n].clone(), out.topk_logprobs[j, :n].clone())
        model.train(was_training)
        batch.counts["opsd/rescored_steps"] = float(len(steps))
        batch.timings["rescore_s"] = time.perf_counter() - t0
        return batch

    # -- to the trainer's process ------------------------------------------------------------------
    def pack(self, batch: Batch) -> Batch:
        """The batch as it crosses to the trainer's process (``rollout_cpus``; the last stage there). The
        trainer reads samples, step values and outcomes, never a screenshot: observations travel without
        theirs (most of a pickled batch otherwise), and a privileged prompt whose images equal its step's
        own prompt's shares that tensor, so it travels once."""
        import dataclasses

        t0 = time.perf_counter()
        bare: dict[int, Any] = {}

        def without_screenshot(obs):
            if obs is None or not dataclasses.is_dataclass(obs) or getattr(obs, "screenshot", None) is None:
                return obs
            if id(obs) not in bare:
                bare[id(obs)] = dataclasses.replace(obs, screenshot=None)
            return bare[id(obs)]

        for tr in batch.trajectories:
            for step in tr.steps:
                step.before, step.after = without_screenshot(step.before), without_screenshot(step.after)
                own, teacher = step.sample.prompt, step.sample.teacher_prompt
                mine, theirs = getattr(own, "pixel_values", None), getattr(teacher, "pixel_values", None)
                if mine is not None and theirs is not None and mine is not theirs and mine.shape == theirs.shape \
                        and torch.equal(mine, theirs):
                    teacher.pixel_values = mine
        batch.timings["pack_s"] = time.perf_counter() - t0
        return batch

    # -- trainer side -----------------------------------------------------------------------------
    def score(self, batch: Batch) -> tuple[list, dict[str, float]]:
        """Trajectory rewards, per-group advantages broadcast to every step sample."""
        from guirl.algorithms import get_adv_est

        cfg = self.cfg
        groups: dict[str, list] = {}
        for tr in batch.trajectories:
            tr.reward = float(tr.success) + cfg.prm_weight * sum(s.value for s in tr.steps)
            if not tr.crashed and tr.steps:
                groups.setdefault(tr.group_id, []).append(tr)
        samples = []
        for members in groups.values():
            rewards = torch.tensor([tr.reward for tr in members], dtype=torch.float64)
            if len(members) > 1:
                adv, _ = get_adv_est(cfg.advantage)(rewards, len(members))
            else:
                adv = torch.zeros(1, dtype=torch.float64)
            for tr, a in zip(members, adv.tolist(), strict=True):
                for s in tr.steps:
                    s.sample.advantage, s.sample.reward = a, tr.reward
                    s.sample.extra["value"] = s.value if s.sample.teacher_logprobs is not None else 0
                    samples.append(s.sample)
        trajs = batch.trajectories
        n = max(1, len(trajs))
        metrics = {"rollout/success": sum(t.success for t in trajs) / n,
                   "rollout/steps_mean": sum(len(t.steps) for t in trajs) / n,
                   "rollout/trajectories": float(len(trajs)),
                   "rollout/parse_fail_frac": sum(s.action is None for t in trajs for s in t.steps)
                   / max(1, sum(len(t.steps) for t in trajs)),
                   "rewards/total_mean": sum(t.reward for t in trajs) / n,
                   "sampling/step_samples": float(len(samples)),
                   "sampling/groups_equal_reward_frac": sum(len({t.reward for t in g}) == 1 for g in groups.values())
                   / max(1, len(groups)),
                   "completions/mean_length": sum(s.num_tokens for s in samples) / max(1, len(samples)),
                   **batch.counts, **{f"time/{k}" if not k.startswith("time/") else k: v
                                      for k, v in batch.timings.items()}}
        return samples, metrics


__all__ = ["FIXED_GUIDANCE", "Batch", "ComputerSD", "ComputerSDConfig"]

"""Online multi-turn episodes for training: every live episode advanced in lock-step, one engine call per step.

:func:`run_online` plays ``specs`` (G episodes per task and seed, several tasks) on environments of
its own: at step ``t`` the prompt of every live episode is built from its own history
(:func:`guirl.rollout.history.window_prompt`, the builder the policy's
:class:`~guirl.models.prompts.PromptSpec` names) and all of them are generated in one
:class:`~guirl.rollout.engine.GenerationEngine` call. Every step keeps what training and judging
need: the :class:`~guirl.rollout.sample.Sample` (encoded prompt, tokens, behaviour log-probs, policy
version), the screen before and the observation after the action, the executed action, the
environment's info, and the history window (to rebuild the prompt with a privileged block).

- ``on_step(trajectory, step)`` is called after each executed action (analysis can start then);
- an unparsable output is a no-op step (nothing is executed, the step counts);
- an environment that raises (a crashed browser) ends only its episode, marked ``crashed`` with the
  reason; the environment is rebuilt before its next episode. Finished episodes are never lost.

Environments: :class:`EnvSlots` keeps one per live episode in this process (the built-in world is
cheap); :class:`PoolSlots` runs them in an environment pool (worker processes or Ray actors, one
per live episode), every episode's step in parallel.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure, parse_action
from guirl.rollout.runner import EpisodeSpec


@dataclass
class OnlineStep:
    index: int
    sample: Any  # guirl.rollout.sample.Sample
    before: Any  # the Observation the policy acted on
    after: Any  # the Observation after the action (``before`` when nothing was executed)
    action: Action | None
    parse_failure: str | None
    frame: Frame  # the policy's coordinate frame at this step
    window: Any  # the HistoryWindow of the prompt
    info: dict[str, Any] = field(default_factory=dict)
    #: filled by the analysis stage
    value: int = 0
    guidance: str | None = None


@dataclass
class OnlineTrajectory:
    spec: EpisodeSpec
    group_id: str
    instruction: str = ""
    steps: list[OnlineStep] = field(default_factory=list)
    success: bool = False
    done: bool = False
    crashed: bool = False
    failure_reason: str | None = None
    reward: float = 0.0
    policy_versions: set[int] = field(default_factory=set)

    @property
    def id(self) -> str:
        return f"{self.group_id}/{self.spec.group}"


class EnvSlots:
    """Environments kept between calls, in this process: slot ``i`` serves the ``i``-th live episode; a crashed
    one is rebuilt. ``reset_many`` / ``step_many`` answer every job, an exception for a failed one."""

    capacity: int | None = None  # any number of slots

    def __init__(self, factory: Callable[[], Any]):
        self.factory, self.envs = factory, []

    def get(self, i: int):
        while len(self.envs) <= i:
            self.envs.append(None)
        if self.envs[i] is None:
            self.envs[i] = self.factory()
        return self.envs[i]

    def reset_many(self, jobs: list[tuple[int, int | None, dict | None]]) -> dict[int, Any]:
        out: dict[int, Any] = {}
        for i, seed, options in jobs:
            try:
                out[i] = self.get(i).reset(seed=seed, options=options)
            except Exception as err:  # noqa: BLE001 - crash boundary: only this episode is lost
                out[i] = err
        return out

    def step_many(self, jobs: list[tuple[int, Action]]) -> dict[int, Any]:
        out: dict[int, Any] = {}
        for i, action in jobs:
            try:
                out[i] = self.get(i).step(action)
            except Exception as err:  # noqa: BLE001 - crash boundary, as at reset
                out[i] = err
        return out

    def discard(self, i: int) -> None:
        env, self.envs[i] = self.envs[i], None
        try:
            if env is not None:
                env.close()
        except Exception:  # noqa: BLE001 - the environment is being thrown away
            pass

    def close(self) -> None:
        for i in range(len(self.envs)):
            self.discard(i)


class PoolSlots:
    """Slot ``i`` is worker ``i`` of an environment pool (:func:`guirl.envs.backends.make_pool`: worker processes or
    Ray actors): every live episode's reset / step runs in parallel; a dead or hung worker fails its episode
    and the pool restarts it."""

    def __init__(self, pool):
        self.pool = pool
        self.capacity = pool.num_workers

    def _run(self, command: str, jobs: list[tuple]) -> dict[int, Any]:
        if any(job[0] >= self.capacity for job in jobs):
            raise ValueError(f"{len(jobs)} live episodes but the pool has {self.capacity} workers; "
                             "give the pool one worker per episode of a batch (batch_size x group_size)")
        for i, *args in jobs:
            self.pool.submit(i, command, *args)
        out: dict[int, Any] = {}
        while len(out) < len(jobs):
            for answer in self.pool.wait():
                out[answer.worker] = answer.value if answer.ok else RuntimeError(
                    f"{command} failed on worker {answer.worker}: {answer.error}")
        return out

    def reset_many(self, jobs):
        return self._run("reset", jobs)

    def step_many(self, jobs):
        return self._run("step", jobs)

    def discard(self, i: int) -> None:
        pass  # the pool rebuilds a failed worker's environment itself

    def close(self) -> None:
        self.pool.close()


def executed_action(text: str, fmt: str, frame: Frame, screen: Frame) -> tuple[Action | None, str | None]:
    """The action a completion asks for, in screen pixels, or ``(None, why not)``."""
    action = parse_action(text, fmt, frame)
    if isinstance(action, ParseFailure):
        return None, action.reason
    try:
        return action.to_frame(screen), None
    except ValueError as err:
        return None, f"cannot convert to screen pixels: {err}"


def run_online(engine, policy, envs: EnvSlots, specs: Sequence[EpisodeSpec], params, max_steps: int,
               on_step: Callable[[OnlineTrajectory, OnlineStep], None] | None = None,
               group_key: Callable[[EpisodeSpec], str] | None = None,
               guidance: str | None = None,
               on_episode: Callable[[OnlineTrajectory], None] | None = None,
               ) -> tuple[list[OnlineTrajectory], dict[str, float]]:
    """Play every spec to its end (module doc); the trajectories in spec order and stage timings.

    ``guidance`` is put in every prompt's privileged block (the prompt-only baseline at evaluation);
    ``on_episode`` gets every trajectory as soon as it ends (crashed ones included), the stream of
    finished episodes while the others play on."""
    from dataclasses import replace

    from guirl.models.scoring import encode_prompt
    from guirl.rollout.history import history_builder, window_prompt
    from guirl.rollout.sample import Sample
    from guirl.rollout.window import PastStep

    group_key = group_key or (lambda s: f"{s.task}/{s.seed}")
    trajs = [OnlineTrajectory(spec, group_key(spec)) for spec in specs]
    obs: list[Any] = [None] * len(trajs)
    pasts: list[list] = [[] for _ in trajs]
    builders = [history_builder(policy.prompt) for _ in trajs]
    timings = {"env_s": 0.0, "generate_s": 0.0, "prompt_s": 0.0}

    def crash(i: int, reason: str) -> None:
        trajs[i].done, trajs[i].crashed, trajs[i].failure_reason = True, True, reason
        envs.discard(i)
        if on_episode is not None:
            on_episode(trajs[i])

    t0 = time.perf_counter()
    for i, answer in envs.reset_many([(i, s.seed, s.reset_options() or None) for i, s in enumerate(specs)]).items():
        if isinstance(answer, BaseException):
            crash(i, f"reset failed: {type(answer).__name__}: {answer}")
        else:
            obs[i], trajs[i].instruction = answer, answer.instruction
    timings["env_s"] += time.perf_counter() - t0
    for t in range(max_steps):
        live = [i for i, tr in enumerate(trajs) if not tr.done]
        if not live:
            break
        t0 = time.perf_counter()
        prompts, frames, windows = [], [], []
        for i in live:
            o = obs[i]
            frame = policy.frame_for(*o.screenshot.size)
            window = builders[i](pasts[i])
            prompt = window_prompt(policy.prompt, frame, o.instruction, o.screenshot, window, key=f"{trajs[i].id}/{t}",
                                   guidance=guidance)
            prompts.append(encode_prompt(policy.processor, prompt))
            frames.append(frame)
            windows.append(window)
        timings["prompt_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        outputs = engine.generate(prompts, replace(params, n=1, seed=params.seed + 7_919 * t))
        timings["generate_s"] += time.perf_counter() - t0
        decided = []
        for i, frame, window, (c,) in zip(live, frames, windows, outputs, strict=True):
            action, failure = executed_action(c.text, policy.prompt.fmt, frame, obs[i].frame)
            decided.append((i, frame, window, c, action, failure))
        t1 = time.perf_counter()
        results = envs.step_many([(i, action) for i, _, _, _, action, _ in decided if action is not None])
        timings["env_s"] += time.perf_counter() - t1
        for i, frame, window, c, action, failure in decided:
            tr, before = trajs[i], obs[i]
            sample = Sample(prompts[live.index(i)], c.token_ids, c.logprobs, c.policy_version, tr.group_id, c.text,
                            c.finish_reason, trajectory_id=tr.id, step_index=t)
            tr.policy_versions.add(c.policy_version)
            after, info, ended = before, {}, False
            if action is not None:
                answer = results[i]
                if isinstance(answer, BaseException):
                    crash(i, f"step {t} failed: {type(answer).__name__}: {answer}")
                    continue
                after, _, terminated, truncated, info = answer
                ended, info = bool(terminated or truncated), dict(info)
            step = OnlineStep(t, sample, before, after, action, failure, frame, window, info)
            tr.steps.append(step)
            pasts[i].append(PastStep(t, before.screenshot, action, c.text))
            obs[i] = after
            if on_step is not None:
                on_step(tr, step)
            if ended or (action is not None and action.type is ActionType.TERMINATE):
                tr.done, tr.success = True, bool(info.get("success", False))
                if not tr.success:
                    tr.failure_reason = str(info.get("reason") or "ended without success")
            elif len(tr.steps) >= max_steps:
                tr.done, tr.failure_reason = True, f"step limit reached ({max_steps} steps)"
            if tr.done and on_episode is not None:
                on_episode(tr)
    for tr in trajs:
        if not tr.done:
            tr.done, tr.failure_reason = True, f"step limit reached ({max_steps} steps)"
            if on_episode is not None:
                on_episode(tr)
    return trajs, timings


def online_success(trajs: Sequence[OnlineTrajectory]) -> dict[str, float]:
    """Whole-episode success overall and per task (crashed episodes count as failures)."""
    out: dict[str, float] = {}
    by_task: dict[str, list[bool]] = {}
    for tr in trajs:
        by_task.setdefault(str(tr.spec.task), []).append(tr.success)
    for task, wins in sorted(by_task.items()):
        out[f"success/{task}"] = sum(wins) / len(wins)
    out["success/all"] = sum(tr.success for tr in trajs) / max(1, len(trajs))
    out["progress/all"] = sum(map(episode_progress, trajs)) / max(1, len(trajs))
    return out


def episode_progress(trajectory) -> float:
    """The share of its task's milestones an episode reached at its best (1.0 on success): a finer online score
    than success, read from the steps' environment info (``progress`` of ``milestones``, which the sim world
    reports; 0.0 where an environment does not).

    >>> from types import SimpleNamespace as NS
    >>> step = lambda p: NS(info={"progress": p, "milestones": 4})
    >>> episode_progress(NS(success=False, steps=[step(1), step(3), step(2)])), episode_progress(NS(success=True, steps=[]))
    (0.75, 1.0)
    """
    if trajectory.success:
        return 1.0
    shares = [s.info["progress"] / s.info["milestones"] for s in trajectory.steps
              if s.info.get("milestones") and "progress" in s.info]
    return round(max(shares, default=0.0), 4)


__all__ = ["EnvSlots", "PoolSlots", "OnlineStep", "OnlineTrajectory", "episode_progress", "executed_action", "online_success", "run_online"]

"""Online evaluation: run a policy in a live environment and report success.

For each task, ``episodes`` episodes with seeds ``seed, seed+1, ...`` run
through the :class:`~guirl.rollout.runner.EpisodeRunner` (in-process with one
worker, over an :class:`~guirl.envs.pool.EnvPool` with more). Each task's
success rate comes with a Wilson score interval (guirl.eval.stats) and the
mean number of steps; episodes lost to environment crashes count as failures
and are reported separately. Trajectories are written with the
:class:`~guirl.rollout.recorder.TrajectoryRecorder`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from guirl.envs.base import make_env
from guirl.eval.stats import wilson_interval
from guirl.rollout.policy import Policy, as_policy
from guirl.rollout.recorder import Platform, TrajectoryRecorder
from guirl.rollout.runner import EpisodeRunner, EpisodeSpec, Rollout
from guirl.rollout.window import HistoryBuilder

#: ``--policy scripted``: the reference policy of each environment.
SCRIPTED_POLICIES = {
    "miniwob": "guirl.envs.miniwob.scripted:scripted_policy",
    "sim": "guirl.rollout.policy:oracle_policy",
}

#: Trajectory platform per environment.
PLATFORMS: dict[str, Platform] = {"miniwob": "web"}


@dataclass
class TaskResult:
    """One row of the report."""

    task: str
    episodes: int
    successes: int
    success_rate: float
    ci_low: float
    ci_high: float
    mean_steps: float
    crashed: int


def scripted_policy_for(env_name: str) -> Policy:
    try:
        return as_policy(SCRIPTED_POLICIES[env_name])
    except KeyError:
        raise ValueError(
            f"no scripted policy for environment {env_name!r}; environments with one: {sorted(SCRIPTED_POLICIES)}"
        ) from None


def summarize(rollouts: Sequence[Rollout], confidence: float = 0.95) -> list[TaskResult]:
    """Per-task success rate with a Wilson interval, mean steps and crash count (task order kept)."""
    by_task: dict[str, list[Rollout]] = {}
    for rollout in rollouts:
        by_task.setdefault(rollout.task or "(not reported)", []).append(rollout)
    rows = []
    for task, group in by_task.items():
        successes = sum(r.success for r in group)
        low, high = wilson_interval(successes, len(group), confidence)
        rows.append(
            TaskResult(
                task=task,
                episodes=len(group),
                successes=successes,
                success_rate=successes / len(group),
                ci_low=low,
                ci_high=high,
                mean_steps=sum(len(r.steps) for r in group) / len(group),
                crashed=sum(bool(r.extra.get("crashed")) for r in group),
            )
        )
    return rows


def format_table(rows: Sequence[TaskResult], confidence: float = 0.95) -> str:
    """A plain-text table, one task a line, plus the overall rate."""
    head = f"{'task':<24} {'episodes':>8} {'success':>8} {int(confidence * 100)}% CI{'':<9} {'steps':>6} {'crashed':>7}"
    lines = [head, "-" * len(head)]
    for r in rows:
        ci = f"[{r.ci_low:.2f}, {r.ci_high:.2f}]"
        lines.append(
            f"{r.task:<24} {r.episodes:>8} {r.success_rate:>8.2f} {ci:<15} {r.mean_steps:>6.2f} {r.crashed:>7}"
        )
    total = sum(r.episodes for r in rows)
    wins = sum(r.successes for r in rows)
    if total:
        low, high = wilson_interval(wins, total, confidence)
        lines.append(f"{'all':<24} {total:>8} {wins / total:>8.2f} [{low:.2f}, {high:.2f}]")
    return "\n".join(lines)


def evaluate_online(
    env_name: str,
    tasks: Sequence[str | None],
    episodes: int,
    policy: Policy | Callable[..., Any] | str,
    max_steps: int = 10,
    workers: int = 1,
    out_dir: str | Path | None = None,
    env_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
    history: HistoryBuilder | None = None,
    action_format: str | None = None,
) -> tuple[list[TaskResult], list[Rollout]]:
    """Run ``episodes`` episodes of every task; returns the report rows and the rollouts."""
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    recorder = None
    if out_dir is not None:
        recorder = TrajectoryRecorder(out_dir, source=f"env:{env_name}", platform=PLATFORMS.get(env_name, "unknown"))
    runner = EpisodeRunner(
        policy,
        max_steps=max_steps,
        history=history,
        action_format=action_format,
        on_episode=recorder.record if recorder else None,
    )
    specs = [EpisodeSpec(task=task, seed=seed + i) for task in tasks for i in range(episodes)]
    try:
        rollouts = _run(runner, env_name, dict(env_kwargs or {}), specs, workers)
    finally:
        if recorder is not None:
            recorder.close()
    rows = summarize(rollouts)
    if out_dir is not None:
        summary = {"env": env_name, "max_steps": max_steps, "tasks": [asdict(r) for r in rows]}
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return rows, rollouts


def _run(
    runner: EpisodeRunner, env_name: str, env_kwargs: dict[str, Any], specs: list[EpisodeSpec], workers: int
) -> list[Rollout]:
    if workers == 1:
        env = make_env(env_name, **env_kwargs)
        try:
            return runner.run_many(env, specs)
        finally:
            env.close()
    from guirl.envs.pool import EnvPool
    from guirl.rollout.parallel import run_parallel

    with EnvPool(env_name, min(workers, len(specs)), env_kwargs) as pool:
        return run_parallel(runner, pool, specs)

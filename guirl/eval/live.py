"""Lite-Bench on live episodes (LiteGUI, docs/methods.md section 1): run, export, judge, compare.

1. **Run**: ``episodes`` episodes of every task with
   :func:`guirl.eval.online.evaluate_online` (the runner, seeds, per-task rows
   and Wilson intervals of ``guirl eval online``), capped at 18 steps.
2. **Export**: every episode goes to ``episodes.jsonl`` (the trajectory
   schema, via :meth:`TrajectoryRecorder.to_episode`), its screenshots to
   ``images/<id>/NNN.png`` plus ``final.png`` (the screen after the last
   action), and ``images/<id>/log.json``: the log the judge reads
   (:func:`guirl.judges.outcome.export_episode_log`: task, every step's model
   output and parsed action, screenshot paths) plus the environment's own
   verdict under ``"env"``, which the judge never sees.
3. **Judge**: :func:`guirl.eval.judge.judge_episodes` audits outcome and
   compliance, each request carrying the final screenshot as its last image.
   An unreadable verdict (garbage, HTTP failure, a judge that raises) is
   masked: left out of the judge's rates and of the agreement, and counted.
4. **Compare**: where the environment records success (the built-in world,
   MiniWoB), the judge's agreement with it over the readable verdicts, and
   the 2x2 table (environment success / failure x judge success / failure)
   plus a masked column.

Departure from the paper: the paper's auditor is an LLM; here it is any
registered judge (``rule_outcome``, ``ground_truth``, ``openai`` for any
served model), so the judge itself can be measured against ground truth.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from guirl.data.io import write_episodes
from guirl.data.schema import Episode
from guirl.eval.judge import judge_episodes
from guirl.eval.online import PLATFORMS, TaskResult, evaluate_online
from guirl.eval.stats import success_rate
from guirl.judges.base import Judge, JudgeRequest, JudgeResult
from guirl.judges.outcome import LITE_BENCH_MAX_STEPS, export_episode_log
from guirl.rollout.policy import Policy
from guirl.rollout.recorder import Platform, TrajectoryRecorder
from guirl.rollout.runner import Rollout
from guirl.rollout.window import HistoryBuilder

LOG_FILE = "log.json"
FINAL_SCREENSHOT = "final.png"


@dataclass
class LiveReport:
    """What one judge made of a set of live episodes (rates over readable verdicts)."""

    metrics: dict[str, float | None]
    #: ``{"env_success" | "env_failure": {"judge_success": n, "judge_failure": n, "masked": n}}``
    confusion: dict[str, dict[str, int]]
    #: per task: episodes, env_success, judge_success, compliant, masked
    tasks: list[dict[str, Any]] = field(default_factory=list)
    #: per episode: episode, task, env_success, judge_success, compliant, masked, reason
    verdicts: list[dict[str, Any]] = field(default_factory=list)


class FinalStateJudge:
    """A judge for live episodes: appends the episode's final screenshot (``extra["final_screenshot"]``,
    relative to ``root``) to each request, and turns an exception of the wrapped judge into an unreadable
    verdict (masked and counted in ``errors``), so one failed judge call never ends an evaluation."""

    def __init__(self, judge: Judge, root: str | Path):
        self.judge, self.root, self.errors = judge, Path(root), 0

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        episode = request.fields.get("episode")
        final = episode.extra.get("final_screenshot") if isinstance(episode, Episode) else None
        if isinstance(final, str) and (self.root / final).is_file():
            with Image.open(self.root / final) as image:
                request.images.append(image.convert("RGB"))
        try:
            return self.judge(request)
        except Exception as err:  # a failed judge call is masked and counted, never a crash
            self.errors += 1
            return JudgeResult(verdict={}, ok=False, reason=f"the judge raised {type(err).__name__}: {err}")


def export_live_episodes(
    rollouts: Sequence[Rollout], out_dir: str | Path, source: str, platform: Platform = "unknown",
    max_steps: int = LITE_BENCH_MAX_STEPS,
) -> list[Episode]:
    """Write ``episodes.jsonl``, the screenshots, ``final.png`` and ``log.json`` of every rollout
    (ids ``ep000000``, ... in rollout order); returns the Episodes."""
    out = Path(out_dir)
    episodes = []
    with TrajectoryRecorder(out, source=source, platform=platform) as recorder:
        for i, rollout in enumerate(rollouts):
            episode = recorder.to_episode(rollout, f"ep{i:06d}")
            folder = out / "images" / episode.id
            folder.mkdir(parents=True, exist_ok=True)
            final = rollout.final_observation
            if final is not None and final.screenshot is not None:
                final.screenshot.save(folder / FINAL_SCREENSHOT)
                episode.extra["final_screenshot"] = (folder / FINAL_SCREENSHOT).relative_to(out).as_posix()
            log = export_episode_log(episode, max_steps)
            log["task"] = episode.task
            log["env"] = {"success": episode.success, "failure_reason": episode.failure_reason,
                          "crashed": bool(rollout.extra.get("crashed"))}
            (folder / LOG_FILE).write_text(json.dumps(log, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            episodes.append(episode)
    write_episodes(out / "episodes.jsonl", episodes)  # replaces the empty file the recorder opened
    return episodes


def run_live_episodes(
    env_name: str,
    tasks: Sequence[str | None],
    episodes: int,
    policy: Policy | Callable[..., Any] | str,
    out_dir: str | Path,
    max_steps: int = LITE_BENCH_MAX_STEPS,
    workers: int = 1,
    env_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
    history: HistoryBuilder | None = None,
    action_format: str | None = None,
) -> tuple[list[TaskResult], list[Episode], list[Rollout]]:
    """Run and export the episodes; returns the environment's per-task rows, the Episodes and the Rollouts."""
    rows, rollouts = evaluate_online(
        env_name, tasks, episodes, policy, max_steps=max_steps, workers=workers, env_kwargs=env_kwargs, seed=seed,
        history=history, action_format=action_format,
    )
    domain = (env_kwargs or {}).get("domain")  # the built-in world's domains are platform names
    platform = PLATFORMS.get(env_name) or (domain if domain in ("desktop", "web", "mobile") else "unknown")
    exported = export_live_episodes(rollouts, out_dir, f"env:{env_name}", platform, max_steps)
    return rows, exported, rollouts


def _rate(hits: int, n: int) -> float | None:
    return hits / n if n else None


def judge_live(
    episodes: Sequence[Episode], judge: Judge, root: str | Path, max_steps: int = LITE_BENCH_MAX_STEPS
) -> LiveReport:
    """Judge exported live episodes and compare with the environment's verdict (see module doc).

    Metrics: ``live/episodes``, ``live/env_success_rate`` (+ ``_ci_low`` / ``_ci_high``),
    ``live/judge_success_rate`` and ``live/compliance_rate`` over readable verdicts (None when none),
    ``live/judge_readable``, ``live/judge_masked``, ``live/judge_errors`` (calls that raised, part of the
    masked), ``live/agreement`` over readable verdicts of episodes with a success flag, ``live/agreement_n``,
    the judge's own counters when it has ``metrics()`` (the HTTP client's ``judge/requests``, ...), and the
    strict Lite-Bench figures of :func:`judge_episodes` (masked = failure) as ``strict/...``.
    """
    guarded = FinalStateJudge(judge, root)
    result = judge_episodes(list(episodes), guarded, root, max_steps)
    confusion = {row: {"judge_success": 0, "judge_failure": 0, "masked": 0} for row in ("env_success", "env_failure")}
    verdicts, by_task = [], {}
    for episode, v in zip(episodes, result.verdicts):
        entry = {
            "episode": episode.id, "task": episode.task or "(not reported)", "env_success": episode.success,
            "judge_success": v["success"] if v["ok"] else None,
            "compliant": v["verdict"].get("compliant") if v["ok"] else None,
            "masked": not v["ok"], "reason": v["reason"],
        }
        verdicts.append(entry)
        by_task.setdefault(entry["task"], []).append(entry)
        if episode.success is not None:
            column = "masked" if entry["masked"] else ("judge_success" if v["success"] else "judge_failure")
            confusion["env_success" if episode.success else "env_failure"][column] += 1
    metrics = {**_totals(verdicts, guarded.errors), **_agreement(confusion)}
    metrics.update({k.replace("judge/", "strict/"): v for k, v in result.metrics.items()})
    counters = getattr(judge, "metrics", None)
    if callable(counters):
        metrics.update(counters())
    tasks = [{"task": task, **_task_row(group)} for task, group in by_task.items()]
    return LiveReport(metrics, confusion, tasks, verdicts)


def _task_row(group: list[dict[str, Any]]) -> dict[str, Any]:
    readable = [v for v in group if not v["masked"]]
    return {
        "episodes": len(group),
        "env_success": _rate(sum(bool(v["env_success"]) for v in group), len(group)),
        "judge_success": _rate(sum(bool(v["judge_success"]) for v in readable), len(readable)),
        "compliant": _rate(sum(v["compliant"] is True for v in readable), len(readable)),
        "masked": len(group) - len(readable),
    }


def _totals(verdicts: list[dict[str, Any]], errors: int) -> dict[str, float | None]:
    row = _task_row(verdicts)
    env = success_rate(sum(bool(v["env_success"]) for v in verdicts), len(verdicts))
    return {
        "live/episodes": float(len(verdicts)),
        "live/env_success_rate": env["rate"],
        "live/env_success_rate_ci_low": env["ci_low"],
        "live/env_success_rate_ci_high": env["ci_high"],
        "live/judge_success_rate": row["judge_success"],
        "live/compliance_rate": row["compliant"],
        "live/judge_readable": float(len(verdicts) - row["masked"]),
        "live/judge_masked": float(row["masked"]),
        "live/judge_errors": float(errors),
    }


def _agreement(confusion: dict[str, dict[str, int]]) -> dict[str, float | None]:
    agree = confusion["env_success"]["judge_success"] + confusion["env_failure"]["judge_failure"]
    n = sum(row["judge_success"] + row["judge_failure"] for row in confusion.values())
    return {"live/agreement": _rate(agree, n), "live/agreement_n": float(n)}


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def format_live(report: LiveReport, judge_name: str = "judge") -> str:
    """Plain-text summary: per-task rates, totals, agreement and the 2x2 table."""
    m = report.metrics
    head = f"{'task':<24} {'episodes':>8} {'env':>6} {'judge':>6} {'compliant':>9} {'masked':>6}"
    lines = [f"judge: {judge_name}", head, "-" * len(head)]
    for t in report.tasks:
        lines.append(f"{t['task']:<24} {t['episodes']:>8} {_cell(t['env_success']):>6} {_cell(t['judge_success']):>6} "
                     f"{_cell(t['compliant']):>9} {t['masked']:>6}")
    lines.append(f"{'all':<24} {int(m['live/episodes']):>8} {_cell(m['live/env_success_rate']):>6} "
                 f"{_cell(m['live/judge_success_rate']):>6} {_cell(m['live/compliance_rate']):>9} "
                 f"{int(m['live/judge_masked']):>6}")
    lines.append(f"env success 95% CI [{m['live/env_success_rate_ci_low']:.2f}, {m['live/env_success_rate_ci_high']:.2f}]"
                 f"; strict Lite-Bench success (masked = failure) {m['strict/success_rate']:.2f}")
    lines.append(f"judge calls: {int(m['live/judge_readable'])} readable, {int(m['live/judge_masked'])} masked "
                 f"({int(m['live/judge_errors'])} raised)")
    lines.append(f"agreement with the environment: {_cell(m['live/agreement'])} "
                 f"(over {int(m['live/agreement_n'])} readable verdicts)")
    lines.append(f"{'':<14} {'judge success':>13} {'judge failure':>13} {'masked':>6}")
    for row, label in (("env_success", "env success"), ("env_failure", "env failure")):
        c = report.confusion[row]
        lines.append(f"{label:<14} {c['judge_success']:>13} {c['judge_failure']:>13} {c['masked']:>6}")
    return "\n".join(lines)


def write_live_summary(
    out_dir: str | Path, report: LiveReport, rows: Sequence[TaskResult], env_name: str, judge_name: str,
    max_steps: int,
) -> Path:
    """``summary.json`` (the ``guirl eval online`` keys env / max_steps / tasks, plus the judge's report)
    and ``verdicts.jsonl`` (one line per episode)."""
    out = Path(out_dir)
    summary = {
        "env": env_name, "max_steps": max_steps, "tasks": [asdict(r) for r in rows], "judge": judge_name,
        "metrics": report.metrics, "confusion": report.confusion, "judged_tasks": report.tasks,
    }
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    lines = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in report.verdicts)
    (out / "verdicts.jsonl").write_text(lines, encoding="utf-8")
    return path


def evaluate_live(
    env_name: str,
    tasks: Sequence[str | None],
    episodes: int,
    policy: Policy | Callable[..., Any] | str,
    judge: Judge,
    out_dir: str | Path,
    judge_name: str = "judge",
    max_steps: int = LITE_BENCH_MAX_STEPS,
    **run_kwargs: Any,
) -> tuple[LiveReport, list[TaskResult], list[Episode]]:
    """Run, export, judge and write ``summary.json`` + ``verdicts.jsonl``; ``run_kwargs`` go to
    :func:`run_live_episodes` (workers, env_kwargs, seed, history, action_format)."""
    rows, exported, _ = run_live_episodes(env_name, tasks, episodes, policy, out_dir, max_steps, **run_kwargs)
    report = judge_live(exported, judge, out_dir, max_steps)
    write_live_summary(out_dir, report, rows, env_name, judge_name, max_steps)
    return report, rows, exported

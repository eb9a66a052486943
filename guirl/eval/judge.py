"""LLM-as-judge outcome evaluation (Lite-Bench protocol, docs/methods.md section 1).

Each episode's exported log (:func:`guirl.judges.outcome.export_episode_log`)
and screenshots go to a Judge in one ``role="outcome"`` request; the verdict
is checked (:func:`guirl.judges.outcome.check_outcome_verdict`) and the
episode succeeds iff outcome is ``success`` and the run was compliant. An
unreadable verdict (judge garbage, HTTP failure) counts as a failure and is
counted in ``judge/unreadable``. The success rate comes with a Wilson
interval (:func:`guirl.eval.stats.wilson_interval`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from guirl.data.schema import Episode
from guirl.eval.stats import success_rate
from guirl.judges.base import Judge, JudgeRequest, JudgeResult
from guirl.judges.outcome import (
    LITE_BENCH_MAX_STEPS,
    check_outcome_verdict,
    export_episode_log,
    outcome_prompt,
    verdict_success,
)


@dataclass
class JudgeEvaluation:
    metrics: dict[str, float]
    verdicts: list[dict] = field(default_factory=list)  # per episode: id, success, verdict, reason


def outcome_request(
    episode: Episode, root: str | Path | None, max_steps: int = LITE_BENCH_MAX_STEPS, max_images: int = 18
) -> JudgeRequest:
    """The judge request for one episode: prompt with the log, and the last
    ``max_images`` screenshots of the logged steps (read from ``root``)."""
    log = export_episode_log(episode, max_steps)
    images = []
    if root is not None:
        for step in episode.steps[:max_steps][-max_images:]:
            path = Path(root) / step.screenshot.path
            if not path.is_file():
                raise FileNotFoundError(
                    f"episode {episode.id} step {step.index}: screenshot {path} is missing; "
                    "pass the dataset directory the episodes were written to"
                )
            with Image.open(path) as img:
                images.append(img.convert("RGB"))
    return JudgeRequest(
        role="outcome", prompt=outcome_prompt(log, max_steps), images=images, fields={"log": log, "episode": episode}
    )


def judge_episodes(
    episodes: list[Episode],
    judge: Judge,
    root: str | Path | None = None,
    max_steps: int = LITE_BENCH_MAX_STEPS,
    confidence: float = 0.95,
) -> JudgeEvaluation:
    """Judge every episode; metrics ``judge/success_rate`` (+ ``_ci_low`` / ``_ci_high``),
    ``judge/compliance``, ``judge/unreadable``, and, where episodes carry
    ``success``, ``judge/agreement`` with that ground truth."""
    verdicts, wins, compliant, unreadable, agree, known = [], 0, 0, 0, 0, 0
    for ep in episodes:
        result: JudgeResult = judge(outcome_request(ep, root, max_steps))
        checked = check_outcome_verdict(result.raw) if result.ok else result
        ok = verdict_success(checked)
        wins += ok
        compliant += bool(checked.ok and checked.verdict.get("compliant"))
        unreadable += not checked.ok
        if ep.success is not None:
            known += 1
            agree += ok == ep.success
        verdicts.append(
            {"episode": ep.id, "success": ok, "verdict": checked.verdict, "ok": checked.ok, "reason": checked.reason
             or str(checked.verdict.get("reason", ""))}
        )
    n = len(episodes)
    rate = success_rate(wins, n, confidence)
    metrics = {
        "judge/episodes": float(n),
        "judge/success_rate": rate["rate"],
        "judge/success_rate_ci_low": rate["ci_low"],
        "judge/success_rate_ci_high": rate["ci_high"],
        "judge/compliance": compliant / n if n else 0.0,
        "judge/unreadable": float(unreadable),
    }
    if known:
        metrics["judge/agreement"] = agree / known
    return JudgeEvaluation(metrics, verdicts)

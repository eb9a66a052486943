"""The output side of ATG (:mod:`guirl.datagen.atg`): episodes in guirl's trajectory schema and the figures.

:func:`to_episode` turns one run's outcome into a schema Episode (screenshots saved as PNG, the whole
propose / vote / retry log in ``Step.extra["atg"]``, ERROR label on steps no proposal won);
:func:`count_outcome` / :func:`atg_metrics` give proposal accuracy before and after correction, retries
and vote agreement with the oracle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from guirl.actions import Action
from guirl.data.schema import Episode, HistoryItem, ImageRef, Step, StepLabel
from guirl.envs.base import Observation

SOURCE = "guirl.datagen.atg"


@dataclass
class ShownStep:
    """One executed step as later steps see it."""

    screenshot: Image.Image
    item: HistoryItem
    index: int


@dataclass
class StepOutcome:
    """One step of an episode: what was executed and its ATG log (``Step.extra["atg"]``)."""

    screenshot: Image.Image
    observation: Observation
    history: list[ShownStep]
    with_image: list[bool]  # per history item: shown with its screenshot
    action: Action | None
    text: str
    log: dict[str, Any]
    committed: bool
    reward: float = 0.0


@dataclass
class EpisodeOutcome:
    task: str
    seed: int
    instruction: str
    steps: list[StepOutcome] = field(default_factory=list)
    success: bool = False
    failure_reason: str | None = None


def _save(image: Image.Image, out: Path, rel: str) -> ImageRef:
    (out / rel).parent.mkdir(parents=True, exist_ok=True)
    image.save(out / rel)
    return ImageRef(path=rel, width=image.width, height=image.height)


def to_episode(outcome: EpisodeOutcome, episode_id: str, out: Path, platform: str) -> Episode:
    """The schema Episode of an outcome, its screenshots saved under ``out/images/<episode_id>/``."""
    refs = [_save(s.screenshot, out, f"images/{episode_id}/{i:03d}.png") for i, s in enumerate(outcome.steps)]
    steps = []
    for i, s in enumerate(outcome.steps):
        obs = s.observation
        history = [p.item.model_copy(update={"screenshot": refs[p.index] if shown else None})
                   for p, shown in zip(s.history, s.with_image, strict=True)]
        steps.append(Step(index=i, screenshot=refs[i], history=history, valid_actions=list(obs.valid_actions or []),
                          action=s.action, output=s.text, a11y=obs.a11y, a11y_frame=obs.frame, sub_goal=obs.sub_goal,
                          subtasks=obs.subtasks, label=StepLabel.CORRECT if s.committed else StepLabel.ERROR,
                          reward=s.reward, extra={"atg": s.log}))
    return Episode(id=episode_id, instruction=outcome.instruction or "(reset failed)", steps=steps, source=SOURCE,
                   platform=platform if platform in ("desktop", "web", "mobile") else "unknown", task=outcome.task,
                   success=outcome.success, failure_reason=outcome.failure_reason, extra={"seed": outcome.seed})


def count_outcome(outcome: EpisodeOutcome, counts: Counter) -> None:
    """Add one episode's figures to ``counts`` (the names :func:`atg_metrics` reads)."""
    counts["episodes"] += 1
    counts["successes"] += outcome.success
    for step in outcome.steps:
        its = step.log["iterations"]
        counts["steps"] += 1
        counts["proposals"] += len(its)
        counts["retries"] += len(its) - 1
        counts["committed_steps"] += step.committed
        counts["noop_steps"] += step.action is None
        counts["unparsed_proposals"] += sum(it["action"] is None for it in its)
        for key in ("yes", "no", "masked"):
            counts[f"votes_{key}"] += sum(it[key] for it in its)
        first, executed = its[0]["oracle_accepts"], its[step.log["executed_iteration"]]["oracle_accepts"]
        if first is not None:
            counts["steps_with_oracle"] += 1
            counts["first_accepted"] += first
            counts["executed_accepted"] += executed
            for it in its:
                counts["votes_agree_oracle"] += sum(v["yes"] is it["oracle_accepts"] for v in it["votes"])
                counts["votes_unmasked_with_oracle"] += sum(v["yes"] is not None for v in it["votes"])


def atg_metrics(counts: Counter) -> dict[str, float]:
    """Namespaced figures: success rate, proposal accuracy before / after correction, retries per step, votes."""
    def ratio(a: str, b: str) -> float:
        return counts[a] / counts[b] if counts[b] else float("nan")

    metrics = {f"atg/{k}": float(v) for k, v in sorted(counts.items())}
    metrics.update({
        "atg/success_rate": ratio("successes", "episodes"),
        "atg/first_proposal_accuracy": ratio("first_accepted", "steps_with_oracle"),
        "atg/executed_accuracy": ratio("executed_accepted", "steps_with_oracle"),
        "atg/retries_per_step": ratio("retries", "steps"),
        "atg/committed_rate": ratio("committed_steps", "steps"),
        "atg/unparsed_rate": ratio("unparsed_proposals", "proposals"),
        "atg/masked_vote_rate": counts["votes_masked"] / max(1, counts["votes_yes"] + counts["votes_no"]
                                                             + counts["votes_masked"]),
        "atg/verifier_oracle_agreement": ratio("votes_agree_oracle", "votes_unmasked_with_oracle"),
    })
    return metrics

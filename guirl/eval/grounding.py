"""Grounding accuracy: does the predicted point fall in the target element?

ScreenSpot-style evaluation (SeeClick, ScreenSpot-v2, ScreenSpot-Pro): each
sample is an Episode with one Step whose first valid action holds the
target box; the prediction is any Action with a point (or a box, whose
centre counts - as ScreenSpot-Pro does for box outputs). A prediction
without a point, or a ParseFailure, is a miss that stays in the
denominator (ScreenSpot-Pro's ``wrong_format``, SeeClick's "wrong format");
their number is ``grounding/unparsed``. The hit test is the ``inclusive``
rule of SeeClick's ``screenspot_test`` and ScreenSpot-Pro's
``eval_sample_positive_gt`` (``x1 <= x <= x2 and y1 <= y <= y2``).
Accuracy is reported overall (micro: hits / samples, ScreenSpot-Pro's
``overall``) and broken down by platform, element type (text / icon),
ScreenSpot-Pro group (its ``leaderboard_simple_style``) and application
(``leaderboard_detailed_style``), using the keys the adapters write into
``Step.extra`` (``platform``, ``element_type``, ``group``, ``application``).
Not computed: ScreenSpot-Pro's negative (refusal) samples and its
platform x instruction-style x gt-type cross tables.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.schema import Episode
from guirl.matching.rules import MatchRule, point_matches
from guirl.matching.step import in_screen

BREAKDOWNS = ("platform", "element_type", "group", "application")


@dataclass
class GroundingResult:
    metrics: dict[str, float]
    breakdown: dict[str, dict[str, dict[str, float]]]  # key -> value -> {accuracy, n}
    hits: list[bool] = field(default_factory=list)


def sample_category(episode: Episode, key: str) -> str:
    """``platform`` / ``element_type`` / ``group`` of a grounding sample."""
    step = episode.steps[0]
    if key == "platform":
        return str(step.extra.get("platform") or episode.platform)
    return str(step.extra.get(key) or "unknown")


def grounding_hit(episode: Episode, pred: Action | ParseFailure | None, rule: MatchRule | str) -> bool:
    if not episode.steps or not episode.steps[0].valid_actions:
        raise ValueError(f"grounding sample {episode.id!r} has no step with a target action")
    step = episode.steps[0]
    if not pred:
        return False
    w, h = step.screenshot.width, step.screenshot.height
    point = in_screen(pred, w, h).target_point()
    if point is None:
        return False
    return any(
        point_matches(
            point,
            target_box=gold.box,
            target_point=gold.point,
            screen_size=(w, h),
            rule=rule,
            a11y=step.a11y,
        )
        for gold in (in_screen(g, w, h) for g in step.valid_actions)
    )


_MOVING = (ActionType.SCROLL, ActionType.SWIPE, ActionType.DRAG)


def _grounded(action: Action) -> bool:
    """An action whose target is an element on screen: a point or a box, and not a movement."""
    return (action.point is not None or action.box is not None) and action.type not in _MOVING


def grounding_samples(episodes: list[Episode]) -> tuple[list[Episode], int]:
    """One-step grounding samples from any episodes, and how many steps had no coordinate target.

    A ScreenSpot sample (one step) is kept as it is; every step of a trajectory
    (AndroidControl, AITW, GUI-Odyssey, Mind2Web) whose ground truth (its first
    valid action) targets an element, a point or a box that is not the start of
    a scroll, swipe or drag, becomes its own sample ``<episode>#<step>`` (its step
    instruction, where the layout has one, is the query); steps without a
    coordinate target (type, scroll by direction, keys, finish), in
    trajectories or one-step records, are counted and left out.
    """
    samples, skipped = [], 0
    for ep in episodes:
        for step in ep.steps:
            if not step.valid_actions or not _grounded(step.valid_actions[0]):
                skipped += 1
            elif len(ep.steps) == 1:
                samples.append(ep)
            else:
                samples.append(ep.model_copy(update={"id": f"{ep.id}#{step.index}", "steps": [step]}))
    return samples, skipped


def evaluate_grounding(
    samples: list[Episode],
    predictions: list[Action | ParseFailure | None],
    rule: MatchRule | str = "inclusive",
) -> GroundingResult:
    """Accuracy of ``predictions[i]`` on ``samples[i]`` (keys ``grounding/...``)."""
    if len(samples) != len(predictions):
        raise ValueError(f"got {len(samples)} grounding samples but {len(predictions)} predictions")
    hits = [grounding_hit(ep, p, rule) for ep, p in zip(samples, predictions, strict=True)]
    counts: dict[str, dict[str, list[int]]] = {k: defaultdict(lambda: [0, 0]) for k in BREAKDOWNS}
    for ep, hit in zip(samples, hits, strict=True):
        for key in BREAKDOWNS:
            cell = counts[key][sample_category(ep, key)]
            cell[0] += hit
            cell[1] += 1
    breakdown = {
        key: {v: {"accuracy": c[0] / c[1], "n": float(c[1])} for v, c in sorted(cells.items())}
        for key, cells in counts.items()
    }
    n = len(samples)
    unparsed = sum(not p or p.target_point() is None for p in predictions)
    metrics = {
        "grounding/accuracy": sum(hits) / n if n else 0.0,
        "grounding/samples": float(n),
        "grounding/unparsed": float(unparsed),
    }
    return GroundingResult(metrics, breakdown, hits)

"""UI-S1 step reward and CCPO's distance-based coordinate reward (METHODS.md 5).

Step reward (semi-online RL): ``w_fmt r_fmt + w_act r_act`` (0.1 / 0.9), with
``r_act`` = 1.0 full match (type and every parameter), 0.5 type only, 0.1
parsed but wrong type, 0 unparsable; ``r_fmt`` = 1 when the output parses
(and, with ``require_think``, has a ``<think>`` block).

CCPO distance reward: for coordinate actions, the binary position check is
replaced by ``r_dist(d) = 1 if d <= tau_min else exp(-(d - tau_min) / tau_min)``,
``d`` = unit-frame distance from the predicted point to the ground-truth
point (or to the ground-truth box, 0 inside); ``tau_min`` = 0.04 (0.1 on
AITW). The curve is ours (the paper gives none; METHODS.md 5). In the step
reward (``coordinate_reward='distance'``) a type-matched coordinate action
scores ``0.5 + 0.5 * r_dist`` when its other parameters match, so it slides
from "type only" (0.5) to "full match" (1.0).

Checked against the UI-S1 authors' code (X-PLUG/MobileAgent,
``UI-S1/verl/utils/reward_score/gui_traj.py`` and ``gui_utils/utils.py``):
levels 1.0 / 0.5 / 0.1 / 0 and ``0.1 r_fmt + 0.9 r_act`` agree. Where they differ
(METHODS.md 5 does not define "format" or "full match"; the UI-S1 paper is not
among the seeds):

- format -- METHODS.md: "format 0.1" (default here: the output parses) /
  code: 1 iff the ``<think>`` block is non-empty (``require_think=True``);
- full match -- guirl default (``match='strict'``): :func:`params_match` (point in
  the box, or within ``point_tolerance`` of the point; text equal after
  normalisation; status checked) / code (``match='code'``): click and long press
  inside the box enlarged 1.2x about its centre *or* within 0.04 (unit frame,
  x / W and y / H) of the point; text a case-insensitive substring either way;
  swipe by direction only; terminate and wait by type only;
- code only, not reproduced: ``HARMFUL`` / ``NEUTRAL`` step annotations
  (``1 - r_act`` / 0.5), and a ``key`` ground truth that expects a ``type`` prediction.

CCPO: the authors' code is not public (searched); the distance curve follows
METHODS.md 5's suggestion.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.actions.types import OPPOSITE_DIRECTION
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    parse_completions,
    register_reward,
    require_sized_ground_truth,
    valid_actions_column,
)
from guirl.rewards.matching import (
    action_point,
    box_in_frame,
    distance_to_box,
    params_match,
    point_in_box,
    point_in_frame,
)

UNIT = Frame.unit()
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def distance_reward(distance: float, tau_min: float = 0.04) -> float:
    """``1`` within ``tau_min``, then ``exp(-(d - tau_min) / tau_min)``; in (0, 1]."""
    if tau_min <= 0:
        raise ValueError(f"tau_min must be positive, got {tau_min}")
    return 1.0 if distance <= tau_min else math.exp(-(distance - tau_min) / tau_min)


def coordinate_distance(pred: Action, gt: Action) -> float | None:
    """Unit-frame distance from ``pred``'s point to ``gt``'s point (or box); None if either has none."""
    p = action_point(pred, UNIT)
    if p is None:
        return None
    if gt.point is not None:
        return math.dist(p, point_in_frame(gt.point, gt.frame, UNIT))
    if gt.box is not None:
        return distance_to_box(p, box_in_frame(gt.box, gt.frame, UNIT))
    return None


def _without_position(gt: Action) -> Action:
    return gt.model_copy(update={"point": None, "box": None})


def _swipe_direction(action: Action) -> str | None:
    """``direction``, else derived from ``point -> end_point`` (dominant axis; guirl's
    content-movement convention, the opposite of the finger's movement)."""
    if action.direction is not None:
        return action.direction
    if action.point is None or action.end_point is None:
        return None
    start = point_in_frame(action.point, action.frame, UNIT)
    end = point_in_frame(action.end_point, action.frame, UNIT)
    dx, dy = end[0] - start[0], end[1] - start[1]
    finger = ("right" if dx > 0 else "left") if abs(dx) > abs(dy) else ("down" if dy > 0 else "up")
    return OPPOSITE_DIRECTION[finger]


def code_params_match(pred: Action, gt: Action, point_tolerance: float = 0.04, box_scale: float = 1.2) -> bool:
    """UI-S1 code's full match (``check_response_match``), types assumed equal.

    Position: inside ``gt.box`` enlarged ``box_scale`` about its centre, or within
    ``point_tolerance`` (unit frame) of ``gt.point``; text: case-insensitive
    substring either way; swipe: direction only; status (terminate) not checked.
    """
    if gt.type is ActionType.SWIPE:
        want = _swipe_direction(gt)
        return want is not None and _swipe_direction(pred) == want
    if gt.box is not None or gt.point is not None:
        p = action_point(pred, UNIT)
        if p is None:
            return False
        hit = False
        if gt.box is not None:
            x1, y1, x2, y2 = box_in_frame(gt.box, gt.frame, UNIT)
            cx, cy, hw, hh = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * box_scale / 2, (y2 - y1) * box_scale / 2
            hit = point_in_box(p, (cx - hw, cy - hh, cx + hw, cy + hh))
        if not hit and gt.point is not None:
            hit = math.dist(p, point_in_frame(gt.point, gt.frame, UNIT)) <= point_tolerance
        if not hit:
            return False
    if gt.text is not None:
        if pred.text is None:
            return False
        a, b = pred.text.lower().strip(), gt.text.lower().strip()
        if a not in b and b not in a:
            return False
    if gt.keys is not None and set(pred.keys or ()) != set(gt.keys):
        return False
    return gt.direction is None or pred.direction == gt.direction


def _full_match(pred: Action, gt: Action, match: str, point_tolerance: float) -> bool:
    if match == "strict":
        return params_match(pred, gt, UNIT, point_tolerance)
    if match == "code":
        return code_params_match(pred, gt, point_tolerance)
    raise ValueError(f"unknown match {match!r}; valid: ['strict', 'code']")


def uis1_action_score(
    pred: Action | ParseFailure,
    gt: Action,
    *,
    point_tolerance: float = 0.04,
    coordinate_reward: str = "binary",
    tau_min: float = 0.04,
    match: str = "strict",
) -> float:
    """UI-S1 ``r_act`` in {0, 0.1, 0.5, 1} (``binary``); with ``distance``, [0.5, 1]
    for type-matched coordinate actions. ``match``: ``strict`` | ``code`` (module docstring)."""
    if not pred:
        return 0.0
    if pred.type is not gt.type:
        return 0.1
    if coordinate_reward == "binary" or (gt.point is None and gt.box is None):
        return 1.0 if _full_match(pred, gt, match, point_tolerance) else 0.5
    if coordinate_reward != "distance":
        raise ValueError(f"unknown coordinate_reward {coordinate_reward!r}; valid: ['binary', 'distance']")
    d = coordinate_distance(pred, gt)
    if d is None or not _full_match(pred, _without_position(gt), match, point_tolerance):
        return 0.5
    return 0.5 + 0.5 * distance_reward(d, tau_min)


def _has_think(text: str) -> bool:
    """A non-empty ``<think>`` block (UI-S1 code: ``think_str.strip()`` non-empty)."""
    m = _THINK.search(text)
    return m is not None and bool(m.group(1).strip())


@register_reward("uis1_step")
class StepReward(Reward):
    """UI-S1 / CCPO step reward ``w_fmt r_fmt + w_act max_{a* in A*_t} r_act`` in [0, w_fmt + w_act].

    The UI-S1 authors' code variant: ``require_think=True, match='code'``.
    """

    def __init__(
        self,
        fmt: str = "uis1",
        w_format: float = 0.1,
        w_action: float = 0.9,
        require_think: bool = False,
        point_tolerance: float = 0.04,
        coordinate_reward: str = "binary",
        tau_min: float = 0.04,
        match: str = "strict",
    ) -> None:
        self.fmt, self.w_format, self.w_action, self.require_think = fmt, w_format, w_action, require_think
        self.params = {
            "point_tolerance": point_tolerance,
            "coordinate_reward": coordinate_reward,
            "tau_min": tau_min,
            "match": match,
        }
        self.score_range = (0.0, w_format + w_action)

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        valid = valid_actions_column(columns, len(completions))
        require_sized_ground_truth(valid)
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        scores, fmt_scores, act_scores = [], [], []
        for completion, pred, actions in zip(completions, preds, valid, strict=True):
            fmt = float(bool(pred) and (not self.require_think or _has_think(completion_text(completion))))
            act = max(uis1_action_score(pred, gt, **self.params) for gt in actions)  # type: ignore[arg-type]
            fmt_scores.append(fmt)
            act_scores.append(act)
            scores.append(self.w_format * fmt + self.w_action * act)
        return RewardOutput(scores, {"format": fmt_scores, "action": act_scores})


@register_reward("ccpo_distance")
class DistanceReward(Reward):
    """CCPO coordinate reward in [0, 1]: ``r_dist`` for coordinate ground truths (type must
    match, other parameters too), 1/0 full match for the others; max over A*_t."""

    def __init__(self, fmt: str = "uis1", tau_min: float = 0.04, point_tolerance: float = 0.04) -> None:
        self.fmt, self.tau_min, self.point_tolerance = fmt, tau_min, point_tolerance

    def one(self, pred: Action | ParseFailure, gt: Action) -> float:
        if not pred or pred.type is not gt.type:
            return 0.0
        if gt.point is None and gt.box is None:
            return float(params_match(pred, gt, UNIT, self.point_tolerance))
        d = coordinate_distance(pred, gt)
        if d is None or not params_match(pred, _without_position(gt), UNIT, self.point_tolerance):
            return 0.0
        return distance_reward(d, self.tau_min)

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        valid = valid_actions_column(columns, len(completions))
        require_sized_ground_truth(valid)
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        scores = [max(self.one(p, gt) for gt in actions) for p, actions in zip(preds, valid, strict=True)]
        return RewardOutput(scores, {"parsed": [float(bool(p)) for p in preds]})

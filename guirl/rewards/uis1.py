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
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, Frame, ParseFailure
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    parse_completions,
    register_reward,
    require_sized_ground_truth,
    valid_actions_column,
)
from guirl.rewards.matching import action_point, box_in_frame, distance_to_box, params_match, point_in_frame

UNIT = Frame.unit()
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


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


def uis1_action_score(
    pred: Action | ParseFailure,
    gt: Action,
    *,
    point_tolerance: float = 0.04,
    coordinate_reward: str = "binary",
    tau_min: float = 0.04,
) -> float:
    """UI-S1 ``r_act`` in {0, 0.1, 0.5, 1} (``binary``); with ``distance``, [0.5, 1]
    for type-matched coordinate actions."""
    if not pred:
        return 0.0
    if pred.type is not gt.type:
        return 0.1
    if coordinate_reward == "binary" or (gt.point is None and gt.box is None):
        return 1.0 if params_match(pred, gt, UNIT, point_tolerance) else 0.5
    if coordinate_reward != "distance":
        raise ValueError(f"unknown coordinate_reward {coordinate_reward!r}; valid: ['binary', 'distance']")
    d = coordinate_distance(pred, gt)
    if d is None or not params_match(pred, _without_position(gt), UNIT, point_tolerance):
        return 0.5
    return 0.5 + 0.5 * distance_reward(d, tau_min)


@register_reward("uis1_step")
class StepReward(Reward):
    """UI-S1 / CCPO step reward ``w_fmt r_fmt + w_act max_{a* in A*_t} r_act`` in [0, w_fmt + w_act]."""

    def __init__(
        self,
        fmt: str = "uis1",
        w_format: float = 0.1,
        w_action: float = 0.9,
        require_think: bool = False,
        point_tolerance: float = 0.04,
        coordinate_reward: str = "binary",
        tau_min: float = 0.04,
    ) -> None:
        self.fmt, self.w_format, self.w_action, self.require_think = fmt, w_format, w_action, require_think
        self.params = dict(point_tolerance=point_tolerance, coordinate_reward=coordinate_reward, tau_min=tau_min)
        self.score_range = (0.0, w_format + w_action)

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        valid = valid_actions_column(columns, len(completions))
        require_sized_ground_truth(valid)
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        scores, fmt_scores, act_scores = [], [], []
        for completion, pred, actions in zip(completions, preds, valid, strict=True):
            fmt = float(
                bool(pred) and (not self.require_think or _THINK.search(completion_text(completion)) is not None)
            )
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

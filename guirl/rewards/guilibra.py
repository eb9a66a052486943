"""GUI-Libra's partially verifiable reward (METHODS.md 4; EasyR1 ``r1gui.py``).

``r = w_fmt r_fmt + (1 - w_fmt) r_acc`` with ``w_fmt = 0.1`` and
``r_acc = r_type * r_value * r_ground``:

- type: equal after name normalisation (the parser and
  :mod:`guirl.actions.names` map ``long_press``/``LongPress`` -> LONG_PRESS,
  ``type``/``Write`` -> TYPE, ``press_back`` -> BACK, ...);
- click / long press: the point inside a ground-truth box, or within
  normalised squared distance ``< 0.05 ** 2`` of a ground-truth point (unit frame);
- type(write) / select / scroll / open app / swipe / terminate / answer:
  :func:`~guirl.rewards.matching.guilibra_f1` of the values >= 0.5 (word
  sets, brackets dropped; two single words: a substring counts);
  the value of scroll/swipe is the direction, of terminate the status;
- any other type: 1 (not verifiable beyond its type). A ground truth with no
  value to compare also counts as matched (departure: the code compares
  with an empty string).

Format: 1 if the answer parses; 0 if a reasoning sample lacks ``<think>``
or a grounding sample (``is_grounding`` column) has one. Several valid
actions: the best accuracy over A*_t.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    get_column,
    parse_completions,
    register_reward,
    require_sized_ground_truth,
    valid_actions_column,
)
from guirl.rewards.matching import (
    action_point,
    action_value,
    box_in_frame,
    guilibra_f1,
    point_in_box,
    point_in_frame,
)

UNIT = Frame.unit()
_GROUNDED = frozenset({ActionType.CLICK, ActionType.LONG_PRESS})
_VALUED = frozenset(
    {
        ActionType.TYPE,
        ActionType.SELECT,
        ActionType.SCROLL,
        ActionType.OPEN_APP,
        ActionType.SWIPE,
        ActionType.TERMINATE,
        ActionType.ANSWER,
    }
)


def guilibra_accuracy(
    pred: Action | ParseFailure, gt: Action, *, f1_threshold: float = 0.5, point_radius: float = 0.05
) -> float:
    """``r_acc`` in {0, 1} of one prediction against one ground-truth action."""
    if not pred or pred.type is not gt.type:
        return 0.0
    if gt.type in _GROUNDED:
        p = action_point(pred, UNIT)
        if p is None:
            return 0.0
        if gt.box is not None:
            return float(point_in_box(p, box_in_frame(gt.box, gt.frame, UNIT)))
        if gt.point is not None:
            g = point_in_frame(gt.point, gt.frame, UNIT)
            return float((p[0] - g[0]) ** 2 + (p[1] - g[1]) ** 2 < point_radius**2)
        return 1.0
    if gt.type in _VALUED:
        reference = action_value(gt)
        if reference is None:
            return 1.0
        return float(guilibra_f1(action_value(pred), reference) >= f1_threshold)
    return 1.0


def guilibra_format(text: str, pred: Action | ParseFailure, is_grounding: bool) -> float:
    if not pred:
        return 0.0
    has_think = "<think>" in text
    return 0.0 if has_think == bool(is_grounding) else 1.0


@register_reward("guilibra")
class PartiallyVerifiableReward(Reward):
    """``w_fmt r_fmt + (1 - w_fmt) max_{a* in A*_t} r_acc`` in [0, 1]."""

    def __init__(
        self, fmt: str = "guilibra", w_format: float = 0.1, f1_threshold: float = 0.5, point_radius: float = 0.05
    ) -> None:
        if not 0.0 <= w_format <= 1.0 or not math.isfinite(w_format):
            raise ValueError(f"w_format must be in [0, 1], got {w_format}")
        self.fmt, self.w_format, self.f1_threshold, self.point_radius = fmt, w_format, f1_threshold, point_radius

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        n = len(completions)
        valid = valid_actions_column(columns, n)
        grounding = get_column(columns, "is_grounding", n, False)
        require_sized_ground_truth(valid)
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        scores, fmt_scores, acc_scores = [], [], []
        for completion, pred, actions, is_grounding in zip(completions, preds, valid, grounding, strict=True):
            fmt = guilibra_format(completion_text(completion), pred, bool(is_grounding))
            acc = max(
                guilibra_accuracy(pred, gt, f1_threshold=self.f1_threshold, point_radius=self.point_radius)
                for gt in actions
            )
            fmt_scores.append(fmt)
            acc_scores.append(acc)
            scores.append(self.w_format * fmt + (1.0 - self.w_format) * acc)
        return RewardOutput(scores, {"format": fmt_scores, "accuracy": acc_scores})

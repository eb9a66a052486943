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

Format (the authors' ``r1gui_format_reward``): the whole completion is an
optional ``<think>..</think>`` followed by ``<answer>..</answer>`` and nothing
else; the answer is a JSON object (or, failing JSON, its four fields can be
read field by field) with string ``action_type``, ``action_description`` and
``value`` and a ``point_2d`` of two integers or ``"none"``. Then 0 if a
reasoning sample lacks ``<think>`` or a grounding sample (``is_grounding``
column) has one. ``format_rule="parse"`` instead gives 1 whenever guirl's
lenient parser reads an action. Points must lie strictly inside a
ground-truth box, as in the authors' check. Several valid actions: the best
accuracy over A*_t.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.actions.formats.guilibra import answer_fields_by_pattern
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
            x1, y1, x2, y2 = box_in_frame(gt.box, gt.frame, UNIT)
            return float(x1 < p[0] < x2 and y1 < p[1] < y2)  # strictly inside, as the authors check
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


_OUTER = re.compile(r"^(?:<think>.*?</think>\s*)?<answer>.*?</answer>$", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_TEXT_KEYS = ("action_type", "action_description", "value")


def _answer_fields(body: str) -> Any:
    """The answer's fields: JSON if it loads, else each field read on its own
    (a near-JSON answer still counts when all four are there, the point as a list)."""
    try:
        return json.loads(body)
    except ValueError:
        fields = answer_fields_by_pattern(body)
        return fields if isinstance(fields.get("point_2d"), list) else None


def answer_well_formed(text: str) -> bool:
    """The authors' structural format check of one completion (see module doc).

    >>> answer_well_formed('<think>t</think><answer>{"action_type": "Click", '
    ...     '"action_description": "d", "value": "None", "point_2d": [3, 4]}</answer>')
    True
    >>> answer_well_formed('ok <answer>{"action_type": "Click"}</answer>')  # text before, missing keys
    False
    """
    if not _OUTER.match(text):
        return False
    fields = _answer_fields(_ANSWER.search(text).group(1).strip())  # type: ignore[union-attr]
    if not isinstance(fields, dict) or any(k not in fields for k in (*_TEXT_KEYS, "point_2d")):
        return False
    if not all(isinstance(fields[k], str) for k in _TEXT_KEYS):
        return False
    point = fields["point_2d"]
    if isinstance(point, list):
        return len(point) == 2 and all(isinstance(v, int) for v in point)
    return isinstance(point, str) and point.lower() == "none"


def guilibra_format(text: str, pred: Action | ParseFailure, is_grounding: bool, rule: str = "authors") -> float:
    """``r_fmt`` in {0, 1}: the answer's structure (``rule``), then the think rule."""
    well_formed = answer_well_formed(text) if rule == "authors" else bool(pred)
    if not well_formed:
        return 0.0
    has_think = "<think>" in text
    return 0.0 if has_think == bool(is_grounding) else 1.0


@register_reward("guilibra")
class PartiallyVerifiableReward(Reward):
    """``w_fmt r_fmt + (1 - w_fmt) max_{a* in A*_t} r_acc`` in [0, 1]."""

    def __init__(
        self,
        fmt: str = "guilibra",
        w_format: float = 0.1,
        f1_threshold: float = 0.5,
        point_radius: float = 0.05,
        format_rule: str = "authors",
    ) -> None:
        if not 0.0 <= w_format <= 1.0 or not math.isfinite(w_format):
            raise ValueError(f"w_format must be in [0, 1], got {w_format}")
        if format_rule not in ("authors", "parse"):
            raise ValueError(f"format_rule must be 'authors' or 'parse', got {format_rule!r}")
        self.fmt, self.w_format, self.f1_threshold, self.point_radius = fmt, w_format, f1_threshold, point_radius
        self.format_rule = format_rule

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        n = len(completions)
        valid = valid_actions_column(columns, n)
        grounding = get_column(columns, "is_grounding", n, False)
        require_sized_ground_truth(valid)
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        scores, fmt_scores, acc_scores = [], [], []
        for completion, pred, actions, is_grounding in zip(completions, preds, valid, grounding, strict=True):
            fmt = guilibra_format(completion_text(completion), pred, bool(is_grounding), self.format_rule)
            acc = max(
                guilibra_accuracy(pred, gt, f1_threshold=self.f1_threshold, point_radius=self.point_radius)
                for gt in actions
            )
            fmt_scores.append(fmt)
            acc_scores.append(acc)
            scores.append(self.w_format * fmt + (1.0 - self.w_format) * acc)
        return RewardOutput(scores, {"format": fmt_scores, "accuracy": acc_scores})

"""GUI-Libra's partially verifiable reward (docs/methods.md section 4; the authors' EasyR1 ``r1gui.py``).

``r = w_fmt r_fmt + (1 - w_fmt) r_acc`` with ``w_fmt = 0.1`` and
``r_acc = r_type * r_value * r_ground``, the best over A*_t. Three rules
(``format_rule``), read against ``EasyR1/examples/reward_function/r1gui.py``
of the GUI-Libra code (seooyxx/GUI-Libra):

``"paper"`` (default) - the authors' intent, with the bugs of their code fixed:

- format: the whole completion is an optional ``<think>..</think>`` then
  ``<answer>..</answer>`` and nothing else; the answer is a JSON object
  (or, failing JSON, its four fields read one by one: the repair the code
  means to do) with string ``action_type``, ``action_description`` and
  ``value`` and a ``point_2d`` of two integers or ``"none"``. Then 0 if a
  reasoning sample has no ``<think>..</think>`` or a grounding sample
  (``is_grounding`` column) has one.
- the action is read from the first ``<answer>..</answer>`` only, by guirl's
  parser (so ``"action_type" : "Click"`` with a space before the colon reads);
  type names of prediction and ground truth are both normalised
  (``long_press``/``LongPress`` -> LONG_PRESS, ``type``/``Write`` -> TYPE, ...);
- click / long press: strictly inside the ground-truth box (as the code
  checks), *or* within normalised squared distance ``< 0.05 ** 2`` of its
  point (unit frame). A ground truth with both is a hit on either (docs/methods.md
  4's "or"; the code tests only the box);
- write / select / scroll / open app / swipe / terminate / answer:
  :func:`~guirl.matching.text.guilibra_f1` >= 0.5 on the values (the
  direction of scroll/swipe in guirl's convention, the status of terminate);
  a KeyboardPress or Write with an empty value is not a readable action (0);
- any other type: 1. A ground truth with no value or no position to compare
  counts as matched (departure: the code compares with an empty string / fails).

``"authors"`` - :mod:`r1gui.py` as it runs, bugs included. Its accuracy is
computed on the step's own ``ground_truth`` record when the
``authors_check`` column holds it (guirl's GUI-Libra reader keeps it; see
:func:`authors_record_accuracy`), exactly as the code reads that record:

- values are the record's lower-cased ``gt_input_text``: a Write target
  ``"None"`` is matched by a predicted ``"None"``; a Terminate target's
  status word (``infeasible``, ``done``, ``complete``, ``fail``, ...) by the
  same word (guirl's reader turns these into a success / failure status);
- a record without ``gt_bbox`` and ``gt_point_2d``, or whose ``gt_bbox`` is
  not a list (``"none"``), or without ``gt_input_text``, makes the code raise
  before any comparison: accuracy 0 for every action type (a Terminate too);
- positions in the code's own arithmetic: ``gt_bbox`` / 1000 against the
  predicted point / (``image_width_new``, ``image_height_new``), else
  (``image_width``, ``image_height``), so a point on a box edge in those
  units misses (guirl's screen-pixel copy of the box can round it inside).

Without that column (a bare guirl Action as ground truth) the same rules
are applied to the Action (:func:`authors_reference`), which can differ from
the record on exactly the cases above. On both paths:

- its JSON-repair fallback never runs (its coordinate pattern
  ``\\{.*\\((\\d+),\\s*(\\d+))\\s*.*\\}`` has an unbalanced parenthesis, the
  ``re.error`` is swallowed), so an answer that is not JSON has format 0;
- the action is read by regular expressions on the first ``<answer>`` body:
  ``"action_type":\\s*"(.*?)"`` (a space before the colon finds nothing:
  type "no action", accuracy 0), ``"value":\\s*"(.*?)"`` (missing: the text
  "no input text") and integer ``point_2d`` only (a float point, or none, is
  read as (0, 0));
- the prediction's type name is lower-cased but not normalised; only the
  ground truth's is (``Write``/``write`` match a TYPE ground truth, ``type``
  does not);
- values are the raw lower-cased strings: a scroll direction scores by the
  F1 of the whole value against the ground-truth word ("scroll down" vs
  "down": F1 2/3, a hit; "scroll the list down": 0.4, a miss); a swipe is
  compared in finger direction, as written;
- KeyboardPress (and NavigateBack, Wait, ...) is scored on its type alone,
  any value, empty included; Write with an empty value has F1 0 (a miss);
- a ground truth with both a box and a point is tested on its box only, one
  with no position (or a valued one with an empty value) is a miss.

``"parse"`` - lenient: format 1 whenever guirl's parser reads an action
anywhere in the completion; accuracy as ``"paper"`` on that action.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure, parse_action
from guirl.actions.formats.guilibra import answer_fields_by_pattern
from guirl.matching.text import guilibra_f1
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    get_column,
    output_frames,
    register_reward,
    require_sized_ground_truth,
    valid_actions_column,
)
from guirl.rewards.guilibra_authors import (
    AuthorsAnswer,
    authors_record_accuracy,
    authors_reference,
    first_answer,
    read_authors_answer,
)
from guirl.rewards.matching import action_point, action_value, box_in_frame, point_in_frame

UNIT = Frame.unit()
FORMAT_RULES = ("paper", "authors", "parse")
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


def _ground_hit(p: tuple[float, float], gt: Action, point_radius: float, box_only: bool) -> bool:
    if gt.box is not None:
        x1, y1, x2, y2 = box_in_frame(gt.box, gt.frame, UNIT)
        if x1 < p[0] < x2 and y1 < p[1] < y2:  # strictly inside, as the authors check
            return True
        if box_only:
            return False
    if gt.point is not None:
        g = point_in_frame(gt.point, gt.frame, UNIT)
        return (p[0] - g[0]) ** 2 + (p[1] - g[1]) ** 2 < point_radius**2
    return False


def guilibra_accuracy(
    pred: Action | ParseFailure, gt: Action, *, f1_threshold: float = 0.5, point_radius: float = 0.05
) -> float:
    """``r_acc`` in {0, 1} of one prediction against one ground-truth action (``"paper"`` rule)."""
    if not pred or pred.type is not gt.type:
        return 0.0
    if gt.type in _GROUNDED:
        if gt.box is None and gt.point is None:
            return 1.0
        p = action_point(pred, UNIT)
        return float(p is not None and _ground_hit(p, gt, point_radius, box_only=False))
    if gt.type in _VALUED:
        reference = action_value(gt)
        if reference is None:
            return 1.0
        return float(guilibra_f1(action_value(pred), reference) >= f1_threshold)
    return 1.0


# -- the authors' reading (guirl/rewards/guilibra_authors.py) ---------------------


def authors_accuracy(
    answer: AuthorsAnswer, gt: Action, frame: Frame, *, f1_threshold: float = 0.5, point_radius: float = 0.05
) -> float:
    """``r1gui_accuracy_reward`` in {0, 1}; ``frame``: the one the prediction's point is in."""
    name, reference = authors_reference(gt)
    if answer.action_type != name:
        return 0.0
    if gt.type in _GROUNDED:
        p = point_in_frame(answer.point, frame, UNIT)
        return float(_ground_hit(p, gt, point_radius, box_only=True))
    if gt.type in _VALUED:
        return float(guilibra_f1(answer.value, reference) >= f1_threshold)
    return 1.0


# -- format -----------------------------------------------------------------------

_OUTER = re.compile(r"^(?:<think>.*?</think>\s*)?<answer>.*?</answer>$", re.DOTALL)
_TEXT_KEYS = ("action_type", "action_description", "value")


def _answer_fields(body: str, repair: bool) -> Any:
    """The answer's fields: JSON if it loads; else, with ``repair``, each field read on
    its own (a near-JSON answer counts when all four are there, the point as a list)."""
    try:
        return json.loads(body)
    except ValueError:
        if not repair:  # the authors' repair never runs (module docstring)
            return None
        fields = answer_fields_by_pattern(body)
        return fields if isinstance(fields.get("point_2d"), list) else None


def answer_well_formed(text: str, rule: str = "paper") -> bool:
    """The authors' structural format check of one completion (module docstring).

    >>> answer_well_formed('<think>t</think><answer>{"action_type": "Click", '
    ...     '"action_description": "d", "value": "None", "point_2d": [3, 4]}</answer>')
    True
    >>> answer_well_formed('ok <answer>{"action_type": "Click"}</answer>')  # text before, missing keys
    False
    """
    if not _OUTER.match(text):
        return False
    fields = _answer_fields(first_answer(text) or "", repair=rule != "authors")
    if not isinstance(fields, dict) or any(k not in fields for k in (*_TEXT_KEYS, "point_2d")):
        return False
    if not all(isinstance(fields[k], str) for k in _TEXT_KEYS):
        return False
    point = fields["point_2d"]
    if isinstance(point, list):  # the authors' isinstance(v, int) also passes JSON true / false
        ints = all(isinstance(v, int) and (rule == "authors" or not isinstance(v, bool)) for v in point)
        return len(point) == 2 and ints
    return isinstance(point, str) and point.lower() == "none"


def guilibra_format(text: str, pred: Action | ParseFailure, is_grounding: bool, rule: str = "paper") -> float:
    """``r_fmt`` in {0, 1}: the answer's structure (``rule``), then the think rule
    (reasoning = both ``<think>`` and ``</think>`` present, as the authors test)."""
    well_formed = bool(pred) if rule == "parse" else answer_well_formed(text, rule)
    if not well_formed:
        return 0.0
    has_think = "<think>" in text and "</think>" in text
    return 0.0 if has_think == bool(is_grounding) else 1.0


def read_answer_action(text: str, fmt: str, frame: Frame) -> Action | ParseFailure:
    """The action of the first ``<answer>..</answer>`` of ``text`` (guirl's parser on it alone)."""
    body = first_answer(text)
    if body is None:
        return ParseFailure(reason="guilibra: no <answer>..</answer> in the output", raw=text[:200])
    return parse_action(f"<answer>{body}</answer>", fmt, frame)


@register_reward("guilibra")
class PartiallyVerifiableReward(Reward):
    """``w_fmt r_fmt + (1 - w_fmt) max_{a* in A*_t} r_acc`` in [0, 1] (``format_rule``: module docstring).

    >>> from guirl.actions import Action, Frame
    >>> gt = [Action(type="type", text="hello", frame=Frame.screen(1000, 1000))]
    >>> out = '<think>t</think><answer>{"action_type": "type", "action_description": "d", ' \\
    ...       '"value": "hello", "point_2d": "none"}</answer>'
    >>> make = lambda rule: PartiallyVerifiableReward(format_rule=rule)
    >>> make("paper")([out], valid_actions=[gt], output_frame=[Frame.screen(1000, 1000)])  # "type" -> TYPE
    [1.0]
    >>> make("authors")([out], valid_actions=[gt], output_frame=[Frame.screen(1000, 1000)])  # "type" != "write"
    [0.1]
    """

    def __init__(
        self,
        fmt: str = "guilibra",
        w_format: float = 0.1,
        f1_threshold: float = 0.5,
        point_radius: float = 0.05,
        format_rule: str = "paper",
    ) -> None:
        if not 0.0 <= w_format <= 1.0 or not math.isfinite(w_format):
            raise ValueError(f"w_format must be in [0, 1], got {w_format}")
        if format_rule not in FORMAT_RULES:
            raise ValueError(f"format_rule must be one of {list(FORMAT_RULES)}, got {format_rule!r}")
        self.fmt, self.w_format, self.f1_threshold, self.point_radius = fmt, w_format, f1_threshold, point_radius
        self.format_rule = format_rule

    def accuracy(
        self, text: str, pred: Action | ParseFailure, actions: list[Action], frame: Frame, record: Any = None
    ) -> float:
        """``r_acc``; ``record``: the step's ``authors_check`` (read by the ``"authors"`` rule only)."""
        params = {"f1_threshold": self.f1_threshold, "point_radius": self.point_radius}
        if self.format_rule == "authors":
            answer = read_authors_answer(text)
            if record is not None:  # the authors score the record they are given, one per step
                return authors_record_accuracy(answer, record, **params)
            return max(authors_accuracy(answer, gt, frame, **params) for gt in actions)
        return max(guilibra_accuracy(pred, gt, **params) for gt in actions)

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        n = len(completions)
        valid = valid_actions_column(columns, n)
        grounding = get_column(columns, "is_grounding", n, False)
        records = get_column(columns, "authors_check", n, None)
        require_sized_ground_truth(valid)
        frames = output_frames(n, self.fmt, columns, require_sized=True)
        scores, fmt_scores, acc_scores = [], [], []
        rows = zip(completions, frames, valid, grounding, records, strict=True)
        for completion, frame, actions, is_grounding, record in rows:
            text = completion_text(completion)
            if self.format_rule == "parse":
                pred = parse_action(text, self.fmt, frame)
            else:
                pred = read_answer_action(text, self.fmt, frame)
            fmt = guilibra_format(text, pred, bool(is_grounding), self.format_rule)
            acc = self.accuracy(text, pred, actions, frame, record)
            fmt_scores.append(fmt)
            acc_scores.append(acc)
            scores.append(self.w_format * fmt + (1.0 - self.w_format) * acc)
        return RewardOutput(scores, {"format": fmt_scores, "accuracy": acc_scores})

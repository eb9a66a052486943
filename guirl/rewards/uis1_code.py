"""The UI-S1 authors' ``gui_traj.py`` reward, reproduced for ``uis1_step(mode="code")``.

Holds the parse of the raw ``<think>`` / ``<action>`` output, the authors'
coordinate normalisation and matching rules (``gui_utils/utils.py``), the
conversion of a guirl :class:`~guirl.actions.Action` into their JSON, and the
resulting action score. :mod:`guirl.rewards.uis1` documents the rules in full,
with the line numbers of the authors' code, and re-exports every name here.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.actions.formats._mobile import GUIRL_TO_ADB
from guirl.actions.types import OPPOSITE_DIRECTION
from guirl.rewards.matching import action_point, box_in_frame, point_in_frame

UNIT = Frame.unit()
#: ``gui_utils/utils.py``: ``BBOX_ENLARGE_FACTOR`` and ``POINT_DISTANCE_THRESHOLD``.
BBOX_ENLARGE_FACTOR = 1.2
POINT_DISTANCE_THRESHOLD = 0.04
THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)


@dataclass(frozen=True)
class CodeResponse:
    """What ``JsonFormat.parse_response`` returns when it does not raise: the stripped
    ``<think>`` text (None without a block) and the ``json.loads`` of the ``<action>`` text."""

    think: str | None
    action: Any

    @property
    def format_score(self) -> float:
        """``gui_traj.py``: 1 iff ``think_str is not None and think_str.strip()``."""
        return float(self.think is not None and bool(self.think.strip()))


def _first_tag(text: str, pattern: re.Pattern[str]) -> str | None:
    """``x/data/text.py`` ``parse_tags`` for one tag: first non-greedy match, stripped."""
    m = pattern.search(text)
    return None if m is None else m.group(1).strip()


def parse_uis1_code(text: str) -> CodeResponse | None:
    """The authors' parse (``JsonFormat.parse_response``): plain ``json.loads`` of the first
    ``<action>`` block; None where theirs raises (no block, or text that does not decode).

    >>> parse_uis1_code('<think>t</think><action>{"action": "click", "coordinate": [1, 2]}</action>').action
    {'action': 'click', 'coordinate': [1, 2]}
    >>> parse_uis1_code('<action>{"action": "wait"}}</action>') is None  # '}}': json.loads raises
    True
    >>> parse_uis1_code('<action>[{"action": "wait"}]</action>').action  # a list decodes
    [{'action': 'wait'}]
    """
    action = _first_tag(text, _ACTION)
    if action is None:  # json.loads(None): TypeError
        return None
    try:
        decoded = json.loads(action)
    except (ValueError, RecursionError):
        return None
    return CodeResponse(_first_tag(text, THINK_BLOCK), decoded)


def _frame_size(frame: Frame) -> tuple[float, float]:
    """The divisors of ``norm_coordinate``: the frame's width and height (scale for a relative frame)."""
    return frame.from_unit((1.0, 1.0))


def _norm_coordinate(action: Any, width: float, height: float) -> Any:
    """``gui_utils/utils.py`` ``norm_coordinate`` on a deep copy (raises where theirs does)."""
    action = copy.deepcopy(action)
    if "candidate_bbox" in action and len(action["candidate_bbox"]) == 4:
        x, y, w, h = action["candidate_bbox"]
        action["candidate_bbox"] = [[x / width, y / height, w / width, h / height]]
    if "coordinate" in action:
        action["coordinate"] = [action["coordinate"][0] / width, action["coordinate"][1] / height]
    if "coordinate2" in action:
        action["coordinate2"] = [action["coordinate2"][0] / width, action["coordinate2"][1] / height]
    return action


def _check_text(pred: Any, gt: str) -> bool:
    """``check_text`` (not restricted): case-insensitive substring either way."""
    a, b = pred.lower().strip(), gt.lower().strip()
    return a in b or b in a


def _predict_direction(start: Any, end: Any) -> str:
    """``predict_direction``: the finger direction, dominant axis, ``up`` on a tie."""
    x1, y1 = start
    x2, y2 = end
    dx, dy = x2 - x1, y2 - y1
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def _check_click(click: Any, boxes: list, gt_point: Any, threshold: float) -> bool:
    """``check_click`` with ``enlarge_bbox`` (x1.2 about the centre, edges inclusive), else
    the Euclidean unit distance to the point (``np.linalg.norm``) within ``threshold``."""
    for x_min, y_min, x_max, y_max in boxes:
        cx, cy = (x_min + x_max) / 2, (y_min + y_max) / 2
        w, h = (x_max - x_min) * BBOX_ENLARGE_FACTOR, (y_max - y_min) * BBOX_ENLARGE_FACTOR
        if cx - w / 2 <= click[0] <= cx + w / 2 and cy - h / 2 <= click[1] <= cy + h / 2:
            return True
    if gt_point is not None:
        dx, dy = gt_point[0] - click[0], gt_point[1] - click[1]
        return math.sqrt(dx * dx + dy * dy) <= threshold
    return False


_SWAP_VERTICAL = {"down": "up", "up": "down"}


def _check_response_match(pred: Any, gt: dict, threshold: float) -> tuple[bool, bool]:
    """``check_response_match``: (type match, full match) of the normalised prediction
    against a unit-frame ground truth; raises where theirs does."""
    kind = gt["action"]
    if kind in ("wait", "terminate"):
        return (True, True) if pred["action"] == kind else (False, False)
    if kind == "system_button":
        if pred["action"] == "system_button":
            return True, gt["button"].lower().strip() == pred["button"].lower().strip()
        return False, False
    if kind in ("type", "answer", "key"):
        if pred["action"] == "type":
            return True, _check_text(pred["text"], gt["text"])
        return False, False
    if kind == "open":
        if pred["action"] == "open":
            return True, _check_text(pred["text"], gt["text"])
        return False, False
    if kind == "swipe":
        if pred["action"] == "swipe":
            want = gt["direction"] if "direction" in gt else _predict_direction(gt["coordinate"], gt["coordinate2"])
            got = _predict_direction(pred["coordinate"], pred["coordinate2"])
            return True, got == _SWAP_VERTICAL.get(want, want)
        return False, False
    if kind in ("long_press", "click"):
        if pred["action"] == kind:
            return True, _check_click(pred["coordinate"], gt.get("candidate_bbox", []), gt["coordinate"], threshold)
        return False, False
    return False, False


_SYSTEM_BUTTONS = {ActionType.BACK: "Back", ActionType.HOME: "Home", ActionType.ENTER: "Enter"}
_AUTHORS_NAMES = {ActionType.OPEN_APP: "open"}


def authors_action(action: Action, ground_truth: bool = False) -> dict[str, Any]:
    """``action`` as the authors' JSON, coordinates in the unit frame (x / W, y / H).

    ``ground_truth``: their ``check_options`` (a click's box as ``candidate_bbox``,
    its point as ``coordinate`` or None; a swipe without a path as its
    ``direction`` in their data's convention: up / down kept, left / right
    reversed). See the :mod:`guirl.rewards.uis1` docstring.
    """
    kind = action.type
    if kind in _SYSTEM_BUTTONS or (kind is ActionType.KEY and action.keys == ("menu",)):
        return {"action": "system_button", "button": _SYSTEM_BUTTONS.get(kind, "Menu")}
    out: dict[str, Any] = {"action": _AUTHORS_NAMES.get(kind, kind.value)}
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS):
        if ground_truth:
            p = None if action.point is None else point_in_frame(action.point, action.frame, UNIT)
            out["coordinate"] = None if p is None else list(p)
            out["candidate_bbox"] = [] if action.box is None else [list(box_in_frame(action.box, action.frame, UNIT))]
        else:
            p = action_point(action, UNIT)
            if p is not None:
                out["coordinate"] = list(p)
    elif kind is ActionType.SWIPE:
        if action.point is not None:
            out["coordinate"] = list(point_in_frame(action.point, action.frame, UNIT))
        if action.end_point is not None:
            out["coordinate2"] = list(point_in_frame(action.end_point, action.frame, UNIT))
        # TrajDataset's check is a copy of the action: a path, when there is one, is what is compared
        if action.direction is not None and (action.point is None or action.end_point is None):
            d = action.direction
            if ground_truth:  # their evaluation data's field: vertical = content, horizontal = finger
                out["direction"] = d if d in ("up", "down") else OPPOSITE_DIRECTION[d]
            else:  # a prediction writes its finger direction (the format's "direction" variant)
                out["direction"] = OPPOSITE_DIRECTION[d]
    elif kind is ActionType.KEY:
        keys = action.keys or ()
        out["text"] = GUIRL_TO_ADB.get(keys[0], keys[0]) if len(keys) == 1 else "+".join(keys)
    elif action.text is not None:
        out["text"] = action.text
    if kind is ActionType.TERMINATE and action.status is not None:
        out["status"] = action.status
    return out


def _apply_annotation(score: float, check: Any) -> float:
    """``gui_traj.py`` after a match: a ``HARMFUL`` step (a negative example) scores ``1 - r_act``, a
    ``NEUTRAL`` one 0.5; a check without ``annotation`` (their lookup raises after the score is set) or
    with any other value keeps ``r_act``."""
    try:
        annotation = check["annotation"]
    except (KeyError, TypeError, IndexError):
        return score
    if annotation == "HARMFUL":
        return 1.0 - score
    if annotation == "NEUTRAL":
        return 0.5
    return score


def _raw_prediction(pred: Any, pred_frame: Frame | None, caller: str) -> tuple[Any, float, float]:
    """The prediction as the authors' JSON and the size its coordinates are normalised by."""
    if isinstance(pred, Action):
        return authors_action(pred), 1.0, 1.0
    if pred_frame is None:
        raise ValueError(f"{caller} needs pred_frame, the frame the raw prediction's coordinates are in")
    return (pred, *_frame_size(pred_frame))


def code_check_score(
    pred: Any,
    check: Any,
    *,
    screen_size: tuple[float, float],
    pred_frame: Frame | None = None,
    point_tolerance: float = POINT_DISTANCE_THRESHOLD,
) -> float:
    """The authors' ``r_act`` against one raw check, as ``gui_traj.py`` receives it.

    ``check``: the step's ``check_options`` (UI-S1's JSON: ``action``,
    ``coordinate`` / ``candidate_bbox`` / ``coordinate2`` in pixels of the
    ``screen_size`` screenshot, ``text``, ``button``, ``direction``,
    ``annotation``), used as written: ``norm_coordinate`` divides its
    coordinates by the screenshot size and a ``candidate_bbox`` only when it
    is one flat box (a list of boxes stays in pixels, so only the point can
    match); a ``direction`` is read before any path; key names are compared
    as written; an ``open`` check wants a predicted ``open``. Then the step's
    ``annotation`` (:func:`_apply_annotation`). ``pred`` as in
    :func:`code_action_score`. 0 where their matching raises (the annotation
    is then not reached).

    >>> check = {"action": "click", "coordinate": [500, 500], "annotation": "HARMFUL"}
    >>> code_check_score({"action": "click", "coordinate": [500, 500]}, check, screen_size=(1000, 1000),
    ...                  pred_frame=Frame.screen(1000, 1000))
    0.0
    """
    if isinstance(pred, ParseFailure):
        return 0.0
    pred, width, height = _raw_prediction(pred, pred_frame, "code_check_score")
    try:
        pred = _norm_coordinate(pred, width, height)
        want = _norm_coordinate(check, float(screen_size[0]), float(screen_size[1]))
        type_match, full_match = _check_response_match(pred, want, point_tolerance)
    except Exception:  # gui_traj.py: a bare except around the whole scoring; r_act stays 0
        return 0.0
    score = (1.0 if full_match else 0.5) if type_match else 0.1
    return _apply_annotation(score, check)


def code_action_score(
    pred: Any,
    gt: Action,
    *,
    pred_frame: Frame | None = None,
    point_tolerance: float = POINT_DISTANCE_THRESHOLD,
) -> float:
    """The authors' ``r_act`` (``gui_traj.py``): 1.0 / 0.5 / 0.1, and 0 where their matching raises.

    ``pred``: the decoded ``<action>`` JSON (any JSON value, coordinates in
    ``pred_frame``, required), a guirl :class:`Action` (written as their JSON),
    or a :class:`ParseFailure` (their parse raised: 0).
    """
    if isinstance(pred, ParseFailure):
        return 0.0
    pred, width, height = _raw_prediction(pred, pred_frame, "code_action_score")
    want = authors_action(gt, ground_truth=True)
    try:
        type_match, full_match = _check_response_match(_norm_coordinate(pred, width, height), want, point_tolerance)
    except Exception:  # gui_traj.py: a bare except around the whole scoring; r_act stays 0
        return 0.0
    if not type_match:
        return 0.1
    return 1.0 if full_match else 0.5

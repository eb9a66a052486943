"""GUI-Libra's reward as the authors' code reads it (``format_rule="authors"`` of :mod:`guirl.rewards.guilibra`).

``r1gui.py`` reads a prediction with three regular expressions (action type, value, integer ``point_2d``) and
checks it against the step's ``ground_truth`` record as the data holds it, every failure scoring 0 (its bare
``except``). Kept apart from the paper rule so each reads on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from guirl.actions import Action, ActionType
from guirl.actions.formats.guilibra import TYPE_NAMES
from guirl.actions.types import OPPOSITE_DIRECTION
from guirl.data.adapters.guilibra import ALIASES
from guirl.matching.text import guilibra_f1

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_AUTHORS_TYPE = re.compile(r'"action_type":\s*"(.*?)"')
_AUTHORS_VALUE = re.compile(r'"value":\s*"(.*?)"')
_AUTHORS_POINT = re.compile(r'"point_2d"\s*:\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]')


def first_answer(text: str) -> str | None:
    """The stripped body of the first ``<answer>..</answer>``, None without one."""
    match = _ANSWER.search(text)
    return None if match is None else match.group(1).strip()


@dataclass(frozen=True)
class AuthorsAnswer:
    """A prediction as ``r1gui.py`` reads it (``extract_action`` / ``extract_input_text`` / ``extract_coord``)."""

    action_type: str  # lower-cased; "no action" when not found
    value: str  # lower-cased; "no input text" when not found
    point: tuple[int, int]  # (0, 0) when no integer point_2d is found


def read_authors_answer(text: str) -> AuthorsAnswer:
    """Read one completion as the authors' regular expressions do.

    >>> read_authors_answer('<answer>{"action_type" : "Click", "point_2d": [1.5, 2]}</answer>')
    AuthorsAnswer(action_type='no action', value='no input text', point=(0, 0))
    """
    body = first_answer(text) or ""
    kind, value, point = _AUTHORS_TYPE.search(body), _AUTHORS_VALUE.search(body), _AUTHORS_POINT.search(body)
    return AuthorsAnswer(
        action_type=kind.group(1).lower() if kind else "no action",
        value=value.group(1).lower() if value else "no input text",
        point=(int(point.group(1)), int(point.group(2))) if point else (0, 0),
    )


def authors_reference(gt: Action) -> tuple[str, str]:
    """``(gt_action, gt_input_text)`` of a ground truth as the authors' records hold it:
    the GUI-Libra name lower-cased, and the value (a swipe in finger direction)."""
    name = TYPE_NAMES.get(gt.type, gt.type.value).lower()
    if gt.type is ActionType.SWIPE:
        value = OPPOSITE_DIRECTION[gt.direction] if gt.direction else ""
    elif gt.type is ActionType.SCROLL:
        value = gt.direction or ""
    elif gt.type is ActionType.KEY:
        value = "+".join(gt.keys or ())
    elif gt.type is ActionType.TERMINATE:
        value = gt.status or gt.text or ""
    else:
        value = gt.text or ""
    return name, value.lower()


#: ``r1gui.py``'s renaming of ground-truth action names (the reader's table)
AUTHORS_ACTION_MAP = ALIASES
_AUTHORS_GROUNDED = ("click", "longpress")
_AUTHORS_VALUED = ("type", "write", "select", "scroll", "openapp", "swipe", "terminate", "answer")


def _authors_unescape(text: str) -> str:
    """The code's ``safe_unicode_unescape``: decode ``\\u`` / ``\\x`` escapes when the text has one."""
    if "\\u" not in text and "\\x" not in text:
        return text
    try:
        return text.encode("utf-8").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def _record_accuracy(answer: AuthorsAnswer, record: Any, f1_threshold: float, point_radius: float) -> float:
    # the lookups run first, in the code's order: any of them raising ends the check with 0
    gt_action = record["gt_action"].lower()
    if "gt_bbox" in record:
        coords = [c / 1000 for c in record["gt_bbox"]]
    elif "gt_point_2d" in record:
        coords = record["gt_point_2d"]
    else:
        raise ValueError("no ground-truth coordinates")
    reference = _authors_unescape(record["gt_input_text"].lower())
    if "image_width_new" in record and "image_height_new" in record:
        width, height = record["image_width_new"], record["image_height_new"]
    else:
        width, height = record["image_width"], record["image_height"]
    px, py = answer.point[0] / width, answer.point[1] / height
    gt_action = AUTHORS_ACTION_MAP.get(gt_action, gt_action)
    if answer.action_type != gt_action:
        return 0.0
    if gt_action in _AUTHORS_GROUNDED:
        if len(coords) == 2:
            return float((px - coords[0]) ** 2 + (py - coords[1]) ** 2 < point_radius**2)
        if len(coords) == 4:
            return float(coords[0] < px < coords[2] and coords[1] < py < coords[3])
        return 0.0
    if gt_action in _AUTHORS_VALUED:
        return float(guilibra_f1(answer.value, reference) >= f1_threshold)
    return 1.0


def authors_record_accuracy(
    answer: AuthorsAnswer, record: Any, *, f1_threshold: float = 0.5, point_radius: float = 0.05
) -> float:
    """``r1gui_accuracy_reward`` in {0, 1} on a GUI-Libra ``ground_truth`` record as the data holds it.

    Everything is read from ``record``: ``gt_action`` (renamed by
    :data:`AUTHORS_ACTION_MAP`), ``gt_bbox`` (0-1000, divided by 1000) or
    ``gt_point_2d`` (used as given), ``gt_input_text`` (lower-cased, escapes
    decoded) and the image size that divides the predicted point. Whatever
    makes the authors' code raise (a missing field, ``gt_bbox: "none"``, a
    string compared with a number) scores 0, as their blanket ``except`` does.

    >>> answer = read_authors_answer('<answer>{"action_type": "Terminate", "value": "infeasible"}</answer>')
    >>> record = {"gt_action": "Terminate", "gt_input_text": "infeasible", "gt_bbox": [-100, -100],
    ...           "image_width": 1080, "image_height": 2400}
    >>> authors_record_accuracy(answer, record), authors_record_accuracy(answer, {**record, "gt_bbox": "none"})
    (1.0, 0.0)
    """
    try:
        return _record_accuracy(answer, record, f1_threshold, point_radius)
    except Exception:  # r1gui_accuracy_reward: a bare except around the whole check
        return 0.0

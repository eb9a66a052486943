"""AndroidControl action parsers for the layouts in :mod:`guirl.data.adapters.androidcontrol_layouts`.

Holds the check that a pixel point lies on its screenshot, the parser of
AndroidControl's own action JSON (TFRecord export, UI-R1's ``gt``) and the
parser of Qwen ``mobile_use`` actions (UI-S1, InfiGUI-R1), which turns one
step into its valid actions. ``androidcontrol_layouts`` re-exports every name.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, Box
from guirl.data.adapters._common import OPPOSITE, direction_from_finger, numbers, record_error, require, to_box

# -- shared checks -----------------------------------------------------------------------------


def pixel_point(value: Any, size: tuple[int, int], file: Path, where: str, field: str) -> tuple[float, float]:
    """``value`` as an (x, y) point in screen pixels, checked to lie on the ``size`` screenshot."""
    x, y = numbers(value, 2, file, where, field)
    check_on_screen(x, y, size, file, where, field)
    return (x, y)


def check_on_screen(x: float, y: float, size: tuple[int, int], file: Path, where: str, field: str) -> None:
    width, height = size
    if not (0 <= x <= width and 0 <= y <= height):
        raise record_error(
            file, where,
            f"{field} ({x:g}, {y:g}) is outside the {width}x{height} screenshot; this layout gives screen pixels "
            "of the step's screenshot (is the point normalised or relative, or the image another one?)",
        )


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


# -- AndroidControl's own action JSON (TFRecord export, UI-R1's ``gt``) -------------------------

_AC_SIMPLE = {"navigate_home": ActionType.HOME, "navigate_back": ActionType.BACK, "wait": ActionType.WAIT}
AC_ACTIONS = ("click", "long_press", "scroll", "type", "input_text", "open_app", *_AC_SIMPLE)


def ac_action(raw: Any, size: tuple[int, int], flip_scroll: bool, file: Path, where: str) -> Action:
    """An AndroidControl action (``action_type`` and its fields; a JSON string or object)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            raise record_error(file, where, f"action is not valid JSON ({err.msg})") from None
    frame = Frame.screen(*size)
    kind = require(raw, "action_type", str, file, where)
    if kind in ("click", "long_press", "type"):
        x = float(require(raw, "x", (int, float), file, where))
        y = float(require(raw, "y", (int, float), file, where))
        check_on_screen(x, y, size, file, where, f"{kind} point 'x', 'y'")
        if kind == "type":  # click at (x, y), type the text, press enter
            text = require(raw, "text", str, file, where)
            return Action(type=ActionType.TYPE, point=(x, y), text=text, frame=frame)
        atype = ActionType.CLICK if kind == "click" else ActionType.LONG_PRESS
        return Action(type=atype, point=(x, y), frame=frame)
    if kind == "scroll":
        direction = require(raw, "direction", str, file, where)
        if direction not in OPPOSITE:
            raise record_error(file, where, f"scroll direction {direction!r} is not one of {sorted(OPPOSITE)}")
        return Action(type=ActionType.SCROLL, direction=OPPOSITE[direction] if flip_scroll else direction)
    if kind == "input_text":
        return Action(type=ActionType.TYPE, text=require(raw, "text", str, file, where))
    if kind == "open_app":
        return Action(type=ActionType.OPEN_APP, text=require(raw, "app_name", str, file, where))
    if kind in _AC_SIMPLE:
        return Action(type=_AC_SIMPLE[kind])
    raise record_error(file, where, f"unknown action_type {kind!r}; AndroidControl has {list(AC_ACTIONS)}")


# -- Qwen mobile_use actions (UI-S1 action_content / check_options, InfiGUI-R1 step_(check_)pams) ----

_BUTTONS = {"back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER}
MOBILE_USE_ACTIONS = ("click", "long_press", "swipe", "type", "open", "system_button", "wait", "terminate",
                      "answer", "key")


def _candidate_boxes(pam: dict, file: Path, where: str) -> list[Box]:
    raw = pam.get("candidate_bbox", [])
    if not isinstance(raw, list) or (raw and not all(isinstance(b, (list, tuple)) for b in raw)):
        raise record_error(
            file, where, f"field 'candidate_bbox' must be a list of [x1, y1, x2, y2] pixel boxes, got {raw!r}"
        )
    return [to_box(b, "xyxy", file, where, f"candidate_bbox[{j}]") for j, b in enumerate(raw)]


def _seconds(pam: dict, file: Path, where: str) -> float | None:
    value = pam.get("time")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise record_error(file, where, f"field 'time' must be a number of seconds, got {value!r}")
    return float(value)


def mobile_use_actions(
    check: Any, content: Any, size: tuple[int, int], reading: str, file: Path, where: str
) -> list[Action]:
    """The valid actions of one step: ``check`` is what the evaluator scores
    (UI-S1 ``check_options``, InfiGUI-R1 ``step_check_pams``), ``content`` the
    action as the model is shown / trained on (``action_content``,
    ``step_pams``), used where ``check`` lacks a field. ``reading`` ("uis1" or
    "infigui") decides how a swipe's direction is read (the
    :mod:`guirl.data.adapters.androidcontrol` docstring)."""
    if not isinstance(check, dict):
        raise record_error(file, where, f"the step's action must be a JSON object, got {check!r}")
    # fields set to null are absent (a Hugging Face / parquet row has every field of every row)
    check = {k: v for k, v in check.items() if v is not None}
    content = {k: v for k, v in content.items() if v is not None} if isinstance(content, dict) else {}
    kind = require(check, "action", str, file, where)
    if content.get("action", kind) != kind:
        raise record_error(
            file, where, f"the scored action is {kind!r} but the model's action is {content.get('action')!r}; "
            "the two must agree"
        )
    pam = {**content, **check}  # check's fields win; content fills in (time, coordinate2, ...)
    frame = Frame.screen(*size)
    if kind in ("click", "long_press"):
        if "coordinate" not in pam:
            raise record_error(file, where, f"{kind} needs field 'coordinate' [x, y] (pixels)")
        point = pixel_point(pam["coordinate"], size, file, where, "coordinate")
        atype = ActionType.CLICK if kind == "click" else ActionType.LONG_PRESS
        amount = _seconds(pam, file, where) if kind == "long_press" else None
        boxes = _candidate_boxes(check, file, where)
        # each candidate box is an accepted region (the evaluators test them all, enlarged 1.2x);
        # without one only the distance to the point counts
        return [Action(type=atype, point=point, box=b, amount=amount, frame=frame) for b in boxes] or [
            Action(type=atype, point=point, amount=amount, frame=frame)
        ]
    if kind == "open":
        text = require(pam, "text", str, file, where)
        actions = [Action(type=ActionType.OPEN_APP, text=text)]
        boxes = _candidate_boxes(check, file, where)
        if boxes:  # a click on the app's icon also counts, scored against the first box's centre
            point = _centre(boxes[0])
            actions += [Action(type=ActionType.CLICK, point=point, box=b, frame=frame) for b in boxes]
        return actions
    if kind in ("type", "answer"):
        atype = ActionType.TYPE if kind == "type" else ActionType.ANSWER
        return [Action(type=atype, text=require(pam, "text", str, file, where))]
    if kind == "key":
        return [Action(type=ActionType.KEY, keys=(require(pam, "text", str, file, where),))]
    if kind == "system_button":
        button = require(pam, "button", str, file, where)
        key = button.strip().lower()
        if key == "menu":
            return [Action(type=ActionType.KEY, keys=("menu",))]
        if key not in _BUTTONS:
            raise record_error(file, where, f"system_button {button!r} is not one of Back, Home, Menu, Enter")
        return [Action(type=_BUTTONS[key])]
    if kind == "wait":
        return [Action(type=ActionType.WAIT, amount=_seconds(pam, file, where))]
    if kind == "terminate":
        status = require(pam, "status", str, file, where)
        if status not in ("success", "failure"):
            raise record_error(file, where, f"terminate status {status!r} is not 'success' or 'failure'")
        return [Action(type=ActionType.TERMINATE, status=status)]
    if kind == "swipe":
        return [_swipe(check, pam, size, reading, file, where)]
    raise record_error(file, where, f"unknown action {kind!r}; the mobile_use action space has {list(MOBILE_USE_ACTIONS)}")


def _swipe(check: dict, pam: dict, size: tuple[int, int], reading: str, file: Path, where: str) -> Action:
    raw_dir = check.get("direction")
    if raw_dir is not None and raw_dir not in OPPOSITE:
        raise record_error(file, where, f"swipe direction {raw_dir!r} is not one of {sorted(OPPOSITE)}")
    if reading == "infigui":
        # evaluate_android_control.py: predict_direction(pred coordinate -> coordinate2) == direction,
        # i.e. the direction is the finger's; the content moves the other way
        if raw_dir is None:
            raise record_error(file, where, "swipe needs field 'direction' (what InfiGUI-R1's evaluator compares)")
        return Action(type=ActionType.SWIPE, direction=OPPOSITE[raw_dir])
    start = end = None
    if "coordinate" in pam or "coordinate2" in pam:
        start = pixel_point(pam.get("coordinate"), size, file, where, "coordinate")
        end = pixel_point(pam.get("coordinate2"), size, file, where, "coordinate2")
        if start == end:
            raise record_error(file, where, f"swipe from {list(start)} to {list(end)} has no direction")
    # UI-S1 (qwenvl_utils.py): "the down up is wrong in gt, left right is ok" - the check direction is
    # flipped on the vertical axis only before it is compared with the finger's direction; its paths
    # (action_content) are written the same way. So up/down are the content's, left/right the finger's.
    from_dir = None if raw_dir is None else (raw_dir if raw_dir in ("up", "down") else OPPOSITE[raw_dir])
    from_path = None
    if start is not None and end is not None:
        width, height = size  # predict_direction runs on coordinates normalised by the image size
        from_path = direction_from_finger((start[0] / width, start[1] / height), (end[0] / width, end[1] / height))
    # a direction that disagrees with the path: guirl reads the path (the action performed); the authors' code
    # reads the direction, and their scoring mode (uis1_step mode="code") does, from extra["authors_check"]
    direction = from_path or from_dir
    if direction is None:
        raise record_error(file, where, "swipe needs 'coordinate' and 'coordinate2' (pixels) or a 'direction'")
    return Action(type=ActionType.SWIPE, point=start, end_point=end, direction=direction, frame=Frame.screen(*size))

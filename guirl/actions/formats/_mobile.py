"""The ``mobile_use`` argument dictionary shared by Qwen mobile_use and UI-S1.

Qwen2.5-VL's ``mobile_use`` tool (cookbooks ``agent_function_call.py``),
InfiGUI-R1 and UI-S1 (``x/data/agent/space/std_space.py``) all write one
argument dict: ``{"action": ..., "coordinate": [x, y], "coordinate2": [x, y],
"text": ..., "time": ..., "button": "Back"|"Home"|"Menu"|"Enter", "status":
"success"|"failure"}`` with actions ``key`` (adb keyevent name in ``text``),
``click``, ``long_press`` (``time`` seconds), ``swipe`` (from ``coordinate``
to ``coordinate2``), ``type``, ``answer``, ``system_button``, ``open``
(app name in ``text``), ``wait`` (``time``), ``terminate``.

guirl mapping and its choices:

- ``swipe`` keeps both points (``point``/``end_point``), no direction. Some
  variants (MAI-UI) write ``"direction"`` instead of ``coordinate2``; that is
  the *finger* direction, so guirl stores the opposite (content) direction,
  and writes it back flipped.
- ``long_press`` / ``wait`` ``time`` is kept in ``Action.amount`` (seconds).
- ``system_button`` Back/Home/Enter -> BACK/HOME/ENTER; Menu -> KEY ``menu``
  (written back as ``{"action": "key", "text": "menu"}``).
- ``terminate`` status accepts ``fail``/``failure``/``success``/``complete``.
"""

from __future__ import annotations

from typing import Any

from guirl.actions.formats._common import (
    as_direction,
    as_number,
    as_point,
    as_text,
    build,
    fail,
    fmt_number,
    fmt_point,
    missing,
    normalize_status,
    opposite,
    unsupported,
)
from guirl.actions.frames import Frame
from guirl.actions.names import resolve_action_name, split_key_combo
from guirl.actions.types import Action, ActionType, ParseFailure

MOBILE_TYPES = frozenset(
    {
        ActionType.CLICK,
        ActionType.LONG_PRESS,
        ActionType.SWIPE,
        ActionType.TYPE,
        ActionType.ANSWER,
        ActionType.OPEN_APP,
        ActionType.KEY,
        ActionType.BACK,
        ActionType.HOME,
        ActionType.ENTER,
        ActionType.WAIT,
        ActionType.TERMINATE,
    }
)

_BUTTONS = {"back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER}
_BUTTON_NAMES = {ActionType.BACK: "Back", ActionType.HOME: "Home", ActionType.ENTER: "Enter"}


def mobile_args_to_action(fmt: str, args: dict, text: str, frame: Frame) -> Action | ParseFailure:
    """Convert one mobile_use argument dict into an Action (or say what is wrong)."""
    name = args.get("action")
    if isinstance(name, str) and name.strip().lower() in {"system_button", "systembutton"}:
        button = args.get("button")
        if isinstance(button, str) and button.strip().lower() == "menu":
            return build(fmt, text, frame, type=ActionType.KEY, keys=("menu",))
        if not isinstance(button, str) or button.strip().lower() not in _BUTTONS:
            return fail(fmt, f"system_button needs button Back|Home|Menu|Enter, got {str(button)[:40]!r}", text)
        return build(fmt, text, frame, type=_BUTTONS[button.strip().lower()])
    meaning = resolve_action_name(name)
    if meaning is None:
        return fail(fmt, f"unknown action {str(name)[:40]!r}", text)
    kind = meaning.type
    point = as_point(args.get("coordinate"))
    if args.get("coordinate") is not None and point is None:
        return fail(fmt, "coordinate must be [x, y] with finite numbers", text)
    fields: dict[str, Any] = {"type": kind, "point": point, "status": meaning.status, "direction": meaning.direction}
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS):
        if point is None:
            return fail(fmt, f"{kind.value} needs a coordinate", text)
        fields["amount"] = as_number(args.get("time")) if kind is ActionType.LONG_PRESS else None
    elif kind is ActionType.SWIPE:
        end = as_point(args.get("coordinate2"))
        finger = as_direction(args.get("direction"))
        if end is None and finger is None and meaning.direction is None:
            return fail(fmt, "swipe needs coordinate2 (end point) or a direction", text)
        fields["end_point"] = end
        if end is None and finger is not None:
            fields["direction"] = opposite(finger)
    elif kind in (ActionType.TYPE, ActionType.ANSWER, ActionType.OPEN_APP):
        value = as_text(args.get("text", args.get("app_name")))
        if value is None:
            return fail(fmt, f"{kind.value} needs a text string", text)
        fields["text"] = value
    elif kind is ActionType.KEY:
        keys = split_key_combo(as_text(args.get("text", args.get("key"))) or "")
        if keys is None:
            return fail(fmt, "key needs the key name in text", text)
        fields["keys"] = keys
    elif kind is ActionType.WAIT:
        fields["amount"] = as_number(args.get("time"))
    elif kind is ActionType.TERMINATE and meaning.status is None:
        fields["status"] = normalize_status(args.get("status"))
    if kind not in MOBILE_TYPES:
        return fail(fmt, f"action {kind.value!r} is not in the mobile_use action space", text)
    return build(fmt, text, frame, **fields)


def action_to_mobile_args(fmt: str, action: Action) -> dict[str, Any]:
    """The mobile_use argument dict for ``action`` (coordinates in its own frame)."""
    kind = action.type
    if kind not in MOBILE_TYPES:
        raise unsupported(fmt, action, MOBILE_TYPES)
    point = action.target_point()
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS):
        if point is None:
            raise missing(fmt, action, "a point or box")
        args: dict[str, Any] = {"action": kind.value, "coordinate": fmt_point(point)}
        if kind is ActionType.LONG_PRESS and action.amount is not None:
            args["time"] = fmt_number(action.amount)
        return args
    if kind is ActionType.SWIPE:
        args = {"action": "swipe"}
        if point is not None:
            args["coordinate"] = fmt_point(point)
        if action.end_point is not None:
            args["coordinate2"] = fmt_point(action.end_point)
        elif action.direction is not None:
            args["direction"] = opposite(action.direction)
        else:
            raise missing(fmt, action, "end_point or direction")
        return args
    if kind in (ActionType.TYPE, ActionType.ANSWER, ActionType.OPEN_APP):
        if action.text is None:
            raise missing(fmt, action, "text")
        return {"action": {ActionType.OPEN_APP: "open"}.get(kind, kind.value), "text": action.text}
    if kind is ActionType.KEY:
        if not action.keys:
            raise missing(fmt, action, "keys")
        return {"action": "key", "text": "+".join(action.keys)}
    if kind in _BUTTON_NAMES:
        return {"action": "system_button", "button": _BUTTON_NAMES[kind]}
    if kind is ActionType.WAIT:
        return {"action": "wait"} if action.amount is None else {"action": "wait", "time": fmt_number(action.amount)}
    # terminate
    return {"action": "terminate"} if action.status is None else {"action": "terminate", "status": action.status}

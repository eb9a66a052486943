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
  The schema requires ``time`` for both (the cookbook executor reads
  ``params["time"]``), so an action without an amount is written with
  :data:`DEFAULT_WAIT_SECONDS` / :data:`DEFAULT_LONG_PRESS_SECONDS`.
- ``system_button`` Back/Home/Enter -> BACK/HOME/ENTER; Menu -> KEY ``menu``
  (written back as ``{"action": "key", "text": "menu"}``).
- ``key`` ``text`` is an adb keyevent name (``volume_up``, ``KEYCODE_DEL``):
  names are normalised as everywhere in guirl (``volume_up`` -> ``volumeup``)
  except that Android's ``DEL`` is backspace and ``FORWARD_DEL`` delete. A
  single key is written back in adb spelling (:data:`GUIRL_TO_ADB`).
- ``terminate`` status accepts ``fail``/``failure``/``success``/``complete``;
  the schema requires it, so a TERMINATE without a status is written as
  ``success``.
- ``answer`` is in UI-S1's action space but not in the Qwen cookbook's or
  InfiGUI-R1's ``mobile_use`` enum; guirl reads and writes it for both.
"""

from __future__ import annotations

import re
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
    normalise_status,
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
#: ``time`` written when an action carries none: the tool schema requires it for
#: ``wait`` and ``long_press`` (its executor reads ``params["time"]``). guirl's choice.
DEFAULT_WAIT_SECONDS = 2
DEFAULT_LONG_PRESS_SECONDS = 2
#: adb keyevent names (``KEYCODE_`` stripped, squashed) whose guirl name differs:
#: Android's ``DEL`` is backspace and ``FORWARD_DEL`` is delete.
_ADB_TO_GUIRL = {"del": "backspace", "forwarddel": "delete"}
#: guirl key name -> adb keyevent spelling, for a single key written back.
GUIRL_TO_ADB = {
    "backspace": "del",
    "delete": "forward_del",
    "esc": "escape",
    "volumeup": "volume_up",
    "volumedown": "volume_down",
    "volumemute": "volume_mute",
    "pageup": "page_up",
    "pagedown": "page_down",
    "capslock": "caps_lock",
    "appswitch": "app_switch",
    "dpadup": "dpad_up",
    "dpaddown": "dpad_down",
    "dpadleft": "dpad_left",
    "dpadright": "dpad_right",
    "dpadcenter": "dpad_center",
    "mediaplaypause": "media_play_pause",
}


def _adb_keys(raw: str | None) -> tuple[str, ...] | None:
    """Keys of an adb keyevent name (``volume_up``, ``KEYCODE_DEL``) or a combination (``ctrl+a``)."""
    if raw is None:
        return None
    squashed = re.sub(r"[\s_\-]+", "", raw.lower())
    squashed = squashed[7:] if squashed.startswith("keycode") and len(squashed) > 7 else squashed
    if squashed in _ADB_TO_GUIRL:
        return (_ADB_TO_GUIRL[squashed],)
    return split_key_combo(raw)
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
        keys = _adb_keys(as_text(args.get("text", args.get("key"))))
        if keys is None:
            return fail(fmt, "key needs the key name in text", text)
        fields["keys"] = keys
    elif kind is ActionType.WAIT:
        fields["amount"] = as_number(args.get("time"))
    elif kind is ActionType.TERMINATE and meaning.status is None:
        fields["status"] = normalise_status(args.get("status"))
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
        if kind is ActionType.LONG_PRESS:
            args["time"] = DEFAULT_LONG_PRESS_SECONDS if action.amount is None else fmt_number(action.amount)
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
        if len(action.keys) == 1:
            return {"action": "key", "text": GUIRL_TO_ADB.get(action.keys[0], action.keys[0])}
        return {"action": "key", "text": "+".join(action.keys)}
    if kind in _BUTTON_NAMES:
        return {"action": "system_button", "button": _BUTTON_NAMES[kind]}
    if kind is ActionType.WAIT:
        return {"action": "wait", "time": DEFAULT_WAIT_SECONDS if action.amount is None else fmt_number(action.amount)}
    # terminate: the schema requires a status; an action without one is written as success
    return {"action": "terminate", "status": action.status or "success"}

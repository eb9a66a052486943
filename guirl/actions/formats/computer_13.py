"""OSWorld's ``computer_13`` action space: JSON dicts with ``action_type`` and ``parameters``.

::

    {"action_type": "CLICK", "parameters": {"x": 100, "y": 200, "button": "left", "num_clicks": 1}}

The types and parameters follow OSWorld's ``desktop_env/actions.py``
(``ACTION_SPACE``): MOVE_TO (x, y), CLICK (button, x, y, num_clicks; x/y
optional = at the cursor), MOUSE_DOWN / MOUSE_UP (button), RIGHT_CLICK (x, y),
DOUBLE_CLICK (x, y), DRAG_TO (x, y; the drag starts at the cursor), SCROLL
(dx, dy), TYPING (text), PRESS (key), KEY_DOWN (key), KEY_UP (key), HOTKEY
(keys), WAIT, FAIL, DONE. That list has 16 entries; ``computer_13`` counts the
13 device actions, the last three being the special WAIT / FAIL / DONE.

guirl mapping and choices:

- CLICK's ``button`` / ``num_clicks`` pick CLICK, DOUBLE_CLICK, TRIPLE_CLICK,
  RIGHT_CLICK or MIDDLE_CLICK; those are written back as RIGHT_CLICK /
  DOUBLE_CLICK types, or CLICK with ``num_clicks: 3`` / ``button: "middle"``.
- SCROLL ``dy > 0`` turns the wheel up (OSWorld runs ``pyautogui.vscroll(dy)``):
  guirl ``direction="up"``; ``dx > 0`` = right. ``amount`` = ``abs``. A
  diagonal scroll (both non-zero) is refused. An action without an amount is
  written with :data:`DEFAULT_SCROLL_CLICKS`.
- MOUSE_DOWN / MOUSE_UP / DRAG_TO with a button other than left are refused
  (guirl's Action has no button field).
- A DRAG with a start point is written as a JSON list ``[MOVE_TO, DRAG_TO]``;
  reading, a MOVE_TO directly followed by a DRAG_TO merges into that DRAG.
  Otherwise the first dict with an ``action_type`` is the action. Code fences
  and text around the JSON are tolerated; parameters placed next to
  ``action_type`` (without ``parameters``) are read too, as OSWorld's
  controller (``desktop_env/controllers/python.py``) does.
- OSWorld's prompt asks for ``WAIT`` / ``FAIL`` / ``DONE`` alone (often fenced
  as ```` ```DONE``` ````) and its ``parse_actions_from_string`` accepts the
  bare word; guirl reads that and the dict form ``{"action_type": "DONE"}``.
  They are *written* bare: ``DesktopEnv.step`` (``desktop_env/desktop_env.py``)
  ends the episode only when the action is the string ``"DONE"`` / ``"FAIL"``
  (a dict is accepted but compared with the string, so it never finishes).
- Keys are written in the spelling of OSWorld's ``KEYBOARD_KEYS`` (its
  controller refuses any other): guirl ``cmd`` -> ``command``, ``space`` ->
  ``" "`` (the list has no ``"space"``).

Frame: screen pixels (``Frame.screen()``).
"""

from __future__ import annotations

from typing import Any

from guirl.actions.formats._common import (
    as_number,
    as_point,
    as_text,
    build,
    dumps,
    fail,
    fmt_number,
    iter_json_objects,
    missing,
    unsupported,
)
from guirl.actions.formats.pyautogui import PYAUTOGUI_KEY_NAMES, extract_code
from guirl.actions.formats.registry import ActionFormat, register_format
from guirl.actions.frames import Frame
from guirl.actions.names import normalise_key
from guirl.actions.types import Action, ActionType, ParseFailure

NAME = "computer_13"
DEFAULT_SCROLL_CLICKS = 5

_T = ActionType
_OSWORLD_TYPES = {
    "MOVE_TO": _T.MOVE,
    "CLICK": _T.CLICK,
    "MOUSE_DOWN": _T.MOUSE_DOWN,
    "MOUSE_UP": _T.MOUSE_UP,
    "RIGHT_CLICK": _T.RIGHT_CLICK,
    "DOUBLE_CLICK": _T.DOUBLE_CLICK,
    "DRAG_TO": _T.DRAG,
    "SCROLL": _T.SCROLL,
    "TYPING": _T.TYPE,
    "PRESS": _T.KEY,
    "KEY_DOWN": _T.KEY_DOWN,
    "KEY_UP": _T.KEY_UP,
    "HOTKEY": _T.KEY,
    "WAIT": _T.WAIT,
    "FAIL": _T.TERMINATE,
    "DONE": _T.TERMINATE,
}
SUPPORTED = frozenset({*_OSWORLD_TYPES.values(), _T.TRIPLE_CLICK, _T.MIDDLE_CLICK})
_SPECIAL = ("WAIT", "FAIL", "DONE")
#: guirl key name -> the spelling in OSWorld's ``KEYBOARD_KEYS`` (its executor refuses other names;
#: the list has ``' '`` but not ``'space'``, and ``'command'`` but not ``'cmd'``).
COMPUTER_13_KEY_NAMES = {**PYAUTOGUI_KEY_NAMES, "space": " "}
_CLICKS = {("left", 1): _T.CLICK, ("left", 2): _T.DOUBLE_CLICK, ("left", 3): _T.TRIPLE_CLICK}
_CLICKS.update({("right", 1): _T.RIGHT_CLICK, ("middle", 1): _T.MIDDLE_CLICK})


def _xy(params: dict, required: bool) -> tuple[float, float] | None | str:
    if params.get("x") is None and params.get("y") is None:
        return "x and y are required" if required else None
    point = as_point((params.get("x"), params.get("y")))
    return point if point is not None else "x and y must be finite numbers"


def _key(value: Any) -> str | None:
    return normalise_key(value) if isinstance(value, str) and value else None


def _fields(name: str, params: dict) -> dict[str, Any] | str:
    """guirl fields for one computer_13 action, or why it cannot be read."""
    kind = _OSWORLD_TYPES[name]
    if name in ("MOVE_TO", "DRAG_TO", "CLICK", "RIGHT_CLICK", "DOUBLE_CLICK"):
        point = _xy(params, required=name in ("MOVE_TO", "DRAG_TO"))
        if isinstance(point, str):
            return f"{name}: {point}"
        if name == "CLICK":
            button = params.get("button", "left") or "left"
            button = button.lower() if isinstance(button, str) else button
            clicks = params.get("num_clicks", 1) or 1
            kind = _CLICKS.get((button, clicks)) if isinstance(button, str) and isinstance(clicks, int) else None
            if kind is None:
                return f"CLICK with button={str(button)[:20]!r}, num_clicks={str(clicks)[:20]} is not supported"
        if name == "DRAG_TO" and params.get("button", "left") != "left":
            return "DRAG_TO only with the left button"
        return {"type": kind, "end_point" if name == "DRAG_TO" else "point": point}
    if name in ("MOUSE_DOWN", "MOUSE_UP"):
        if (params.get("button") or "left") != "left":
            return f"{name} only with the left button (guirl's Action has no button field)"
        return {"type": kind}
    if name == "SCROLL":
        dx, dy = as_number(params.get("dx", 0)), as_number(params.get("dy", 0))
        if dx is None or dy is None or (dx == 0) == (dy == 0):
            return "SCROLL needs exactly one non-zero of dx, dy"
        direction = ("up" if dy > 0 else "down") if dy else ("right" if dx > 0 else "left")
        return {"type": kind, "direction": direction, "amount": abs(dy or dx)}
    if name == "TYPING":
        text = as_text(params.get("text"))
        return {"type": kind, "text": text} if text is not None else "TYPING needs text"
    if name in ("PRESS", "KEY_DOWN", "KEY_UP"):
        key = _key(params.get("key"))
        return {"type": kind, "keys": (key,)} if key else f"{name} needs a key name"
    if name == "HOTKEY":
        raw = params.get("keys")
        keys = [_key(k) for k in raw] if isinstance(raw, list) and 0 < len(raw) <= 16 else None
        return {"type": kind, "keys": tuple(keys)} if keys and all(keys) else "HOTKEY needs a list of key names"
    if name == "WAIT":
        return {"type": kind}
    return {"type": kind, "status": "success" if name == "DONE" else "failure"}


def _read(obj: dict) -> dict[str, Any] | str:
    name = obj.get("action_type")
    name = name.strip().upper() if isinstance(name, str) else None
    if name not in _OSWORLD_TYPES:
        return f"action_type {str(obj.get('action_type'))[:40]!r} is not a computer_13 action"
    params = obj.get("parameters")
    if params is None:
        params = {k: v for k, v in obj.items() if k != "action_type"}
    if not isinstance(params, dict):
        return "parameters must be a JSON object"
    return _fields(name, params)


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """Parse one computer_13 output (see module docstring)."""
    found = [obj for _, obj in iter_json_objects(text) if "action_type" in obj][:2]
    if not found:
        token = extract_code(text).strip().upper()
        if token in _SPECIAL:  # OSWorld's prompt: answer ```WAIT```, ```FAIL``` or ```DONE``` alone
            return build(NAME, text, frame, **_fields(token, {}))  # type: ignore[arg-type]
        return fail(NAME, 'no {"action_type": ...} object found', text)
    first = _read(found[0])
    if isinstance(first, str):
        return fail(NAME, first, text)
    if first["type"] is _T.MOVE and len(found) > 1:
        second = _read(found[1])
        if isinstance(second, dict) and second["type"] is _T.DRAG:
            return build(NAME, text, frame, type=_T.DRAG, point=first["point"], end_point=second["end_point"])
    return build(NAME, text, frame, **first)


def _xy_params(point: tuple[float, float]) -> dict[str, int | float]:
    return {"x": fmt_number(point[0]), "y": fmt_number(point[1])}


def _key_name(key: str) -> str:
    return COMPUTER_13_KEY_NAMES.get(key, key)


def _to_dicts(action: Action) -> list[dict[str, Any]]:
    kind, point = action.type, action.target_point()
    if kind in (_T.CLICK, _T.RIGHT_CLICK, _T.DOUBLE_CLICK, _T.TRIPLE_CLICK, _T.MIDDLE_CLICK):
        name = {_T.RIGHT_CLICK: "RIGHT_CLICK", _T.DOUBLE_CLICK: "DOUBLE_CLICK"}.get(kind, "CLICK")
        params: dict[str, Any] = _xy_params(point) if point is not None else {}
        if kind is _T.TRIPLE_CLICK:
            params.update(button="left", num_clicks=3)
        elif kind is _T.MIDDLE_CLICK:
            params.update(button="middle", num_clicks=1)
        return [{"action_type": name, "parameters": params}]
    if kind is _T.MOVE:
        if point is None:
            raise missing(NAME, action, "a point")
        return [{"action_type": "MOVE_TO", "parameters": _xy_params(point)}]
    if kind is _T.DRAG:
        if action.end_point is None:
            raise missing(NAME, action, "end_point")
        drag = {"action_type": "DRAG_TO", "parameters": _xy_params(action.end_point)}
        return [drag] if point is None else [{"action_type": "MOVE_TO", "parameters": _xy_params(point)}, drag]
    if kind in (_T.MOUSE_DOWN, _T.MOUSE_UP):
        return [{"action_type": kind.name, "parameters": {"button": "left"}}]
    if kind is _T.SCROLL:
        if action.direction is None:
            raise missing(NAME, action, "direction")
        size = fmt_number(action.amount) if action.amount is not None else DEFAULT_SCROLL_CLICKS
        signed = size if action.direction in ("up", "right") else -size
        vertical = action.direction in ("up", "down")
        params = {"dx": 0, "dy": signed} if vertical else {"dx": signed, "dy": 0}
        return [{"action_type": "SCROLL", "parameters": params}]
    if kind is _T.TYPE:
        if action.text is None:
            raise missing(NAME, action, "text")
        return [{"action_type": "TYPING", "parameters": {"text": action.text}}]
    if kind in (_T.KEY, _T.KEY_DOWN, _T.KEY_UP):
        if not action.keys:
            raise missing(NAME, action, "keys")
        if kind is _T.KEY and len(action.keys) > 1:
            return [{"action_type": "HOTKEY", "parameters": {"keys": [_key_name(k) for k in action.keys]}}]
        name = {_T.KEY: "PRESS", _T.KEY_DOWN: "KEY_DOWN", _T.KEY_UP: "KEY_UP"}[kind]
        return [{"action_type": name, "parameters": {"key": _key_name(k)}} for k in action.keys]
    raise unsupported(NAME, action, SUPPORTED)


def format(action: Action) -> str:
    """Write ``action`` as a computer_13 JSON dict (a list of two for a DRAG with a start).

    WAIT and TERMINATE are written as OSWorld's bare ``WAIT`` / ``DONE`` / ``FAIL``.
    """
    if action.type is _T.WAIT:
        return "WAIT"
    if action.type is _T.TERMINATE:
        return "FAIL" if action.status == "failure" else "DONE"
    dicts = _to_dicts(action)
    return dumps(dicts[0] if len(dicts) == 1 else dicts)


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame.screen(),
        supported_types=SUPPORTED,
        description='OSWorld computer_13: {"action_type": "CLICK", "parameters": {"x", "y", "button", "num_clicks"}}',
    )
)

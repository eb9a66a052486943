"""Qwen ``computer_use`` tool calls, as ComputerSD / OSWorld Qwen agents write them.

Output (docs/methods.md section 2)::

    Action: Click the "File" menu in the top bar.
    <tool_call>
    {"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [27, 14]}}
    </tool_call>

The ``Action:`` line (optional; the first line starting with ``Action:``,
any case, as ComputerSD's ``online-rl/agents/qwen3vl_agent.py`` reads it)
becomes ``Action.description``. Argument
names follow the ``computer_use`` tool of the Qwen2.5-VL / Qwen3-VL cookbooks
(``cookbooks/utils/agent_function_call.py``): ``key`` with ``keys`` (list,
pressed together), ``type`` / ``answer`` with ``text``, ``mouse_move``,
``left_click``, ``right_click``, ``middle_click``, ``double_click``,
``triple_click`` with ``coordinate``, ``left_click_drag`` with
``coordinate`` (the *end*; the drag starts at the cursor), ``scroll`` /
``hscroll`` with ``pixels``, ``wait`` with ``time``, ``terminate`` with
``status``.

guirl choices:

- ``left_click_drag`` -> DRAG with ``end_point`` = ``coordinate``;
  ``start_coordinate`` (Anthropic's spelling, some agents add it) -> ``point``.
  The Qwen schema has no start: ComputerSD's and OSWorld's executors ignore
  ``start_coordinate`` and drag from wherever the cursor is.
- ``scroll``: the tool says positive ``pixels`` scroll up, i.e. the wheel
  moves up and content above comes into view: guirl ``direction="up"``.
  ``hscroll``: positive = right (it runs ``pyautogui.hscroll``, positive
  right). ``amount`` = ``abs(pixels)``; an action without an amount is written
  with :data:`DEFAULT_SCROLL_PIXELS`. ``coordinate`` on scroll -> ``point``.
- ``wait`` ``time`` -> ``Action.amount`` (seconds). The schema requires
  ``time`` for ``wait`` and ``status`` for ``terminate``: a WAIT without an
  amount is written with :data:`DEFAULT_WAIT_SECONDS`, a TERMINATE without a
  status as ``success`` (what ComputerSD's executor assumes).
- ``key`` names are written in pyautogui's spelling (guirl ``cmd`` ->
  ``command``): ComputerSD and OSWorld's Qwen agents pass them straight to
  ``pyautogui.hotkey`` / ``press``.

Where the references disagree (guirl keeps the cookbook's reading):

- ``hscroll``: the cookbook describes it as "mapped to regular scroll",
  OSWorld's Qwen agent runs ``pyautogui.scroll`` for it and ComputerSD's
  executor drops it; guirl reads it as a horizontal scroll (left / right).
- Relative scale: the cookbook declares a 1000x1000 display, but OSWorld's and
  ComputerSD's Qwen3-VL executors map ``x * W / 999``; pass
  ``Frame.relative(999)`` to reproduce their clicks to the pixel.

Frame: Qwen3-VL writes 0-1000 relative coordinates (the cookbook declares a
1000x1000 display), so the default is ``Frame.relative(1000)``. Qwen2.5-VL
writes absolute pixels of the smart-resized screenshot: pass
``Frame.resized(screen_w, screen_h)``. ComputerSD's Qwen3-VL "absolute" mode
resizes with factor 32 and ``max_pixels = 16 * 16 * 4 * 12800``: pass
``Frame.resized(w, h, factor=32, max_pixels=16 * 16 * 4 * 12800)``.
"""

from __future__ import annotations

import re
from typing import Any

from guirl.actions.formats._common import (
    as_number,
    as_point,
    as_text,
    build,
    dumps,
    fail,
    fmt_number,
    fmt_point,
    missing,
    normalise_status,
    unsupported,
)
from guirl.actions.formats.pyautogui import PYAUTOGUI_KEY_NAMES
from guirl.actions.formats.qwen_mobile_use import find_tool_call
from guirl.actions.formats.registry import ActionFormat, register_format
from guirl.actions.frames import Frame
from guirl.actions.names import split_key_combo
from guirl.actions.types import Action, ActionType, ParseFailure

NAME = "qwen_computer_use"
TOOL_NAME = "computer_use"
#: Scroll size written for an action that carries no amount.
DEFAULT_SCROLL_PIXELS = 5
#: ``time`` written for a WAIT without an amount: the tool schema requires it, and 2 s is
#: OSWorld's default pause after every step (``DesktopEnv.step(pause=2)``).
DEFAULT_WAIT_SECONDS = 2

_CLICKS = {
    "left_click": ActionType.CLICK,
    "right_click": ActionType.RIGHT_CLICK,
    "middle_click": ActionType.MIDDLE_CLICK,
    "double_click": ActionType.DOUBLE_CLICK,
    "triple_click": ActionType.TRIPLE_CLICK,
    "mouse_move": ActionType.MOVE,
}
_CLICK_NAMES = {kind: name for name, kind in _CLICKS.items()}
SUPPORTED = frozenset(
    {*_CLICKS.values(), ActionType.KEY, ActionType.TYPE, ActionType.DRAG, ActionType.SCROLL}
    | {ActionType.WAIT, ActionType.TERMINATE, ActionType.ANSWER}
)


def _keys(args: dict) -> tuple[str, ...] | None:
    raw = args.get("keys", args.get("text"))
    if isinstance(raw, str):
        return split_key_combo(raw)
    if not isinstance(raw, list) or not raw or len(raw) > 16:
        return None
    keys: list[str] = []
    for item in raw:
        part = split_key_combo(item) if isinstance(item, str) else None
        if part is None:
            return None
        keys.extend(part)
    return tuple(keys)


def args_to_action(args: dict, text: str, frame: Frame, description: str | None) -> Action | ParseFailure:
    """Convert one computer_use argument dict into an Action."""
    name = args.get("action")
    name = name.strip().lower() if isinstance(name, str) else None
    point = as_point(args.get("coordinate"))
    if args.get("coordinate") is not None and point is None:
        return fail(NAME, "coordinate must be [x, y] with finite numbers", text)
    fields: dict[str, Any] = {"description": description}
    if name in _CLICKS:
        if name == "mouse_move" and point is None:
            return fail(NAME, "mouse_move needs a coordinate", text)
        fields.update(type=_CLICKS[name], point=point)
    elif name == "left_click_drag":
        if point is None:
            return fail(NAME, "left_click_drag needs the end coordinate", text)
        fields.update(type=ActionType.DRAG, end_point=point, point=as_point(args.get("start_coordinate")))
    elif name in ("scroll", "hscroll"):
        pixels = as_number(args.get("pixels"))
        if pixels is None or pixels == 0:
            return fail(NAME, f"{name} needs non-zero pixels", text)
        if name == "scroll":
            direction = "up" if pixels > 0 else "down"
        else:
            direction = "right" if pixels > 0 else "left"
        fields.update(type=ActionType.SCROLL, direction=direction, amount=abs(pixels), point=point)
    elif name in ("type", "answer"):
        value = as_text(args.get("text"))
        if value is None:
            return fail(NAME, f"{name} needs a text string", text)
        fields.update(type=ActionType.TYPE if name == "type" else ActionType.ANSWER, text=value)
    elif name == "key":
        keys = _keys(args)
        if keys is None:
            return fail(NAME, "key needs keys, a non-empty list of key names", text)
        fields.update(type=ActionType.KEY, keys=keys)
    elif name == "wait":
        fields.update(type=ActionType.WAIT, amount=as_number(args.get("time")))
    elif name == "terminate":
        fields.update(type=ActionType.TERMINATE, status=normalise_status(args.get("status")))
    else:
        return fail(NAME, f"unknown computer_use action {str(args.get('action'))[:40]!r}", text)
    return build(NAME, text, frame, **fields)


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """Parse one ComputerSD-style output (see module docstring)."""
    args = find_tool_call(text, TOOL_NAME)
    if isinstance(args, str):
        return fail(NAME, args, text)
    scanned = text[:100_000]
    opening = re.search(r"(?m)^[ \t]*<tool_call>", scanned) or re.search(r"<tool_call>", scanned)
    head = scanned[: opening.start()] if opening else scanned
    # ComputerSD / OSWorld's Qwen agents keep the first line that starts with "Action:" (any case); a reasoning
    # block before the answer is not part of it: the first such line after the block's end, if there is one (a
    # description may itself hold "</think>")
    pattern = r"(?im)^[ \t]*action:[ \t]*(.*?)[ \t]*$"
    close = head.find("</think>")
    line = re.search(pattern, head[close + len("</think>"):]) if close >= 0 else None  # "</think>Action: ..."
    line = line or re.search(pattern, head)
    description = line.group(1) if line and line.group(1) else None
    return args_to_action(args, text, frame, description)


def action_to_args(action: Action) -> dict[str, Any]:
    """The computer_use argument dict for ``action`` (coordinates in its own frame)."""
    kind = action.type
    point = action.target_point()
    if kind in _CLICK_NAMES:
        args: dict[str, Any] = {"action": _CLICK_NAMES[kind]}
        if point is not None:
            args["coordinate"] = fmt_point(point)
        elif kind is ActionType.MOVE:
            raise missing(NAME, action, "a point")
        return args
    if kind is ActionType.DRAG:
        if action.end_point is None:
            raise missing(NAME, action, "end_point")
        args = {"action": "left_click_drag", "coordinate": fmt_point(action.end_point)}
        if point is not None:
            args["start_coordinate"] = fmt_point(point)
        return args
    if kind is ActionType.SCROLL:
        if action.direction is None:
            raise missing(NAME, action, "direction")
        size = fmt_number(action.amount) if action.amount is not None else DEFAULT_SCROLL_PIXELS
        sign = 1 if action.direction in ("up", "right") else -1
        args = {"action": "scroll" if action.direction in ("up", "down") else "hscroll", "pixels": sign * size}
        if point is not None:
            args["coordinate"] = fmt_point(point)
        return args
    if kind in (ActionType.TYPE, ActionType.ANSWER):
        if action.text is None:
            raise missing(NAME, action, "text")
        return {"action": kind.value, "text": action.text}
    if kind is ActionType.KEY:
        if not action.keys:
            raise missing(NAME, action, "keys")
        # executors (ComputerSD, OSWorld's Qwen agents) hand the names to pyautogui.hotkey/press
        return {"action": "key", "keys": [PYAUTOGUI_KEY_NAMES.get(k, k) for k in action.keys]}
    if kind is ActionType.WAIT:
        seconds = DEFAULT_WAIT_SECONDS if action.amount is None else fmt_number(action.amount)
        return {"action": "wait", "time": seconds}
    if kind is ActionType.TERMINATE:
        return {"action": "terminate", "status": action.status or "success"}
    raise unsupported(NAME, action, SUPPORTED)


def format(action: Action) -> str:
    """Write ``action`` as an optional ``Action:`` line plus one computer_use tool call."""
    call = {"name": TOOL_NAME, "arguments": action_to_args(action)}
    head = f"Action: {action.description.strip()}\n" if action.description and action.description.strip() else ""
    return f"{head}<tool_call>\n{dumps(call)}\n</tool_call>"


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame.relative(1000),
        supported_types=SUPPORTED,
        description="ComputerSD / OSWorld Qwen: 'Action: ...' line, then <tool_call>{computer_use}</tool_call>",
    )
)

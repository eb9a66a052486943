"""LiteGUI output: one JSON object ``{reasoning, subtasks, action}`` (docs/methods.md section 1).

::

    {"reasoning": "Observation: ... Intent: ... Analysis: ...",
     "subtasks": [{"description": "open the browser", "status": "done"}, ...],
     "action": {"type": "CLICK", "position": [521, 41]}}

LiteGUI's action is ``(type, position, value)`` with types CLICK,
RIGHT_CLICK, DOUBLE_CLICK, DRAG, SCROLL_UP, SCROLL_DOWN, TEXT_INPUT, KEY
(``value`` a combination such as ``"CTRL+A"``) and WAIT (1 s). ``position``
is a point ``[x, y]`` in predictions and a box ``[x1, y1, x2, y2]`` in
annotations; both are read (a box goes to ``Action.box``).

The paper does not say how a DRAG's end point or the end of an episode are
written. guirl's choices (documented departures): DRAG carries its end in
``"end_position": [x, y]``; ``"DONE"`` / ``"FAIL"`` are accepted and written
for TERMINATE success / failure. SCROLL_UP/SCROLL_DOWN are mouse-wheel
scrolls, i.e. guirl's content-direction convention; ``position`` on a scroll
is where the wheel turns.

Code fences and text around the JSON are tolerated; the first JSON object
that has an ``action`` (or a ``type``) key is used. The flat layout of the
ATG data (``{"Reasoning", "Subtasks", "Action", "Value", "Position"}``) is
read too; keys are matched case-insensitively. :func:`parse_output` also
returns the reasoning and the subtask list (the subtask reward needs them).

Frame: screen pixels (``Frame.screen()``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guirl.actions.formats._common import (
    as_box,
    as_point,
    as_text,
    build,
    dumps,
    fail,
    fmt_point,
    iter_json_objects,
    missing,
    unsupported,
)
from guirl.actions.formats.registry import ActionFormat, register_format
from guirl.actions.frames import Frame
from guirl.actions.names import resolve_action_name, split_key_combo
from guirl.actions.types import Action, ActionType, ParseFailure

NAME = "litegui"

TYPE_NAMES: dict[ActionType, str] = {
    ActionType.CLICK: "CLICK",
    ActionType.RIGHT_CLICK: "RIGHT_CLICK",
    ActionType.DOUBLE_CLICK: "DOUBLE_CLICK",
    ActionType.DRAG: "DRAG",
    ActionType.SCROLL: "SCROLL",  # written SCROLL_UP / SCROLL_DOWN
    ActionType.TYPE: "TEXT_INPUT",
    ActionType.KEY: "KEY",
    ActionType.WAIT: "WAIT",
    ActionType.TERMINATE: "DONE",  # guirl extension: DONE / FAIL
}
SUPPORTED = frozenset(TYPE_NAMES)
_POINTED = (ActionType.CLICK, ActionType.RIGHT_CLICK, ActionType.DOUBLE_CLICK, ActionType.DRAG)


@dataclass(frozen=True)
class LiteGUIOutput:
    """A parsed LiteGUI output: the action plus the reasoning and subtask plan."""

    action: Action | ParseFailure
    reasoning: str | None = None
    #: The subtask list as written (items are strings or dicts, e.g. ``{"description", "status"}``).
    subtasks: list[Any] = field(default_factory=list)


def _lower_keys(obj: dict) -> dict[str, Any]:
    return {k.lower() if isinstance(k, str) else k: v for k, v in obj.items()}


def _find_output(text: str) -> dict[str, Any] | None:
    for _, obj in iter_json_objects(text):
        lowered = _lower_keys(obj)
        if "action" in lowered or "type" in lowered:
            return lowered
    return None


def _action_fields(act: dict[str, Any], name: Any, text: str, frame: Frame) -> Action | ParseFailure:
    meaning = resolve_action_name(name)
    if meaning is None or meaning.type not in SUPPORTED:
        return fail(NAME, f"action type {str(name)[:40]!r} is not in LiteGUI's action space", text)
    kind, value, raw_position = meaning.type, act.get("value"), act.get("position")
    point, box = as_point(raw_position), as_box(raw_position)
    if raw_position not in (None, [], "", "none", "None") and point is None and box is None:
        return fail(NAME, "position must be [x, y] or [x1, y1, x2, y2]", text)
    fields: dict[str, Any] = {"type": kind, "point": point, "box": box, "status": meaning.status}
    if kind in _POINTED and point is None and box is None:
        return fail(NAME, f"{name} needs a position", text)
    if kind is ActionType.DRAG:
        end = as_point(act.get("end_position", act.get("end_point", value)))
        if end is None:
            return fail(NAME, "DRAG needs end_position [x, y]", text)
        fields["end_point"] = end
    elif kind is ActionType.SCROLL:
        fields["direction"] = meaning.direction or (value.strip().lower() if isinstance(value, str) else None)
        if fields["direction"] not in ("up", "down", "left", "right"):
            return fail(NAME, "SCROLL needs SCROLL_UP / SCROLL_DOWN", text)
    elif kind is ActionType.TYPE:
        fields["text"] = as_text(value)
        if fields["text"] is None:
            return fail(NAME, "TEXT_INPUT needs a string value", text)
    elif kind is ActionType.KEY:
        fields["keys"] = split_key_combo(value) if isinstance(value, str) else None
        if fields["keys"] is None:
            return fail(NAME, 'KEY needs a value such as "CTRL+A"', text)
    return build(NAME, text, frame, **fields)


def parse_output(text: str, frame: Frame | None = None) -> LiteGUIOutput | ParseFailure:
    """Parse a whole LiteGUI output: action, reasoning and subtasks."""
    if not isinstance(text, str):
        return ParseFailure(reason=f"{NAME}: expected model output as str, got {type(text).__name__}")
    frame = frame if frame is not None else Frame.screen()
    out = _find_output(text)
    if out is None:
        return fail(NAME, 'no JSON object with an "action" found', text)
    act = out.get("action")
    if isinstance(act, dict):
        act = _lower_keys(act)
        action = _action_fields(act, act.get("type", act.get("action_type")), text, frame)
    else:  # flat layout: {"action": "CLICK", "position": ..., "value": ...} or the action itself
        action = _action_fields(out, act if act is not None else out.get("type"), text, frame)
    reasoning = out.get("reasoning")
    subtasks = out.get("subtasks")
    return LiteGUIOutput(
        action=action,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        subtasks=subtasks if isinstance(subtasks, list) else [],
    )


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """Parse the action of one LiteGUI output (see module docstring)."""
    out = parse_output(text, frame)
    return out if isinstance(out, ParseFailure) else out.action


def format(action: Action) -> str:
    """Write ``action`` as a LiteGUI JSON output with empty reasoning and subtasks."""
    kind = action.type
    if kind not in SUPPORTED:
        raise unsupported(NAME, action, SUPPORTED)
    act: dict[str, Any] = {"type": TYPE_NAMES[kind]}
    if action.point is not None:
        act["position"] = fmt_point(action.point)
    elif action.box is not None:
        act["position"] = fmt_point(action.box[:2]) + fmt_point(action.box[2:])
    elif kind in _POINTED:
        raise missing(NAME, action, "a point or box")
    if kind is ActionType.DRAG:
        if action.end_point is None:
            raise missing(NAME, action, "end_point")
        act["end_position"] = fmt_point(action.end_point)
    elif kind is ActionType.SCROLL:
        if action.direction not in ("up", "down"):
            raise ValueError(f"format {NAME!r} scrolls only up or down, got direction {action.direction!r}")
        act["type"] = f"SCROLL_{action.direction.upper()}"
    elif kind is ActionType.TYPE:
        if action.text is None:
            raise missing(NAME, action, "text")
        act["value"] = action.text
    elif kind is ActionType.KEY:
        if not action.keys:
            raise missing(NAME, action, "keys")
        act["value"] = "+".join(k.upper() for k in action.keys)
    elif kind is ActionType.TERMINATE:
        act["type"] = "FAIL" if action.status == "failure" else "DONE"
    return dumps({"reasoning": "", "subtasks": [], "action": act})


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame.screen(),
        supported_types=SUPPORTED,
        description='LiteGUI: {"reasoning", "subtasks", "action": {"type", "position", "value"}} JSON',
    )
)

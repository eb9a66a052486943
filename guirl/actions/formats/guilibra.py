"""GUI-Libra output: ``<think>..</think><answer>{json}</answer>`` (docs/methods.md section 4).

The answer JSON has four fields (GUI-Libra's ``r1gui`` format reward checks
them): ``action_type``, ``action_description`` (one sentence, appended to
later steps' history), ``value`` (a string, ``"None"`` when unused) and
``point_2d`` (``[x, y]`` or ``"none"``)::

    <think>The search bar is at the top.</think>
    <answer>{"action_type": "Click", "action_description": "Tap the search bar.",
             "value": "None", "point_2d": [540, 160]}</answer>

``<think>`` is optional (direct-action samples). The 13 action types and how
``value`` / ``point_2d`` map onto guirl:

=============  ==============================  =========================
GUI-Libra      guirl                           value
=============  ==============================  =========================
Click          CLICK (point)                   unused
LongPress      LONG_PRESS (point)              unused
Write          TYPE (point optional)           text
Select         SELECT (point optional)         option text
Answer         ANSWER                          answer text
OpenAPP        OPEN_APP                        app name
KeyboardPress  KEY                             key or combo (``ctrl+a``)
Scroll         SCROLL (point optional)         content direction
Swipe          SWIPE (point = start, opt.)     *finger* direction
Wait           WAIT                            seconds -> ``amount``
Terminate      TERMINATE                       success/failure -> status
NavigateHome   HOME                            unused
NavigateBack   BACK                            unused
=============  ==============================  =========================

Direction conventions: GUI-Libra's prompt says a ``Scroll`` direction is the
content direction ("to view content at the bottom, Scroll ... down"), which
is guirl's; a ``Swipe`` value is the finger movement, so guirl stores (and
writes back) its opposite. A Terminate value that is not a status word is kept
as ``text`` (a final message).

Frame: GUI-Libra's Qwen2.5-VL models write absolute pixels of the resized
image (the reward divides by ``image_width_new``), so the default frame is
``resized`` (size unknown until a screenshot is seen). Its Qwen3-VL models
write 0-1000: pass ``Frame.relative(1000)``.
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
    first_json_object_after,
    fmt_number,
    fmt_point,
    iter_json_objects,
    missing,
    normalise_status,
    opposite,
    tag_positions,
    unsupported,
)
from guirl.actions.formats.registry import ActionFormat, register_format
from guirl.actions.frames import Frame
from guirl.actions.names import resolve_action_name, split_key_combo
from guirl.actions.types import Action, ActionType, ParseFailure

NAME = "guilibra"

TYPE_NAMES: dict[ActionType, str] = {
    ActionType.CLICK: "Click",
    ActionType.TYPE: "Write",
    ActionType.TERMINATE: "Terminate",
    ActionType.SWIPE: "Swipe",
    ActionType.SCROLL: "Scroll",
    ActionType.HOME: "NavigateHome",
    ActionType.ANSWER: "Answer",
    ActionType.WAIT: "Wait",
    ActionType.OPEN_APP: "OpenAPP",
    ActionType.BACK: "NavigateBack",
    ActionType.KEY: "KeyboardPress",
    ActionType.LONG_PRESS: "LongPress",
    ActionType.SELECT: "Select",
}
SUPPORTED = frozenset(TYPE_NAMES)
_TEXT_TYPES = (ActionType.TYPE, ActionType.SELECT, ActionType.ANSWER, ActionType.OPEN_APP)


def _is_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in {"", "none", "null"})


def _direction_word(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    match = re.search(r"\b(up|down|left|right)\b", value[:200].lower())
    return None if match is None else match.group(1)


_ANSWER_BODY = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_STRING_FIELD = r'"{}"\s*:\s*"([^"]*)"'
_NUMBER = r"-?\d+(?:\.\d+)?"
_POINT_FIELD = re.compile(rf'"point_2d"\s*:\s*\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]')


def answer_fields_by_pattern(body: str) -> dict[str, Any]:
    """The fields of an answer that is not valid JSON (a trailing comma, a
    missing brace), each read on its own as GUI-Libra's reward code does: the
    string fields ``"key": "..."`` and ``"point_2d": [x, y]``. Only the fields
    found are returned; numbers stay int when written without a decimal point."""
    fields: dict[str, Any] = {}
    for key in ("action_type", "action_description", "value", "point_2d"):
        match = re.search(_STRING_FIELD.format(key), body)
        if match is not None:
            fields[key] = match.group(1)
    point = _POINT_FIELD.search(body)
    if point is not None:
        fields["point_2d"] = [float(v) if "." in v else int(v) for v in point.groups()]
    return fields


def _find_answer(text: str) -> dict | None:
    candidates = [first_json_object_after(text, pos) for pos in tag_positions(text, "answer")]
    candidates += [obj for _, obj in iter_json_objects(text) if "action_type" in obj]
    candidates += [answer_fields_by_pattern(m.group(1)) for m in _ANSWER_BODY.finditer(text[:100_000])]
    for obj in candidates:
        if isinstance(obj, dict) and "action_type" in obj:
            return obj
    return None


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """Parse one GUI-Libra output (see module docstring)."""
    answer = _find_answer(text)
    if answer is None:
        return fail(NAME, 'no <answer>{"action_type": ...}</answer> object found', text)
    meaning = resolve_action_name(answer.get("action_type"))
    if meaning is None or meaning.type not in SUPPORTED:
        return fail(NAME, f"action_type {str(answer.get('action_type'))[:40]!r} is not a GUI-Libra action", text)
    kind, value = meaning.type, answer.get("value")
    raw_point = answer.get("point_2d")
    point = None if _is_none(raw_point) else as_point(raw_point)
    if point is None and not _is_none(raw_point):
        return fail(NAME, 'point_2d must be [x, y] or "none"', text)
    description = answer.get("action_description")
    description = description.strip() if isinstance(description, str) and description.strip() else None
    fields: dict[str, Any] = {"type": kind, "point": point, "description": description}
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS) and point is None:
        return fail(NAME, f"{TYPE_NAMES[kind]} needs point_2d", text)
    if kind in _TEXT_TYPES:
        if _is_none(value) or as_text(value) is None:
            return fail(NAME, f"{TYPE_NAMES[kind]} needs a value", text)
        fields["text"] = as_text(value)
    elif kind in (ActionType.SCROLL, ActionType.SWIPE):
        word = meaning.direction or _direction_word(value)
        if word is None:
            return fail(NAME, f"{TYPE_NAMES[kind]} needs a direction value (up/down/left/right)", text)
        finger = kind is ActionType.SWIPE and not meaning.direction
        fields["direction"] = opposite(word) if finger else word  # type: ignore[arg-type]
    elif kind is ActionType.KEY:
        keys = split_key_combo(value) if isinstance(value, str) and not _is_none(value) else None
        if keys is None:
            return fail(NAME, "KeyboardPress needs a key name value", text)
        fields["keys"] = keys
    elif kind is ActionType.WAIT:
        fields["amount"] = as_number(value)
    elif kind is ActionType.TERMINATE:
        fields["status"] = meaning.status or normalise_status(value)
        if fields["status"] is None and not _is_none(value):
            fields["text"] = as_text(value)
    return build(NAME, text, frame, **fields)


def _value(action: Action) -> str:
    kind = action.type
    if kind in _TEXT_TYPES:
        if action.text is None:
            raise missing(NAME, action, "text")
        return action.text
    if kind in (ActionType.SCROLL, ActionType.SWIPE):
        if action.direction is None:
            raise missing(NAME, action, "direction")
        return opposite(action.direction) if kind is ActionType.SWIPE else action.direction
    if kind is ActionType.KEY:
        if not action.keys:
            raise missing(NAME, action, "keys")
        return "+".join(action.keys)
    if kind is ActionType.WAIT and action.amount is not None:
        return str(fmt_number(action.amount))
    if kind is ActionType.TERMINATE:
        return action.status or action.text or "success"
    return "None"


def format(action: Action) -> str:
    """Write ``action`` as ``<answer>{json}</answer>`` (no thinking part)."""
    if action.type not in SUPPORTED:
        raise unsupported(NAME, action, SUPPORTED)
    point = action.target_point()
    if action.type in (ActionType.CLICK, ActionType.LONG_PRESS) and point is None:
        raise missing(NAME, action, "a point or box")
    answer = {
        "action_type": TYPE_NAMES[action.type],
        "action_description": action.description or "",
        "value": _value(action),
        "point_2d": fmt_point(point) if point is not None else "none",
    }
    return f"<answer>{dumps(answer)}</answer>"


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame(kind="resized"),
        supported_types=SUPPORTED,
        description="GUI-Libra: <think>..</think><answer>{action_type, action_description, value, point_2d}</answer>",
    )
)

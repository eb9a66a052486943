"""Helpers the format modules share: strict JSON scanning and argument checks.

Everything here is defensive: model output is untrusted text, so JSON is
decoded without NaN/Infinity, numbers must be finite and of sane size, and
scanning is bounded (:data:`MAX_SCAN_CHARS`, :data:`MAX_JSON_TRIES`) so a
pathological string cannot make a parser slow.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from guirl.actions.frames import Frame
from guirl.actions.types import OPPOSITE_DIRECTION, Action, ActionType, Direction, ParseFailure, Status

#: Only this many characters of an output are scanned (real outputs are far shorter).
MAX_SCAN_CHARS = 100_000
#: At most this many ``{`` positions are tried as the start of a JSON object.
MAX_JSON_TRIES = 32
#: Coordinates and amounts beyond this magnitude are rejected as garbage.
MAX_MAGNITUDE = 1e7


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} in JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"number {literal[:20]} overflows")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def decode_json_at(text: str, index: int) -> tuple[Any, int] | None:
    """Decode one JSON value starting exactly at ``index``; None if invalid."""
    try:
        return _DECODER.raw_decode(text, index)
    except (ValueError, RecursionError):
        return None


def iter_json_objects(text: str, start: int = 0) -> Iterator[tuple[int, dict]]:
    """``(position, dict)`` for each JSON object found from ``start``, in order.

    Tries at most :data:`MAX_JSON_TRIES` opening braces; an object found is
    skipped over as a whole (its inner braces are not tried again).
    """
    text = text[:MAX_SCAN_CHARS]
    tries = 0
    index = text.find("{", start)
    while index != -1 and tries < MAX_JSON_TRIES:
        tries += 1
        decoded = decode_json_at(text, index)
        if decoded is not None and isinstance(decoded[0], dict):
            yield index, decoded[0]
            index = text.find("{", decoded[1])
        else:
            index = text.find("{", index + 1)


def first_json_object_after(text: str, index: int, window: int = 64) -> dict | None:
    """The JSON object whose ``{`` is the first one within ``window`` characters after ``index``."""
    brace = text.find("{", index, index + window)
    if brace == -1:
        return None
    decoded = decode_json_at(text[:MAX_SCAN_CHARS], brace)
    if decoded is None or not isinstance(decoded[0], dict):
        return None
    return decoded[0]


def tag_contents(text: str, tag: str) -> str | None:
    """Text inside the first ``<tag>...</tag>`` (closing tag optional at the end)."""
    match = re.search(rf"<{tag}>(.*?)(?:</{tag}>|\Z)", text[:MAX_SCAN_CHARS], re.DOTALL)
    return None if match is None else match.group(1)


def tag_positions(text: str, tag: str) -> Iterator[int]:
    """End positions of each opening ``<tag>`` in ``text`` (bounded scan)."""
    opening = f"<{tag}>"
    index = text.find(opening, 0, MAX_SCAN_CHARS)
    count = 0
    while index != -1 and count < MAX_JSON_TRIES:
        count += 1
        yield index + len(opening)
        index = text.find(opening, index + 1, MAX_SCAN_CHARS)


# -- argument checks ------------------------------------------------------------


def as_number(value: Any) -> float | None:
    """A finite number of sane size (numeric strings accepted), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value) if abs(value) <= MAX_MAGNITUDE else None
    if isinstance(value, float):
        return value if math.isfinite(value) and abs(value) <= MAX_MAGNITUDE else None
    if isinstance(value, str) and len(value) <= 32 and re.fullmatch(r"\s*[-+]?\d+(\.\d*)?\s*", value):
        return as_number(float(value))
    return None


def as_point(value: Any) -> tuple[float, float] | None:
    """``[x, y]`` (list or tuple of two numbers) -> a point, else None."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        x, y = as_number(value[0]), as_number(value[1])
        if x is not None and y is not None:
            return (x, y)
    return None


def as_box(value: Any) -> tuple[float, float, float, float] | None:
    """``[x1, y1, x2, y2]`` with x1 <= x2 and y1 <= y2 -> a box, else None."""
    if isinstance(value, (list, tuple)) and len(value) == 4:
        numbers = [as_number(v) for v in value]
        if all(n is not None for n in numbers):
            x1, y1, x2, y2 = numbers  # type: ignore[misc]
            if x1 <= x2 and y1 <= y2:
                return (x1, y1, x2, y2)
    return None


def as_text(value: Any) -> str | None:
    """A string argument (numbers are written as text, e.g. a typed PIN), else None."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and as_number(value) is not None:
        return str(fmt_number(value))
    return None


def normalise_status(value: Any) -> Status | None:
    """``success``/``complete``/``done`` -> success; ``failure``/``fail``/``infeasible`` -> failure."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in {"success", "successful", "succeeded", "complete", "completed", "done", "finished", "true"}:
        return "success"
    if word in {"failure", "fail", "failed", "infeasible", "impossible", "false", "error"}:
        return "failure"
    return None


def as_direction(value: Any) -> Direction | None:
    if isinstance(value, str) and value.strip().lower() in OPPOSITE_DIRECTION:
        return value.strip().lower()  # type: ignore[return-value]
    return None


def opposite(direction: Direction) -> Direction:
    """The opposite direction (finger direction <-> content direction on touch screens)."""
    return OPPOSITE_DIRECTION[direction]


# -- writing --------------------------------------------------------------------


def fmt_number(value: float) -> int | float:
    """Integral values as int (``100.0`` -> ``100``), others unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def fmt_point(point: tuple[float, float]) -> list[int | float]:
    return [fmt_number(point[0]), fmt_number(point[1])]


def dumps(obj: Any) -> str:
    """Compact-ish JSON as models write it (``", "`` separators, unicode kept)."""
    return json.dumps(obj, ensure_ascii=False)


def unsupported(fmt: str, action: Action, supported: frozenset[ActionType]) -> ValueError:
    names = sorted(t.value for t in supported)
    return ValueError(f"format {fmt!r} cannot write a {action.type.value!r} action; it supports {names}")


def missing(fmt: str, action: Action, field: str) -> ValueError:
    return ValueError(f"format {fmt!r} needs {field} to write a {action.type.value!r} action, got {action!r}")


# -- building -------------------------------------------------------------------


def build(fmt: str, text: str, frame: Frame, /, **fields: Any) -> Action | ParseFailure:
    """An Action stamped with ``frame``, or a ParseFailure naming the invalid field."""
    try:
        return Action(frame=frame, **{k: v for k, v in fields.items() if v is not None})
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "action"
        return fail(fmt, f"invalid {where}: {first.get('msg', err)}", text)


def fail(fmt: str, reason: str, text: str) -> ParseFailure:
    return ParseFailure(reason=f"{fmt}: {reason}", raw=text[:200])


def extract_reasoning(text: str) -> str | None:
    """The text inside ``<think>...</think>``, or None when there is none."""
    if not isinstance(text, str):
        return None
    inner = tag_contents(text, "think")
    return None if inner is None else inner.strip()

"""Shared helpers for dataset adapters: errors that name file, record and
problem; JSON / JSONL reading; image references; box layouts; directions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image, UnidentifiedImageError

from guirl.actions.types import OPPOSITE_DIRECTION, Box
from guirl.data.io import DataError
from guirl.data.schema import ImageRef


class AdapterError(DataError):
    """A public-format record is malformed: the message names file, record, problem."""


def record_error(file: Path | str, where: str, problem: str) -> AdapterError:
    return AdapterError(f"{file}: {where}: {problem}")


def load_json_or_jsonl(file: Path) -> list[Any]:
    """Records of a ``.json`` file (a list, or one object) or a ``.jsonl`` file."""
    if not file.is_file():
        raise AdapterError(f"{file}: no such file; pass the dataset's annotation file")
    text = file.read_text(encoding="utf-8")
    if file.suffix == ".jsonl":
        records = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise AdapterError(f"{file}: line {lineno}: not valid JSON ({err.msg} at column {err.colno})") from None
        return records
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise AdapterError(f"{file}: not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    return data if isinstance(data, list) else [data]


def require(record: Any, key: str, kind: type | tuple[type, ...], file: Path, where: str) -> Any:
    """``record[key]``, checked to be of ``kind``; else an AdapterError."""
    if not isinstance(record, dict):
        raise record_error(file, where, f"expected a JSON object, got {type(record).__name__}")
    if key not in record:
        raise record_error(file, where, f"field '{key}' is missing")
    value = record[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise record_error(file, where, f"field '{key}' must be {_kind_name(kind)}, got {value!r}")
    if not isinstance(value, kind):
        raise record_error(file, where, f"field '{key}' must be {_kind_name(kind)}, got {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def numbers(value: Any, count: int, file: Path, where: str, field: str) -> list[float]:
    """``value`` as exactly ``count`` numbers (e.g. a box or a point)."""
    if (
        not isinstance(value, (list, tuple))
        or len(value) != count
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        raise record_error(file, where, f"field '{field}' must be a list of {count} numbers, got {value!r}")
    return [float(v) for v in value]


def to_box(value: Any, layout: str, file: Path, where: str, field: str) -> Box:
    """A 4-number box in ``layout`` ``"xywh"`` or ``"xyxy"`` as ``(x1, y1, x2, y2)``."""
    a, b, c, d = numbers(value, 4, file, where, field)
    if layout == "xywh":
        if c < 0 or d < 0:
            raise record_error(file, where, f"field '{field}' {value!r} is [x, y, w, h] but has a negative size")
        return (a, b, a + c, b + d)
    if c < a or d < b:
        raise record_error(
            file, where, f"field '{field}' {value!r} is [x1, y1, x2, y2] but x2 < x1 or y2 < y1"
            " (is it [x, y, w, h]? use the matching adapter)"
        )
    return (a, b, c, d)


def image_ref(root: Path, rel: str, file: Path, where: str, size: tuple[int, int] | None = None) -> ImageRef:
    """An ImageRef to ``root / rel``; the size is read from the image header
    unless given. A missing or unreadable image is an error naming the record."""
    path = root / rel
    if size is None:
        if not path.is_file():
            raise record_error(file, where, f"image {rel!r} not found under {root}; pass the image directory")
        try:
            with Image.open(path) as img:
                size = img.size
        except (UnidentifiedImageError, OSError) as err:
            raise record_error(file, where, f"image {rel!r} cannot be read ({err})") from None
    return ImageRef(path=Path(rel).as_posix(), width=int(size[0]), height=int(size[1]))


def direction_from_finger(start: tuple[float, float], end: tuple[float, float]) -> str:
    """guirl's direction (where the content view moves towards) for a finger
    moving from ``start`` to ``end`` (y-down coordinates; pass the dataset's
    own units - normalised or relative - where its evaluator decides the
    dominant axis in those units, since pixels of a tall screen can tip it).

    The content follows the finger, so the view moves the *other* way:
    a finger moving up (end y < start y) reveals content below -> ``"down"``.
    The dominant axis decides (ties go to the vertical axis).
    """
    dx, dy = end[0] - start[0], end[1] - start[1]
    if abs(dy) >= abs(dx):
        return "down" if dy < 0 else "up"
    return "right" if dx < 0 else "left"


OPPOSITE = OPPOSITE_DIRECTION  # finger <-> content direction

"""Shared helpers for dataset adapters: errors that name file, record and
problem; JSON / JSONL reading; image references; box layouts; directions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
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


#: rows of Hugging Face sources being read by :func:`guirl.data.adapters.load_public`, by the
#: (non-existent) file name the adapter is handed for them; see :mod:`guirl.data.adapters.hub`.
_ROW_SOURCES: dict[str, Callable[[], Iterable[Any]]] = {}


@contextmanager
def row_source(file: Path, rows: Callable[[], Iterable[Any]]) -> Iterator[None]:
    """While active, :func:`load_json_or_jsonl` on ``file`` returns ``list(rows())``."""
    _ROW_SOURCES[str(file)] = rows
    try:
        yield
    finally:
        _ROW_SOURCES.pop(str(file), None)


def load_json_or_jsonl(file: Path) -> list[Any]:
    """Records of a ``.json`` file (a list, or one object), a ``.jsonl`` file, or
    the rows of a Hugging Face source being read by ``load_public``."""
    if str(file) in _ROW_SOURCES:
        return list(_ROW_SOURCES[str(file)]())
    if file.suffix in (".parquet", ".arrow") and file.is_file():
        raise AdapterError(
            f"{file}: is a {file.suffix[1:]} file; read it with guirl.data.adapters.load_public "
            "(or --data on the command line), which reads Hugging Face layouts and their embedded images"
        )
    if file.is_dir():
        found = sorted(p.name for p in file.iterdir() if p.suffix in (".json", ".jsonl"))[:6]
        raise AdapterError(
            f"{file}: is a directory, and this format reads one annotation file: pass one"
            + (f" (here: {', '.join(found)})" if found else " (there is no .json / .jsonl file here)")
        )
    if not file.is_file():
        raise AdapterError(f"{file}: no such file; pass the dataset's annotation file (or its directory)")
    raw = file.read_bytes()
    if raw.startswith(b"PAR1"):
        raise AdapterError(
            f"{file}: is a Parquet file, not JSON (it starts with 'PAR1'); give it a .parquet name "
            "(or pass its directory) and it is read as a Hugging Face dataset"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise AdapterError(
            f"{file}: is not UTF-8 JSON text (byte {err.start} is {raw[err.start:err.start + 1]!r}); "
            "pass the annotation .json / .jsonl, or a .parquet / .arrow file or directory"
        ) from None
    if file.suffix == ".jsonl":
        records = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise AdapterError(
                    f"{file}: line {lineno}: not valid JSON (column {err.colno}: {err.msg}); "
                    "is the file complete?"
                ) from None
        return records
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise AdapterError(
            f"{file}: not valid JSON (line {err.lineno} column {err.colno}: {err.msg}); is the file complete?"
        ) from None
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
    unless given. A missing image is an error naming the record even when the
    record gives the size (found at load, not at prediction time); an unreadable one too."""
    path = root / rel
    if not path.is_file():
        raise record_error(
            file, where, f"image {rel!r} not found under {root}; pass the screenshot directory with --images"
        )
    if size is None:
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

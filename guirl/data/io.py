"""Reading and writing trajectory sets: JSONL (one Episode a line) + images.

A dataset directory holds ``episodes.jsonl`` (or any ``*.jsonl`` name) and
the screenshots it references by relative path. Reading validates every
record and every image reference; an error names the file, the line, the
field, and what is expected. Writing is atomic (temp file + rename), so an
interrupted write never leaves half a file behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from guirl.data.schema import Episode


class DataError(ValueError):
    """A dataset file is malformed; the message names file, line and field."""


def describe_validation_error(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"]) or "<record>"
        msg = e["msg"]
        if e["type"] == "enum":
            msg = f"{msg} (got {e.get('input')!r})"
        elif e["type"] == "missing":
            msg = "required field is missing; add it"
        elif e["type"] == "extra_forbidden":
            msg = "unknown field; remove it or check its spelling"
        parts.append(f"field '{loc}': {msg}")
    return "; ".join(parts)


def iter_episodes(path: str | Path, check_images: bool = True) -> Iterator[Episode]:
    """Yield validated Episodes from a JSONL file.

    Image paths are resolved against the file's directory; with
    ``check_images`` a missing image is an error naming the field.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file; pass the episodes .jsonl of a dataset directory")
    root = path.parent
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(f"{path}:{lineno}: not valid JSON (column {err.colno}: {err.msg})") from None
            try:
                episode = Episode.model_validate(record)
            except ValidationError as err:
                raise DataError(f"{path}:{lineno}: {describe_validation_error(err)}") from None
            if check_images:
                _check_images(episode, root, f"{path}:{lineno}")
            yield episode


def read_episodes(path: str | Path, check_images: bool = True) -> list[Episode]:
    return list(iter_episodes(path, check_images=check_images))


def _check_images(episode: Episode, root: Path, where: str) -> None:
    for i, step in enumerate(episode.steps):
        refs = [(f"steps.{i}.screenshot.path", step.screenshot)]
        refs += [
            (f"steps.{i}.history.{j}.screenshot.path", h.screenshot)
            for j, h in enumerate(step.history)
            if h.screenshot is not None
        ]
        for field, ref in refs:
            if not (root / ref.path).is_file():
                raise DataError(
                    f"{where}: field '{field}': image file {ref.path!r} does not exist under {root}; "
                    "image paths are relative to the directory of the .jsonl file"
                )


def write_episodes(path: str | Path, episodes: Iterable[Episode]) -> int:
    """Write episodes as JSONL atomically; returns how many were written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for ep in episodes:
                fh.write(ep.model_dump_json(exclude_defaults=True))
                fh.write("\n")
                n += 1
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


class EpisodeWriter:
    """Append episodes one at a time (e.g. from a running rollout).

    Each episode is written as one line and flushed, so a crash loses at
    most the line being written; :func:`iter_episodes` reports a torn last
    line clearly.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.path.open("a", encoding="utf-8")

    def write(self, episode: Episode) -> None:
        self._fh.write(episode.model_dump_json(exclude_defaults=True) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

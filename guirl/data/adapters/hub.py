"""Public datasets in their Hugging Face layout (parquet / arrow, embedded images).

Every adapter reads its records as dicts (:func:`guirl.data.adapters._common.load_json_or_jsonl`);
this module makes a dataset's Hub layout one more source of such dicts, so
each adapter reads the JSON release and the Hub release with one parser:

- a ``.parquet`` or ``.arrow`` file;
- a directory saved by ``Dataset.save_to_disk`` / ``DatasetDict.save_to_disk``;
- a directory of parquet / arrow files as a Hub repository lays them out
  (``data/test-00000-of-00002.parquet``; splits from the file names, as
  ``datasets.load_dataset`` names them);
- a Hub name (``osunlp/Multimodal-Mind2Web``) that is not a local path, read
  with ``streaming=True`` (nothing is downloaded up front; rows arrive as they
  are read). On a machine without network, download once
  (``huggingface-cli download --repo-type dataset NAME --local-dir DIR``) and
  pass ``DIR``.

Rows are read with the image columns left undecoded (``datasets.Image(decode=False)``);
each embedded image is written once, as its original bytes, to
``<image root>/images/<split>/<row>_<column><ext>`` and the record holds that
relative path in place of the image, so adapters resolve it like any
screenshot path. The image root is ``--images`` when given, else a cache
directory (``$GUIRL_CACHE`` or ``~/.cache/guirl``, then ``hf/<source>``).
Images already written with the same bytes are not rewritten, so a second
read costs only the parquet scan.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guirl.data.io import DataError

HF_SUFFIXES = (".parquet", ".arrow")
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_SPLIT_FROM_FILE = re.compile(r"^(?P<split>[A-Za-z0-9_]+?)(?:[-_]\d{5}-of-\d{5})?(?:-[0-9a-f]{8,})?$")


class HubError(DataError):
    """A Hugging Face source cannot be read; the message says what to do."""


@dataclass(frozen=True)
class Split:
    """One split of a Hugging Face source: where it comes from and where its images go."""

    source: str  # what the user passed
    name: str  # split name
    label: str  # how messages name it: "SOURCE[split]"
    image_root: Path  # embedded images are written under it; adapters resolve paths against it
    files: tuple[Path, ...] = ()  # local parquet / arrow files of the split (empty: saved dataset or hub)


def default_cache() -> Path:
    return Path(os.environ.get("GUIRL_CACHE") or Path.home() / ".cache" / "guirl")


def _slug(source: str) -> str:
    tail = re.sub(r"[^A-Za-z0-9_.-]+", "_", source.strip("/"))[-60:]
    return f"{tail}-{hashlib.sha1(source.encode()).hexdigest()[:8]}"


def is_hf_source(path: str | Path) -> bool:
    """Whether ``path`` is read through ``datasets`` (a parquet / arrow file or
    directory, a saved dataset, or a Hub name that is not a local path)."""
    p = Path(path)
    if p.is_file():
        return p.suffix in HF_SUFFIXES
    if p.is_dir():
        if (p / "dataset_info.json").is_file() or (p / "dataset_dict.json").is_file() or (p / "state.json").is_file():
            return True
        has_json = any(p.glob("*.json")) or any(p.glob("*.jsonl"))
        return not has_json and any(f.suffix in HF_SUFFIXES for f in p.rglob("*") if f.is_file())
    return bool(_HUB_NAME.match(str(path))) and not p.exists()


def _split_name(file: Path, base: Path) -> str:
    """The split a parquet / arrow file belongs to: its stem without shard
    suffixes (``test_task-00000-of-00002`` -> ``test_task``), else its folder."""
    m = _SPLIT_FROM_FILE.match(file.stem)
    if m and m.group("split") not in ("data", "part"):
        return m.group("split")
    rel = file.relative_to(base)
    return rel.parts[-2] if len(rel.parts) > 1 and rel.parts[-2] != "data" else "train"


def splits(path: str | Path, image_dir: str | Path | None = None, split: str | None = None) -> list[Split]:
    """The splits of an HF source (only ``split`` when given), each with its image root."""
    source = str(path)
    p = Path(path)
    root = Path(image_dir) if image_dir is not None else default_cache() / "hf" / _slug(str(p.resolve()) if p.exists() else source)
    found: dict[str, list[Path]] = {}
    if p.is_file():
        found[_split_name(p, p.parent)] = [p]
    elif p.is_dir() and not any((p / n).is_file() for n in ("dataset_info.json", "dataset_dict.json", "state.json")):
        for f in sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in HF_SUFFIXES):
            found.setdefault(_split_name(f, p), []).append(f)
    elif p.is_dir():
        names = _saved_split_names(p)
        found = {n: [] for n in names}
    else:
        found = {n: [] for n in _hub_split_names(source)}
    if split is not None:
        if split not in found:
            raise HubError(f"{source}: has no split {split!r}; its splits are {sorted(found)} (pass one with --split)")
        found = {split: found[split]}
    return [
        Split(source=source, name=n, label=f"{source}[{n}]", image_root=root, files=tuple(files))
        for n, files in found.items()
    ]


def _saved_split_names(p: Path) -> list[str]:
    import datasets

    try:
        ds = datasets.load_from_disk(str(p))
    except (FileNotFoundError, ValueError, OSError) as err:
        raise HubError(f"{p}: looks like a saved dataset but cannot be read ({err})") from None
    return list(ds.keys()) if isinstance(ds, datasets.DatasetDict) else ["train"]


def _hub_split_names(name: str) -> list[str]:
    import datasets

    try:
        return list(datasets.get_dataset_split_names(name))
    except Exception as err:  # noqa: BLE001 - any hub / network failure gets the same advice
        raise HubError(
            f"{name}: is not a local path, and the Hugging Face Hub could not list its splits "
            f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); on a machine without network, "
            f"download it once (huggingface-cli download --repo-type dataset {name} --local-dir DIR) and pass DIR"
        ) from None


def _open(split: Split):
    """The split as a ``datasets`` (Iterable)Dataset with image columns undecoded."""
    import datasets

    p = Path(split.source)
    try:
        if split.files:
            builder = "parquet" if split.files[0].suffix == ".parquet" else "arrow"
            ds = datasets.load_dataset(
                builder, data_files={split.name: [str(f) for f in split.files]}, split=split.name, streaming=True
            )
        elif p.is_dir():
            ds = datasets.load_from_disk(str(p))
            if isinstance(ds, datasets.DatasetDict):
                ds = ds[split.name]
        else:
            ds = datasets.load_dataset(split.source, split=split.name, streaming=True)
    except HubError:
        raise
    except Exception as err:  # noqa: BLE001 - pyarrow / datasets raise many types for a bad file
        raise HubError(f"{split.label}: cannot be read as a Hugging Face dataset ({type(err).__name__}: {err})") from None
    features = ds.features or {}
    image_cols = {}
    for col, feature in features.items():
        if isinstance(feature, datasets.Image):
            ds = ds.cast_column(col, datasets.Image(decode=False))
            image_cols[col] = False
        elif isinstance(feature, (datasets.List, datasets.Sequence)) and isinstance(feature.feature, datasets.Image):
            ds = ds.cast_column(col, datasets.List(datasets.Image(decode=False)))
            image_cols[col] = True  # a list of images
    return ds, image_cols


_MAGIC = {b"\x89PNG": ".png", b"\xff\xd8\xff": ".jpg", b"GIF8": ".gif", b"RIFF": ".webp", b"BM": ".bmp"}


def _ext(data: bytes, path: str | None) -> str:
    for magic, ext in _MAGIC.items():
        if data.startswith(magic):
            return ext
    return Path(path).suffix if path and Path(path).suffix else ".png"


def _write_image(value: Any, split: Split, index: int, column: str) -> str | None:
    """Write an undecoded image value once; return its path relative to the image root."""
    if not isinstance(value, dict):
        return None
    data = value.get("bytes")
    if data is None:  # an image stored by path only (a local copy): keep the path
        return value.get("path")
    rel = Path("images") / split.name / f"{index:07d}_{column}{_ext(data, value.get('path'))}"
    out = split.image_root / rel
    if not (out.is_file() and out.stat().st_size == len(data)):
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, out)
    return rel.as_posix()


def iter_rows(split: Split, drop: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Rows of ``split`` as plain dicts; embedded images replaced by relative paths."""
    ds, image_cols = _open(split)
    drop = tuple(c for c in drop if c in (ds.column_names or ()))
    if drop:
        ds = ds.remove_columns(list(drop))
    try:
        for i, row in enumerate(ds):
            for col, is_list in image_cols.items():
                if col in row and is_list:
                    row[col] = [_write_image(v, split, i, f"{col}{k}") for k, v in enumerate(row[col] or [])]
                elif col in row:
                    row[col] = _write_image(row[col], split, i, col)
            yield row
    except HubError:
        raise
    except Exception as err:  # noqa: BLE001 - a corrupt shard mid-stream
        raise HubError(f"{split.label}: reading failed after {i if 'i' in locals() else 0} rows "
                       f"({type(err).__name__}: {err})") from None

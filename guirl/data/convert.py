"""Write episodes read from any layout as a self-contained guirl dataset, or
as a Hugging Face dataset with the screenshots embedded, and read that back.

- :func:`export_dataset`: ``out/episodes.jsonl`` + ``out/images/...``; every
  screenshot (steps and history items) is copied once, under a name that
  keeps its original relative path, so the output loads with
  ``read_episodes`` anywhere. Files already there with the same size are
  kept (a re-run after an interruption copies only what is missing); the
  JSONL is written last and atomically.
- :func:`export_hub`: ``out/data/<split>-00000-of-00001.parquet``, one row
  per episode: the flat columns of :func:`guirl.data.hf.episodes_to_dataset`,
  the lossless ``episode_json``, and ``images`` (the episode's screenshots as
  embedded ``datasets.Image`` values, in the order of
  :func:`screenshot_refs`). ``push_to_hub``-ready; format ``guirl_hf`` of
  :mod:`guirl.data.adapters` reads it back (:func:`load_guirl_hf`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from guirl.data.io import DataError, write_episodes
from guirl.data.schema import Episode, ImageRef


def screenshot_refs(episode: Episode) -> list[ImageRef]:
    """Every image an episode references, steps then their history items, first occurrence only."""
    seen: dict[str, ImageRef] = {}
    for step in episode.steps:
        for ref in [step.screenshot, *(h.screenshot for h in step.history if h.screenshot is not None)]:
            seen.setdefault(ref.path, ref)
    return list(seen.values())


def _repath(episode: Episode, mapping: dict[str, str]) -> Episode:
    def ref(r: ImageRef) -> ImageRef:
        return r.model_copy(update={"path": mapping[r.path]})

    steps = []
    for step in episode.steps:
        history = [h.model_copy(update={"screenshot": ref(h.screenshot)}) if h.screenshot else h for h in step.history]
        steps.append(step.model_copy(update={"screenshot": ref(step.screenshot), "history": history}))
    return episode.model_copy(update={"steps": steps})


def _copy(src: Path, dst: Path) -> None:
    if dst.is_file() and dst.stat().st_size == src.stat().st_size:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def _target_name(rel: str) -> str:
    """``images/<rel>`` for a relative path; absolute paths and ``..`` parts are folded in."""
    parts = [p for p in Path(rel).parts if p not in ("/", "..", ".")]
    return Path(*parts).as_posix() if parts[:1] == ["images"] else Path("images", *parts).as_posix()


def export_dataset(episodes: Iterable[Episode], root: str | Path, out: str | Path) -> Path:
    """Copy ``episodes`` (screenshots relative to ``root``) into a guirl dataset at ``out``."""
    root, out = Path(root), Path(out)
    episodes = list(episodes)
    mapping: dict[str, str] = {}
    for ep in episodes:
        for ref in screenshot_refs(ep):
            if ref.path in mapping:
                continue
            src = root / ref.path
            if not src.is_file():
                raise DataError(f"episode {ep.id}: screenshot {ref.path!r} not found under {root}; "
                                "pass the screenshot directory with --images")
            mapping[ref.path] = _target_name(ref.path)
            _copy(src, out / mapping[ref.path])
    path = out / "episodes.jsonl"
    if path.exists() and not (out / ".guirl-convert").exists():
        raise DataError(f"{path}: exists and was not written by `guirl data convert`; choose another --out")
    (out / ".guirl-convert").touch()
    write_episodes(path, (_repath(ep, mapping) for ep in episodes))
    return path


def export_hub(episodes: Iterable[Episode], root: str | Path, out: str | Path, split: str = "train") -> Path:
    """Write ``episodes`` as a parquet Hugging Face dataset with embedded screenshots."""
    import datasets

    from guirl.data.hf import EPISODE_FEATURES

    root, out = Path(root), Path(out)
    rows = []
    for ep in episodes:
        images = []
        for ref in screenshot_refs(ep):
            src = root / ref.path
            if not src.is_file():
                raise DataError(f"episode {ep.id}: screenshot {ref.path!r} not found under {root}; "
                                "pass the screenshot directory with --images")
            images.append({"bytes": src.read_bytes(), "path": ref.path})
        rows.append({
            "id": ep.id, "instruction": ep.instruction, "source": ep.source, "platform": ep.platform,
            "task": ep.task, "num_steps": len(ep.steps), "success": ep.success,
            "episode_json": ep.model_dump_json(exclude_defaults=True), "images": images,
        })
    features = datasets.Features({**EPISODE_FEATURES, "images": datasets.List(datasets.Image())})
    ds = datasets.Dataset.from_list(rows, features=features)
    datasets.disable_progress_bars()
    path = out / "data" / f"{split}-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    ds.to_parquet(str(tmp))
    os.replace(tmp, path)
    return path


def load_guirl_hf(file: str | Path, image_dir: str | Path | None = None) -> list[Episode]:
    """Rows written by :func:`export_hub` (read through ``load_public("guirl_hf", ...)``,
    which writes the embedded screenshots under the image root) -> Episodes."""
    from guirl.data.adapters._common import load_json_or_jsonl, record_error, require

    file = Path(file)
    episodes = []
    for i, row in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        text = require(row, "episode_json", str, file, where)
        try:
            ep = Episode.model_validate_json(text)
        except ValueError as err:
            raise record_error(file, where, f"field 'episode_json' is not a guirl Episode ({err})") from None
        images = require(row, "images", list, file, f"{where} (episode {ep.id})")
        refs = screenshot_refs(ep)
        if len(images) != len(refs):
            raise record_error(file, f"{where} (episode {ep.id})",
                               f"{len(images)} images for {len(refs)} screenshots; write it with export_hub")
        episodes.append(_repath(ep, {r.path: str(img) for r, img in zip(refs, images, strict=True)}))
    return episodes

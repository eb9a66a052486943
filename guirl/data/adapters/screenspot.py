"""ScreenSpot (v1, v2) and ScreenSpot-Pro grounding annotations -> Episodes.

Each sample becomes an Episode with one Step whose only valid action is a
CLICK on the target box, in screen pixels [x1, y1, x2, y2]; ``Step.extra``
keeps ``platform``, ``element_type`` and (Pro) ``group`` / ``application``
for the per-category breakdown of :mod:`guirl.eval.grounding`;
``Episode.extra["match_rule"] = "inclusive"``. No scroll / swipe actions
occur in these sets. Nothing is skipped: a malformed sample, a missing
image or a box outside its image is an AdapterError naming file and record.

Each loader takes one annotation file **or the release directory** and then
loads every annotation file it holds (platform from each file name), with the
release's own image folder as default ``image_dir`` (ImageRef paths are
relative to it; :func:`default_image_root` gives it for a file or folder).

- **ScreenSpot v1** (SeeClick, njucckevin/SeeClick ``readme.md`` /
  ``pretrain/screenspot_test.py``; also HF ``rootsautomation/ScreenSpot``):
  ``screenspot_{mobile,desktop,web}.json``, each a JSON list of
  ``{"img_filename", "bbox", "instruction", "data_type", "data_source"}``;
  ``bbox`` is **[x, y, w, h]** in pixels of the image (read from the image
  header); ``data_type`` is ``text`` / ``icon``. Images: ``screenspot_imgs/``
  next to the JSON files. Platform: from the file name, else ``platform=``,
  else from ``data_source`` (ios / android -> mobile, macos / windows ->
  desktop, gitlab / shop / forum / tool -> web).
- **ScreenSpot Hugging Face rows** (HF ``rootsautomation/ScreenSpot`` parquet,
  read through :func:`guirl.data.adapters.load_public`, which writes the
  embedded ``image`` and puts its relative path in the row): the same fields
  plus ``image``; there ``bbox`` is **normalised [x1, y1, x2, y2] in 0-1**
  (e.g. ``[0.9479, 0.1444, 0.9938, 0.2074]`` for "close this window", as
  microsoft/GUI-Actor's README prints it); it is scaled by the image size
  read from the image. Told apart by the ``image`` field (``layout="hf"`` /
  ``"release"`` insists); platform from ``data_source``.
- **ScreenSpot-v2** (HF ``OS-Copilot/ScreenSpot-v2``): the same records with
  corrected boxes in ``screenspot_{mobile,desktop,web}_v2.json``; images in
  ``screenspotv2_image/`` (the unzipped ``screenspotv2_image.zip``), else
  ``screenspot_imgs/``. A folder holding both v1 and v2 files gives v1 to
  ``load_screenspot`` and v2 to ``load_screenspot_v2``.
- **ScreenSpot-Pro** (HF ``likaixin/ScreenSpot-Pro``, evaluator
  likaixin2000/ScreenSpot-Pro-GUI-Grounding): ``annotations/<app>_<os>.json``
  lists of ``{"id", "img_filename", "bbox", "instruction", "application",
  "platform", "img_size", "ui_type", "group"}``; ``bbox`` is
  **[x1, y1, x2, y2]** pixels, ``img_size`` ``[w, h]``; ``group`` optional;
  ``img_filename`` relative to ``images/`` (``images/<app>_<os>/...``).
  Pass the release root (``annotations/`` + ``images/``), the
  ``annotations/`` folder, or one file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, Box
from guirl.data.adapters._common import (
    AdapterError,
    image_ref,
    load_json_or_jsonl,
    numbers,
    record_error,
    require,
    to_box,
)
from guirl.data.schema import Episode, ImageRef, Step

PLATFORMS = ("mobile", "desktop", "web")
#: ScreenSpot's data_source values (SeeClick readme: iOS, Android, macOS, Windows, Web: Gitlab, Shop, Forum, Tool)
DATA_SOURCE_PLATFORM = {
    "ios": "mobile", "android": "mobile", "macos": "desktop", "windows": "desktop",
    "gitlab": "web", "shop": "web", "forum": "web", "tool": "web",
}


def _platform_from_name(file: Path) -> str | None:
    for name in PLATFORMS:
        if name in file.stem:
            return name
    return None


def default_image_dir(folder: Path, version: str) -> Path:
    """Where a v1 / v2 release keeps its screenshots, next to its annotation files in ``folder``."""
    v2_dir = folder / "screenspotv2_image"  # OS-Copilot/ScreenSpot-v2 unzips screenspotv2_image.zip here
    if version == "v2" and v2_dir.is_dir():
        return v2_dir
    return folder / "screenspot_imgs"


def default_image_root(path: str | Path, version: str) -> Path:
    """The image folder the loaders use when ``image_dir`` is None, for an
    annotation file or a release folder; ``version`` is ``v1``, ``v2`` or ``pro``."""
    path = Path(path)
    if version == "pro":
        if path.is_dir():
            return path / "images" if (path / "annotations").is_dir() else path.parent / "images"
        return path.parent.parent / "images"
    return default_image_dir(path if path.is_dir() else path.parent, version)


def _release_files(folder: Path, version: str, platform: str | None) -> list[Path]:
    """The v1 (no ``_v2``) or v2 (``_v2``) annotation files of a release folder."""
    found = sorted(p for p in folder.glob("screenspot_*.json*") if p.suffix in (".json", ".jsonl"))
    files = [p for p in found if p.stem.endswith("_v2") == (version == "v2")]
    if platform is not None:
        files = [p for p in files if _platform_from_name(p) == platform]
    if not files:
        expected = "screenspot_{mobile,desktop,web}" + ("_v2.json" if version == "v2" else ".json")
        others = sorted(p.name for p in folder.iterdir())[:8] if folder.is_dir() else []
        hint = ""
        if (folder / "annotations").is_dir():
            hint = "; it looks like ScreenSpot-Pro (annotations/): use the screenspot_pro format"
        elif any(p.stem.endswith("_v2") for p in found) and version != "v2":
            hint = "; it holds v2 files: use the screenspot_v2 format"
        elif found and version == "v2":
            hint = "; it holds v1 files: use the screenspot format"
        raise AdapterError(
            f"{folder}: no ScreenSpot {version} annotation files ({expected}"
            f"{f' for platform {platform!r}' if platform else ''}) in this folder"
            f" (it holds {others or 'nothing'}){hint}"
        )
    return files


LAYOUTS = ("auto", "release", "hf")


def _image_field(value: Any, file: Path, where: str) -> str:
    if isinstance(value, dict) and isinstance(value.get("path"), str) and value["path"]:
        return value["path"]
    if isinstance(value, str) and value:
        return value
    raise record_error(
        file, where, "field 'image' must be an image path (as load_public writes Hugging Face images), got"
        f" {str(value)[:60]!r}; read the parquet files with guirl.data.adapters.load_public"
    )


def _normalised_box(value: Any, shot: ImageRef, file: Path, where: str) -> Box:
    x1, y1, x2, y2 = numbers(value, 4, file, where, "bbox")
    if not all(0 <= v <= 1 for v in (x1, y1, x2, y2)) or x2 < x1 or y2 < y1:
        raise record_error(
            file, where, f"field 'bbox' {value!r}: the Hugging Face layout's bbox is normalised [x1, y1, x2, y2]"
            " in 0-1 (pass layout='release' for pixel [x, y, w, h] boxes)"
        )
    return (x1 * shot.width, y1 * shot.height, x2 * shot.width, y2 * shot.height)


def _check_in_image(box: Box, shot: ImageRef, file: Path, where: str, layout: str) -> None:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if not (0 <= cx <= shot.width and 0 <= cy <= shot.height):
        raise record_error(
            file, where, f"field 'bbox' -> {[round(v, 2) for v in box]} lies outside its"
            f" {shot.width}x{shot.height} image {shot.path!r} (bbox is read as {layout} pixels;"
            " is it another layout, or the wrong image?)"
        )


def load_screenspot(
    file: str | Path, image_dir: str | Path | None = None, platform: str | None = None, layout: str = "auto"
) -> list[Episode]:
    """ScreenSpot v1 file or release folder -> grounding Episodes (box layout [x, y, w, h]).

    ``image_dir`` holds ``img_filename`` (default: :func:`default_image_dir`
    of the folder); ImageRef paths are relative to it. ``platform`` (one of
    ``mobile`` / ``desktop`` / ``web``) overrides the file name; given with a
    folder it loads only that platform's file. ``layout``: ``"release"``
    (JSON, ``img_filename`` + pixel [x, y, w, h]), ``"hf"`` (Hugging Face
    rows, ``image`` + normalised [x1, y1, x2, y2]) or ``"auto"`` (per record:
    ``hf`` when it has an ``image`` field).
    """
    return _load_screenspot(file, image_dir, platform, "v1", layout)


def _load_screenspot(
    file: str | Path, image_dir: str | Path | None, platform: str | None, version: str, layout: str
) -> list[Episode]:
    if platform is not None and platform not in PLATFORMS:
        raise ValueError(f"platform must be one of {PLATFORMS}, got {platform!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    path = Path(file)
    if path.is_dir():
        files = _release_files(path, version, platform)
        folder = path
    else:
        files, folder = [path], path.parent
    root = Path(image_dir) if image_dir is not None else default_image_dir(folder, version)
    episodes: list[Episode] = []
    for f in files:
        episodes += _load_screenspot_file(f, root, platform, version, layout)
    return episodes


def _record_platform(rec: dict, file_platform: str | None, file: Path, where: str) -> str:
    if file_platform is not None:
        return file_platform
    source = rec.get("data_source")
    if isinstance(source, str) and source.lower() in DATA_SOURCE_PLATFORM:
        return DATA_SOURCE_PLATFORM[source.lower()]
    raise record_error(
        file, where, f"cannot tell the platform (one of {PLATFORMS}) from the file name nor from"
        f" data_source {source!r}; name the file screenspot_<platform>.json or pass platform=..."
    )


def _load_screenspot_file(file: Path, root: Path, platform: str | None, version: str, layout: str) -> list[Episode]:
    file_platform = platform or _platform_from_name(file)
    records = load_json_or_jsonl(file)
    if not records:
        raise record_error(file, "file", "holds no records; pass a ScreenSpot annotation file")
    episodes = []
    for i, rec in enumerate(records):
        where = f"record {i}"
        if not isinstance(rec, dict):
            raise record_error(file, where, f"expected a JSON object, got {type(rec).__name__}")
        hf = layout == "hf" or (layout == "auto" and "image" in rec)
        img = _image_field(rec.get("image"), file, where) if hf else require(rec, "img_filename", str, file, where)
        where = f"record {i} ({img})"
        bbox = require(rec, "bbox", list, file, where)
        if not hf:
            box = to_box(bbox, "xywh", file, where, "bbox")
        instruction = require(rec, "instruction", str, file, where)
        element_type = require(rec, "data_type", str, file, where)
        source = rec.get("data_source", "")
        if not isinstance(source, str):
            raise record_error(file, where, f"field 'data_source' must be a string, got {source!r}")
        rec_platform = _record_platform(rec, file_platform, file, where)
        screenshot = image_ref(root, img, file, where)
        if hf:
            box = _normalised_box(bbox, screenshot, file, where)
        else:
            _check_in_image(box, screenshot, file, where, "[x, y, w, h]")
        frame = Frame.screen(screenshot.width, screenshot.height)
        step = Step(
            index=0,
            screenshot=screenshot,
            valid_actions=[Action(type=ActionType.CLICK, box=box, frame=frame)],
            extra={"platform": rec_platform, "element_type": element_type, "data_source": source},
        )
        key = file_platform if file_platform is not None else file.stem
        episodes.append(
            Episode(
                id=f"screenspot_{version}_{key}_{i}",
                instruction=instruction,
                steps=[step],
                source=f"screenspot_{version}:{file.name}",
                platform=rec_platform,  # type: ignore[arg-type]
                task="grounding",
                extra={"match_rule": "inclusive"},
            )
        )
    return episodes


def load_screenspot_v2(
    file: str | Path, image_dir: str | Path | None = None, platform: str | None = None, layout: str = "auto"
) -> list[Episode]:
    """ScreenSpot-v2 file or release folder: the v1 layout with corrected boxes (``[x, y, w, h]``)."""
    return _load_screenspot(file, image_dir, platform, "v2", layout)


def load_screenspot_pro(file: str | Path, image_dir: str | Path | None = None) -> list[Episode]:
    """ScreenSpot-Pro annotation file or folder -> grounding Episodes (box layout [x1, y1, x2, y2]).

    A folder is the release root (``annotations/*.json`` + ``images/``) or the
    ``annotations/`` folder itself. ``image_dir`` defaults to
    :func:`default_image_root` (``images/`` beside ``annotations/``).
    """
    path = Path(file)
    if path.is_dir():
        ann_dir = path / "annotations" if (path / "annotations").is_dir() else path
        files = sorted(p for p in ann_dir.glob("*.json"))
        if not files:
            others = sorted(p.name for p in path.iterdir())[:8]
            raise AdapterError(
                f"{path}: no ScreenSpot-Pro annotation files (annotations/<app>_<os>.json) in this folder"
                f" (it holds {others or 'nothing'}); pass the release root, its annotations/ folder or one file"
            )
    else:
        files = [path]
    root = Path(image_dir) if image_dir is not None else default_image_root(path, "pro")
    episodes: list[Episode] = []
    for f in files:
        episodes += _load_pro_file(f, root)
    return episodes


def _load_pro_file(file: Path, root: Path) -> list[Episode]:
    records = load_json_or_jsonl(file)
    if not records:
        raise record_error(file, "file", "holds no records; pass a ScreenSpot-Pro annotation file")
    episodes = []
    for i, rec in enumerate(records):
        where = f"record {i}"
        sample_id = _sample_id(rec, file, i)
        where = f"record {i} (id {sample_id})"
        img = require(rec, "img_filename", str, file, where)
        box = to_box(require(rec, "bbox", list, file, where), "xyxy", file, where, "bbox")
        w, h = numbers(require(rec, "img_size", list, file, where), 2, file, where, "img_size")
        if w <= 0 or h <= 0:
            raise record_error(file, where, f"field 'img_size' [{w:g}, {h:g}] must be positive [w, h]")
        if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
            raise record_error(file, where, f"field 'bbox' {list(box)} exceeds img_size [{w:g}, {h:g}]")
        screenshot = image_ref(root, img, file, where, size=(int(w), int(h)))
        step = Step(
            index=0,
            screenshot=screenshot,
            valid_actions=[Action(type=ActionType.CLICK, box=box, frame=Frame.screen(int(w), int(h)))],
            extra={
                "platform": require(rec, "platform", str, file, where),
                "element_type": require(rec, "ui_type", str, file, where),
                "group": _optional_str(rec, "group", file, where),
                "application": _optional_str(rec, "application", file, where),
            },
        )
        episodes.append(
            Episode(
                id=f"screenspot_pro_{sample_id}",
                instruction=require(rec, "instruction", str, file, where),
                steps=[step],
                source=f"screenspot_pro:{file.name}",
                platform="desktop",
                task="grounding",
                extra={"match_rule": "inclusive"},
            )
        )
    return episodes


def _sample_id(rec: Any, file: Path, i: int) -> str:
    if isinstance(rec, dict) and isinstance(rec.get("id"), (str, int)) and not isinstance(rec.get("id"), bool):
        return str(rec["id"])
    return f"{file.stem}_{i}"


def _optional_str(rec: dict, key: str, file: Path, where: str) -> str:
    """``rec[key]`` when present (then it must be a string), else ``""``."""
    return require(rec, key, str, file, where) if rec.get(key) is not None else ""

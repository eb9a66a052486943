"""ScreenSpot (v1, v2) and ScreenSpot-Pro grounding annotations -> Episodes.

Each sample becomes an Episode with one Step whose only valid action is a
CLICK on the target box, in screen pixels; ``Step.extra`` keeps
``platform``, ``element_type`` and (Pro) ``group`` / ``application`` for
the per-category breakdown of :mod:`guirl.eval.grounding`.

Layouts read (SeeClick's and ScreenSpot-Pro's released JSON):

- **ScreenSpot v1 / v2**: one JSON list per platform
  (``screenspot_{mobile,desktop,web}.json``, v2 adds ``_v2``); records
  ``{"img_filename", "bbox", "instruction", "data_type", "data_source"}``;
  ``bbox`` is **[x, y, w, h]** in pixels; ``data_type`` is ``text`` /
  ``icon``; the platform comes from the file name (or ``platform=``);
  image size is read from the image. Images live in ``screenspot_imgs/``
  (SeeClick's v1 release) or ``screenspotv2_image/`` (OS-Copilot's v2
  release, ``screenspot_{mobile,desktop,web}_v2.json``).
- **ScreenSpot-Pro**: ``annotations/<app>_<os>.json`` lists of
  ``{"id", "img_filename", "bbox", "instruction", "application",
  "platform", "img_size", "ui_type", "group"}``; ``bbox`` is
  **[x1, y1, x2, y2]** in pixels and ``img_size`` is ``[w, h]``.
  ``group`` is optional (the official evaluator reads it with a default).

No scroll / swipe actions occur in these sets.
"""

from __future__ import annotations

from pathlib import Path

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.adapters._common import image_ref, load_json_or_jsonl, numbers, record_error, require, to_box
from guirl.data.schema import Episode, Step

PLATFORMS = ("mobile", "desktop", "web")


def _platform_from_name(file: Path) -> str:
    for name in PLATFORMS:
        if name in file.stem:
            return name
    raise record_error(
        file, "file name", f"cannot tell the platform (one of {PLATFORMS}) from the name; pass platform=..."
    )


def default_image_dir(folder: Path, version: str) -> Path:
    """Where a release keeps its screenshots, next to its annotation files in ``folder``."""
    v2_dir = folder / "screenspotv2_image"  # OS-Copilot/ScreenSpot-v2 unzips screenspotv2_image.zip here
    if version == "v2" and v2_dir.is_dir():
        return v2_dir
    return folder / "screenspot_imgs"


def load_screenspot(
    file: str | Path, image_dir: str | Path | None = None, platform: str | None = None, version: str = "v1"
) -> list[Episode]:
    """ScreenSpot v1/v2 file -> grounding Episodes (box layout [x, y, w, h]).

    ``image_dir`` holds ``img_filename`` (default: ``screenspot_imgs`` next
    to the file, or for v2 ``screenspotv2_image`` when that folder exists);
    ImageRef paths are relative to it.
    """
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else default_image_dir(file.parent, version)
    platform = platform or _platform_from_name(file)
    episodes = []
    for i, rec in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        img = require(rec, "img_filename", str, file, where)
        where = f"record {i} ({img})"
        box = to_box(require(rec, "bbox", list, file, where), "xywh", file, where, "bbox")
        instruction = require(rec, "instruction", str, file, where)
        element_type = require(rec, "data_type", str, file, where)
        screenshot = image_ref(root, img, file, where)
        frame = Frame.screen(screenshot.width, screenshot.height)
        step = Step(
            index=0,
            screenshot=screenshot,
            valid_actions=[Action(type=ActionType.CLICK, box=box, frame=frame)],
            extra={"platform": platform, "element_type": element_type, "data_source": rec.get("data_source", "")},
        )
        episodes.append(
            Episode(
                id=f"screenspot_{version}_{platform}_{i}",
                instruction=instruction,
                steps=[step],
                source=f"screenspot_{version}:{file.name}",
                platform=platform,  # type: ignore[arg-type]
                task="grounding",
                extra={"match_rule": "inclusive"},
            )
        )
    return episodes


def load_screenspot_v2(file: str | Path, image_dir: str | Path | None = None, platform: str | None = None):
    """ScreenSpot-v2: the v1 layout with corrected boxes (``[x, y, w, h]``)."""
    return load_screenspot(file, image_dir=image_dir, platform=platform, version="v2")


def load_screenspot_pro(file: str | Path, image_dir: str | Path | None = None) -> list[Episode]:
    """ScreenSpot-Pro annotation file -> grounding Episodes (box layout [x1, y1, x2, y2]).

    ``image_dir`` defaults to ``../images`` relative to the annotation file.
    """
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else file.parent.parent / "images"
    episodes = []
    for i, rec in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        sample_id = str(rec.get("id", i)) if isinstance(rec, dict) else str(i)
        where = f"record {i} (id {sample_id})"
        img = require(rec, "img_filename", str, file, where)
        box = to_box(require(rec, "bbox", list, file, where), "xyxy", file, where, "bbox")
        w, h = numbers(require(rec, "img_size", list, file, where), 2, file, where, "img_size")
        if box[2] > w or box[3] > h:
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
                "application": rec.get("application", ""),
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


def _optional_str(rec: dict, key: str, file: Path, where: str) -> str:
    """``rec[key]`` when present (then it must be a string), else ``""``."""
    return require(rec, key, str, file, where) if rec.get(key) is not None else ""

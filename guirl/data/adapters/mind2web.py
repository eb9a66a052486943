"""Mind2Web (Deng et al. 2023) in its three public shapes -> Episodes.

One Episode per task (``annotation_id``), one Step per action in task order,
platform ``web``, ``extra["match_rule"] = "inclusive"``. Each Step's
``extra["action_uid"]`` names its action. Operations: ``op`` CLICK / TYPE /
SELECT (Mind2Web already writes ``original_op`` HOVER and ENTER as ``op``
CLICK; an ``op`` of HOVER / ENTER is read as CLICK too, as SeeClick's
``action2step`` does); TYPE / SELECT carry ``value`` as the Action's text.
Any other op is an AdapterError. There are no scroll actions. Boxes are
written as screen pixels [x1, y1, x2, y2] of the step's screenshot, and a box
whose centre lies outside its screenshot is an AdapterError (it is almost
always page coordinates read against a cropped screenshot).

Layouts (``layout="auto"`` tells them apart from the record shape; pass
``layout=`` to insist on one):

- ``"seeclick"`` - **SeeClick's converted release** (``mind2web_data_train.json``,
  ``mind2web_data_test_{task,website,domain}.json``, see njucckevin/SeeClick
  ``agent_tasks/readme_agent.md`` and ``mind2web_process.py``): a JSON list of
  tasks (``annotation_id``, ``confirmed_task``, ``website``, ``domain``,
  ``subdomain``, ``actions``); each action has ``action_uid``,
  ``operation`` ``{"op", "original_op", "value"}``, ``pos_candidates`` and
  ``bbox`` ``{"x", "y", "width", "height"}``: **[x, y, w, h] pixels of the
  cropped screenshot** (a 4-number list ``[x, y, w, h]`` is read too). The
  full-page ``bounding_box_rect`` inside the candidates is *not* read (its y
  runs to the full page height). Screenshot: ``{annotation_id}-{action_uid}.jpg``
  in the screenshot folder (``image_dir``; SeeClick's ``--imgs_dir``).
  An action **without** ``bbox`` has no target on the screenshot (SeeClick
  skips it); ``pos_candidates`` may be empty while ``bbox`` is there, and
  only the first candidate's ``tag`` is kept as the Action's description.
  Detected when any action of the file has a ``bbox`` field.
- ``"rows"`` - **Multimodal-Mind2Web** (the Hugging Face release, one row per
  action, exported to JSON / JSONL or read from its parquet files):
  ``annotation_id``, ``action_uid``, ``confirmed_task``, ``website``,
  ``domain``, ``subdomain``, ``operation`` (JSON string ``{"op",
  "original_op", "value"}``), ``pos_candidates`` (list of JSON strings),
  ``target_action_index`` and ``screenshot`` (a relative image path under
  ``image_dir``, or ``{"path": ...}``; the full-page screenshot). Rows are
  grouped per ``annotation_id`` in ``target_action_index`` order. Detected
  when a record has no ``actions`` list.
- ``"tasks"`` - **Mind2Web task JSON** (``train_*.json`` of the original
  release: tasks with ``actions``, each with ``action_uid``, ``operation``,
  ``pos_candidates``, no ``bbox``); the screenshot of an action is
  ``screenshot_pattern`` (default ``{annotation_id}/{action_uid}.png``) under
  ``image_dir``, a full-page screenshot.

For ``rows`` and ``tasks`` a candidate's box is ``bounding_box_rect`` inside
its ``attributes`` JSON string: ``"x,y,w,h"`` in **page** pixels, i.e.
[x, y, w, h] on the full-page screenshot; each positive candidate gives one
valid action. An action with no positive candidate has no target.

Skipped: actions without a target (no ``bbox`` for ``seeclick``, no
``pos_candidates`` otherwise) under ``missing_target="skip"`` - the check
comes before the screenshot is looked up, so a skipped step needs no image;
their ``action_uid`` are listed in ``Episode.extra["skipped_action_uids"]``
and a task left with no step is dropped. ``missing_target="error"``
(default) raises an AdapterError naming the record. Nothing else is skipped:
a missing screenshot is an error.

``image_dir`` defaults to the annotation file's folder.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, Box
from guirl.data.adapters._common import image_ref, load_json_or_jsonl, numbers, record_error, require, to_box
from guirl.data.schema import Episode, ImageRef, Step

_OPS = {
    "CLICK": ActionType.CLICK,
    "HOVER": ActionType.CLICK,  # Mind2Web's op for original_op HOVER / ENTER is CLICK
    "ENTER": ActionType.CLICK,
    "TYPE": ActionType.TYPE,
    "SELECT": ActionType.SELECT,
}

MISSING_TARGET = ("error", "skip")
LAYOUTS = ("auto", "seeclick", "rows", "tasks")
SCREENSHOT_PATTERNS = {
    "seeclick": "{annotation_id}-{action_uid}.jpg",  # SeeClick mind2web_process.py / mind2web_test.py
    "tasks": "{annotation_id}/{action_uid}.png",
    "rows": "{annotation_id}/{action_uid}.png",  # only when a row has no 'screenshot'
}


def _json_field(value: Any, file: Path, where: str, field: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as err:
            raise record_error(file, where, f"field '{field}' is not valid JSON ({err.msg})") from None
    return value


def _operation(action: dict, file: Path, where: str) -> tuple[str, str | None]:
    """(op name, value or None) of an action's ``operation``."""
    op = _json_field(require(action, "operation", (str, dict), file, where), file, where, "operation")
    name = require(op, "op", str, file, f"{where} operation")
    if name not in _OPS:
        raise record_error(
            file, where, f"operation op {name!r} is not one of {sorted(_OPS)}; fix or drop this action"
        )
    value = op.get("value")
    if value is not None and not isinstance(value, str):
        raise record_error(file, where, f"operation value must be a string, got {value!r}")
    return name, (value or None)


def _candidate_boxes(action: dict, file: Path, where: str) -> list[tuple[Box, str | None]]:
    """(box, tag) of every positive candidate, from its page-pixel ``bounding_box_rect``."""
    out = []
    for j, cand in enumerate(require(action, "pos_candidates", list, file, where)):
        cwhere = f"{where} pos_candidates[{j}]"
        cand = _json_field(cand, file, cwhere, "pos_candidates")
        attrs = _json_field(require(cand, "attributes", (str, dict), file, cwhere), file, cwhere, "attributes")
        rect = require(attrs, "bounding_box_rect", str, file, f"{cwhere} attributes")
        try:
            xywh = [float(v) for v in rect.split(",")]
        except ValueError:
            raise record_error(file, cwhere, f"bounding_box_rect {rect!r} is not 'x,y,w,h' numbers") from None
        if len(xywh) != 4:
            raise record_error(file, cwhere, f"bounding_box_rect {rect!r} is not 'x,y,w,h' (4 numbers)")
        tag = cand.get("tag")
        out.append((to_box(xywh, "xywh", file, cwhere, "bounding_box_rect"), tag if isinstance(tag, str) else None))
    return out


def _seeclick_box(action: dict, file: Path, where: str) -> list[tuple[Box, str | None]]:
    """The one target of a SeeClick action: its cropped-screenshot ``bbox`` ([x, y, w, h] pixels)."""
    bbox = action.get("bbox")
    if bbox is None:
        return []
    if isinstance(bbox, dict):
        missing = [k for k in ("x", "y", "width", "height") if k not in bbox]
        if missing:
            raise record_error(
                file, where, f"field 'bbox' {bbox!r} lacks {missing}; SeeClick's bbox is"
                " {'x', 'y', 'width', 'height'} in pixels of the cropped screenshot"
            )
        xywh = numbers([bbox["x"], bbox["y"], bbox["width"], bbox["height"]], 4, file, where, "bbox")
    else:
        xywh = numbers(bbox, 4, file, where, "bbox")
    tag = None
    cands = action.get("pos_candidates")
    if isinstance(cands, list) and cands:
        first = _json_field(cands[0], file, f"{where} pos_candidates[0]", "pos_candidates")
        if isinstance(first, dict) and isinstance(first.get("tag"), str):
            tag = first["tag"]
    return [(to_box(xywh, "xywh", file, where, "bbox"), tag)]


def _check_in_image(box: Box, shot: ImageRef, layout: str, uid: str, file: Path, where: str) -> None:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if 0 <= cx <= shot.width and 0 <= cy <= shot.height:
        return
    if layout == "seeclick":
        hint = (
            "probably page coordinates of an uncropped (full-page) screenshot; SeeClick's 'bbox' must be"
            " pixels of its cropped screenshot ({annotation_id}-{action_uid}.jpg)"
        )
    else:
        hint = (
            "bounding_box_rect is page coordinates and needs the full-page screenshot; for SeeClick's"
            " cropped screenshots read its 'bbox' instead (layout='seeclick')"
        )
    raise record_error(
        file, where, f"action_uid {uid}: box {[round(v, 2) for v in box]} (centre ({cx:g}, {cy:g})) lies outside"
        f" its {shot.width}x{shot.height} screenshot {shot.path!r}; {hint}"
    )


def _screenshot_path(value: Any, file: Path, where: str) -> str:
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return value["path"]
    if isinstance(value, str):
        return value
    raise record_error(file, where, f"field 'screenshot' must be an image path or {{'path': ...}}, got {value!r}")


def _detect_layout(records: list[Any], layout: str, file: Path) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if layout != "auto":
        return layout
    tasks = [r for r in records if isinstance(r, dict) and isinstance(r.get("actions"), list)]
    if not tasks:
        return "rows"
    if any(isinstance(a, dict) and "bbox" in a for t in tasks for a in t["actions"]):
        return "seeclick"
    return "tasks"


def _step_index(rec: dict, file: Path, where: str) -> int:
    value = require(rec, "target_action_index", (str, int), file, where)
    try:
        return int(value)
    except ValueError:
        raise record_error(file, where, f"field 'target_action_index' must be an integer, got {value!r}") from None


def _optional_str(rec: dict, key: str, file: Path, where: str) -> str | None:
    value = rec.get(key)
    if value is not None and not isinstance(value, str):
        raise record_error(file, where, f"field '{key}' must be a string, got {value!r}")
    return value


def load_mind2web(
    file: str | Path,
    image_dir: str | Path | None = None,
    screenshot_pattern: str | None = None,
    missing_target: str = "error",
    layout: str = "auto",
) -> list[Episode]:
    """SeeClick's Mind2Web tasks, Multimodal-Mind2Web rows or Mind2Web task JSON -> one Episode per task.

    ``screenshot_pattern`` (formatted with ``annotation_id`` and ``action_uid``)
    defaults per layout: ``{annotation_id}-{action_uid}.jpg`` for ``seeclick``,
    ``{annotation_id}/{action_uid}.png`` otherwise; a record's own
    ``screenshot`` field wins. ``image_dir`` defaults to the file's folder.
    """
    if missing_target not in MISSING_TARGET:
        raise ValueError(f"missing_target must be one of {MISSING_TARGET}, got {missing_target!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else file.parent
    records = load_json_or_jsonl(file)
    if not records:
        raise record_error(file, "file", "holds no records; pass a Mind2Web annotation file")
    layout = _detect_layout(records, layout, file)
    pattern = screenshot_pattern or SCREENSHOT_PATTERNS[layout]
    tasks: dict[str, dict] = {}
    steps: dict[str, list[tuple[int, Step]]] = defaultdict(list)
    skipped: dict[str, list[str]] = defaultdict(list)
    for i, rec in enumerate(records):
        where = f"record {i}"
        ann = require(rec, "annotation_id", str, file, where)
        where = f"record {i} (annotation {ann})"
        tasks.setdefault(ann, rec)
        if layout == "rows":
            if "actions" in rec:
                raise record_error(
                    file, where, "has an 'actions' list: a whole task, not a Multimodal-Mind2Web row;"
                    " use layout='tasks' or 'seeclick'"
                )
            actions = [(_step_index(rec, file, where), rec)]
        else:
            if "actions" not in rec:
                raise record_error(
                    file, where, f"field 'actions' is missing (layout={layout!r} reads whole tasks;"
                    " Multimodal-Mind2Web rows are layout='rows')"
                )
            actions = list(enumerate(require(rec, "actions", list, file, where)))
        for t, action in actions:
            awhere = f"{where} action {t}"
            uid = require(action, "action_uid", str, file, awhere)
            name, value = _operation(action, file, awhere)
            # the target comes first: a skipped step needs no screenshot
            targets = _seeclick_box(action, file, awhere) if layout == "seeclick" else _candidate_boxes(
                action, file, awhere)
            if not targets:
                if missing_target == "error":
                    what = "no 'bbox'" if layout == "seeclick" else "no pos_candidates"
                    raise record_error(
                        file, awhere, f"{what}: the target element of action {uid} is not on this page"
                        " (pass missing_target='skip' to drop such steps)"
                    )
                skipped[ann].append(uid)
                continue
            rel = (
                _screenshot_path(action["screenshot"], file, awhere)
                if "screenshot" in action
                else pattern.format(annotation_id=ann, action_uid=uid)
            )
            shot = image_ref(root, rel, file, awhere)
            frame = Frame.screen(shot.width, shot.height)
            valid = []
            for box, tag in targets:
                _check_in_image(box, shot, layout, uid, file, awhere)
                text = value if _OPS[name] is not ActionType.CLICK else None
                valid.append(Action(type=_OPS[name], box=box, text=text, frame=frame, description=tag))
            steps[ann].append((t, Step(index=t, screenshot=shot, valid_actions=valid, extra={"action_uid": uid})))
    episodes = []
    for ann, rec in tasks.items():
        rows = steps.get(ann, [])
        if not rows:  # every action skipped (missing_target="skip")
            continue
        rows.sort(key=lambda r: r[0])
        where = f"annotation {ann}"
        episodes.append(
            Episode(
                id=f"mind2web_{ann}",
                instruction=require(rec, "confirmed_task", str, file, where),
                steps=[s.model_copy(update={"index": t}) for t, (_, s) in enumerate(rows)],
                source=f"mind2web:{file.name}",
                platform="web",
                task=_optional_str(rec, "domain", file, where),
                extra={
                    "website": _optional_str(rec, "website", file, where) or "",
                    "subdomain": _optional_str(rec, "subdomain", file, where) or "",
                    "layout": layout,
                    "match_rule": "inclusive",
                    **({"skipped_action_uids": skipped[ann]} if skipped[ann] else {}),
                },
            )
        )
    return episodes

"""Mind2Web / Multimodal-Mind2Web (Deng et al. 2023) -> Episodes.

Two layouts are read:

- **Multimodal-Mind2Web rows** (the Hugging Face release, one row per
  action, exported to JSON / JSONL): ``annotation_id``, ``action_uid``,
  ``confirmed_task``, ``website``, ``domain``, ``subdomain``,
  ``operation`` (JSON string ``{"op", "original_op", "value"}``),
  ``pos_candidates`` (list of JSON strings), ``target_action_index`` and
  ``screenshot`` (a relative image path, or ``{"path": ...}``). Rows are
  grouped into one Episode per ``annotation_id`` in ``target_action_index``
  order.
- **Mind2Web task JSON** (``train_*.json``: tasks with an ``actions`` list,
  each with ``action_uid``, ``operation``, ``pos_candidates``); the
  screenshot of an action is ``screenshot_pattern`` formatted with
  ``annotation_id`` and ``action_uid``.

A candidate's box is ``bounding_box_rect`` inside its ``attributes`` JSON
string: ``"x,y,w,h"`` in page pixels, i.e. **[x, y, w, h]**. Each positive
candidate gives one valid action (CLICK, TYPE or SELECT with the value).
Operations: ``op`` is CLICK / TYPE / SELECT (``original_op`` HOVER and
ENTER are already CLICK there). There are no scroll actions.

Some actions have no positive candidate (the target is not in the cleaned
DOM). ``missing_target`` says what to do: ``"error"`` (default, an
AdapterError naming the record), ``"skip"`` (drop the step, as SeeClick's
processing does; its ``action_uid`` is listed in the Episode's
``extra["skipped_action_uids"]``; a task left with no step is dropped).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.adapters._common import image_ref, load_json_or_jsonl, record_error, require, to_box
from guirl.data.schema import Episode, ImageRef, Step

_OPS = {"CLICK": ActionType.CLICK, "TYPE": ActionType.TYPE, "SELECT": ActionType.SELECT}


def _json_field(value: Any, file: Path, where: str, field: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as err:
            raise record_error(file, where, f"field '{field}' is not valid JSON ({err.msg})") from None
    return value


def _valid_actions(action: dict, shot: ImageRef, file: Path, where: str) -> list[Action]:
    op = _json_field(require(action, "operation", (str, dict), file, where), file, where, "operation")
    name = require(op, "op", str, file, f"{where} operation")
    if name not in _OPS:
        raise record_error(file, where, f"operation op {name!r} is not one of {sorted(_OPS)}")
    value = op.get("value") or None
    frame = Frame.screen(shot.width, shot.height)
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
        box = to_box(xywh, "xywh", file, cwhere, "bounding_box_rect")
        text = value if name != "CLICK" else None
        out.append(Action(type=_OPS[name], box=box, text=text, frame=frame, description=cand.get("tag")))
    return out


def _screenshot_path(value: Any, file: Path, where: str) -> str:
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return value["path"]
    if isinstance(value, str):
        return value
    raise record_error(file, where, f"field 'screenshot' must be an image path or {{'path': ...}}, got {value!r}")


MISSING_TARGET = ("error", "skip")


def load_mind2web(
    file: str | Path,
    image_dir: str | Path | None = None,
    screenshot_pattern: str = "{annotation_id}/{action_uid}.png",
    missing_target: str = "error",
) -> list[Episode]:
    """Mind2Web tasks or Multimodal-Mind2Web rows -> one Episode per task."""
    if missing_target not in MISSING_TARGET:
        raise ValueError(f"missing_target must be one of {MISSING_TARGET}, got {missing_target!r}")
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else file.parent
    tasks: dict[str, dict] = {}
    steps: dict[str, list[tuple[int, Step]]] = defaultdict(list)
    skipped: dict[str, list[str]] = defaultdict(list)
    for i, rec in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        ann = str(require(rec, "annotation_id", str, file, where))
        where = f"record {i} (annotation {ann})"
        tasks.setdefault(ann, rec)
        if "actions" in rec:  # a whole task
            actions = [(t, a) for t, a in enumerate(require(rec, "actions", list, file, where))]
        else:  # one Multimodal-Mind2Web row
            actions = [(int(require(rec, "target_action_index", (str, int), file, where)), rec)]
        for t, action in actions:
            awhere = f"{where} action {t}"
            uid = require(action, "action_uid", str, file, awhere)
            rel = (
                _screenshot_path(action["screenshot"], file, awhere)
                if "screenshot" in action
                else screenshot_pattern.format(annotation_id=ann, action_uid=uid)
            )
            shot = image_ref(root, rel, file, awhere)
            valid = _valid_actions(action, shot, file, awhere)
            if not valid:
                if missing_target == "error":
                    raise record_error(
                        file, awhere, "no pos_candidates: the target element is not on this page"
                        " (pass missing_target='skip' to drop such steps)"
                    )
                skipped[ann].append(uid)
                continue
            steps[ann].append((t, Step(index=t, screenshot=shot, valid_actions=valid, extra={"action_uid": uid})))
    episodes = []
    for ann, rec in tasks.items():
        rows = steps.get(ann, [])
        if not rows:  # every action skipped (missing_target="skip")
            continue
        rows.sort(key=lambda r: r[0])
        episodes.append(
            Episode(
                id=f"mind2web_{ann}",
                instruction=require(rec, "confirmed_task", str, file, f"annotation {ann}"),
                steps=[s.model_copy(update={"index": t}) for t, (_, s) in enumerate(rows)],
                source=f"mind2web:{file.name}",
                platform="web",
                task=rec.get("domain"),
                extra={
                    "website": rec.get("website", ""),
                    "subdomain": rec.get("subdomain", ""),
                    "match_rule": "inclusive",
                    **({"skipped_action_uids": skipped[ann]} if skipped[ann] else {}),
                },
            )
        )
    return episodes

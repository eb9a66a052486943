"""AndroidControl in the layouts the papers' code reads: UI-S1, InfiGUI-R1, UI-R1.

Readers for :func:`guirl.data.adapters.androidcontrol.load_androidcontrol`;
the module docstring there documents each layout (fields, coordinates,
swipe convention, sources). Shared here: layout detection and screenshot
lookup (absolute paths of the authors' machines are looked up by file
name). The check that a point lies on its screenshot, the AndroidControl
action parser (TFRecord export, UI-R1) and the Qwen ``mobile_use`` action
parser (UI-S1, InfiGUI-R1) are in
:mod:`guirl.data.adapters.androidcontrol_actions` and re-exported here.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action
from guirl.data.adapters._common import image_ref, record_error, require
from guirl.data.adapters.androidcontrol_actions import (
    ac_action,
    mobile_use_actions,
)
from guirl.data.schema import Episode, ImageRef, Step

#: layout name -> its distinguishing fields (named in the "unrecognised layout" error)
LAYOUT_FIELDS: dict[str, str] = {
    "tfrecord": "the TFRecord export, one episode per record: 'episode_id', 'goal', 'screenshots', "
    "'screenshot_widths', 'screenshot_heights', 'actions' (AndroidControl action JSON), 'step_instructions'",
    "uis1": "UI-S1's android_control_evaluation_std.jsonl, one episode per line: 'goal', 'episode_id', "
    "'steps': [{'action_content', 'check_options', 'screenshot', 'step_instruction'}]",
    "infigui": "InfiGUI-R1's android_control_test.json, one episode per item: 'episode': {'episode_id', 'goal', "
    "'step_instructions', 'screenshot_paths'}, 'step_pams', 'step_check_pams', 'width', 'height'",
    "uir1": "UI-R1's ac_test.json, one step per item: 'image', 'gt': {'action_type', ...}, 'task'",
}
LAYOUTS = tuple(LAYOUT_FIELDS)
#: file names the papers' code reads, by layout (looked for when a directory is given)
KNOWN_FILES: dict[str, str] = {
    "uis1": "android_control_evaluation_std.jsonl",
    "infigui": "android_control_test.json",
    "uir1": "ac_test.json",
}
_TFRECORD_KEYS = {"episode_id", "goal", "screenshots", "screenshot_widths", "screenshot_heights", "actions",
                  "step_instructions", "ui_elements"}


def detect_layout(rec: Any) -> str | None:
    """The layout a record is in, from its distinguishing fields; None if none.

    A record with any TFRecord-export field (and none of the others') is
    read as the TFRecord export, so that a record missing a field gets
    that field named rather than "unrecognised layout".
    """
    if not isinstance(rec, dict):
        return None
    if "step_check_pams" in rec or "step_pams" in rec or isinstance(rec.get("episode"), dict):
        return "infigui"
    if "steps" in rec:
        return "uis1"
    if "gt" in rec and ("image" in rec or "task" in rec):
        return "uir1"
    if _TFRECORD_KEYS & rec.keys():
        return "tfrecord"
    return None


def unrecognised(file: Path, where: str, rec: Any) -> Exception:
    got = f"fields {sorted(rec)}" if isinstance(rec, dict) else f"a {type(rec).__name__}, not a JSON object"
    layouts = "; ".join(f"'{name}' = {fields}" for name, fields in LAYOUT_FIELDS.items())
    return record_error(
        file, where,
        f"not an AndroidControl record in any layout guirl reads (it has {got}). Layouts understood: {layouts}. "
        "Convert the data to one of them (the TFRecord export: see guirl.data.adapters.androidcontrol), "
        "or pass layout=NAME (--adapter-arg layout=NAME) to have the missing fields named",
    )


# -- screenshot lookup -------------------------------------------------------------------------


def screenshot_ref(
    root: Path, raw: Any, file: Path, where: str, size: tuple[int, int] | None = None, field: str = "screenshot"
) -> ImageRef:
    """The screenshot ``raw`` under ``root``. A relative path is tried as given,
    then by file name (also under ``images/``); an absolute path (the authors'
    machine, e.g. UI-S1's ``/datasets/AndroidControl/images/8193_0.png``) by
    file name under ``root`` and ``root/images``, then as given."""
    if not isinstance(raw, str) or not raw.strip():
        raise record_error(file, where, f"field '{field}' must be an image path, got {raw!r}")
    name = Path(raw).name
    tries = [] if Path(raw).is_absolute() else [raw]
    tries += [name, f"images/{name}"]
    if Path(raw).is_absolute():
        tries.append(raw)
    tries = list(dict.fromkeys(tries))
    for rel in tries:
        if (root / rel).is_file():
            return image_ref(root, rel, file, where, size=size)
    raise record_error(
        file, where,
        f"image {raw!r} not found under {root} (looked for {', '.join(map(repr, tries))}); "
        "pass the screenshot directory with --images",
    )


def _described(actions: list[Action], description: Any) -> list[Action]:
    if not isinstance(description, str) or not description:
        return actions
    return [actions[0].model_copy(update={"description": description}), *actions[1:]]


def _opt_str(rec: dict, key: str, file: Path, where: str) -> str | None:
    value = rec.get(key)
    if value is not None and not isinstance(value, str):
        raise record_error(file, where, f"field '{key}' must be a string, got {value!r}")
    return value


def _episode_id(rec: dict, key: str, file: Path, where: str, default: str) -> str:
    if key not in rec:
        return default
    return str(require(rec, key, (str, int), file, where))


# -- UI-S1 -----------------------------------------------------------------------------------


def _trajdataset_check(raw: dict, content: dict) -> dict:
    """The check UI-S1's RL data set builds for a step without ``check_options``
    (``TrajDataset.fix_line`` in ``verl/utils/dataset/rl_dataset.py``): a copy of
    ``action_content``, the step's ``annotation`` (GOOD when absent) and the
    content's own ``bbox``, as given, as ``candidate_bbox`` (else ``[]``)."""
    check = copy.deepcopy(content)
    check["annotation"] = raw.get("annotation", "GOOD")
    check["candidate_bbox"] = check["bbox"] if "bbox" in content else []
    return check


def read_uis1(rec: Any, i: int, file: Path, root: Path, level: str) -> Episode:
    where = f"record {i}"
    if not isinstance(rec, dict):
        raise record_error(file, where, f"expected a JSON object, got {type(rec).__name__}")
    ep_id = _episode_id(rec, "episode_id", file, where, default=str(i))
    where = f"record {i} (episode {ep_id})"
    goal = require(rec, "goal", str, file, where)
    raw_steps = require(rec, "steps", list, file, where)
    steps = []
    for t, raw in enumerate(raw_steps):
        swhere = f"{where} step {t}"
        content = require(raw, "action_content", dict, file, swhere)
        check = raw.get("check_options")
        authors_check = check if isinstance(check, dict) else _trajdataset_check(raw, content)
        if check is None:  # training layout: the action is its own check, its 'bbox' the one candidate
            bbox = raw.get("bbox", content.get("bbox"))
            if bbox is not None and not isinstance(bbox, list):
                raise record_error(file, swhere, f"field 'bbox' must be an [x1, y1, x2, y2] pixel box, got {bbox!r}")
            flat = bool(bbox) and not isinstance(bbox[0], (list, tuple))
            boxes = [] if bbox is None else ([bbox] if flat else bbox)
            check = {**{k: v for k, v in content.items() if k != "bbox"}, "candidate_bbox": boxes}
        elif not isinstance(check, dict):
            raise record_error(file, swhere, f"field 'check_options' must be a JSON object, got {check!r}")
        shot = screenshot_ref(root, require(raw, "screenshot", str, file, swhere), file, swhere)
        size = (shot.width, shot.height)
        actions = mobile_use_actions(check, content, size, "uis1", file, swhere)
        actions = _described(actions, raw.get("action_description"))
        instruction = _opt_str(raw, "step_instruction", file, swhere)
        if level == "low" and instruction is None:
            raise record_error(file, swhere, "low level needs the step's 'step_instruction'")
        thought = _opt_str(raw, "thought", file, swhere)
        steps.append(
            Step(
                index=t,
                screenshot=shot,
                instruction=instruction if level == "low" else None,
                valid_actions=actions,
                action=actions[0],
                sub_goal=instruction,
                reasoning=thought or None,
                a11y_frame=Frame.screen(*size),
                extra={"authors_check": authors_check},
            )
        )
    extra: dict[str, Any] = {"level": level, "layout": "uis1", "match_rule": "uis1"}
    if isinstance(rec.get("is_successful"), bool):
        extra["is_successful"] = rec["is_successful"]
    return Episode(id=f"androidcontrol_{ep_id}", instruction=goal, steps=steps,
                   source=f"androidcontrol:{file.name}", platform="mobile", extra=extra)


# -- InfiGUI-R1 ------------------------------------------------------------------------------


def _positive_int(rec: dict, key: str, file: Path, where: str) -> int:
    value = require(rec, key, (int, float), file, where)
    if value <= 0 or not float(value).is_integer():
        raise record_error(file, where, f"field '{key}' must be a positive number of pixels, got {value!r}")
    return int(value)


def read_infigui(rec: Any, i: int, file: Path, root: Path, level: str) -> Episode:
    where = f"record {i}"
    ep = require(rec, "episode", dict, file, where)
    ep_id = str(require(ep, "episode_id", (str, int), file, where))
    where = f"record {i} (episode {ep_id})"
    goal = require(ep, "goal", str, file, where)
    instructions = require(ep, "step_instructions", list, file, where)
    shots = require(ep, "screenshot_paths", list, file, where)
    pams = require(rec, "step_pams", list, file, where)
    checks = require(rec, "step_check_pams", list, file, where)
    size = (_positive_int(rec, "width", file, where), _positive_int(rec, "height", file, where))
    n = len(checks)
    if not (len(pams) == len(instructions) == n) or len(shots) not in (n, n + 1):
        raise record_error(
            file, where, f"{n} step_check_pams / {len(pams)} step_pams / {len(instructions)} step_instructions / "
            f"{len(shots)} screenshot_paths; InfiGUI-R1 expects equal lists and one more screenshot (the final screen)"
        )
    steps = []
    for t in range(n):
        swhere = f"{where} step {t}"
        shot = screenshot_ref(root, shots[t], file, swhere, size=size, field=f"screenshot_paths[{t}]")
        actions = mobile_use_actions(checks[t], pams[t], size, "infigui", file, swhere)
        instruction = instructions[t]
        if not isinstance(instruction, str):
            raise record_error(file, swhere, f"step_instructions[{t}] must be a string, got {instruction!r}")
        steps.append(
            Step(
                index=t,
                screenshot=shot,
                instruction=instruction if level == "low" else None,
                valid_actions=actions,
                action=actions[0],
                sub_goal=instruction,
                a11y_frame=Frame.screen(*size),
                extra={"step_pam": pams[t]},  # the action as InfiGUI-R1's prompt shows it in the task progress
            )
        )
    return Episode(id=f"androidcontrol_{ep_id}", instruction=goal, steps=steps,
                   source=f"androidcontrol:{file.name}", platform="mobile",
                   extra={"level": level, "layout": "infigui", "match_rule": "infigui"})


# -- UI-R1 -----------------------------------------------------------------------------------

_UIR1_IMAGE = re.compile(r"episode_([^/\\-]+)-screenshot_(\d+)\.\w+$")


def read_uir1(rec: Any, i: int, file: Path, root: Path, level: str) -> Episode:
    where = f"record {i}"
    image = require(rec, "image", str, file, where)
    where = f"record {i} ({image})"
    gt = require(rec, "gt", dict, file, where)
    task = require(rec, "task", str, file, where)
    shot = screenshot_ref(root, image, file, where, field="image")
    size = (shot.width, shot.height)
    action = ac_action(gt, size, False, file, where)
    match = _UIR1_IMAGE.search(image)
    extra: dict[str, Any] = {"level": level, "layout": "uir1", "match_rule": "uir1"}
    if match:
        ep_id, step = match.group(1), int(match.group(2))
        extra.update(episode_id=ep_id, step=step)
        ident = f"androidcontrol_{ep_id}_step{step}"
    else:
        ident = f"androidcontrol_uir1_{i}"
    step_ = Step(index=0, screenshot=shot, instruction=task if level == "low" else None, valid_actions=[action],
                 action=action, sub_goal=task, a11y_frame=Frame.screen(*size))
    return Episode(id=ident, instruction=task, steps=[step_], source=f"androidcontrol:{file.name}",
                   platform="mobile", extra=extra)

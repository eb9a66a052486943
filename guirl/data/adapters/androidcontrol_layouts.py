"""AndroidControl in the layouts the papers' code reads: UI-S1, InfiGUI-R1, UI-R1.

Readers for :func:`guirl.data.adapters.androidcontrol.load_androidcontrol`;
the module docstring there documents each layout (fields, coordinates,
swipe convention, sources). Shared here: layout detection, the check that
a point lies on its screenshot, screenshot lookup (absolute paths of the
authors' machines are looked up by file name), the AndroidControl action
parser (TFRecord export, UI-R1) and the Qwen ``mobile_use`` action parser
(UI-S1, InfiGUI-R1).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, Box
from guirl.data.adapters._common import (
    OPPOSITE,
    direction_from_finger,
    image_ref,
    numbers,
    record_error,
    require,
    to_box,
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


# -- shared checks -----------------------------------------------------------------------------


def pixel_point(value: Any, size: tuple[int, int], file: Path, where: str, field: str) -> tuple[float, float]:
    """``value`` as an (x, y) point in screen pixels, checked to lie on the ``size`` screenshot."""
    x, y = numbers(value, 2, file, where, field)
    check_on_screen(x, y, size, file, where, field)
    return (x, y)


def check_on_screen(x: float, y: float, size: tuple[int, int], file: Path, where: str, field: str) -> None:
    width, height = size
    if not (0 <= x <= width and 0 <= y <= height):
        raise record_error(
            file, where,
            f"{field} ({x:g}, {y:g}) is outside the {width}x{height} screenshot; this layout gives screen pixels "
            "of the step's screenshot (is the point normalised or relative, or the image another one?)",
        )


def _centre(box: Box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


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


# -- AndroidControl's own action JSON (TFRecord export, UI-R1's ``gt``) -------------------------

_AC_SIMPLE = {"navigate_home": ActionType.HOME, "navigate_back": ActionType.BACK, "wait": ActionType.WAIT}
AC_ACTIONS = ("click", "long_press", "scroll", "type", "input_text", "open_app", *_AC_SIMPLE)


def ac_action(raw: Any, size: tuple[int, int], flip_scroll: bool, file: Path, where: str) -> Action:
    """An AndroidControl action (``action_type`` and its fields; a JSON string or object)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            raise record_error(file, where, f"action is not valid JSON ({err.msg})") from None
    frame = Frame.screen(*size)
    kind = require(raw, "action_type", str, file, where)
    if kind in ("click", "long_press", "type"):
        x = float(require(raw, "x", (int, float), file, where))
        y = float(require(raw, "y", (int, float), file, where))
        check_on_screen(x, y, size, file, where, f"{kind} point 'x', 'y'")
        if kind == "type":  # click at (x, y), type the text, press enter
            text = require(raw, "text", str, file, where)
            return Action(type=ActionType.TYPE, point=(x, y), text=text, frame=frame)
        atype = ActionType.CLICK if kind == "click" else ActionType.LONG_PRESS
        return Action(type=atype, point=(x, y), frame=frame)
    if kind == "scroll":
        direction = require(raw, "direction", str, file, where)
        if direction not in OPPOSITE:
            raise record_error(file, where, f"scroll direction {direction!r} is not one of {sorted(OPPOSITE)}")
        return Action(type=ActionType.SCROLL, direction=OPPOSITE[direction] if flip_scroll else direction)
    if kind == "input_text":
        return Action(type=ActionType.TYPE, text=require(raw, "text", str, file, where))
    if kind == "open_app":
        return Action(type=ActionType.OPEN_APP, text=require(raw, "app_name", str, file, where))
    if kind in _AC_SIMPLE:
        return Action(type=_AC_SIMPLE[kind])
    raise record_error(file, where, f"unknown action_type {kind!r}; AndroidControl has {list(AC_ACTIONS)}")


# -- Qwen mobile_use actions (UI-S1 action_content / check_options, InfiGUI-R1 step_(check_)pams) ----

_BUTTONS = {"back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER}
MOBILE_USE_ACTIONS = ("click", "long_press", "swipe", "type", "open", "system_button", "wait", "terminate",
                      "answer", "key")


def _candidate_boxes(pam: dict, file: Path, where: str) -> list[Box]:
    raw = pam.get("candidate_bbox", [])
    if not isinstance(raw, list) or (raw and not all(isinstance(b, (list, tuple)) for b in raw)):
        raise record_error(
            file, where, f"field 'candidate_bbox' must be a list of [x1, y1, x2, y2] pixel boxes, got {raw!r}"
        )
    return [to_box(b, "xyxy", file, where, f"candidate_bbox[{j}]") for j, b in enumerate(raw)]


def _seconds(pam: dict, file: Path, where: str) -> float | None:
    value = pam.get("time")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise record_error(file, where, f"field 'time' must be a number of seconds, got {value!r}")
    return float(value)


def mobile_use_actions(
    check: Any, content: Any, size: tuple[int, int], reading: str, file: Path, where: str
) -> list[Action]:
    """The valid actions of one step: ``check`` is what the evaluator scores
    (UI-S1 ``check_options``, InfiGUI-R1 ``step_check_pams``), ``content`` the
    action as the model is shown / trained on (``action_content``,
    ``step_pams``), used where ``check`` lacks a field. ``reading`` ("uis1" or
    "infigui") decides how a swipe's direction is read (module docstring)."""
    if not isinstance(check, dict):
        raise record_error(file, where, f"the step's action must be a JSON object, got {check!r}")
    # fields set to null are absent (a Hugging Face / parquet row has every field of every row)
    check = {k: v for k, v in check.items() if v is not None}
    content = {k: v for k, v in content.items() if v is not None} if isinstance(content, dict) else {}
    kind = require(check, "action", str, file, where)
    if content.get("action", kind) != kind:
        raise record_error(
            file, where, f"the scored action is {kind!r} but the model's action is {content.get('action')!r}; "
            "the two must agree"
        )
    pam = {**content, **check}  # check's fields win; content fills in (time, coordinate2, ...)
    frame = Frame.screen(*size)
    if kind in ("click", "long_press"):
        if "coordinate" not in pam:
            raise record_error(file, where, f"{kind} needs field 'coordinate' [x, y] (pixels)")
        point = pixel_point(pam["coordinate"], size, file, where, "coordinate")
        atype = ActionType.CLICK if kind == "click" else ActionType.LONG_PRESS
        amount = _seconds(pam, file, where) if kind == "long_press" else None
        boxes = _candidate_boxes(check, file, where)
        # each candidate box is an accepted region (the evaluators test them all, enlarged 1.2x);
        # without one only the distance to the point counts
        return [Action(type=atype, point=point, box=b, amount=amount, frame=frame) for b in boxes] or [
            Action(type=atype, point=point, amount=amount, frame=frame)
        ]
    if kind == "open":
        text = require(pam, "text", str, file, where)
        actions = [Action(type=ActionType.OPEN_APP, text=text)]
        boxes = _candidate_boxes(check, file, where)
        if boxes:  # a click on the app's icon also counts, scored against the first box's centre
            point = _centre(boxes[0])
            actions += [Action(type=ActionType.CLICK, point=point, box=b, frame=frame) for b in boxes]
        return actions
    if kind in ("type", "answer"):
        atype = ActionType.TYPE if kind == "type" else ActionType.ANSWER
        return [Action(type=atype, text=require(pam, "text", str, file, where))]
    if kind == "key":
        return [Action(type=ActionType.KEY, keys=(require(pam, "text", str, file, where),))]
    if kind == "system_button":
        button = require(pam, "button", str, file, where)
        key = button.strip().lower()
        if key == "menu":
            return [Action(type=ActionType.KEY, keys=("menu",))]
        if key not in _BUTTONS:
            raise record_error(file, where, f"system_button {button!r} is not one of Back, Home, Menu, Enter")
        return [Action(type=_BUTTONS[key])]
    if kind == "wait":
        return [Action(type=ActionType.WAIT, amount=_seconds(pam, file, where))]
    if kind == "terminate":
        status = require(pam, "status", str, file, where)
        if status not in ("success", "failure"):
            raise record_error(file, where, f"terminate status {status!r} is not 'success' or 'failure'")
        return [Action(type=ActionType.TERMINATE, status=status)]
    if kind == "swipe":
        return [_swipe(check, pam, size, reading, file, where)]
    raise record_error(file, where, f"unknown action {kind!r}; the mobile_use action space has {list(MOBILE_USE_ACTIONS)}")


def _swipe(check: dict, pam: dict, size: tuple[int, int], reading: str, file: Path, where: str) -> Action:
    raw_dir = check.get("direction")
    if raw_dir is not None and raw_dir not in OPPOSITE:
        raise record_error(file, where, f"swipe direction {raw_dir!r} is not one of {sorted(OPPOSITE)}")
    if reading == "infigui":
        # evaluate_android_control.py: predict_direction(pred coordinate -> coordinate2) == direction,
        # i.e. the direction is the finger's; the content moves the other way
        if raw_dir is None:
            raise record_error(file, where, "swipe needs field 'direction' (what InfiGUI-R1's evaluator compares)")
        return Action(type=ActionType.SWIPE, direction=OPPOSITE[raw_dir])
    start = end = None
    if "coordinate" in pam or "coordinate2" in pam:
        start = pixel_point(pam.get("coordinate"), size, file, where, "coordinate")
        end = pixel_point(pam.get("coordinate2"), size, file, where, "coordinate2")
        if start == end:
            raise record_error(file, where, f"swipe from {list(start)} to {list(end)} has no direction")
    # UI-S1 (qwenvl_utils.py): "the down up is wrong in gt, left right is ok" - the check direction is
    # flipped on the vertical axis only before it is compared with the finger's direction; its paths
    # (action_content) are written the same way. So up/down are the content's, left/right the finger's.
    from_dir = None if raw_dir is None else (raw_dir if raw_dir in ("up", "down") else OPPOSITE[raw_dir])
    from_path = None
    if start is not None and end is not None:
        width, height = size  # predict_direction runs on coordinates normalised by the image size
        from_path = direction_from_finger((start[0] / width, start[1] / height), (end[0] / width, end[1] / height))
    if from_dir and from_path and from_dir != from_path:
        raise record_error(
            file, where, f"swipe path {list(start)} -> {list(end)} (content moves {from_path}) disagrees with "
            f"direction {raw_dir!r} (UI-S1 reads it as content {from_dir}: up/down kept, left/right reversed)"
        )
    direction = from_path or from_dir
    if direction is None:
        raise record_error(file, where, "swipe needs 'coordinate' and 'coordinate2' (pixels) or a 'direction'")
    return Action(type=ActionType.SWIPE, point=start, end_point=end, direction=direction, frame=Frame.screen(*size))


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

"""GUI-Libra-style step records -> single-step Episodes.

Layout read: the RL / evaluation records of GUI-Libra's EasyR1 setup
(``examples/reward_function/r1gui.py`` reads their ``ground_truth``):
``{"id"?, "image" or "images": [path], "problem" or "instruction",
"history"?: [action descriptions], "ground_truth": {"gt_action",
"gt_bbox" | "gt_point_2d", "gt_input_text", "image_width",
"image_height", "is_grounding"?}}`` (``ground_truth`` may be a JSON string).

Coordinates: ``gt_bbox`` is **[x1, y1, x2, y2] relative 0-1000**;
``gt_point_2d`` is **[x, y] normalised 0-1**; both become screen pixels of
``image_width`` x ``image_height``. Action names are normalised as
GUI-Libra does (``long_press`` -> LongPress, ``type`` -> Write, ...).
``gt_input_text`` is the value: typed text, app name, answer, option, or
the scroll / swipe direction. Scroll convention: GUI-Libra's ``Scroll``
follows android_world's scroll (content direction, = guirl), its ``Swipe``
is android_world's inverse (finger direction) and is flipped.
Episodes record ``match_rule: guilibra``.
"""

from __future__ import annotations

import json
from pathlib import Path

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.adapters._common import OPPOSITE, image_ref, load_json_or_jsonl, numbers, record_error, require
from guirl.data.schema import Episode, HistoryItem, Step

ACTION_NAMES = {
    "click": ActionType.CLICK,
    "longpress": ActionType.LONG_PRESS,
    "write": ActionType.TYPE,
    "scroll": ActionType.SCROLL,
    "swipe": ActionType.SWIPE,
    "navigatehome": ActionType.HOME,
    "navigateback": ActionType.BACK,
    "answer": ActionType.ANSWER,
    "wait": ActionType.WAIT,
    "openapp": ActionType.OPEN_APP,
    "keyboardpress": ActionType.KEY,
    "select": ActionType.SELECT,
    "terminate": ActionType.TERMINATE,
}
ALIASES = {"long_press": "longpress", "open_app": "openapp", "type": "write", "press_back": "navigateback",
           "press_home": "navigatehome", "pressback": "navigateback", "presshome": "navigatehome"}


def _gold(gt: dict, file: Path, where: str) -> tuple[Action, int, int]:
    name = require(gt, "gt_action", str, file, where).lower()
    name = ALIASES.get(name, name)
    if name not in ACTION_NAMES:
        raise record_error(file, where, f"gt_action {name!r} is not a GUI-Libra action {sorted(ACTION_NAMES)}")
    atype = ACTION_NAMES[name]
    w, h = require(gt, "image_width", int, file, where), require(gt, "image_height", int, file, where)
    screen = Frame.screen(w, h)
    value = str(gt.get("gt_input_text", "") or "").strip()
    fields: dict = {"type": atype, "frame": screen}
    if "gt_bbox" in gt:
        x1, y1, x2, y2 = numbers(gt["gt_bbox"], 4, file, where, "ground_truth.gt_bbox")
        rel = Frame.relative(1000)
        fields["box"] = (*rel.convert_point((x1, y1), screen), *rel.convert_point((x2, y2), screen))
        if x2 < x1 or y2 < y1:
            raise record_error(file, where, f"gt_bbox {gt['gt_bbox']!r} is not [x1, y1, x2, y2]")
    elif "gt_point_2d" in gt and gt["gt_point_2d"] not in ("none", "None", None):
        x, y = numbers(gt["gt_point_2d"], 2, file, where, "ground_truth.gt_point_2d")
        fields["point"] = Frame.unit().convert_point((x, y), screen)
    if atype in (ActionType.SCROLL, ActionType.SWIPE):
        direction = value.lower()
        if direction not in OPPOSITE:
            raise record_error(file, where, f"{name} needs a direction in gt_input_text, got {value!r}")
        fields["direction"] = OPPOSITE[direction] if atype is ActionType.SWIPE else direction
    elif atype is ActionType.KEY:
        fields["keys"] = tuple(value.lower().split("+")) if value else ("enter",)
    elif atype is ActionType.TERMINATE:
        fields["status"] = "failure" if value.lower() in ("failure", "infeasible", "fail") else "success"
    elif value and value.lower() != "none":
        fields["text"] = value
    return Action(**fields), w, h


def load_guilibra(file: str | Path, image_dir: str | Path | None = None) -> list[Episode]:
    """GUI-Libra-style records -> one single-step Episode each."""
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else file.parent
    episodes = []
    for i, rec in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        rid = str(rec.get("id", i)) if isinstance(rec, dict) else str(i)
        where = f"record {i} (id {rid})"
        gt = require(rec, "ground_truth", (dict, str), file, where)
        if isinstance(gt, str):
            try:
                gt = json.loads(gt)
            except json.JSONDecodeError as err:
                raise record_error(file, where, f"field 'ground_truth' is not valid JSON ({err.msg})") from None
        action, w, h = _gold(gt, file, where)
        images = rec.get("images") or ([rec["image"]] if "image" in rec else None)
        if not images or not isinstance(images[-1], str):
            raise record_error(file, where, "field 'image' (or 'images': [path]) is missing")
        instruction = rec.get("instruction") or rec.get("problem")
        if not isinstance(instruction, str):
            raise record_error(file, where, "field 'instruction' (or 'problem') is missing")
        history = [HistoryItem(description=str(d)) for d in rec.get("history", [])]
        step = Step(
            index=0,
            screenshot=image_ref(root, images[-1], file, where, size=(w, h)),
            history=history,
            valid_actions=[action],
            extra={"is_grounding": bool(gt.get("is_grounding", False))},
        )
        episodes.append(
            Episode(
                id=f"guilibra_{rid}",
                instruction=instruction,
                steps=[step],
                source=f"guilibra:{file.name}",
                extra={"match_rule": "guilibra", "value_rule": "f1"},
            )
        )
    return episodes

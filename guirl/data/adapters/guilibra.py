"""GUI-Libra-style step records -> single-step Episodes.

Layout read: the RL / evaluation records of GUI-Libra's EasyR1 setup
(GUI-Libra-81K-RL, described in ``EasyR1/README_GUI_RL.md``;
``examples/reward_function/r1gui.py`` reads their ``ground_truth``):
``{"id"?, "images": [path or {"path": ...}] (or "image": path), "context"
(the prompt) or "problem" or "instruction", "history"?: [action
descriptions], "ground_truth": {"gt_action", "gt_bbox" | "gt_point_2d",
"gt_input_text", "image_width", "image_height", "image_width_new"?,
"image_height_new"?, "is_grounding"?}}`` (``ground_truth`` may be a JSON
string). From a ``context`` prompt the text after ``Instruction:`` (up to
``Interaction History:``) is the instruction; the whole prompt is kept in
``Step.extra["prompt"]``.

Coordinates, as ``r1gui.py`` reads them: ``gt_bbox`` is **relative
0-1000**, either ``[x1, y1, x2, y2]`` (a box) or ``[x, y]`` (a point);
``gt_point_2d`` (used only without ``gt_bbox``) is **[x, y] normalised 0-1**
(the reward compares it with the prediction divided by 1000, although the
README calls both 0-1000). A negative ``[-100, -100]`` or ``"none"`` means
no coordinates. They become screen pixels of ``image_width`` x
``image_height`` (the screenshot's size; the model-input size
``image_*_new`` is kept in ``Step.extra["resized"]``). Action names are normalised as
GUI-Libra does (``long_press`` -> LongPress, ``type`` -> Write, ...).
``gt_input_text`` is the value: typed text, app name, answer, option, or
the scroll / swipe direction. Scroll convention: GUI-Libra's ``Scroll``
follows android_world's scroll (content direction, = guirl), its ``Swipe``
is android_world's inverse (finger direction) and is flipped.
Episodes record ``match_rule: guilibra``. The ``ground_truth`` object itself
(after JSON decoding) is kept in ``Step.extra["authors_check"]``: the
``authors_check`` reward column, which ``guilibra(format_rule="authors")``
scores exactly as ``r1gui.py`` does (text ``"None"``, status words, a missing
``gt_bbox`` and the 0-1000 box arithmetic all as in the record).
"""

from __future__ import annotations

import json
import re
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


_NO_COORDS = ("none", "None", None)


def _coords(gt: dict, screen: Frame, file: Path, where: str) -> dict:
    """``{"box": ...}`` / ``{"point": ...}`` in pixels from gt_bbox / gt_point_2d (or ``{}``)."""
    rel = Frame.relative(1000)
    if "gt_bbox" in gt and gt["gt_bbox"] not in _NO_COORDS:
        raw = gt["gt_bbox"]
        n = len(raw) if isinstance(raw, (list, tuple)) else 0
        vals = numbers(raw, 2 if n == 2 else 4, file, where, "ground_truth.gt_bbox")
        if all(v < 0 for v in vals):  # [-100, -100]: not applicable
            return {}
        if not all(0 <= v <= 1000 for v in vals):
            raise record_error(file, where, f"gt_bbox {raw!r} is outside the 0-1000 relative range")
        if n == 2:
            return {"point": rel.convert_point((vals[0], vals[1]), screen)}
        x1, y1, x2, y2 = vals
        if x2 < x1 or y2 < y1:
            raise record_error(file, where, f"gt_bbox {raw!r} is not [x1, y1, x2, y2]")
        return {"box": (*rel.convert_point((x1, y1), screen), *rel.convert_point((x2, y2), screen))}
    if "gt_point_2d" in gt and gt["gt_point_2d"] not in _NO_COORDS:
        x, y = numbers(gt["gt_point_2d"], 2, file, where, "ground_truth.gt_point_2d")
        if x < 0 and y < 0:
            return {}
        if not (0 <= x <= 1 and 0 <= y <= 1):
            raise record_error(
                file, where, f"gt_point_2d {gt['gt_point_2d']!r} is read as normalised 0-1 (r1gui.py compares it "
                "with the prediction / 1000); give 0-1000 coordinates as gt_bbox [x, y] instead"
            )
        return {"point": Frame.unit().convert_point((x, y), screen)}
    return {}


def _gold(gt: dict, file: Path, where: str) -> tuple[Action, int, int]:
    name = require(gt, "gt_action", str, file, where).lower()
    name = ALIASES.get(name, name)
    if name not in ACTION_NAMES:
        raise record_error(file, where, f"gt_action {name!r} is not a GUI-Libra action {sorted(ACTION_NAMES)}")
    atype = ACTION_NAMES[name]
    w, h = require(gt, "image_width", int, file, where), require(gt, "image_height", int, file, where)
    screen = Frame.screen(w, h)
    value = str(gt.get("gt_input_text", "") or "").strip()
    fields: dict = {"type": atype, "frame": screen, **_coords(gt, screen, file, where)}
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


_INSTRUCTION = re.compile(r"Instruction:\s*(.*?)\s*(?:Interaction History:|$)", re.DOTALL)


def _instruction(rec: dict, file: Path, where: str) -> tuple[str, str | None]:
    """(instruction, prompt or None) from ``instruction`` / ``problem`` / ``context``."""
    for key in ("instruction", "problem"):
        if isinstance(rec.get(key), str):
            return rec[key], None
    context = rec.get("context")
    if isinstance(context, str):
        found = _INSTRUCTION.search(context)
        return (found.group(1) if found and found.group(1) else context), context
    raise record_error(file, where, "field 'instruction' (or 'problem', or the 'context' prompt) is missing")


def _image_path(rec: dict, file: Path, where: str) -> str:
    """The last image of ``images`` (paths or ``{"path": ...}``), else ``image``."""
    images = rec.get("images") or ([rec["image"]] if "image" in rec else None)
    last = images[-1] if isinstance(images, list) and images else None
    if isinstance(last, dict):
        last = last.get("path")
    if not isinstance(last, str):
        raise record_error(file, where, f"field 'images' must hold an image path (or {{'path': ...}}), got {images!r}")
    return last


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
        instruction, prompt = _instruction(rec, file, where)
        history = [HistoryItem(description=str(d)) for d in rec.get("history", [])]
        extra: dict = {"is_grounding": bool(gt.get("is_grounding", False)), "authors_check": gt}
        if isinstance(gt.get("image_width_new"), int) and isinstance(gt.get("image_height_new"), int):
            extra["resized"] = [gt["image_width_new"], gt["image_height_new"]]
        if prompt is not None:
            extra["prompt"] = prompt
        step = Step(
            index=0,
            screenshot=image_ref(root, _image_path(rec, file, where), file, where, size=(w, h)),
            history=history,
            valid_actions=[action],
            extra=extra,
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

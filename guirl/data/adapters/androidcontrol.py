"""AndroidControl (Li et al. 2024) episodes -> Episodes, high or low level.

Layout read: the released TFRecord features, one episode per record, with
the PNG bytes written out as files (TensorFlow is not a guirl dependency;
export with ``tf.data.TFRecordDataset`` once). Each JSON / JSONL record:
``{"episode_id", "goal", "screenshots": [relative image paths],
"screenshot_widths", "screenshot_heights", "actions": [JSON strings or
objects], "step_instructions": [...]}``; there is one more screenshot than
actions (the final screen). Actions (``action_type``): ``click`` /
``long_press`` with ``x``, ``y`` in **screen pixels**; ``scroll`` with
``direction``; ``type`` with ``x``, ``y``, ``text`` (click, type, enter);
``input_text`` with ``text``; ``open_app`` with
``app_name``; ``navigate_home``; ``navigate_back``; ``wait``.

The accessibility trees (``accessibility_trees``, AndroidAccessibilityForest
protos) are read when exported as android_world ``UIElement`` dicts (what
``representation_utils.forest_to_ui_elements`` gives): optional
``"ui_elements": [[{"text", "content_description", "class_name",
"bbox_pixels": {"x_min", "x_max", "y_min", "y_max"}, "is_enabled",
"is_focused", "is_checked"}, ...] per screenshot]`` -> ``Step.a11y``.

Levels: ``high`` gives the goal only; ``low`` also sets each Step's
``instruction`` to its step instruction.

Scroll convention: the README only says "scroll in a direction"; guirl
reads it as android_world's ``scroll`` (the same authors' action space),
where ``down`` swipes the finger from the centre to the top, i.e. reveals
content below - guirl's convention (content-view direction), so directions
are kept, as InfiGUI-R1's conversion does. UI-S1's conversion flips them; ``flip_scroll=True``
reproduces that. Click targets are points; the evaluators' candidate box
is the smallest a11y element under the point (``infigui`` rule), so the
Episodes record ``match_rule: infigui``.
"""

from __future__ import annotations

import json
from pathlib import Path

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.adapters._common import OPPOSITE, image_ref, load_json_or_jsonl, record_error, require
from guirl.data.schema import A11yNode, Episode, Step

LEVELS = ("high", "low")
_SIMPLE = {"navigate_home": ActionType.HOME, "navigate_back": ActionType.BACK, "wait": ActionType.WAIT}


def _action(raw, frame: Frame, flip_scroll: bool, file: Path, where: str) -> Action:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as err:
            raise record_error(file, where, f"action is not valid JSON ({err.msg})") from None
    kind = require(raw, "action_type", str, file, where)
    if kind in ("click", "long_press"):
        x = require(raw, "x", (int, float), file, where)
        y = require(raw, "y", (int, float), file, where)
        atype = ActionType.CLICK if kind == "click" else ActionType.LONG_PRESS
        return Action(type=atype, point=(float(x), float(y)), frame=frame)
    if kind == "scroll":
        direction = require(raw, "direction", str, file, where)
        if direction not in OPPOSITE:
            raise record_error(file, where, f"scroll direction {direction!r} is not one of {sorted(OPPOSITE)}")
        return Action(type=ActionType.SCROLL, direction=OPPOSITE[direction] if flip_scroll else direction)
    if kind == "type":  # click at (x, y), type the text, press enter
        x = require(raw, "x", (int, float), file, where)
        y = require(raw, "y", (int, float), file, where)
        text = require(raw, "text", str, file, where)
        return Action(type=ActionType.TYPE, point=(float(x), float(y)), text=text, frame=frame)
    if kind == "input_text":
        return Action(type=ActionType.TYPE, text=require(raw, "text", str, file, where))
    if kind == "open_app":
        return Action(type=ActionType.OPEN_APP, text=require(raw, "app_name", str, file, where))
    if kind in _SIMPLE:
        return Action(type=_SIMPLE[kind])
    known = ["click", "long_press", "scroll", "type", "input_text", "open_app", *_SIMPLE]
    raise record_error(file, where, f"unknown action_type {kind!r}; AndroidControl has {known}")


def _ui_elements(raw, file: Path, where: str) -> list[A11yNode] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise record_error(file, where, f"ui_elements must be a list of UIElement objects, got {type(raw).__name__}")
    nodes = []
    for j, el in enumerate(raw):
        ewhere = f"{where} ui_elements[{j}]"
        bbox = require(el, "bbox_pixels", dict, file, ewhere)
        try:
            box = (float(bbox["x_min"]), float(bbox["y_min"]), float(bbox["x_max"]), float(bbox["y_max"]))
        except (KeyError, TypeError, ValueError):
            raise record_error(file, ewhere, f"bbox_pixels needs numeric x_min, y_min, x_max, y_max; got {bbox!r}") from None
        if box[2] < box[0] or box[3] < box[1]:
            raise record_error(file, ewhere, f"bbox_pixels {bbox!r} has x_max < x_min or y_max < y_min")
        nodes.append(
            A11yNode(
                id=str(j),
                role=str(el.get("class_name") or "node"),
                text=str(el.get("text") or el.get("content_description") or ""),
                box=box,
                enabled=bool(el.get("is_enabled", True)),
                focused=bool(el.get("is_focused", False)),
                checked=el.get("is_checked"),
            )
        )
    return nodes


def load_androidcontrol(
    file: str | Path, image_dir: str | Path | None = None, level: str = "high", flip_scroll: bool = False
) -> list[Episode]:
    """AndroidControl export -> Episodes (points in screen pixels)."""
    if level not in LEVELS:
        raise ValueError(f"AndroidControl level must be one of {LEVELS}, got {level!r}")
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else file.parent
    episodes = []
    for i, rec in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        ep_id = str(require(rec, "episode_id", (str, int), file, where))
        where = f"record {i} (episode {ep_id})"
        goal = require(rec, "goal", str, file, where)
        shots = require(rec, "screenshots", list, file, where)
        widths = require(rec, "screenshot_widths", list, file, where)
        heights = require(rec, "screenshot_heights", list, file, where)
        actions = require(rec, "actions", list, file, where)
        instructions = rec.get("step_instructions", [])
        if not (len(shots) == len(widths) == len(heights)) or len(shots) not in (len(actions), len(actions) + 1):
            raise record_error(
                file, where, f"{len(shots)} screenshots / {len(widths)} widths / {len(heights)} heights for "
                f"{len(actions)} actions; expected equal lists with one screenshot per action (+1 final)"
            )
        if level == "low" and len(instructions) != len(actions):
            raise record_error(
                file, where, f"low level needs one step_instruction per action: {len(instructions)} for {len(actions)}"
            )
        steps = []
        for t, raw in enumerate(actions):
            swhere = f"{where} step {t}"
            size = (int(widths[t]), int(heights[t]))
            shot = image_ref(root, shots[t], file, swhere, size=size)
            action = _action(raw, Frame.screen(*size), flip_scroll, file, swhere)
            elements = rec.get("ui_elements")
            a11y = _ui_elements(elements[t] if isinstance(elements, list) and t < len(elements) else None, file, swhere)
            steps.append(
                Step(
                    index=t,
                    screenshot=shot,
                    instruction=instructions[t] if level == "low" else None,
                    valid_actions=[action],
                    action=action,
                    sub_goal=instructions[t] if t < len(instructions) else None,
                    a11y=a11y,
                    a11y_frame=Frame.screen(*size),
                )
            )
        episodes.append(
            Episode(
                id=f"androidcontrol_{ep_id}",
                instruction=goal,
                steps=steps,
                source=f"androidcontrol:{file.name}",
                platform="mobile",
                extra={"level": level, "match_rule": "infigui", "scroll_flipped": flip_scroll},
            )
        )
    return episodes

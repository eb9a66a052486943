"""Android in the Wild (Rawles et al. 2023) steps -> Episodes.

Layout read: the released TFRecord ``tf.train.Example`` features, one step
per record, exported to JSON / JSONL with the image written to a file
(``"image/path"`` in place of ``"image/encoded"``). Fields used:
``episode_id``, ``step_id``, ``goal_info``, ``image/width``,
``image/height``, ``results/action_type`` (AITW's ``ActionType`` ids:
3 TYPE, 4 DUAL_POINT, 5 PRESS_BACK, 6 PRESS_HOME, 7 PRESS_ENTER,
10 STATUS_TASK_COMPLETE, 11 STATUS_TASK_IMPOSSIBLE), ``results/yx_touch``,
``results/yx_lift``, ``results/type_action``,
``image/ui_annotations_positions`` (flat list, 4 numbers per element),
``image/ui_annotations_text``, ``image/ui_annotations_ui_types``.

Coordinates are **normalised 0-1 with y first**: touch / lift are
``[y, x]`` and annotation boxes ``[y, x, height, width]``; they become
screen-pixel ``(x, y)`` points and ``[x1, y1, x2, y2]`` a11y boxes.

A dual point is a tap when touch and lift are within 0.04 of each other
(``_SWIPE_DISTANCE_THRESHOLD`` of AITW's ``action_matching``), else a
scroll. Scroll convention: AITW records only the finger path (it names no
direction); a finger moving up reveals content below, which is guirl's
``down``, so the direction is the opposite of the finger movement. The
tap point is the touch point, as AITW's ``action_matching`` compares it.
Episodes record ``match_rule: aitw``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.adapters._common import (
    direction_from_finger,
    image_ref,
    load_json_or_jsonl,
    numbers,
    record_error,
    require,
)
from guirl.data.schema import A11yNode, Episode, Step

SWIPE_DISTANCE_THRESHOLD = 0.04
_SIMPLE = {5: ActionType.BACK, 6: ActionType.HOME, 7: ActionType.ENTER}


def _yx(value, file: Path, where: str, field: str) -> tuple[float, float]:
    """A normalised ``[y, x]`` as normalised ``(x, y)``."""
    y, x = numbers(value, 2, file, where, field)
    if not (0 <= x <= 1 and 0 <= y <= 1):
        raise record_error(file, where, f"field '{field}' {value!r} is not normalised [y, x] in 0-1")
    return (x, y)


def _action(rec: dict, screen: Frame, file: Path, where: str) -> Action:
    kind = require(rec, "results/action_type", int, file, where)
    if kind == 4:
        touch = _yx(require(rec, "results/yx_touch", list, file, where), file, where, "results/yx_touch")
        lift = _yx(require(rec, "results/yx_lift", list, file, where), file, where, "results/yx_lift")
        unit = Frame.unit()
        # tap vs swipe and the swipe's main axis are decided on normalised values, as
        # action_matching.is_tap_action / _check_drag_actions_match do (not in pixels)
        if math.dist(touch, lift) <= SWIPE_DISTANCE_THRESHOLD:
            return Action(type=ActionType.CLICK, point=unit.convert_point(touch, screen), frame=screen)
        return Action(
            type=ActionType.SCROLL,
            point=unit.convert_point(touch, screen),
            end_point=unit.convert_point(lift, screen),
            direction=direction_from_finger(touch, lift),
            frame=screen,
        )
    if kind == 3:
        return Action(type=ActionType.TYPE, text=require(rec, "results/type_action", str, file, where))
    if kind in _SIMPLE:
        return Action(type=_SIMPLE[kind])
    if kind in (10, 11):
        return Action(type=ActionType.TERMINATE, status="success" if kind == 10 else "failure")
    raise record_error(file, where, f"unknown results/action_type {kind}; AITW uses 3-7, 10, 11")


def _a11y(rec: dict, screen: Frame, file: Path, where: str) -> list[A11yNode]:
    flat = rec.get("image/ui_annotations_positions", [])
    if not isinstance(flat, list) or len(flat) % 4:
        raise record_error(file, where, "field 'image/ui_annotations_positions' must hold 4 numbers per element")
    texts = rec.get("image/ui_annotations_text", [])
    types = rec.get("image/ui_annotations_ui_types", [])
    nodes = []
    for j in range(len(flat) // 4):
        y, x, h, w = numbers(flat[4 * j : 4 * j + 4], 4, file, where, "image/ui_annotations_positions")
        x1, y1 = Frame.unit().convert_point((x, y), screen)
        x2, y2 = Frame.unit().convert_point((x + w, y + h), screen)
        role = types[j] if j < len(types) else "UNKNOWN"
        nodes.append(A11yNode(id=str(j), role=str(role), text=texts[j] if j < len(texts) else "", box=(x1, y1, x2, y2)))
    return nodes


def load_aitw(file: str | Path, image_dir: str | Path | None = None) -> list[Episode]:
    """AITW step records -> Episodes grouped by ``episode_id``, ordered by ``step_id``."""
    file = Path(file)
    root = Path(image_dir) if image_dir is not None else file.parent
    grouped: dict[str, list[tuple[int, Step, str]]] = defaultdict(list)
    for i, rec in enumerate(load_json_or_jsonl(file)):
        where = f"record {i}"
        ep_id = str(require(rec, "episode_id", (str, int), file, where))
        step_id = require(rec, "step_id", int, file, where)
        where = f"record {i} (episode {ep_id} step {step_id})"
        size = (require(rec, "image/width", int, file, where), require(rec, "image/height", int, file, where))
        shot = image_ref(root, require(rec, "image/path", str, file, where), file, where, size=size)
        screen = Frame.screen(*size)
        action = _action(rec, screen, file, where)
        a11y = _a11y(rec, screen, file, where)
        step = Step(
            index=step_id, screenshot=shot, valid_actions=[action], action=action, a11y=a11y, a11y_frame=screen
        )
        grouped[ep_id].append((step_id, step, require(rec, "goal_info", str, file, where)))
    episodes = []
    for ep_id, rows in grouped.items():
        rows.sort(key=lambda r: r[0])
        steps = [s.model_copy(update={"index": t}) for t, (_, s, _) in enumerate(rows)]
        episodes.append(
            Episode(
                id=f"aitw_{ep_id}",
                instruction=rows[0][2],
                steps=steps,
                source=f"aitw:{file.name}",
                platform="mobile",
                extra={"match_rule": "aitw"},
            )
        )
    return episodes

"""Android in the Wild (Rawles et al. 2023) -> Episodes, in two layouts.

``layout="tfrecord"`` - the released TFRecord ``tf.train.Example``
features, one step per record, exported to JSON / JSONL with the image
written to a file (``"image/path"`` in place of ``"image/encoded"``).
Fields read: ``episode_id``, ``step_id``, ``goal_info``, ``image/path``,
``image/width``, ``image/height``, ``results/action_type`` (AITW's
``ActionType`` ids: 3 TYPE, 4 DUAL_POINT, 5 PRESS_BACK, 6 PRESS_HOME,
7 PRESS_ENTER, 10 STATUS_TASK_COMPLETE, 11 STATUS_TASK_IMPOSSIBLE),
``results/yx_touch``, ``results/yx_lift``, ``results/type_action``,
``image/ui_annotations_positions`` (flat list, 4 numbers per element),
``image/ui_annotations_text``, ``image/ui_annotations_ui_types``.
Coordinates are **normalised 0-1 with y first**: touch / lift ``[y, x]``,
annotation boxes ``[y, x, height, width]``. Steps are grouped by
``episode_id`` and ordered by ``step_id``; screenshots are relative to the
annotation file's directory (or ``image_dir``). A dual point is a tap when
touch and lift are within 0.04 of each other (``_SWIPE_DISTANCE_THRESHOLD``
of AITW's ``action_matching.is_tap_action``), else a scroll.

``layout="seeclick"`` - AITW as SeeClick converted it
(``njucckevin/SeeClick``, ``agent_tasks/readme_agent.md``):
``aitw_data_train.json`` / ``aitw_data_val.json`` / ``aitw_data_test.json``,
each a JSON object of subsets (``general``, ``single``, ``webshopping``,
``install``, ``googleapps``), each a list of episodes, each a list of
steps. Fields read per step (as ``agent_tasks/aitw_test.py`` and
``action_matching.py`` read them): ``img_filename`` (relative to the
screenshot directory ``aitw_images/``, *without* the ``.png`` that
SeeClick's code appends, e.g. ``general/<ep_id>_<step>``), ``goal``,
``ep_id``, ``step``, ``action_type_id`` (the same AITW ids),
``action_type_text`` (for id 4: ``click`` or ``scroll down`` / ``up`` /
``left`` / ``right``), ``touch`` / ``lift``, ``type_text``,
``annot_position``. Coordinates are **normalised 0-1 with x first**:
``touch`` / ``lift`` are ``[x, y]`` (``action_2_format`` swaps them to
``[y, x]`` for AITW's matcher), while ``annot_position`` is a flat list of
AITW's ``(y, x, height, width)`` per element. SeeClick decides tap vs
scroll by ``action_type_text`` (not by distance), and so does the adapter;
the tap point is ``touch``, the point its ``action_matching`` compares
(SeeClick's training target is the touch/lift midpoint, at most 0.02
away). Steps keep the episode list's order (``step`` goes to
``Step.extra``); the subset goes to ``Episode.task`` and
``Episode.extra["subset"]``, the split (from the file name) to
``extra["split"]``. Without ``image_dir``, screenshots are read from an
``aitw_images/`` folder next to the file when there is one (paths then
start with ``aitw_images/``, relative to the file's directory), else from
the file's directory. The layout is detected from the records' shape
unless ``layout`` forces one; a directory reads its ``aitw_data_*.json``
files (else its ``*.json`` / ``*.jsonl``).

Both layouts give screen-pixel ``(x, y)`` points and ``[x1, y1, x2, y2]``
a11y boxes (``Step.a11y``, the candidate boxes of the ``aitw`` match rule).

Scroll convention: AITW records only the finger path; a finger moving up
reveals content below, guirl's ``down``, so the TFRecord layout's
direction is the opposite of the finger movement (main axis decided on the
normalised values, as ``_check_drag_actions_match`` does). SeeClick's
``scroll down`` is AITW's finger-up swipe (its ``action_2_format`` template
for it is touch ``[0.5, 0.8]`` -> lift ``[0.5, 0.2]``, x first), so its
text is already the content direction and is kept; the recorded finger
path is kept as ``point`` -> ``end_point`` (when valid, else omitted).

x/y swap check: a tap should fall inside one of its screen's annotation
boxes and a SeeClick scroll's finger path should agree with its text. Per
subset (SeeClick) or file (TFRecord), a tap or scroll that fits only with
x and y swapped is evidence of a swapped conversion; when such steps
outnumber those that fit as given, the load fails naming the first one
(``swap_check="subset"``, the default; ``"step"`` fails at the first such
step; ``"off"`` disables it). AITW's annotation boxes do not always hold
the tapped element, so single misfits are only flagged:
``Step.extra["outside_boxes"]`` / ``["finger_disagrees"]``, counted in
``Episode.extra["taps_outside_boxes"]`` / ``["scrolls_finger_disagrees"]``.
Coordinates outside 0-1 are errors (pixel values are named as such).

Skipped: nothing by default; a step whose screenshot is missing is an
error. SeeClick's release lacks some screenshots (its ``aitw_test.py``
steps over them); ``missing_images="skip"`` does the same, counting them in
``Episode.extra["skipped_missing_images"]``; a SeeClick episode left with
no step is dropped and counted in ``extra["skipped_empty_episodes"]`` of
every episode of its file. Episodes record ``match_rule: aitw``.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.adapters._common import (
    AdapterError,
    direction_from_finger,
    load_json_or_jsonl,
    record_error,
    require,
)
from guirl.data.adapters.aitw_checks import (
    NormBox,
    SwapCheck,
    boxes_yxhw,
    checked_image,
    non_pointer_action,
    normalised,
    px_box,
)
from guirl.data.schema import A11yNode, Episode, ImageRef, Step

SWIPE_DISTANCE_THRESHOLD = 0.04
LAYOUTS = ("auto", "tfrecord", "seeclick")
SWAP_CHECKS = ("subset", "step", "off")
MISSING_IMAGES = ("error", "skip")
SEECLICK_SUBSETS = ("general", "single", "webshopping", "install", "googleapps")
_SEECLICK_SCROLLS = {"scroll down": "down", "scroll up": "up", "scroll left": "left", "scroll right": "right"}


# -- TFRecord export layout ----------------------------------------------------------------


def _tf_action(rec: dict, screen: Frame, boxes: list[NormBox], check: SwapCheck, file: Path, where: str):
    kind = require(rec, "results/action_type", int, file, where)
    flags: dict = {}
    if kind == 4:
        touch = normalised(require(rec, "results/yx_touch", list, file, where), "y", file, where,
                            "results/yx_touch", None)
        lift = normalised(require(rec, "results/yx_lift", list, file, where), "y", file, where,
                           "results/yx_lift", None)
        unit = Frame.unit()
        # tap vs swipe and the swipe's main axis are decided on normalised values, as
        # action_matching.is_tap_action / _check_drag_actions_match do (not in pixels)
        if math.dist(touch, lift) <= SWIPE_DISTANCE_THRESHOLD:
            if check.tap(touch, boxes, where):
                flags["outside_boxes"] = True
            return Action(type=ActionType.CLICK, point=unit.convert_point(touch, screen), frame=screen), flags
        return Action(
            type=ActionType.SCROLL,
            point=unit.convert_point(touch, screen),
            end_point=unit.convert_point(lift, screen),
            direction=direction_from_finger(touch, lift),
            frame=screen,
        ), flags
    action = non_pointer_action(kind, lambda: require(rec, "results/type_action", str, file, where))
    if action is None:
        raise record_error(file, where, f"unknown results/action_type {kind}; AITW uses 3-7, 10, 11")
    return action, flags


def _load_tfrecord(file: Path, records: list, image_dir, swap_check: str, skip: bool) -> list[Episode]:
    root = Path(image_dir) if image_dir is not None else file.parent
    check = SwapCheck(swap_check, file, "this file", "AITW's TFRecord layout has touch / lift [y, x] and "
                       "ui_annotations_positions (y, x, h, w); for SeeClick's x-first file pass layout='seeclick'")
    grouped: dict[str, list[tuple[int, Step, str]]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    for i, rec in enumerate(records):
        where = f"record {i}"
        ep_id = str(require(rec, "episode_id", (str, int), file, where))
        step_id = require(rec, "step_id", int, file, where)
        where = f"record {i} (episode {ep_id} step {step_id})"
        size = (require(rec, "image/width", int, file, where), require(rec, "image/height", int, file, where))
        goal = require(rec, "goal_info", str, file, where)
        shot = checked_image(root, require(rec, "image/path", str, file, where), file, where, size=size, skip=skip)
        if shot is None:
            skipped[ep_id] += 1
            continue
        screen = Frame.screen(*size)
        boxes = boxes_yxhw(rec.get("image/ui_annotations_positions", []), file, where,
                            "image/ui_annotations_positions")
        action, flags = _tf_action(rec, screen, boxes, check, file, where)
        texts = rec.get("image/ui_annotations_text") or []
        types = rec.get("image/ui_annotations_ui_types") or []
        if not isinstance(texts, list) or not isinstance(types, list):
            raise record_error(file, where, "fields 'image/ui_annotations_text' / '_ui_types' must be lists")
        a11y = [
            A11yNode(id=str(j), role=str(types[j]) if j < len(types) else "UNKNOWN",
                     text=str(texts[j]) if j < len(texts) else "", box=px_box(b, screen))
            for j, b in enumerate(boxes)
        ]
        step = Step(index=step_id, screenshot=shot, valid_actions=[action], action=action, a11y=a11y,
                    a11y_frame=screen, extra=flags)
        grouped[ep_id].append((step_id, step, goal))
    check.finish()
    episodes = []
    for ep_id, rows in grouped.items():
        rows.sort(key=lambda r: r[0])
        steps = [s.model_copy(update={"index": t}) for t, (_, s, _) in enumerate(rows)]
        extra: dict = {"match_rule": "aitw", "layout": "tfrecord",
                       "taps_outside_boxes": sum(bool(s.extra.get("outside_boxes")) for s in steps)}
        if skip:
            extra["skipped_missing_images"] = skipped.get(ep_id, 0)
        episodes.append(Episode(id=f"aitw_{ep_id}", instruction=rows[0][2], steps=steps,
                                source=f"aitw:{file.name}", platform="mobile", extra=extra))
    return episodes


# -- SeeClick layout -----------------------------------------------------------------------

_SEECLICK_EXPECTED = (
    "SeeClick's aitw_data_*.json has touch / lift x-first [x, y] and annot_position (y, x, h, w); "
    "check how the file was made (for AITW's y-first TFRecord export pass layout='tfrecord')"
)


def _seeclick_action(raw: dict, screen: Frame, shot: ImageRef, boxes: list[NormBox], check: SwapCheck,
                     file: Path, where: str) -> tuple[Action, dict]:
    kind = require(raw, "action_type_id", int, file, where)
    flags: dict = {}
    unit = Frame.unit()
    if kind == 4:
        text = require(raw, "action_type_text", str, file, where)
        touch_raw = require(raw, "touch", list, file, where)
        lift_raw = require(raw, "lift", list, file, where)
        if text == "click":
            touch = normalised(touch_raw, "x", file, where, "touch", shot)
            normalised(lift_raw, "x", file, where, "lift", shot)
            if check.tap(touch, boxes, where):
                flags["outside_boxes"] = True
            return Action(type=ActionType.CLICK, point=unit.convert_point(touch, screen), frame=screen), flags
        if text in _SEECLICK_SCROLLS:
            direction = _SEECLICK_SCROLLS[text]
            if touch_raw == [-1, -1] or lift_raw == [-1, -1]:  # no path recorded: the direction only
                return Action(type=ActionType.SCROLL, direction=direction), flags
            touch = normalised(touch_raw, "x", file, where, "touch", shot)
            lift = normalised(lift_raw, "x", file, where, "lift", shot)
            if check.scroll(direction, touch, lift, where):
                flags["finger_disagrees"] = True
            return Action(type=ActionType.SCROLL, point=unit.convert_point(touch, screen),
                          end_point=unit.convert_point(lift, screen), direction=direction, frame=screen), flags
        raise record_error(
            file, where, f"action_type_id 4 with action_type_text {text!r}; SeeClick's dual-point steps are "
            f"{['click', *_SEECLICK_SCROLLS]}"
        )
    action = non_pointer_action(kind, lambda: require(raw, "type_text", str, file, where))
    if action is None:
        raise record_error(file, where, f"unknown action_type_id {kind}; AITW (and SeeClick) use 3-7, 10, 11")
    return action, flags


def _load_seeclick(file: Path, records: list, image_dir, swap_check: str, skip: bool) -> list[Episode]:
    if len(records) != 1 or not isinstance(records[0], dict):
        raise AdapterError(
            f"{file}: SeeClick's AITW file is one JSON object of subsets ({', '.join(SEECLICK_SUBSETS)}), "
            f"each a list of episodes (lists of steps); got {len(records)} records"
        )
    data = records[0]
    m = re.fullmatch(r"aitw_data_(\w+)", file.stem)
    split = m.group(1) if m else None
    if image_dir is not None:
        root, prefix = Path(image_dir), ""
    else:
        root = file.parent
        prefix = "aitw_images/" if (file.parent / "aitw_images").is_dir() else ""
    episodes: list[Episode] = []
    empty = 0  # episodes left with no step by missing_images="skip"
    for subset, subset_eps in data.items():
        if not isinstance(subset_eps, list):
            raise record_error(file, f"subset {subset}", f"must be a list of episodes (each a list of steps), "
                               f"got {type(subset_eps).__name__}")
        check = SwapCheck(swap_check, file, f"subset {subset}", _SEECLICK_EXPECTED)
        for j, ep in enumerate(subset_eps):
            ewhere = f"subset {subset} episode {j}"
            if not isinstance(ep, list) or not ep:
                raise record_error(file, ewhere, f"must be a non-empty list of step objects, got {ep!r:.80}")
            ep_id = str(require(ep[0], "ep_id", (str, int), file, f"{ewhere} step 0"))
            ewhere = f"subset {subset} episode {j} (ep_id {ep_id})"
            steps, goal, missing = [], None, 0
            for t, raw in enumerate(ep):
                swhere = f"{ewhere} step {t}"
                sid = str(require(raw, "ep_id", (str, int), file, swhere))
                if sid != ep_id:
                    raise record_error(file, swhere, f"ep_id {sid!r} differs from the episode's {ep_id!r}")
                step_goal = require(raw, "goal", str, file, swhere)
                goal = goal or step_goal
                name = require(raw, "img_filename", str, file, swhere)
                shot = checked_image(root, prefix + (name if name.endswith(".png") else f"{name}.png"), file, swhere,
                              skip=skip)
                if shot is None:
                    missing += 1
                    continue
                screen = Frame.screen(shot.width, shot.height)
                boxes = boxes_yxhw(raw.get("annot_position"), file, swhere, "annot_position")
                action, flags = _seeclick_action(raw, screen, shot, boxes, check, file, swhere)
                extra = {**flags, "action_type_text": raw.get("action_type_text")}
                if "step" in raw:
                    extra["step"] = raw["step"]
                a11y = [A11yNode(id=str(k), role="UNKNOWN", box=px_box(b, screen)) for k, b in enumerate(boxes)]
                steps.append(Step(index=len(steps), screenshot=shot, valid_actions=[action], action=action,
                                  a11y=a11y, a11y_frame=screen, extra=extra))
            if not steps:
                empty += 1
                continue
            extra = {
                "match_rule": "aitw",
                "layout": "seeclick",
                "subset": subset,
                "split": split,
                "taps_outside_boxes": sum(bool(s.extra.get("outside_boxes")) for s in steps),
                "scrolls_finger_disagrees": sum(bool(s.extra.get("finger_disagrees")) for s in steps),
            }
            if skip:
                extra["skipped_missing_images"] = missing
            episodes.append(Episode(id=f"aitw_{ep_id}", instruction=goal, steps=steps, source=f"aitw:{file.name}",
                                    platform="mobile", task=str(subset), extra=extra))
        check.finish()
    if skip:
        for ep in episodes:
            ep.extra["skipped_empty_episodes"] = empty
    return episodes


# -- entry point ---------------------------------------------------------------------------


def _detect(records: list, file: Path) -> str:
    if len(records) == 1 and isinstance(records[0], dict) and records[0] and (
        set(records[0]) & set(SEECLICK_SUBSETS)
        or all(isinstance(v, list) and all(isinstance(e, list) for e in v[:3]) for v in records[0].values())
    ):
        return "seeclick"  # shape errors inside are reported by the SeeClick reader, naming the subset
    if records and isinstance(records[0], dict) and "results/action_type" in records[0]:
        return "tfrecord"
    if not records:
        return "tfrecord"
    keys = sorted(records[0])[:8] if isinstance(records[0], dict) else type(records[0]).__name__
    raise AdapterError(
        f"{file}: cannot tell the AITW layout from record 0 ({keys}): expected SeeClick's "
        "{subset: [[step, ...], ...]} object (aitw_data_*.json) or TFRecord-export step records with "
        "'results/action_type'; pass layout='seeclick' or layout='tfrecord'"
    )


def _paths(files: str | Path | list[str | Path]) -> list[Path]:
    if isinstance(files, (str, Path)) and Path(files).is_dir():
        d = Path(files)
        paths = sorted(d.glob("aitw_data_*.json")) or sorted([*d.glob("*.jsonl"), *d.glob("*.json")])
        if not paths:
            raise AdapterError(f"{d}: directory holds no aitw_data_*.json, *.json or *.jsonl annotation file")
        return paths
    return [Path(f) for f in (files if isinstance(files, list) else [files])]


def load_aitw(
    files: str | Path | list[str | Path],
    image_dir: str | Path | None = None,
    layout: str = "auto",
    swap_check: str = "subset",
    missing_images: str = "error",
) -> list[Episode]:
    """AITW annotation file(s) or directory -> Episodes (see the module doc for the layouts)."""
    for name, value, allowed in (("layout", layout, LAYOUTS), ("swap_check", swap_check, SWAP_CHECKS),
                                 ("missing_images", missing_images, MISSING_IMAGES)):
        if value not in allowed:
            raise ValueError(f"AITW {name} must be one of {allowed}, got {value!r}")
    episodes: list[Episode] = []
    for file in _paths(files):
        records = load_json_or_jsonl(file)
        kind = _detect(records, file) if layout == "auto" else layout
        load = _load_seeclick if kind == "seeclick" else _load_tfrecord
        episodes.extend(load(file, records, image_dir, swap_check, missing_images == "skip"))
    return episodes

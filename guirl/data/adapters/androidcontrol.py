"""AndroidControl (Li et al. 2024) episodes -> Episodes, high or low level.

Four layouts, detected from the record shape (``layout=`` forces one; a
record with none of the layouts' fields is an error listing them):

``tfrecord`` (the default) - the released TFRecord features, one episode
per record, with the PNG bytes written out as files (TensorFlow is not a
guirl dependency; export with ``tf.data.TFRecordDataset`` once). Each JSON /
JSONL record: ``{"episode_id", "goal", "screenshots": [relative image
paths], "screenshot_widths", "screenshot_heights", "actions": [JSON strings
or objects], "step_instructions": [...]}``; there is one more screenshot
than actions (the final screen). Actions (``action_type``): ``click`` /
``long_press`` with ``x``, ``y`` in **screen pixels**; ``scroll`` with
``direction``; ``type`` with ``x``, ``y``, ``text`` (click, type, enter);
``input_text`` with ``text``; ``open_app`` with ``app_name``;
``navigate_home``; ``navigate_back``; ``wait``. The accessibility trees
(``accessibility_trees``, AndroidAccessibilityForest protos) are read when
exported as android_world ``UIElement`` dicts (what
``representation_utils.forest_to_ui_elements`` gives): optional
``"ui_elements": [[{"text", "content_description", "class_name",
"bbox_pixels": {"x_min", "x_max", "y_min", "y_max"}, "is_enabled",
"is_focused", "is_checked"}, ...] per screenshot]`` -> ``Step.a11y``.
Scroll convention: the README only says "scroll in a direction"; guirl
reads it as android_world's ``scroll`` (the same authors' action space),
where ``down`` swipes the finger from the centre to the top, i.e. reveals
content below - guirl's convention (content-view direction), so directions
are kept. The step instructions agree ("Swipe up to view more" is a
``down`` scroll; "Swipe left ... to view upcoming phases" a ``right`` one).
``flip_scroll=True`` reverses all four directions (reads them as finger
directions, as InfiGUI-R1's evaluator compares them; the ``infigui`` layout
below does that for its own file). Click targets are points; the
candidate box is the smallest a11y element under the point (``infigui``
rule), so the Episodes record ``match_rule: infigui``.

``uis1`` - UI-S1's ``android_control_evaluation_std.jsonl`` (X-PLUG/MobileAgent
``UI-S1/datasets/``, read by ``UI-S1/evaluation/eval_qwenvl.py`` and scored
by ``evaluate_android_control_action`` in ``UI-S1/evaluation/qwenvl_utils.py``),
one episode per line: ``{"goal", "episode_id", "is_successful", "steps":
[{"screenshot", "step_instruction", "action_content", "check_options"}]}``.
``action_content`` is the action in Qwen's ``mobile_use`` space
(``UI-S1/x/data/agent/space/std_space.py``: ``click`` / ``long_press``
``coordinate`` [+ ``time``], ``swipe`` ``coordinate`` -> ``coordinate2``,
``type`` / ``open`` / ``answer`` / ``key`` ``text``, ``system_button``
``button`` (Back / Home / Menu / Enter), ``wait`` ``time``, ``terminate``
``status``); ``check_options`` is what the evaluator scores: the same
action plus ``candidate_bbox`` (a list of ``[x1, y1, x2, y2]`` boxes) for
``click`` / ``long_press`` / (sometimes) ``open``, and ``direction`` for
``swipe``. Coordinates are **pixels of the screenshot file** (the evaluator
normalises them by ``Image.open(path).size``). Each candidate box is an
accepted region (``check_click``: enlarged 1.2x, or within normalised
distance 0.04 of ``coordinate``): every box becomes a valid action with the
point and that box (``match_rule: uis1``); a click inside an ``open`` step's
``candidate_bbox`` is accepted too (scored against the first box's centre),
so such steps also list those clicks. Screenshot paths are absolute paths
of the authors' machine (``/datasets/AndroidControl/images/8193_0.png``):
they are looked up by file name under the image directory (and its
``images/``). ``thought`` -> ``Step.reasoning``, ``action_description`` ->
the action's description (``UI-S1/evaluation/dataset/thought.jsonl``); a
step without ``check_options`` (the training layout,
``android_control_train_example.jsonl``) is its own check, its ``bbox`` the
candidate box, as ``fix_line`` in ``eval_qwenvl.py`` intends. Swipe
convention, as UI-S1's code reads it: the commented-out direction check in
``qwenvl_utils.py`` ("the down up is wrong in gt, left right is ok") flips
``direction`` on the vertical axis only before comparing it with the
predicted finger direction, and the ``action_content`` paths are written
the same way (all 1,211 swipes of the released file: ``down`` = finger
up, ``right`` = finger right). So the finger path gives guirl's direction
(finger up -> ``down``; finger right -> ``left``); decided on the main axis
in coordinates normalised by the image size, as ``predict_direction``
does; where a ``direction`` disagrees with the path, guirl reads the path (the
authors' scoring mode reads the direction from ``extra["authors_check"]``).
Departure: the active UI-S1 evaluator accepts any swipe (use
``direction_rule="any"`` to reproduce it). Note that on the horizontal axis
this reading is the reverse of the ``tfrecord`` reading of the same
AndroidControl steps. Each Step keeps, in ``extra["authors_check"]``, the
check the authors' RL reward (``gui_traj.py``) is given: the file's
``check_options`` as written, or, for a step without one, the check
``TrajDataset`` builds (a copy of ``action_content`` with the step's
``annotation``, GOOD by default, and the content's ``bbox`` as
``candidate_bbox``). ``uis1_step(mode="code")`` scores against it.

``infigui`` - InfiGUI-R1's ``android_control_test.json`` (Reallm-Labs/InfiGUI-R1
``eval/android_control/android_control.py`` reads it; the file is the
Hugging Face dataset ``Reallm-Labs/android_control_test``), one JSON list,
one episode per item: ``{"episode": {"episode_id", "goal",
"step_instructions", "screenshot_paths"}, "step_pams", "step_check_pams",
"width", "height"}`` with one more screenshot than steps. ``step_check_pams``
(scored by ``evaluate_android_control.py``) has the fields and action space
of UI-S1's ``check_options``; ``step_pams`` (the task progress shown to the
model) is kept in ``Step.extra["step_pam"]``. Coordinates are **pixels of
the ``width`` x ``height`` screen** (the evaluator normalises by them);
``screenshot_paths`` are joined to the image root. Candidate boxes as for
UI-S1 (``match_rule: infigui``: 1.2x box, or ``0.04 * max(W, H)`` pixels).
Swipe convention: ``predict_direction(coordinate, coordinate2) ==
direction``, i.e. ``direction`` is the **finger's** on both axes, so it is
reversed (``down`` -> guirl ``up``); the step is a SWIPE with that
direction and no path.

``uir1`` - UI-R1's ``ac_test.json`` (lll6gg/UI-R1 ``dataset/ac_test.json``;
``evaluation/eval_ac.py`` scores it), one JSON list, **one record per
step**: ``{"image": "episode_<id>-screenshot_<k>.png", "gt":
{AndroidControl action: "action_type", "x", "y" / "direction" / "text" /
"app_name"}, "task": step instruction}``. The records carry no episode
field and no goal, and UI-R1 scores each step alone, so each record is a
one-step Episode (its instruction is ``task`` at both levels); the
episode id and step index parsed from the image name are kept in
``Episode.extra``. ``x``, ``y`` are **pixels of the screenshot** (the image
size is read from the file; ``eval_ac.py`` compares in 1080 x 2400 pixels).
The file has no ``wait`` / ``long_press`` steps (UI-R1's conversion dropped
them). Swipe convention: UI-R1's code never reads ``direction`` (its reward
and evaluator compare the action type, and a click's point); the value is AndroidControl's
own, so it is read as the ``tfrecord`` layout reads it (kept, a SCROLL).
``match_rule: uir1`` is ``eval_ac.py``'s ``distance < 0.14 * 1080`` pixels
(0.14 times the screen's shorter side, :mod:`guirl.matching.rules`).

Levels: ``high`` gives the goal only; ``low`` also sets each Step's
``instruction`` to its step instruction (``step_instructions``,
``step_instruction``, ``task``). Every step instruction is also the Step's
``sub_goal``. ``path`` may be a directory: it is searched for the files the
papers' code reads (``android_control_evaluation_std.jsonl``,
``android_control_test.json``, ``ac_test.json``), else every ``.json`` /
``.jsonl`` file in it whose records are in a known layout is read; the
directory is then the default image root. Points must lie on their
screenshot (an error otherwise); candidate boxes are kept as given (a few in
the released files reach past the screen edge; the evaluators do not clip
them either). No record or step is skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.data.adapters._common import AdapterError, load_json_or_jsonl, record_error, require
from guirl.data.adapters.androidcontrol_layouts import (
    KNOWN_FILES,
    LAYOUTS,
    ac_action,
    detect_layout,
    read_infigui,
    read_uir1,
    read_uis1,
    screenshot_ref,
    unrecognised,
)
from guirl.data.schema import A11yNode, Episode, Step

LEVELS = ("high", "low")


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


def _size(widths: list, heights: list, t: int, file: Path, where: str) -> tuple[int, int]:
    w, h = widths[t], heights[t]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and float(v).is_integer() for v in (w, h)):
        raise record_error(
            file, where, f"screenshot_widths[{t}] / screenshot_heights[{t}] must be positive pixel counts, got {w!r} / {h!r}"
        )
    return (int(w), int(h))


def _read_tfrecord(rec: Any, i: int, file: Path, root: Path, level: str, flip_scroll: bool) -> Episode:
    where = f"record {i}"
    ep_id = str(require(rec, "episode_id", (str, int), file, where))
    where = f"record {i} (episode {ep_id})"
    goal = require(rec, "goal", str, file, where)
    shots = require(rec, "screenshots", list, file, where)
    widths = require(rec, "screenshot_widths", list, file, where)
    heights = require(rec, "screenshot_heights", list, file, where)
    actions = require(rec, "actions", list, file, where)
    instructions = rec.get("step_instructions", [])
    if not isinstance(instructions, list) or not all(isinstance(x, str) for x in instructions):
        raise record_error(file, where, f"field 'step_instructions' must be a list of strings, got {instructions!r}")
    if not (len(shots) == len(widths) == len(heights)) or len(shots) not in (len(actions), len(actions) + 1):
        raise record_error(
            file, where, f"{len(shots)} screenshots / {len(widths)} widths / {len(heights)} heights for "
            f"{len(actions)} actions; expected equal lists with one screenshot per action (+1 final)"
        )
    if level == "low" and len(instructions) != len(actions):
        raise record_error(
            file, where, f"low level needs one step_instruction per action: {len(instructions)} for {len(actions)}"
        )
    elements = rec.get("ui_elements")
    steps = []
    for t, raw in enumerate(actions):
        swhere = f"{where} step {t}"
        size = _size(widths, heights, t, file, swhere)
        if not isinstance(shots[t], str):
            raise record_error(file, swhere, f"screenshots[{t}] must be an image path, got {shots[t]!r}")
        shot = screenshot_ref(root, shots[t], file, swhere, size=size, field=f"screenshots[{t}]")
        action = ac_action(raw, size, flip_scroll, file, swhere)
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
    return Episode(
        id=f"androidcontrol_{ep_id}",
        instruction=goal,
        steps=steps,
        source=f"androidcontrol:{file.name}",
        platform="mobile",
        extra={"level": level, "layout": "tfrecord", "match_rule": "infigui", "scroll_flipped": flip_scroll},
    )


def _annotation_files(path: Path, layout: str | None) -> list[tuple[Path, list]]:
    """``(file, records)`` to read for ``path`` (a file, or a directory: see the module docstring)."""
    if not path.is_dir():
        return [(path, load_json_or_jsonl(path))]
    known = [n for lay, n in KNOWN_FILES.items() if layout in (None, lay) and (path / n).is_file()]
    if len(known) > 1:
        raise AdapterError(f"{path}: holds several AndroidControl files ({', '.join(known)}); pass one of them")
    if known:
        return [(path / known[0], load_json_or_jsonl(path / known[0]))]
    found, ignored = [], []
    for file in sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl")):
        records = load_json_or_jsonl(file)
        first = next(iter(records), None)
        detected = detect_layout(first) if first is not None else None
        if detected is not None and layout in (None, detected):
            found.append((file, records))
        else:
            ignored.append(file.name)
    if not found:
        listed = f"it has {', '.join(ignored)}, in no known layout" if ignored else "it has no .json / .jsonl file"
        raise AdapterError(
            f"{path}: no AndroidControl annotation file: expected {', '.join(KNOWN_FILES.values())} or a "
            f"TFRecord-export .json / .jsonl ({listed}); pass the annotation file"
        )
    return found


def _file_layout(file: Path, records: list, layout: str | None) -> str | None:
    """``layout``, or the one layout every record of ``file`` is in (checked before any is read)."""
    if layout is not None:
        return layout
    first = None
    for i, rec in enumerate(records):
        found = detect_layout(rec)
        if found is None:
            raise unrecognised(file, f"record {i}", rec)
        if first is None:
            first = found
        elif found != first:
            raise record_error(
                file, f"record {i}", f"is in the {found!r} layout but the records before it are {first!r}; "
                "a file holds one layout (pass layout=NAME to read every record as one)"
            )
    return first


_READERS = {"uis1": read_uis1, "infigui": read_infigui, "uir1": read_uir1}


def load_androidcontrol(
    file: str | Path,
    image_dir: str | Path | None = None,
    level: str = "high",
    flip_scroll: bool = False,
    layout: str | None = None,
) -> list[Episode]:
    """AndroidControl in any layout of the module docstring -> Episodes (screen pixels).

    ``layout`` (``tfrecord``, ``uis1``, ``infigui``, ``uir1``) forces one;
    by default each file's layout is detected from its records.
    ``flip_scroll`` applies to the TFRecord export only.
    """
    if level not in LEVELS:
        raise ValueError(f"AndroidControl level must be one of {LEVELS}, got {level!r}")
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"AndroidControl layout must be one of {LAYOUTS} (or None: detected), got {layout!r}")
    path = Path(file)
    root = Path(image_dir) if image_dir is not None else (path if path.is_dir() else path.parent)
    episodes = []
    for ann, records in _annotation_files(path, layout):
        found = _file_layout(ann, records, layout)
        if flip_scroll and found not in (None, "tfrecord"):
            raise AdapterError(
                f"{ann}: flip_scroll applies to the TFRecord export; this file is in the {found!r} layout, "
                "whose swipe directions are read as its evaluator reads them (drop flip_scroll)"
            )
        for i, rec in enumerate(records):
            if found == "tfrecord":
                episodes.append(_read_tfrecord(rec, i, ann, root, level, flip_scroll))
            else:
                episodes.append(_READERS[found](rec, i, ann, root, level))
    return episodes

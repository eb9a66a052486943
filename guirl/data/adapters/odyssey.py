"""GUI-Odyssey (Lu et al. 2024) episode annotations -> Episodes, high or low level.

Layouts read (the repository's ``introduction.md``, v1 of 2024-06 and the
latest release of 2025-07, ``hflqf88888/GUIOdyssey``; both ship one JSON
per episode under ``annotations/`` with the PNGs under ``screenshots/``):
``{"episode_id", "device_info": {"w", "h", ...}, "task_info": {"category",
"app", "meta_task", "task", "instruction"}, "step_length", "steps":
[{"step", "screenshot", "action", "info", "ps", ...}]}``. The latest
release adds per step ``low_level_instruction``, ``sam2_bbox``,
``description``, ``intention`` and ``context``.

Fields read per step: ``screenshot`` (relative to the screenshot
directory), ``action``, ``info``, and when present ``sam2_bbox``,
``low_level_instruction``, ``description`` / ``intention`` / ``context``
(kept in ``Step.extra``). Actions:

- ``CLICK`` / ``LONG_PRESS``: ``info`` is a list of points; the v1 files
  hold two (``[[x, y], [x, y]]``, touch and release), the latest one or
  two. The first point is the target, as the official
  ``data/format_converter.py`` (``decode_action``: ``info[0]``) reads it;
  the whole list is kept in ``Step.extra["info"]``. ``info`` may instead be
  a key: ``KEY_HOME``, ``KEY_BACK``, ``KEY_APPSELECT`` (v1's README says
  ``KEY_RECENT``; both are the recent-apps key).
- ``SCROLL``: ``info = [[x1, y1], [x2, y2]]``, the finger's start and end.
- ``TEXT`` (what ``format_converter.py`` reads; the README says ``TYPE``,
  both are accepted): the typed text in ``info``.
- ``HOME``, ``BACK`` (v1); ``COMPLETE``; ``INCOMPLETE`` (latest) /
  ``IMPOSSIBLE`` (v1) end the episode.

Coordinates are **relative 0-1000** on both axes (points and boxes); they
are converted to screen pixels of the screenshot. ``sam2_bbox`` is the
clicked element's box as ``[x1, y1, x2, y2]`` in 0-1000 (README; the
evaluator ``src/eval_mm/GUIOdyssey_action_matching.py`` compares it with a
predicted point in 0-1000), given for ``CLICK`` / ``LONG_PRESS`` and ``[]``
otherwise. It becomes the click's ``box`` next to its ``point``, which is
what the ``odyssey`` match rule reads (in the box as given, or within
normalised distance 0.14 of the point, ``click_matching``); a click point
outside its SAM2 box is kept and flagged ``Step.extra["point_outside_box"]``.
A ``sam2_bbox`` on another action is not used.

Levels: ``high`` (default) gives the episode instruction only; ``low`` also
sets each Step's ``instruction`` to its ``low_level_instruction``
(``format_converter.py --level low``), which is then required on every
step. ``Step.sub_goal`` always holds the low-level instruction when given.

Scroll convention: GUI-Odyssey records the finger path, and its
``format_converter.py`` names a scroll by the finger's dominant axis *in
0-1000 units* (finger moving up -> ``SCROLL: UP``; ties go vertical);
guirl keeps the path as ``point`` -> ``end_point`` and sets ``direction``
to where the content view moves, the opposite of the finger (finger up ->
``down``). Typed text is judged by ANLS >= 0.5, so Episodes record
``match_rule: odyssey`` and ``value_rule: anls``.

Nothing is skipped: every step becomes a Step, and a step that cannot be
converted is an :class:`AdapterError` naming file, episode, step and field.
"""

from __future__ import annotations

from pathlib import Path

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, Box
from guirl.data.adapters._common import (
    AdapterError,
    direction_from_finger,
    image_ref,
    load_json_or_jsonl,
    numbers,
    record_error,
    require,
)
from guirl.data.schema import Episode, Step

RELATIVE = Frame.relative(1000)
LEVELS = ("high", "low")
_KEYS = {"KEY_HOME": ActionType.HOME, "HOME": ActionType.HOME, "KEY_BACK": ActionType.BACK, "BACK": ActionType.BACK}
_APP_SWITCH = ("KEY_APPSELECT", "KEY_RECENT")  # latest README / format_converter.py; v1 README
_KNOWN = ["CLICK", "LONG_PRESS", "SCROLL", "TEXT", "TYPE", "HOME", "BACK", "COMPLETE", "INCOMPLETE", "IMPOSSIBLE"]
_TEXT_FIELDS = ("description", "intention", "context")


def _relative(value, file: Path, where: str, field: str = "info") -> tuple[float, float]:
    x, y = numbers(value, 2, file, where, field)
    if not (0 <= x <= 1000 and 0 <= y <= 1000):
        raise record_error(file, where, f"field '{field}' point {value!r} is outside the 0-1000 relative range")
    return (x, y)


def _sam2_box(step: dict, screen: Frame, file: Path, where: str) -> Box | None:
    """``sam2_bbox`` ``[x1, y1, x2, y2]`` in 0-1000 as a screen-pixel box (None when absent or ``[]``)."""
    raw = step.get("sam2_bbox")
    if raw is None or raw == []:
        return None
    x1, y1, x2, y2 = numbers(raw, 4, file, where, "sam2_bbox")
    if not all(0 <= v <= 1000 for v in (x1, y1, x2, y2)):
        raise record_error(
            file, where, f"field 'sam2_bbox' {raw!r} is outside the 0-1000 relative range (GUI-Odyssey boxes "
            "are [x1, y1, x2, y2] in 0-1000, not pixels)"
        )
    if x2 < x1 or y2 < y1:
        raise record_error(
            file, where, f"field 'sam2_bbox' {raw!r} is [x1, y1, x2, y2] but x2 < x1 or y2 < y1 (is it [x, y, w, h]?)"
        )
    a, b = RELATIVE.convert_point((x1, y1), screen), RELATIVE.convert_point((x2, y2), screen)
    return (a[0], a[1], b[0], b[1])


def _action(step: dict, screen: Frame, file: Path, where: str) -> tuple[Action, dict]:
    """The step's Action and what to keep in ``Step.extra`` about it."""
    kind = require(step, "action", str, file, where)
    info = step.get("info", "")
    if kind in ("CLICK", "LONG_PRESS") and isinstance(info, str) and info in _KEYS:
        return Action(type=_KEYS[info]), {}
    if kind in ("CLICK", "LONG_PRESS") and isinstance(info, str) and info in _APP_SWITCH:
        return Action(type=ActionType.KEY, keys=("app_switch",)), {}  # format_converter.py: PRESS_RECENT
    if kind in ("CLICK", "LONG_PRESS"):
        if not isinstance(info, list) or len(info) not in (1, 2):
            raise record_error(
                file, where, f"{kind} needs info [[x, y]] or [[x, y], [x, y]] (0-1000; the first point is the "
                f"target) or a key {sorted([*_KEYS, *_APP_SWITCH])}, got {info!r}"
            )
        points = [_relative(p, file, where) for p in info]
        atype = ActionType.CLICK if kind == "CLICK" else ActionType.LONG_PRESS
        point = RELATIVE.convert_point(points[0], screen)
        box = _sam2_box(step, screen, file, where)
        extra: dict = {"info": [list(p) for p in points]} if len(points) == 2 else {}
        if box is not None and not (box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]):
            extra["point_outside_box"] = True
        return Action(type=atype, point=point, box=box, frame=screen), extra
    if kind == "SCROLL":
        if not isinstance(info, list) or len(info) != 2:
            raise record_error(file, where, f"SCROLL needs info [[x1, y1], [x2, y2]] (finger path), got {info!r}")
        start, end = _relative(info[0], file, where), _relative(info[1], file, where)
        return Action(
            type=ActionType.SCROLL,
            point=RELATIVE.convert_point(start, screen),
            end_point=RELATIVE.convert_point(end, screen),
            # dominant axis on the 0-1000 values, as format_converter.py labels it (not in pixels)
            direction=direction_from_finger(start, end),
            frame=screen,
        ), {}
    if kind in ("TEXT", "TYPE"):
        if not isinstance(info, str):
            raise record_error(file, where, f"{kind} needs the typed text in info, got {info!r}")
        return Action(type=ActionType.TYPE, text=info), {}
    if kind in _KEYS:
        return Action(type=_KEYS[kind]), {}
    if kind == "COMPLETE":
        return Action(type=ActionType.TERMINATE, status="success"), {}
    if kind in ("INCOMPLETE", "IMPOSSIBLE"):
        return Action(type=ActionType.TERMINATE, status="failure"), {}
    raise record_error(file, where, f"unknown action {kind!r}; GUI-Odyssey has {_KNOWN}")


def _paths(files: str | Path | list[str | Path]) -> list[Path]:
    if isinstance(files, (str, Path)) and Path(files).is_dir():
        paths = sorted(Path(files).glob("*.json"))
        if not paths:
            raise AdapterError(
                f"{files}: directory holds no episode .json files; pass GUI-Odyssey's annotations/ directory"
            )
        return paths
    return [Path(f) for f in (files if isinstance(files, list) else [files])]


def load_gui_odyssey(
    files: str | Path | list[str | Path], image_dir: str | Path | None = None, level: str = "high"
) -> list[Episode]:
    """GUI-Odyssey annotation file(s) or ``annotations/`` directory -> Episodes (screen pixels).

    ``image_dir`` holds the screenshots (default ``../screenshots`` relative
    to the annotation directory). ``level="low"`` sets each Step's
    ``instruction`` to its ``low_level_instruction``.
    """
    if level not in LEVELS:
        raise ValueError(f"GUI-Odyssey level must be one of {LEVELS}, got {level!r}")
    episodes = []
    for file in _paths(files):
        root = Path(image_dir) if image_dir is not None else file.parent.parent / "screenshots"
        for i, rec in enumerate(load_json_or_jsonl(file)):
            if isinstance(rec, dict) and "steps" not in rec and "episode_id" in rec:
                raise record_error(
                    file, f"record {i}", "has 'episode_id' but no 'steps': this looks like an index such as "
                    "all_annot.json; pass the annotations/ directory (one JSON per episode)"
                )
            ep_id = str(require(rec, "episode_id", (str, int), file, f"record {i}"))
            where = f"episode {ep_id}" if i == 0 else f"record {i} (episode {ep_id})"
            task = require(rec, "task_info", dict, file, where)
            instruction = require(task, "instruction", str, file, f"{where} task_info")
            steps = []
            for t, raw in enumerate(require(rec, "steps", list, file, where)):
                swhere = f"{where} step {t}"
                shot = image_ref(root, require(raw, "screenshot", str, file, swhere), file, swhere)
                screen = Frame.screen(shot.width, shot.height)
                action, extra = _action(raw, screen, file, swhere)
                low = raw.get("low_level_instruction")
                if low is not None and not isinstance(low, str):
                    raise record_error(file, swhere, f"field 'low_level_instruction' must be str, got {low!r}")
                if level == "low" and not low:
                    raise record_error(
                        file, swhere, "level 'low' needs a low_level_instruction on every step (the latest "
                        "release, hflqf88888/GUIOdyssey, has them; v1 does not): use level 'high'"
                    )
                extra.update({k: raw[k] for k in _TEXT_FIELDS if isinstance(raw.get(k), str) and raw[k]})
                if "step" in raw:
                    extra["step"] = raw["step"]
                steps.append(
                    Step(
                        index=t,
                        screenshot=shot,
                        instruction=low if level == "low" else None,
                        valid_actions=[action],
                        action=action,
                        sub_goal=low or None,
                        extra=extra,
                    )
                )
            device, category = rec.get("device_info"), task.get("category")
            episodes.append(
                Episode(
                    id=f"gui_odyssey_{ep_id}",
                    instruction=instruction,
                    steps=steps,
                    source=f"gui_odyssey:{file.name}",
                    platform="mobile",
                    task=category if isinstance(category, str) else None,
                    extra={
                        "match_rule": "odyssey",
                        "value_rule": "anls",
                        "level": level,
                        "task": task.get("task", ""),
                        "meta_task": task.get("meta_task", ""),
                        "apps": task.get("app", []),
                        "device": device.get("device_name", "") if isinstance(device, dict) else "",
                    },
                )
            )
    return episodes

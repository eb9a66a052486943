"""GUI-Odyssey (Lu et al. 2024) episode annotations -> Episodes.

Layout read (the repository's ``introduction.md``): one JSON per episode,
``{"episode_id", "device_info": {"w", "h", ...}, "task_info": {"category",
"app", "task", "instruction", ...}, "step_length", "steps": [{"step",
"screenshot", "action", "info", "ps"}]}``. Actions: ``CLICK`` /
``LONG_PRESS`` with ``info = [[x, y]]``; ``SCROLL`` with
``info = [[x1, y1], [x2, y2]]`` (finger start and end); ``TEXT`` / ``TYPE``
with the text in ``info``; ``HOME``, ``BACK`` (also ``CLICK`` /
``LONG_PRESS`` with info ``"KEY_HOME"`` / ``"KEY_BACK"`` / ``"KEY_APPSELECT"``,
the recent-apps key); ``COMPLETE`` and
``INCOMPLETE`` / ``IMPOSSIBLE`` end the episode.

Coordinates are **relative 0-1000** on both axes; they are converted to
screen pixels of the screenshot. Scroll convention: GUI-Odyssey records
the finger path, and its own ``data/format_converter.py`` names a scroll by
the finger's dominant axis *in 0-1000 units* (finger moving up ->
``SCROLL: UP``); guirl
keeps the path as ``point`` -> ``end_point`` and sets ``direction`` to where
the content view moves, i.e. the opposite of the finger (finger up ->
``down``). Click targets are points; GUI-Odyssey's evaluator
(``GUIOdyssey_action_matching.py``) accepts a click inside the target's
box as given or within normalised distance 0.14 of the target point, and
typed text by ANLS >= 0.5, so Episodes record ``match_rule: odyssey`` (its
``click_matching``) and ``value_rule: anls``.
"""

from __future__ import annotations

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
from guirl.data.schema import Episode, Step

RELATIVE = Frame.relative(1000)
_KEYS = {"KEY_HOME": ActionType.HOME, "HOME": ActionType.HOME, "KEY_BACK": ActionType.BACK, "BACK": ActionType.BACK}


def _relative(value, file: Path, where: str) -> tuple[float, float]:
    x, y = numbers(value, 2, file, where, "info")
    if not (0 <= x <= 1000 and 0 <= y <= 1000):
        raise record_error(file, where, f"field 'info' point {value!r} is outside the 0-1000 relative range")
    return (x, y)


def _point(value, screen: Frame, file: Path, where: str) -> tuple[float, float]:
    return RELATIVE.convert_point(_relative(value, file, where), screen)


def _action(step: dict, screen: Frame, file: Path, where: str) -> Action:
    kind = require(step, "action", str, file, where)
    info = step.get("info", "")
    if kind in ("CLICK", "LONG_PRESS") and isinstance(info, str) and info in _KEYS:
        return Action(type=_KEYS[info])
    if kind in ("CLICK", "LONG_PRESS") and info == "KEY_APPSELECT":  # as format_converter.py reads it
        return Action(type=ActionType.KEY, keys=("app_switch",))
    if kind in ("CLICK", "LONG_PRESS"):
        if not isinstance(info, list) or len(info) != 1:
            raise record_error(file, where, f"{kind} needs info [[x, y]], got {info!r}")
        atype = ActionType.CLICK if kind == "CLICK" else ActionType.LONG_PRESS
        return Action(type=atype, point=_point(info[0], screen, file, where), frame=screen)
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
        )
    if kind in ("TEXT", "TYPE"):
        if not isinstance(info, str):
            raise record_error(file, where, f"{kind} needs the typed text in info, got {info!r}")
        return Action(type=ActionType.TYPE, text=info)
    if kind in _KEYS:
        return Action(type=_KEYS[kind])
    if kind == "COMPLETE":
        return Action(type=ActionType.TERMINATE, status="success")
    if kind in ("INCOMPLETE", "IMPOSSIBLE"):
        return Action(type=ActionType.TERMINATE, status="failure")
    known = ["CLICK", "LONG_PRESS", "SCROLL", "TEXT", "TYPE", "HOME", "BACK", "COMPLETE", "INCOMPLETE", "IMPOSSIBLE"]
    raise record_error(file, where, f"unknown action {kind!r}; GUI-Odyssey has {known}")


def load_gui_odyssey(files: str | Path | list[str | Path], image_dir: str | Path | None = None) -> list[Episode]:
    """GUI-Odyssey annotation file(s) or directory -> Episodes (screen pixels).

    ``image_dir`` holds the screenshots (default ``../screenshots`` relative
    to the annotation directory).
    """
    if isinstance(files, (str, Path)) and Path(files).is_dir():
        paths = sorted(Path(files).glob("*.json"))
    else:
        paths = [Path(f) for f in (files if isinstance(files, list) else [files])]
    episodes = []
    for file in paths:
        root = Path(image_dir) if image_dir is not None else file.parent.parent / "screenshots"
        for i, rec in enumerate(load_json_or_jsonl(file)):
            where = f"record {i}"
            ep_id = str(require(rec, "episode_id", (str, int), file, where))
            where = f"episode {ep_id}"
            task = require(rec, "task_info", dict, file, where)
            instruction = require(task, "instruction", str, file, f"{where} task_info")
            steps = []
            for t, raw in enumerate(require(rec, "steps", list, file, where)):
                swhere = f"{where} step {t}"
                shot = image_ref(root, require(raw, "screenshot", str, file, swhere), file, swhere)
                screen = Frame.screen(shot.width, shot.height)
                action = _action(raw, screen, file, swhere)
                steps.append(Step(index=t, screenshot=shot, valid_actions=[action], action=action))
            episodes.append(
                Episode(
                    id=f"gui_odyssey_{ep_id}",
                    instruction=instruction,
                    steps=steps,
                    source=f"gui_odyssey:{file.name}",
                    platform="mobile",
                    task=task.get("category"),
                    extra={
                        "match_rule": "odyssey",
                        "value_rule": "anls",
                        "task": task.get("task", ""),
                        "apps": task.get("app", []),
                    },
                )
            )
    return episodes

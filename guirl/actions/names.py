"""Action-type and key-name normalisation, in one place.

Every output format and dataset spells actions its own way (``long_press``,
``LongPress``, ``longpress``; ``type``, ``Write``, ``TEXT_INPUT``, ``typing``;
``press_back``, ``NavigateBack``...). :func:`resolve_action_name` maps all of
them onto guirl's :class:`~guirl.actions.types.ActionType`, plus the direction
or status some names imply (``scroll_up`` -> SCROLL up, ``DONE`` -> TERMINATE
success). Matching ignores case, spaces, underscores and hyphens. Unknown
names give ``None``; callers turn that into a ParseFailure.

Key names are normalised the same way (:func:`normalise_key`): ``control`` ->
``ctrl``, ``command``/``meta``/``win``/``super`` -> ``cmd``, ``return`` ->
``enter``, ``escape`` -> ``esc``, ``pgup`` -> ``pageup``, ``arrowup`` -> ``up``.
The canonical names are pyautogui's, except ``cmd``, which stands for the
platform's meta key (pyautogui's ``command`` / ``win``).

GUI-Libra's reward normalises names by lower-casing and a small map
(``long_press -> longpress``, ``type -> write``, ``press_back ->
navigateback``...); this module is a superset of that map.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from guirl.actions.types import ActionType, Direction, Status


class ActionName(NamedTuple):
    """What an action name means: a type and, for some names, a direction or status."""

    type: ActionType
    direction: Direction | None = None
    status: Status | None = None


_T = ActionType

#: spelling (lower case, no spaces/underscores/hyphens) -> meaning.
_ACTION_NAMES: dict[str, ActionName] = {}


def _add(meaning: ActionName, *spellings: str) -> None:
    for spelling in spellings:
        key = _squash(spelling)
        if _ACTION_NAMES.get(key, meaning) != meaning:
            raise ValueError(f"action spelling {spelling!r} has two meanings in guirl.actions.names")
        _ACTION_NAMES[key] = meaning


def _squash(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


_add(ActionName(_T.CLICK), "click", "left_click", "tap", "left_single", "single_click", "CLICK_COORDS")
_add(ActionName(_T.DOUBLE_CLICK), "double_click", "doubleclick", "left_double", "dblclick", "double_tap")
_add(ActionName(_T.TRIPLE_CLICK), "triple_click")
_add(ActionName(_T.RIGHT_CLICK), "right_click", "right_single", "context_click")
_add(ActionName(_T.MIDDLE_CLICK), "middle_click")
_add(ActionName(_T.LONG_PRESS), "long_press", "long_click", "long_tap", "press_and_hold")
_add(ActionName(_T.MOVE), "move", "mouse_move", "move_to", "hover", "move_mouse")
_add(ActionName(_T.MOUSE_DOWN), "mouse_down")
_add(ActionName(_T.MOUSE_UP), "mouse_up")
_add(ActionName(_T.DRAG), "drag", "drag_to", "left_click_drag", "drag_and_drop", "left_drag")
_add(ActionName(_T.SWIPE), "swipe")
_add(ActionName(_T.SCROLL), "scroll", "hscroll", "vscroll")
_add(ActionName(_T.SCROLL, direction="up"), "scroll_up")
_add(ActionName(_T.SCROLL, direction="down"), "scroll_down")
_add(ActionName(_T.SCROLL, direction="left"), "scroll_left")
_add(ActionName(_T.SCROLL, direction="right"), "scroll_right")
_add(ActionName(_T.TYPE), "type", "write", "text_input", "typing", "input_text", "typewrite", "input", "type_text")
_add(ActionName(_T.KEY), "key", "hotkey", "press", "keyboard_press", "key_press", "press_key", "keyboard")
_add(ActionName(_T.KEY_DOWN), "key_down")
_add(ActionName(_T.KEY_UP), "key_up")
_add(ActionName(_T.WAIT), "wait", "sleep")
_add(ActionName(_T.BACK), "back", "press_back", "navigate_back", "nav_back", "go_back")
_add(ActionName(_T.HOME), "home", "press_home", "navigate_home", "nav_home", "go_home")
_add(ActionName(_T.ENTER), "enter", "press_enter", "keyboard_enter")
_add(ActionName(_T.OPEN_APP), "open", "open_app", "openapp", "awake", "launch", "launch_app", "open_application")
_add(ActionName(_T.ANSWER), "answer", "response", "respond")
_add(ActionName(_T.SELECT), "select", "select_option")
_add(ActionName(_T.TERMINATE), "terminate", "status", "stop", "end")
_add(ActionName(_T.TERMINATE, status="success"), "done", "finished", "finish", "complete", "completed", "success")
_add(ActionName(_T.TERMINATE, status="failure"), "fail", "failed", "failure", "infeasible", "impossible")


def resolve_action_name(name: object) -> ActionName | None:
    """The meaning of an action name in any supported spelling, or None.

    >>> resolve_action_name("LongPress").type.value
    'long_press'
    >>> resolve_action_name("SCROLL_UP")
    ActionName(type=<ActionType.SCROLL: 'scroll'>, direction='up', status=None)
    >>> resolve_action_name("fly") is None
    True
    """
    if not isinstance(name, str) or len(name) > 64:
        return None
    return _ACTION_NAMES.get(_squash(name))


def normalise_action_name(name: object) -> ActionType | None:
    """The ActionType for an action name in any supported spelling, or None."""
    meaning = resolve_action_name(name)
    return None if meaning is None else meaning.type


# -- keys ---------------------------------------------------------------------

_KEY_ALIASES: dict[str, str] = {
    "control": "ctrl",
    "ctl": "ctrl",
    "ctrlleft": "ctrl",
    "ctrlright": "ctrl",
    "lctrl": "ctrl",
    "rctrl": "ctrl",
    "command": "cmd",
    "meta": "cmd",
    "win": "cmd",
    "windows": "cmd",
    "super": "cmd",
    "winleft": "cmd",
    "winright": "cmd",
    "cmdleft": "cmd",
    "cmdright": "cmd",
    "option": "alt",
    "altleft": "alt",
    "altright": "alt",
    "optionleft": "alt",
    "optionright": "alt",
    "shiftleft": "shift",
    "shiftright": "shift",
    "return": "enter",
    "ret": "enter",
    "kpenter": "enter",
    "escape": "esc",
    "pgup": "pageup",
    "prior": "pageup",
    "pgdn": "pagedown",
    "pgdown": "pagedown",
    "next": "pagedown",
    "arrowup": "up",
    "uparrow": "up",
    "arrowdown": "down",
    "downarrow": "down",
    "arrowleft": "left",
    "leftarrow": "left",
    "arrowright": "right",
    "rightarrow": "right",
    "del": "delete",
    "forwarddelete": "delete",
    "bksp": "backspace",
    "spacebar": "space",
    " ": "space",
    "\t": "tab",
    "\n": "enter",
    "ins": "insert",
    "caps": "capslock",
    "prtsc": "printscreen",
    "prtscr": "printscreen",
    "prntscrn": "printscreen",
    "print": "printscreen",
}


def normalise_key(name: str) -> str:
    """Canonical lower-case name of one key (unknown names are lower-cased as given).

    >>> [normalise_key(k) for k in ["Control", "RETURN", "Escape", "PgUp", "ArrowLeft", "Meta", "a"]]
    ['ctrl', 'enter', 'esc', 'pageup', 'left', 'cmd', 'a']
    """
    if name in _KEY_ALIASES:  # whitespace keys must not be squashed away
        return _KEY_ALIASES[name]
    stripped = name.strip()
    if len(stripped) == 1:
        return stripped.lower()
    squashed = _squash(stripped)
    if not squashed:
        return name.lower()
    if squashed.startswith("keycode") and len(squashed) > 7:  # adb KEYCODE_ENTER
        squashed = squashed[7:]
    return _KEY_ALIASES.get(squashed, squashed)


def split_key_combo(combo: str) -> tuple[str, ...] | None:
    """``"CTRL+A"`` / ``"ctrl a"`` / ``"ctrl-shift-t"`` -> normalised keys, or None.

    A single character (``"+"``, ``" "``) is one key. Empty input gives None.

    >>> split_key_combo("CTRL+A")
    ('ctrl', 'a')
    >>> split_key_combo("Return")
    ('enter',)
    """
    if not isinstance(combo, str) or not combo or len(combo) > 200:
        return None
    if len(combo) == 1 or combo in _KEY_ALIASES:
        return (normalise_key(combo),)
    stripped = combo.strip()
    if len(stripped) == 1:
        return (normalise_key(stripped),)
    sep = "+" if "+" in stripped else (" " if " " in stripped else None)
    if sep is None and "-" in stripped and all(stripped.split("-")):
        sep = "-"
    parts = list(stripped.split(sep)) if sep else [stripped]
    if sep == "+" and stripped.endswith("++"):  # "ctrl++": the plus key itself
        parts = [*stripped[:-2].split("+"), "+"]
    keys = tuple(normalise_key(p) for p in parts if p.strip())
    return keys or None

"""Action-name and key-name normalisation (guirl.actions.names)."""

from __future__ import annotations

import pytest

from guirl.actions.names import normalise_action_name, normalise_key, resolve_action_name, split_key_combo
from guirl.actions.types import ActionType as T

SPELLINGS = {
    T.LONG_PRESS: ["long_press", "longpress", "LongPress", "LONG_PRESS", "long press", "long-press"],
    T.TYPE: ["type", "write", "Write", "TEXT_INPUT", "typing", "TYPING", "input_text", "typewrite"],
    T.BACK: ["press_back", "navigate_back", "NavigateBack", "back", "PressBack", "navigateback"],
    T.HOME: ["press_home", "navigate_home", "NavigateHome", "home"],
    T.CLICK: ["left_click", "click", "CLICK", "Click", "tap"],
    T.DOUBLE_CLICK: ["double_click", "DOUBLE_CLICK", "doubleClick", "left_double"],
    T.TRIPLE_CLICK: ["triple_click", "tripleClick"],
    T.RIGHT_CLICK: ["right_click", "RIGHT_CLICK", "rightClick"],
    T.MIDDLE_CLICK: ["middle_click", "middleClick"],
    T.KEY: ["hotkey", "key", "press", "KeyboardPress", "KEY", "PRESS", "HOTKEY"],
    T.KEY_DOWN: ["keyDown", "KEY_DOWN"],
    T.KEY_UP: ["keyUp", "KEY_UP"],
    T.OPEN_APP: ["open", "open_app", "OpenAPP", "OpenApp", "awake", "AWAKE"],
    T.TERMINATE: ["terminate", "finished", "DONE", "FAIL", "complete", "status"],
    T.ANSWER: ["answer", "Answer"],
    T.SELECT: ["select", "Select"],
    T.WAIT: ["wait", "WAIT", "Wait"],
    T.SWIPE: ["swipe", "Swipe"],
    T.DRAG: ["drag", "left_click_drag", "DRAG_TO", "dragTo", "DRAG"],
    T.MOVE: ["mouse_move", "MOVE_TO", "hover", "moveTo"],
    T.MOUSE_DOWN: ["mouseDown", "MOUSE_DOWN"],
    T.MOUSE_UP: ["mouseUp", "MOUSE_UP"],
    T.SCROLL: ["scroll", "Scroll", "hscroll", "SCROLL_UP", "scroll_down"],
    T.ENTER: ["keyboard_enter", "enter"],
}


@pytest.mark.parametrize(("expected", "spelling"), [(t, s) for t, names in SPELLINGS.items() for s in names])
def test_every_spelling_maps_to_its_type(expected: T, spelling: str) -> None:
    assert normalise_action_name(spelling) is expected


def test_every_action_type_has_a_spelling() -> None:
    assert set(SPELLINGS) == set(T)


def test_names_imply_direction_and_status() -> None:
    assert resolve_action_name("SCROLL_UP") == (T.SCROLL, "up", None)
    assert resolve_action_name("scroll_down") == (T.SCROLL, "down", None)
    assert resolve_action_name("DONE") == (T.TERMINATE, None, "success")
    assert resolve_action_name("finished") == (T.TERMINATE, None, "success")
    assert resolve_action_name("FAIL") == (T.TERMINATE, None, "failure")
    assert resolve_action_name("terminate") == (T.TERMINATE, None, None)


@pytest.mark.parametrize("garbage", ["", "fly", "clickk", None, 3, ["click"], "x" * 1000, "scroll_diagonal"])
def test_unknown_names_give_none(garbage: object) -> None:
    assert normalise_action_name(garbage) is None


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("ctrl", "ctrl"), ("Control", "ctrl"), ("CTRL", "ctrl"), ("ctrlleft", "ctrl"),
        ("cmd", "cmd"), ("command", "cmd"), ("Meta", "cmd"), ("win", "cmd"), ("super", "cmd"),
        ("enter", "enter"), ("Return", "enter"), ("KEYCODE_ENTER", "enter"), ("\n", "enter"),
        ("esc", "esc"), ("Escape", "esc"), ("pgup", "pageup"), ("Page_Up", "pageup"), ("pgdn", "pagedown"),
        ("ArrowUp", "up"), ("arrow_down", "down"), ("Left", "left"), ("RIGHT", "right"),
        ("option", "alt"), ("del", "delete"), (" ", "space"), ("A", "a"), ("F5", "f5"), ("+", "+"),
    ],
)
def test_key_names(raw: str, canonical: str) -> None:
    assert normalise_key(raw) == canonical


@pytest.mark.parametrize(
    ("combo", "keys"),
    [
        ("CTRL+A", ("ctrl", "a")),
        ("ctrl+shift+t", ("ctrl", "shift", "t")),
        ("Control-Return", ("ctrl", "enter")),
        ("ctrl c", ("ctrl", "c")),
        ("ctrl++", ("ctrl", "+")),
        ("+", ("+",)),
        ("Escape", ("esc",)),
        ("volume_up", ("volumeup",)),
    ],
)
def test_split_key_combo(combo: str, keys: tuple[str, ...]) -> None:
    assert split_key_combo(combo) == keys


@pytest.mark.parametrize("garbage", ["", None, 5, "x" * 300])
def test_split_key_combo_garbage(garbage: object) -> None:
    assert split_key_combo(garbage) is None  # type: ignore[arg-type]

"""Property tests: parse_action(format_action(a, fmt), fmt, a.frame) == a for every format and type.

Actions are generated with integral coordinates and only the fields the format
can carry (see each format module's docstring for what it carries).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guirl.actions import Action, ActionType, Frame, available_formats, format_action, get_format, parse_action

T = ActionType

coordinate = st.integers(min_value=0, max_value=2000).map(float)
point = st.tuples(coordinate, coordinate)
box = st.tuples(coordinate, coordinate, coordinate, coordinate).map(
    lambda b: (min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3]))
)
tricky_text = st.sampled_from(
    ['"', "\\", "'", "\\'", '\\"', "</tool_call>", "<answer>", "</action>", "</think>", "<think>", "}}", "{", "\n", "\t", "中文 ünï©ødé 🙂", ""]
)
text = st.one_of(st.text(max_size=40), tricky_text, st.lists(tricky_text, max_size=4).map("".join))
# GUI-Libra writes unused values as "None", so a typed text cannot be empty or "none".
libra_text = text.filter(lambda s: s.strip().lower() not in {"", "none", "null"})
description = st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=40).map(str.strip).filter(bool)
canonical_keys = [
    "ctrl", "alt", "shift", "cmd", "enter", "esc", "tab", "space", "backspace", "delete", "pageup",
    "pagedown", "up", "down", "left", "right", "home", "end", "a", "c", "v", "z", "f5", "1",
]
keys = st.lists(st.sampled_from(canonical_keys), min_size=1, max_size=3).map(tuple)
one_key = st.sampled_from(canonical_keys).map(lambda k: (k,))
direction = st.sampled_from(["up", "down", "left", "right"])
status = st.sampled_from(["success", "failure"])
amount = st.integers(min_value=1, max_value=50).map(float)
seconds = st.sampled_from([0.5, 1.0, 2.0, 3.5, 10.0])


def fields(required: dict | None = None, optional: dict | None = None) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(required or {}, optional=optional or {})


NOTHING = fields()
# What each format carries, per action type it supports.
SPECS: dict[str, dict[ActionType, st.SearchStrategy[dict]]] = {
    "litegui": {
        **{t: st.one_of(fields({"point": point}), fields({"box": box})) for t in (T.CLICK, T.RIGHT_CLICK, T.DOUBLE_CLICK)},
        T.DRAG: st.one_of(fields({"point": point, "end_point": point}), fields({"box": box, "end_point": point})),
        T.SCROLL: fields({"direction": st.sampled_from(["up", "down"])}, {"point": point}),
        T.TYPE: fields({"text": text}),
        T.KEY: fields({"keys": keys}),
        T.WAIT: NOTHING,
        T.TERMINATE: fields({"status": status}),
    },
    "guilibra": {
        T.CLICK: fields({"point": point}, {"description": description}),
        T.LONG_PRESS: fields({"point": point}, {"description": description}),
        T.TYPE: fields({"text": libra_text}, {"point": point, "description": description}),
        T.SELECT: fields({"text": libra_text}, {"point": point, "description": description}),
        T.ANSWER: fields({"text": libra_text}, {"description": description}),
        T.OPEN_APP: fields({"text": libra_text}, {"description": description}),
        T.SCROLL: fields({"direction": direction}, {"point": point, "description": description}),
        T.SWIPE: fields({"direction": direction}, {"point": point, "description": description}),
        T.KEY: fields({"keys": keys}, {"description": description}),
        T.WAIT: fields({}, {"amount": seconds, "description": description}),
        T.TERMINATE: fields({"status": status}, {"description": description}),
        T.HOME: fields({}, {"description": description}),
        T.BACK: fields({}, {"description": description}),
    },
    "qwen_computer_use": {
        **{
            t: fields({}, {"point": point, "description": description})
            for t in (T.CLICK, T.RIGHT_CLICK, T.MIDDLE_CLICK, T.DOUBLE_CLICK, T.TRIPLE_CLICK)
        },
        T.MOVE: fields({"point": point}, {"description": description}),
        T.DRAG: fields({"end_point": point}, {"point": point, "description": description}),
        T.SCROLL: fields({"direction": direction, "amount": amount}, {"point": point, "description": description}),
        T.TYPE: fields({"text": text}, {"description": description}),
        T.ANSWER: fields({"text": text}, {"description": description}),
        T.KEY: fields({"keys": keys}, {"description": description}),
        # the tool requires wait's time: a WAIT without one is written with a default (see examples)
        T.WAIT: fields({"amount": seconds}, {"description": description}),
        T.TERMINATE: fields({"status": status}, {"description": description}),
    },
    "pyautogui": {
        **{
            t: fields({}, {"point": point})
            for t in (T.CLICK, T.RIGHT_CLICK, T.MIDDLE_CLICK, T.DOUBLE_CLICK, T.TRIPLE_CLICK, T.MOUSE_DOWN, T.MOUSE_UP)
        },
        T.MOVE: fields({"point": point}),
        T.DRAG: fields({"end_point": point}, {"point": point}),
        T.SCROLL: fields({"direction": direction, "amount": amount}, {"point": point}),
        T.TYPE: fields({"text": text}),
        T.KEY: fields({"keys": keys}),
        T.KEY_DOWN: fields({"keys": one_key}),
        T.KEY_UP: fields({"keys": one_key}),
        T.WAIT: fields({}, {"amount": seconds}),
        T.TERMINATE: fields({"status": status}),
    },
    "computer_13": {
        **{t: fields({}, {"point": point}) for t in (T.CLICK, T.RIGHT_CLICK, T.MIDDLE_CLICK, T.DOUBLE_CLICK, T.TRIPLE_CLICK)},
        T.MOVE: fields({"point": point}),
        T.DRAG: fields({"end_point": point}, {"point": point}),
        T.MOUSE_DOWN: NOTHING,
        T.MOUSE_UP: NOTHING,
        T.SCROLL: fields({"direction": direction, "amount": amount}),
        T.TYPE: fields({"text": text}),
        T.KEY: fields({"keys": keys}),
        T.KEY_DOWN: fields({"keys": one_key}),
        T.KEY_UP: fields({"keys": one_key}),
        T.WAIT: NOTHING,
        T.TERMINATE: fields({"status": status}),
    },
}
_MOBILE = {
    T.CLICK: fields({"point": point}),
    # mobile_use requires long_press/wait time and terminate status: actions without them are
    # written with defaults (tested in test_actions_examples.py), so they do not round-trip
    T.LONG_PRESS: fields({"point": point, "amount": seconds}),
    T.SWIPE: st.one_of(fields({"point": point, "end_point": point}), fields({"direction": direction}, {"point": point})),
    T.TYPE: fields({"text": text}),
    T.ANSWER: fields({"text": text}),
    T.OPEN_APP: fields({"text": text}),
    T.KEY: fields({"keys": keys}),
    T.BACK: NOTHING,
    T.HOME: NOTHING,
    T.ENTER: NOTHING,
    T.WAIT: fields({"amount": seconds}),
    T.TERMINATE: fields({"status": status}),
}
SPECS["qwen_mobile_use"] = _MOBILE
SPECS["uis1"] = _MOBILE

FRAMES = [Frame.screen(1920, 1080), Frame.relative(1000), Frame.resized(1080, 2400), Frame.unit()]


def test_specs_cover_every_format_and_supported_type() -> None:
    assert sorted(SPECS) == available_formats()
    for name, spec in SPECS.items():
        assert set(spec) == set(get_format(name).supported_types), name


CASES = [(name, kind) for name, spec in SPECS.items() for kind in spec]


@pytest.mark.parametrize(("fmt", "kind"), CASES, ids=[f"{f}-{k.value}" for f, k in CASES])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_format_then_parse_is_identity(fmt: str, kind: ActionType, data: st.DataObject) -> None:
    frame = data.draw(st.sampled_from([get_format(fmt).default_frame, *FRAMES]), label="frame")
    action = Action(type=kind, frame=frame, **data.draw(SPECS[fmt][kind], label="fields"))
    written = format_action(action, fmt)
    assert isinstance(written, str)
    assert parse_action(written, fmt, frame) == action, written


@pytest.mark.parametrize("fmt", sorted(SPECS))
def test_format_refuses_unsupported_types(fmt: str) -> None:
    unsupported = [t for t in ActionType if t not in get_format(fmt).supported_types]
    for kind in unsupported:
        extra = {"status": "success"} if kind is T.TERMINATE else {}
        with pytest.raises(ValueError, match=fmt):
            format_action(Action(type=kind, point=(1, 2), text="x", keys=("a",), direction="up", **extra), fmt)


@pytest.mark.parametrize("fmt", sorted(SPECS))
def test_parse_stamps_the_given_frame_or_the_default(fmt: str) -> None:
    kind = T.WAIT if T.WAIT in SPECS[fmt] else T.BACK
    written = format_action(Action(type=kind, frame=Frame.unit()), fmt)
    given_frame = Frame.screen(1280, 720)
    assert parse_action(written, fmt, given_frame).frame == given_frame  # type: ignore[union-attr]
    assert parse_action(written, fmt).frame == get_format(fmt).default_frame  # type: ignore[union-attr]


@pytest.mark.parametrize("head", ["", "<think>plan\nAction: not this one</think>\n"])
def test_a_description_holding_the_reasoning_close_tag_survives(head):
    """The reasoning block ends at its own ``</think>``, not at one inside the action's description."""
    action = Action(type=ActionType.TRIPLE_CLICK, frame=Frame.unit(), description="select </think> all")
    assert parse_action(head + format_action(action, "qwen_computer_use"), "qwen_computer_use", Frame.unit()) == action

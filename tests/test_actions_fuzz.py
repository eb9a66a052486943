"""Fuzz: every parser reads 10,000+ garbage and adversarial strings without raising.

Each result must be an Action or a ParseFailure, and a ParseFailure must come
from the parser's own checks, not from the registry's last-line-of-defence
``except`` (whose reasons name a Python exception type).
"""

from __future__ import annotations

import os
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guirl.actions import Action, ActionType, Frame, ParseFailure, available_formats, format_action, parse_action

T = ActionType
FUZZ_PER_PARSER = 10_000
_CRASH_MARKERS = ("TypeError", "KeyError", "IndexError", "AttributeError", "RecursionError", "OverflowError")

SAMPLE_ACTIONS = [
    Action(type=T.CLICK, point=(512, 384)),
    Action(type=T.DOUBLE_CLICK, point=(10, 20)),
    Action(type=T.LONG_PRESS, point=(300, 600), amount=2),
    Action(type=T.DRAG, point=(1, 2), end_point=(300, 400)),
    Action(type=T.SWIPE, point=(500, 1500), end_point=(500, 500)),
    Action(type=T.SCROLL, direction="down", amount=3, point=(640, 360)),
    Action(type=T.TYPE, text='he said "hi" \\ \'there\' 中文'),
    Action(type=T.KEY, keys=("ctrl", "a")),
    Action(type=T.WAIT, amount=2),
    Action(type=T.TERMINATE, status="success"),
    Action(type=T.BACK),
    Action(type=T.OPEN_APP, text="Settings"),
    Action(type=T.ANSWER, text="42"),
]
ADVERSARIAL_VALUES = [
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * 5000, "1" * 400, "null", "true", '"12"',
    '"abc"', "[]", "{}", "[1]", "[1, 2, 3]", "[[1, 2]]", '["a", "b"]', "[1e308, 1e308]", "[-0.0, 0]",
    '{"x": 1}', "[NaN, 1]", "[Infinity, 2]", "[true, false]", "[null, null]", '"' + "\\u0000" * 10 + '"',
]
BOMBS = [
    "{" * 50_000, "[" * 50_000, '{"a":' * 20_000, "(" * 5_000, "[" * 2_000 + "]" * 2_000,
    '{"action": ' * 3_000 + '"click"' + "}" * 3_000, "<tool_call>" * 2_000, "<answer>{" * 2_000,
    "```" * 3_000, "pyautogui.click(" * 3_000, "a" * 200_000, "{" + "}" * 100_000, "\x00" * 1_000,
]
CODE_ATTACKS = [
    "__import__('os').system('echo pwned')",
    "pyautogui.click(__import__('os').system('echo pwned'), 2)",
    "pyautogui.click(x=exec('import os'), y=1)",
    "pyautogui.typewrite(eval('1+1'))",
    "import os; os.system('echo pwned')",
    "os.system('echo pwned')",
    "pyautogui.click(*[1, 2])",
    "pyautogui.click(**{'x': 1, 'y': 2})",
    "(lambda: __import__('os').system('echo pwned'))()",
    "pyautogui.__class__.__bases__[0].__subclasses__()",
    "pyautogui.click(x=10**10**10, y=1)",
    "pyautogui.click(f'{__import__(\"os\").system(\"x\")}')",
    "x = pyautogui.click(1, 2)",
    "for i in range(10**9): pyautogui.click(1, 2)",
    "pyautogui.click(1, 2, 3, 4, 5, 6, 7, 8, 9)",
    "pyautogui.press('a', presses=10**9)",
    "pyautogui.hotkey()",
    "pyautogui.scroll(0)",
    "pyautogui.dragTo(1, 2, button='right')",
    "time.sleep(-1)",
    "time.sleep(1e999)",
    "pyautogui.click(1.5e400, 2)",
    "getattr(pyautogui, 'click')(1, 2)",
    "pyautogui.click(x=1)",
    "pyautogui.moveTo()",
    "@decorator\ndef f(): pass",
    "class A: pass",
]


def _mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        pos = rng.randint(0, len(chars))
        if op < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(pos, rng.choice(string.printable + "{}[]\":,<>/\\中🙂"))
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(string.printable)
    return "".join(chars)


def _replace_a_number(rng: random.Random, text: str) -> str:
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    if not digits:
        return text + rng.choice(ADVERSARIAL_VALUES)
    i = rng.choice(digits)
    j = i
    while j < len(text) and (text[j].isdigit() or text[j] == "."):
        j += 1
    return text[:i] + rng.choice(ADVERSARIAL_VALUES) + text[j:]


def _garbage(rng: random.Random, valid: list[str]) -> str:
    kind = rng.randrange(8)
    if kind == 0:
        return "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 300)))
    if kind == 1:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 200))).decode("utf-8", "replace")
    base = rng.choice(valid)
    if kind == 2:
        return base[: rng.randint(0, len(base))]
    if kind == 3:
        return _mutate(rng, base)
    if kind == 4:
        return _replace_a_number(rng, base)
    if kind == 5:
        return rng.choice(["", " ", "\n", "None", "null", "{}", "[]", "DONE", "WAIT", "FAIL", "<tool_call></tool_call>"])
    if kind == 6:
        return rng.choice(CODE_ATTACKS)
    return rng.choice(["```json\n", "Action: x\n", "<think>", "<answer>", ""]) + _mutate(rng, base)


def _valid_outputs(fmt: str) -> list[str]:
    outputs = []
    for action in SAMPLE_ACTIONS:
        try:
            outputs.append(format_action(action, fmt))
        except ValueError:
            continue
    assert outputs, fmt
    return outputs


def _check(result: object, fmt: str, text: str) -> None:
    assert isinstance(result, (Action, ParseFailure)), (fmt, text[:200])
    if isinstance(result, ParseFailure):
        assert not any(marker in result.reason for marker in _CRASH_MARKERS), (result.reason, text[:200])


@pytest.mark.parametrize("fmt", available_formats())
def test_fuzz_never_raises(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(os, "system", lambda command: calls.append(command) or 0)
    rng = random.Random(f"guirl-fuzz-{fmt}")
    valid = _valid_outputs(fmt)
    frame = Frame.screen(1920, 1080)
    texts = [_garbage(rng, valid) for _ in range(FUZZ_PER_PARSER)] + BOMBS + CODE_ATTACKS
    parsed = 0
    for text in texts:
        result = parse_action(text, fmt, frame)
        _check(result, fmt, text)
        parsed += isinstance(result, Action)
    assert calls == [], "a parser executed model output"
    # The generator must also produce readable near-misses, or this test could pass on a parser that rejects all.
    assert parsed > FUZZ_PER_PARSER // 50, parsed


@pytest.mark.parametrize("fmt", available_formats())
def test_valid_samples_still_parse(fmt: str) -> None:
    # the un-fuzzed outputs parse back to what was written; formats may drop what they cannot express
    # (amounts, a scroll's point, the frame), never the kind of action or its text, keys, direction, status
    kept = ("type", "text", "keys", "direction", "status")
    written = 0
    for action in SAMPLE_ACTIONS:
        try:
            text = format_action(action, fmt)
        except ValueError:
            continue
        parsed = parse_action(text, fmt)
        assert isinstance(parsed, Action), text
        assert [getattr(parsed, f) for f in kept] == [getattr(action, f) for f in kept], text
        written += 1
    assert written >= 8, written  # most of the 13 samples are in every format's action space


@pytest.mark.parametrize("fmt", available_formats())
@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_hypothesis_text_never_raises(fmt: str, text: str) -> None:
    _check(parse_action(text, fmt), fmt, text)


@pytest.mark.parametrize("fmt", available_formats())
def test_non_string_input_is_a_failure(fmt: str) -> None:
    for bad in (None, 3, b"bytes", ["click"], {"action": "click"}):
        assert isinstance(parse_action(bad, fmt), ParseFailure)  # type: ignore[arg-type]

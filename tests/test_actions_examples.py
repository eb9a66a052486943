"""Hand-written outputs in each format (shaped after the papers' and public repos' examples)."""

from __future__ import annotations

import json

import pytest

from guirl.actions import Action, ActionType, Frame, ParseFailure, format_action, parse_action
from guirl.actions.formats import extract_reasoning
from guirl.actions.formats.litegui import parse_output
from guirl.actions.formats.pyautogui import parse_pyautogui_program
from guirl.actions.formats.qwen_mobile_use import INFIGUI_MAX_PIXELS, extract_sub_goal
from guirl.actions.formats.uis1 import UIS1_MAX_PIXELS, UIS1_MIN_PIXELS

T = ActionType
SCREEN = Frame.screen(1920, 1080)


def check(text: str, fmt: str, frame: Frame = SCREEN, /, **expected: object) -> Action:
    action = parse_action(text, fmt, frame)
    assert isinstance(action, Action), action
    assert action == Action(frame=frame, **expected), action
    return action


def refuse(text: str, fmt: str, reason: str) -> None:
    result = parse_action(text, fmt, SCREEN)
    assert isinstance(result, ParseFailure), result
    assert reason in result.reason, result.reason


# -- LiteGUI (paper sec. 3.1: CLICK at (521, 41); TEXT_INPUT www.example.com; KEY CTRL+A) -----------


def test_litegui_examples() -> None:
    out = """Here is my answer:
```json
{"reasoning": "Observation: a browser. Intent: open a website. Analysis: click the address bar.",
 "subtasks": [{"description": "enter the target URL", "status": "in_progress"}, "log into the account"],
 "action": {"type": "CLICK", "position": [521, 41], "value": ""}}
```"""
    check(out, "litegui", type=T.CLICK, point=(521, 41))
    full = parse_output(out, SCREEN)
    assert not isinstance(full, ParseFailure)
    assert full.reasoning is not None and full.reasoning.startswith("Observation")
    assert full.subtasks == [{"description": "enter the target URL", "status": "in_progress"}, "log into the account"]
    check('{"action": {"type": "TEXT_INPUT", "value": "www.example.com"}}', "litegui", type=T.TYPE, text="www.example.com")
    check('{"action": {"type": "KEY", "value": "CTRL+A"}}', "litegui", type=T.KEY, keys=("ctrl", "a"))
    check('{"action": {"type": "SCROLL_DOWN"}}', "litegui", type=T.SCROLL, direction="down")
    check('{"action": {"type": "WAIT"}}', "litegui", type=T.WAIT)
    # an annotation: the position is a box
    check('{"action": {"type": "DOUBLE_CLICK", "position": [10, 20, 110, 60]}}', "litegui",
          type=T.DOUBLE_CLICK, box=(10, 20, 110, 60))
    # the ATG data layout (flat, capitalised keys)
    check('{"Reasoning": "r", "Subtasks": [], "Action": "RIGHT_CLICK", "Value": "", "Position": [5, 6]}', "litegui",
          type=T.RIGHT_CLICK, point=(5, 6))
    refuse('{"action": {"type": "LONG_PRESS", "position": [1, 2]}}', "litegui", "not in LiteGUI's action space")
    refuse('{"action": {"type": "CLICK"}}', "litegui", "needs a position")
    refuse('{"action": {"type": "CLICK", "position": [NaN, 2]}}', "litegui", "no JSON object")


# -- GUI-Libra (r1gui reward / android_world agent prompt) ----------------------------------------


def test_guilibra_examples() -> None:
    frame = Frame(kind="resized")
    check(
        '<think>The search bar is at the top.</think><answer>{"action_type": "Click", "action_description": '
        '"Tap the search bar.", "value": "None", "point_2d": [540, 160]}</answer>',
        "guilibra", frame, type=T.CLICK, point=(540, 160), description="Tap the search bar.",
    )
    # direct-action sample (no think); Write with a target field
    check('<answer>{"action_type": "Write", "action_description": "Type the city.", "value": "Paris", '
          '"point_2d": [300, 420]}</answer>', "guilibra", frame,
          type=T.TYPE, text="Paris", point=(300, 420), description="Type the city.")
    # Scroll value is the content direction; Swipe value is the finger direction (flipped)
    check('<answer>{"action_type": "Scroll", "action_description": "", "value": "down", "point_2d": "none"}</answer>',
          "guilibra", frame, type=T.SCROLL, direction="down")
    check('<answer>{"action_type": "Swipe", "action_description": "", "value": "up", "point_2d": [540, 1800]}</answer>',
          "guilibra", frame, type=T.SWIPE, direction="down", point=(540, 1800))
    check('<answer>{"action_type": "KeyboardPress", "action_description": "", "value": "enter", "point_2d": "none"}'
          "</answer>", "guilibra", frame, type=T.KEY, keys=("enter",))
    check('<answer>{"action_type": "OpenAPP", "action_description": "", "value": "Clock", "point_2d": "none"}</answer>',
          "guilibra", frame, type=T.OPEN_APP, text="Clock")
    check('<answer>{"action_type": "Wait", "action_description": "", "value": "2", "point_2d": "none"}</answer>',
          "guilibra", frame, type=T.WAIT, amount=2)
    check('<answer>{"action_type": "Terminate", "action_description": "", "value": "success", "point_2d": "none"}'
          "</answer>", "guilibra", frame, type=T.TERMINATE, status="success")
    check('<answer>{"action_type": "NavigateBack", "action_description": "", "value": "None", "point_2d": "none"}'
          "</answer>", "guilibra", frame, type=T.BACK)
    # names are normalised as GUI-Libra's reward does (long_press -> longpress)
    check('<answer>{"action_type": "long_press", "action_description": "", "value": "None", "point_2d": [1, 2]}'
          "</answer>", "guilibra", frame, type=T.LONG_PRESS, point=(1, 2))
    refuse('<answer>{"action_type": "Click", "action_description": "", "value": "None", "point_2d": "none"}</answer>',
           "guilibra", "Click needs point_2d")
    refuse('<answer>{"action_type": "Fly", "value": "None", "point_2d": "none"}</answer>', "guilibra", "not a GUI-Libra")
    # not JSON (a trailing comma, a missing brace): the fields are read one by one, as the authors' reward does
    check('<answer>{"action_type": "Click", "value": "None", "point_2d": [7, 8],}</answer>', "guilibra", frame,
          type=T.CLICK, point=(7, 8))
    check('<answer>{"action_type": "Write", "value": "hello", "point_2d": "none"</answer>', "guilibra", frame,
          type=T.TYPE, text="hello")
    refuse('<answer>{"value": "hello",}</answer>', "guilibra", "no <answer>")


# -- ComputerSD / Qwen computer_use ------------------------------------------------------------


def test_qwen_computer_use_examples() -> None:
    rel = Frame.relative(1000)
    action = check(
        'Action: Click the "File" menu in the top bar.\n<tool_call>\n{"name": "computer_use", "arguments": '
        '{"action": "left_click", "coordinate": [500, 250]}}\n</tool_call>',
        "qwen_computer_use", rel, type=T.CLICK, point=(500, 250), description='Click the "File" menu in the top bar.',
    )
    # Qwen3-VL relative coordinates -> screen pixels: 500/1000 * 1920 = 960, 250/1000 * 1080 = 270
    assert action.to_frame(SCREEN).point == pytest.approx((960, 270))
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "type", "text": "hello\\nworld"}}</tool_call>',
          "qwen_computer_use", rel, type=T.TYPE, text="hello\nworld")
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "key", "keys": ["Control", "c"]}}</tool_call>',
          "qwen_computer_use", rel, type=T.KEY, keys=("ctrl", "c"))
    # positive pixels scroll up (the tool's description); negative down
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -5}}</tool_call>',
          "qwen_computer_use", rel, type=T.SCROLL, direction="down", amount=5)
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "hscroll", "pixels": 3}}</tool_call>',
          "qwen_computer_use", rel, type=T.SCROLL, direction="right", amount=3)
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click_drag", "coordinate": [9, 8]}}'
          "</tool_call>", "qwen_computer_use", rel, type=T.DRAG, end_point=(9, 8))
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}</tool_call>',
          "qwen_computer_use", rel, type=T.TERMINATE, status="failure")
    check('<tool_call>{"name": "computer_use", "arguments": {"action": "wait", "time": 2}}', "qwen_computer_use", rel,
          type=T.WAIT, amount=2)  # unterminated tool call still reads
    refuse('<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 2]}}</tool_call>',
           "qwen_computer_use", "expected 'computer_use'")
    refuse('<tool_call>{"name": "computer_use", "arguments": {"action": "scroll", "pixels": 0}}</tool_call>',
           "qwen_computer_use", "non-zero pixels")


# -- InfiGUI-R1 / Qwen mobile_use ---------------------------------------------------------------


INFIGUI_OUTPUT = """<think>The settings page is open and Wi-Fi is listed near the top.
<step>Open the Wi-Fi settings</step>
So I tap the Wi-Fi entry.</think>
<tool_call>
{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [364, 518]}}
</tool_call>"""


def test_qwen_mobile_use_examples() -> None:
    frame = Frame.resized(1080, 2400)
    check(INFIGUI_OUTPUT, "qwen_mobile_use", frame, type=T.CLICK, point=(364, 518))
    assert extract_sub_goal(INFIGUI_OUTPUT) == "Open the Wi-Fi settings"
    assert extract_reasoning(INFIGUI_OUTPUT).startswith("The settings page")  # type: ignore[union-attr]
    assert extract_sub_goal("<think>no sub-goal here</think>") is None
    assert extract_sub_goal("<step>  </step>") is None
    args = '{"name": "mobile_use", "arguments": {"action": "swipe", "coordinate": [500, 1500], "coordinate2": [500, 500]}}'
    check(args, "qwen_mobile_use", frame, type=T.SWIPE, point=(500, 1500), end_point=(500, 500))  # no tags
    check('<tool_call>{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Home"}}</tool_call>',
          "qwen_mobile_use", frame, type=T.HOME)
    check('<tool_call>{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Menu"}}</tool_call>',
          "qwen_mobile_use", frame, type=T.KEY, keys=("menu",))
    check('<tool_call>{"name": "mobile_use", "arguments": {"action": "open", "text": "Chrome"}}</tool_call>',
          "qwen_mobile_use", frame, type=T.OPEN_APP, text="Chrome")
    check('<tool_call>{"name": "mobile_use", "arguments": {"action": "long_press", "coordinate": [1, 2], "time": 2}}'
          "</tool_call>", "qwen_mobile_use", frame, type=T.LONG_PRESS, point=(1, 2), amount=2)
    check('<tool_call>{"name": "mobile_use", "arguments": {"action": "terminate", "status": "fail"}}</tool_call>',
          "qwen_mobile_use", frame, type=T.TERMINATE, status="failure")
    # arguments sent as a JSON string
    check('<tool_call>{"name": "mobile_use", "arguments": "{\\"action\\": \\"wait\\", \\"time\\": 1}"}</tool_call>',
          "qwen_mobile_use", frame, type=T.WAIT, amount=1)
    refuse('<tool_call>{"name": "mobile_use", "arguments": {"action": "scroll", "coordinate": [1, 2]}}</tool_call>',
           "qwen_mobile_use", "not in the mobile_use action space")
    refuse('<tool_call>{"name": "mobile_use", "arguments": {"action": "system_button", "button": "Power"}}</tool_call>',
           "qwen_mobile_use", "Back|Home|Menu|Enter")


# -- UI-S1 (std_space action JSON) --------------------------------------------------------------


def test_uis1_examples() -> None:
    frame = Frame(kind="resized")
    check('<think>\nTap "About phone".\n</think>\n<action>\n{"action": "click", "coordinate": [540, 850]}\n</action>',
          "uis1", frame, type=T.CLICK, point=(540, 850))
    check('<action>{"action": "swipe", "coordinate": [540, 1200], "coordinate2": [540, 400]}</action>', "uis1", frame,
          type=T.SWIPE, point=(540, 1200), end_point=(540, 400))
    # UI-S1's parser repairs a doubled closing brace; so does guirl's
    check('<action>\n{"action": "system_button", "button": "Back"}}\n</action>', "uis1", frame, type=T.BACK)
    check('<action>{"action": "type", "text": "hello"}</action>', "uis1", frame, type=T.TYPE, text="hello")
    check('<action>{"action": "answer", "text": "3 emails"}</action>', "uis1", frame, type=T.ANSWER, text="3 emails")
    check('<action>{"action": "key", "text": "volume_up"}</action>', "uis1", frame, type=T.KEY, keys=("volumeup",))
    refuse('<think>only thinking</think>', "uis1", "no <action>")


# -- OSWorld pyautogui --------------------------------------------------------------------------


def test_pyautogui_examples() -> None:
    check("```python\nimport pyautogui\npyautogui.click(x=100, y=200)\n```", "pyautogui", type=T.CLICK, point=(100, 200))
    check("pyautogui.click(100, 200, button='right')", "pyautogui", type=T.RIGHT_CLICK, point=(100, 200))
    check("pyautogui.click((5, 6), clicks=2)", "pyautogui", type=T.DOUBLE_CLICK, point=(5, 6))
    check("pyautogui.hotkey('ctrl', 'c')", "pyautogui", type=T.KEY, keys=("ctrl", "c"))
    check("pyautogui.press('Return')", "pyautogui", type=T.KEY, keys=("enter",))
    check("pyautogui.typewrite('hello\\n', interval=0.05)", "pyautogui", type=T.TYPE, text="hello\n")
    check("pyautogui.scroll(-3)", "pyautogui", type=T.SCROLL, direction="down", amount=3)
    check("pyautogui.keyDown('shift')", "pyautogui", type=T.KEY_DOWN, keys=("shift",))
    check("DONE", "pyautogui", type=T.TERMINATE, status="success")
    check("```\nFAIL\n```", "pyautogui", type=T.TERMINATE, status="failure")
    check("import time\ntime.sleep(0.5)", "pyautogui", type=T.WAIT, amount=0.5)
    program = "pyautogui.click(10, 20)\npyautogui.typewrite('abc')\npyautogui.press('enter')"
    actions = parse_pyautogui_program(program, SCREEN)
    assert isinstance(actions, list)
    assert [a.type for a in actions] == [T.CLICK, T.TYPE, T.KEY]
    check(program, "pyautogui", type=T.CLICK, point=(10, 20))  # the first action
    refuse("__import__('os').system('echo pwned')", "pyautogui", "only pyautogui.<function>(...) calls")
    refuse("pyautogui.click(x=__import__('os').system('x'), y=1)", "pyautogui", "not a literal")
    refuse("os.system('ls')", "pyautogui", "not a pyautogui call")
    refuse("pyautogui.typewrite(['a', 'enter'])", "pyautogui", "key sequence")
    refuse("pyautogui.click(", "pyautogui", "not valid Python")


# -- OSWorld computer_13 ------------------------------------------------------------------------


def test_computer_13_examples() -> None:
    check('```json\n{"action_type": "CLICK", "parameters": {"button": "left", "x": 100, "y": 200, "num_clicks": 1}}\n```',
          "computer_13", type=T.CLICK, point=(100, 200))
    check('{"action_type": "CLICK", "parameters": {"button": "right", "x": 1, "y": 2}}', "computer_13",
          type=T.RIGHT_CLICK, point=(1, 2))
    check('{"action_type": "CLICK", "parameters": {"num_clicks": 3}}', "computer_13", type=T.TRIPLE_CLICK)
    check('{"action_type": "MOVE_TO", "parameters": {"x": 10, "y": 20}}', "computer_13", type=T.MOVE, point=(10, 20))
    check('{"action_type": "SCROLL", "parameters": {"dx": 0, "dy": 3}}', "computer_13", type=T.SCROLL,
          direction="up", amount=3)
    check('{"action_type": "TYPING", "parameters": {"text": "hi"}}', "computer_13", type=T.TYPE, text="hi")
    check('{"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "shift", "t"]}}', "computer_13",
          type=T.KEY, keys=("ctrl", "shift", "t"))
    check('{"action_type": "PRESS", "parameters": {"key": "esc"}}', "computer_13", type=T.KEY, keys=("esc",))
    check('{"action_type": "DONE"}', "computer_13", type=T.TERMINATE, status="success")
    check('{"action_type": "FAIL"}', "computer_13", type=T.TERMINATE, status="failure")
    check('{"action_type": "WAIT"}', "computer_13", type=T.WAIT)
    check('[{"action_type": "MOVE_TO", "parameters": {"x": 1, "y": 2}}, '
          '{"action_type": "DRAG_TO", "parameters": {"x": 30, "y": 40}}]', "computer_13",
          type=T.DRAG, point=(1, 2), end_point=(30, 40))
    check('{"action_type": "DRAG_TO", "x": 3, "y": 4}', "computer_13", type=T.DRAG, end_point=(3, 4))  # flat params
    refuse('{"action_type": "SCROLL", "parameters": {"dx": 2, "dy": 3}}', "computer_13", "exactly one non-zero")
    refuse('{"action_type": "CALL_USER", "parameters": {}}', "computer_13", "not a computer_13 action")
    refuse('{"action_type": "MOUSE_DOWN", "parameters": {"button": "right"}}', "computer_13", "left button")


def test_pyautogui_and_computer_13_leniencies() -> None:
    check("pyautogui.hotkey('ctrl', 'v', interval=0.1)", "pyautogui", type=T.KEY, keys=("ctrl", "v"))
    check('{"action_type": "CLICK", "parameters": {"button": "MIDDLE", "x": 1, "y": 2}}', "computer_13",
          type=T.MIDDLE_CLICK, point=(1, 2))


# -- fidelity to the references' own parsers / executors (hand-written, after their documented formats) --


def test_pyautogui_osworld_special_tokens_and_fences() -> None:
    # OSWorld's prompt: "return ```WAIT```" / ```FAIL``` / ```DONE```, fenced on one line
    check("```WAIT```", "pyautogui", type=T.WAIT)
    check("The file is saved.\n```DONE```", "pyautogui", type=T.TERMINATE, status="success")
    # every fenced block is code (OSWorld runs them all); a bare ``` fence has no language tag
    program = "```python\npyautogui.click(1, 2)\n```\nthen\n```\npyautogui.write('a')\n```"
    actions = parse_pyautogui_program(program, SCREEN)
    assert isinstance(actions, list) and [a.type for a in actions] == [T.CLICK, T.TYPE]
    # pyautogui's default button is "primary", the left one
    check("pyautogui.dragTo(5, 6, duration=0.5, button='primary')", "pyautogui", type=T.DRAG, end_point=(5, 6))
    check("pyautogui.mouseDown(button='primary')", "pyautogui", type=T.MOUSE_DOWN)


def test_computer_13_special_tokens_and_key_spelling() -> None:
    check("DONE", "computer_13", type=T.TERMINATE, status="success")
    check("```FAIL```", "computer_13", type=T.TERMINATE, status="failure")
    check("WAIT", "computer_13", type=T.WAIT)
    # written bare: OSWorld's DesktopEnv.step ends an episode only for the string "DONE" / "FAIL"
    assert format_action(Action(type=T.TERMINATE, status="failure"), "computer_13") == "FAIL"
    assert format_action(Action(type=T.TERMINATE, status="success"), "computer_13") == "DONE"
    assert format_action(Action(type=T.WAIT), "computer_13") == "WAIT"
    # OSWorld's KEYBOARD_KEYS has ' ' and 'command', not 'space' / 'cmd'; its controller refuses others
    written = format_action(Action(type=T.KEY, keys=("cmd", "space")), "computer_13")
    assert json.loads(written) == {"action_type": "HOTKEY", "parameters": {"keys": ["command", " "]}}
    check('{"action_type": "PRESS", "parameters": {"key": " "}}', "computer_13", type=T.KEY, keys=("space",))


def test_qwen_computer_use_writes_what_its_executors_expect() -> None:
    rel = Frame.relative(1000)

    def args(action: Action) -> dict:
        written = format_action(action, "qwen_computer_use")
        return json.loads(written.split("<tool_call>\n")[1].split("\n</tool_call>")[0])["arguments"]

    # the schema requires wait's time; 2 s is OSWorld's step pause
    assert args(Action(type=T.WAIT, frame=rel)) == {"action": "wait", "time": 2}
    # key names go to pyautogui.hotkey unchanged in ComputerSD: pyautogui spells the meta key "command"
    assert args(Action(type=T.KEY, keys=("cmd", "c"), frame=rel)) == {"action": "key", "keys": ["command", "c"]}
    assert args(Action(type=T.TERMINATE, frame=rel)) == {"action": "terminate", "status": "success"}
    # ComputerSD keeps the first line that starts with "Action:" (any case)
    out = ('action: Open the File menu.\nAction: a second line\n<tool_call>\n{"name": "computer_use", '
           '"arguments": {"action": "left_click", "coordinate": [10, 20]}}\n</tool_call>')
    check(out, "qwen_computer_use", rel, type=T.CLICK, point=(10, 20), description="Open the File menu.")
    # OSWorld's Qwen3-VL executor maps x * W / 999: with Frame.relative(999), 999 -> the right edge 1920
    action = check('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": '
                   "[999, 0]}}</tool_call>", "qwen_computer_use", Frame.relative(999), type=T.CLICK, point=(999, 0))
    assert action.to_frame(SCREEN).point == pytest.approx((1920, 0))


def test_mobile_use_writes_required_arguments_and_adb_keys() -> None:
    frame = Frame(kind="resized")
    # the schema requires time (wait, long_press) and status (terminate)
    assert _action_json(Action(type=T.WAIT, frame=frame)) == {"action": "wait", "time": 2}
    assert _action_json(Action(type=T.LONG_PRESS, point=(5, 6), frame=frame)) == {
        "action": "long_press", "coordinate": [5, 6], "time": 2}
    assert _action_json(Action(type=T.TERMINATE, frame=frame)) == {"action": "terminate", "status": "success"}
    # adb keyevent names: volume_up, and Android's DEL is backspace (FORWARD_DEL is delete)
    assert _action_json(Action(type=T.KEY, keys=("volumeup",), frame=frame)) == {"action": "key", "text": "volume_up"}
    assert _action_json(Action(type=T.KEY, keys=("backspace",), frame=frame)) == {"action": "key", "text": "del"}
    check('<action>{"action": "key", "text": "KEYCODE_DEL"}</action>', "uis1", frame, type=T.KEY, keys=("backspace",))
    check('<action>{"action": "key", "text": "forward_del"}</action>', "uis1", frame, type=T.KEY, keys=("delete",))


def _action_json(action: Action) -> dict:
    written = format_action(action, "uis1")
    return json.loads(written.split("<action>\n")[1].split("\n</action>")[0])


def test_infigui_reads_only_after_the_reasoning() -> None:
    # InfiGUI-R1's scorer splits at the last </think>: a call quoted in the reasoning is not the answer
    quoted = ('<think>Last time I sent {"name": "mobile_use", "arguments": {"action": "wait", "time": 1}}. '
              '<step>Open Wi-Fi</step></think>\n<tool_call>\n{"name": "mobile_use", "arguments": '
              '{"action": "click", "coordinate": [364, 518]}}\n</tool_call>')
    check(quoted, "qwen_mobile_use", Frame.resized(1080, 2400), type=T.CLICK, point=(364, 518))
    refuse('<think><tool_call>{"name": "mobile_use", "arguments": {"action": "wait"}}</tool_call></think>',
           "qwen_mobile_use", "no {")


def test_reference_resize_bounds() -> None:
    # InfiGUI-R1 eval, max_pixels = 6400*28*28 = 5,017,600 > 1080*2400 = 2,592,000: no shrink, sides are
    # rounded to multiples of 28: 1080/28 = 38.6 -> 39*28 = 1092, 2400/28 = 85.7 -> 86*28 = 2408
    frame = Frame.resized(1080, 2400, max_pixels=INFIGUI_MAX_PIXELS)
    assert (frame.width, frame.height) == (1092, 2408)
    # UI-S1: up to 12800 tokens of 28x28 (10,035,200 px): same screen, same rounding
    frame = Frame.resized(1080, 2400, min_pixels=UIS1_MIN_PIXELS, max_pixels=UIS1_MAX_PIXELS)
    assert (frame.width, frame.height) == (1092, 2408)

"""Execute guirl Actions in a MiniWoB page, in screen pixels.

Every pointer action goes through WebDriver's W3C pointer input at a screen
point (``miniwob.selenium_actions`` does the same for its own action space);
nothing here clicks DOM elements by reference, so an agent is judged exactly
on what it would do with a mouse and keyboard.

Returns ``None`` when the action was executed, or a message saying why it had
no effect (unsupported kind, missing point, point off screen); the
environment reports it in ``info["action_error"]`` and never crashes. The
one exception: coordinates without a frame (``Action.frame`` never given)
raise ``ValueError``, since pixels and 0-1 fractions cannot be told apart.

A press follows the move to its point at once: the hit test of the press
applies the ``:hover`` styles the move brought, and the images those styles
swap in (social-media's icons) are in the browser's memory cache, loaded
with the page (:data:`PRELOAD_HOVER_IMAGES_JS`), so the target is laid out
as the user sees it and press and release land on it. A drag pauses
``HOVER_PAUSE_S`` before its press and its release (the drop target's hover
state).
"""

from __future__ import annotations

import time

from miniwob.constants import DEFAULT_SCROLL_AMOUNT, WEBDRIVER_SPECIAL_KEYS
from miniwob.selenium_actions import execute_press_key, execute_scroll_coords, execute_type_text
from selenium.webdriver import Chrome
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType

#: guirl key names (lower case) -> MiniWoB / WebDriver key names.
KEY_NAMES = {
    "enter": "<Enter>",
    "return": "<Enter>",
    "tab": "<Tab>",
    "backspace": "<Backspace>",
    "delete": "<Delete>",
    "del": "<Delete>",
    "escape": "<Escape>",
    "esc": "<Escape>",
    "space": "<Space>",
    "up": "<ArrowUp>",
    "down": "<ArrowDown>",
    "left": "<ArrowLeft>",
    "right": "<ArrowRight>",
    "arrowup": "<ArrowUp>",
    "arrowdown": "<ArrowDown>",
    "arrowleft": "<ArrowLeft>",
    "arrowright": "<ArrowRight>",
    "pageup": "<PageUp>",
    "pagedown": "<PageDown>",
    "home": "<Home>",
    "end": "<End>",
    "insert": "<Insert>",
    "ctrl": "<Control>",
    "control": "<Control>",
    "shift": "<Shift>",
    "alt": "<Alt>",
    "meta": "<Meta>",
    "cmd": "<Meta>",
    "command": "<Meta>",
    "super": "<Meta>",
    "win": "<Meta>",
    **{f"f{i}": f"<F{i}>" for i in range(1, 13)},
}

#: Wait actions sleep at most this long (seconds).
MAX_WAIT_S = 5.0

#: A drag's pause between moving the pointer and pressing / releasing
#: (seconds), so that what the hover moves is in place (drag-and-drop handlers
#: that track the pointer).
HOVER_PAUSE_S = 0.05

#: Async script run once per page load: loads every image that a ``:hover``,
#: ``:active`` or ``:focus`` style rule of the page's readable style sheets
#: swaps in (``content: url(...)``, backgrounds), so that the first hover of
#: such an element does not lay it out anew while its image loads (a press
#: at once after the move would then miss it). Answers how many it loaded;
#: gives up after 2 s.
PRELOAD_HOVER_IMAGES_JS = r"""
var done = arguments[arguments.length - 1], urls = new Set();
function scan(rules, base) {
  for (var i = 0; i < rules.length; i++) {
    var rule = rules[i];
    if (rule.cssRules) scan(rule.cssRules, base);
    if (!rule.style || !/:(hover|active|focus)/.test(rule.selectorText || '')) continue;
    var re = /url\(\s*(['"]?)([^'")]+)\1\s*\)/g, m;
    while ((m = re.exec(rule.style.cssText))) { try { urls.add(new URL(m[2], base).href); } catch (e) {} }
  }
}
for (var s = 0; s < document.styleSheets.length; s++) {
  var sheet = document.styleSheets[s];
  try { scan(sheet.cssRules, sheet.href || document.baseURI); } catch (e) {}  // unreadable (file://) sheets
}
var pending = urls.size, keep = window.__guirlHoverImages = [], timer;
function finish() { clearTimeout(timer); done(urls.size - pending); }
if (!pending) { done(0); } else {
  timer = setTimeout(finish, 2000);
  urls.forEach(function (url) {
    var img = new Image();
    keep.push(img);
    img.onload = img.onerror = function () { if (--pending === 0) finish(); };
    img.src = url;
  });
}
"""


def webdriver_key(name: str) -> str | None:
    """The WebDriver character for a guirl key name, or None if unknown."""
    if len(name) == 1:
        return name
    special = KEY_NAMES.get(name.lower().replace("_", ""))
    return WEBDRIVER_SPECIAL_KEYS[special] if special else None


def execute_action(action: Action, driver: Chrome, screen: Frame) -> str | None:
    """Perform ``action`` (any frame) on the page whose screenshot frame is ``screen``.

    Raises:
        ValueError: the action has a point, end point or box but no frame
            (``Action.frame`` left at its default): its coordinates could be
            pixels or fractions, so they are refused rather than guessed.
    """
    check_frame_given(action, screen)
    if action.frame.kind == "screen" and action.frame.width is None:
        action = action.model_copy(update={"frame": screen})  # screen pixels of an unknown size: this screen
    try:
        action = action.to_frame(screen)
    except ValueError as err:
        return f"cannot convert the action's coordinates: {err}"
    kind = action.type
    point = action.target_point()
    if kind in _POINTER_KINDS or (kind in (ActionType.TYPE, ActionType.SELECT, ActionType.SCROLL) and point):
        if point is None:
            return f"{kind.value} needs a point"
        if not (0 <= point[0] < screen.width and 0 <= point[1] < screen.height):  # type: ignore[operator]
            return f"point {tuple(round(v, 1) for v in point)} is outside the {screen.width}x{screen.height} screen"
    if kind in _POINTER_KINDS:
        _pointer(kind, point, action, driver)  # type: ignore[arg-type]
    elif kind is ActionType.TYPE:
        if point is not None:
            _pointer(ActionType.CLICK, point, action, driver)
        execute_type_text(_typed_keys(action.text or ""), driver)
    elif kind in (ActionType.KEY, ActionType.ENTER):
        return _press_keys(action.keys or ("enter",), driver)
    elif kind is ActionType.SCROLL:
        return _scroll(action, point, screen, driver)
    elif kind is ActionType.SELECT:
        return _select(action, point, driver)
    elif kind is ActionType.WAIT:
        time.sleep(min(action.amount or 0.0, MAX_WAIT_S))
    else:
        return f"{kind.value} is not supported in MiniWoB"
    return None


def check_frame_given(action: Action, screen: Frame) -> None:
    """Refuse coordinates whose frame was never said (see :func:`execute_action`)."""
    if "frame" in action.model_fields_set:
        return
    given = [name for name in ("point", "end_point", "box") if getattr(action, name) is not None]
    if given:
        raise ValueError(
            f"{action.type.value} action has a {'/'.join(given)} but no frame, so its coordinates are ambiguous "
            f"(pixels or 0-1 fractions?); give the action a frame, e.g. frame=Frame.screen({screen.width}, "
            f"{screen.height}) for screenshot pixels (the observation's .frame), Frame.relative(1000) for "
            "Qwen3-VL's 0..1000 or Frame.unit() for 0-1 fractions"
        )


_POINTER_KINDS = frozenset(
    {
        ActionType.CLICK,
        ActionType.DOUBLE_CLICK,
        ActionType.TRIPLE_CLICK,
        ActionType.RIGHT_CLICK,
        ActionType.MIDDLE_CLICK,
        ActionType.LONG_PRESS,
        ActionType.MOVE,
        ActionType.MOUSE_DOWN,
        ActionType.MOUSE_UP,
        ActionType.DRAG,
        ActionType.SWIPE,
    }
)


def _pointer(kind: ActionType, point: tuple[float, float], action: Action, driver: Chrome) -> None:
    chain = ActionChains(driver, duration=0)
    pointer = chain.w3c_actions.pointer_action
    pointer.move_to_location(int(point[0]), int(point[1]))
    if kind in (ActionType.DRAG, ActionType.SWIPE):
        pointer.pause(HOVER_PAUSE_S)
    if kind is ActionType.CLICK:
        pointer.click()
    elif kind is ActionType.DOUBLE_CLICK:
        pointer.double_click()
    elif kind is ActionType.TRIPLE_CLICK:
        for _ in range(3):
            pointer.click()
    elif kind is ActionType.RIGHT_CLICK:
        pointer.context_click()
    elif kind is ActionType.MIDDLE_CLICK:
        pointer.click(button=1)
    elif kind is ActionType.LONG_PRESS:
        pointer.click_and_hold()
        pointer.pause(1.0)
        pointer.release()
    elif kind is ActionType.MOUSE_DOWN:
        pointer.click_and_hold()
    elif kind is ActionType.MOUSE_UP:
        pointer.release()
    elif kind in (ActionType.DRAG, ActionType.SWIPE) and action.end_point is not None:
        pointer.click_and_hold()
        pointer.move_to_location(int(action.end_point[0]), int(action.end_point[1]))
        pointer.pause(HOVER_PAUSE_S)  # the drop target's hover state, as above
        pointer.release()
    chain.w3c_actions.perform()


def _typed_keys(text: str) -> str:
    """Text as keystrokes; a newline presses Enter."""
    return text.replace("\r\n", "\n").replace("\n", WEBDRIVER_SPECIAL_KEYS["<Enter>"])


def _press_keys(keys: tuple[str, ...], driver: Chrome) -> str | None:
    """Press ``keys`` together (modifiers first), then release in reverse."""
    codes = [webdriver_key(k) for k in keys]
    unknown = [k for k, c in zip(keys, codes) if c is None]
    if unknown:
        return f"unknown key name(s) {unknown}; known: single characters and {sorted(KEY_NAMES)}"
    if len(codes) == 1:
        execute_press_key(codes[0], driver)  # type: ignore[arg-type]
        return None
    chain = ActionChains(driver, duration=0)
    for code in codes:
        chain.w3c_actions.key_action.key_down(code)
    for code in reversed(codes):
        chain.w3c_actions.key_action.key_up(code)
    chain.perform()
    return None


def _scroll(action: Action, point: tuple[float, float] | None, screen: Frame, driver: Chrome) -> str | None:
    """Wheel scroll; guirl's direction is where the content view moves (down = wheel down)."""
    if action.direction is None:
        return "scroll needs a direction"
    x, y = point if point is not None else (screen.width / 2, screen.height / 2)  # type: ignore[operator]
    pixels = int(DEFAULT_SCROLL_AMOUNT * (action.amount or 1))
    if action.direction in ("up", "down"):
        execute_scroll_coords(x, y, pixels if action.direction == "down" else -pixels, 150, driver)
    else:
        chain = ActionChains(driver)
        delta = pixels if action.direction == "right" else -pixels
        chain.w3c_actions.wheel_action.scroll(x=int(x), y=int(y), delta_x=delta, delta_y=0, duration=150)
        chain.w3c_actions.perform()
    return None


def _select(action: Action, point: tuple[float, float] | None, driver: Chrome) -> str | None:
    """Choose option ``text`` in the <select> under ``point``."""
    if point is None or not action.text:
        return "select needs a point and the option text"
    element = driver.execute_script("return document.elementFromPoint(arguments[0], arguments[1]);", *point)
    if not isinstance(element, WebElement) or element.tag_name.lower() != "select":
        return f"no drop-down (<select>) at {point}"
    options = [o.text for o in Select(element).options]
    if action.text not in options:
        return f"option {action.text!r} is not in the drop-down; options: {options}"
    Select(element).select_by_visible_text(action.text)
    return None

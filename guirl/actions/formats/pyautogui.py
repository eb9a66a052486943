"""pyautogui code, as OSWorld's ``pyautogui`` action space uses it.

The model writes Python such as ``pyautogui.click(x=100, y=200)``. guirl
**never executes it**: the code is parsed with :func:`ast.parse`, every call
must be ``pyautogui.<function>(...)`` (or ``time.sleep``), and arguments are
read with :func:`ast.literal_eval` (literals only: no names, no calls, no
arithmetic beyond signed numbers). Anything else is a ParseFailure.

Functions read: ``click`` (``x``, ``y``, ``clicks``, ``button``; ``x`` may be
an ``(x, y)`` tuple), ``doubleClick``, ``tripleClick``, ``rightClick``,
``middleClick``, ``moveTo``, ``dragTo`` (left button), ``mouseDown`` /
``mouseUp`` (left button), ``scroll`` / ``vscroll`` / ``hscroll``,
``typewrite`` / ``write`` (a string), ``press`` (one key), ``hotkey``,
``keyDown`` / ``keyUp``, and ``time.sleep``; ``import`` lines are skipped.
OSWorld's special outputs ``WAIT``, ``DONE`` and ``FAIL`` (alone, fenced as
```` ```WAIT``` ````, or as a statement) become WAIT and TERMINATE success /
failure. As in OSWorld's ``parse_code_from_string`` (``mm_agents/agent.py``),
the code is every fenced block (```` ```python ```` or bare ```` ``` ````),
joined in order, or the whole text when there is none. ``button="primary"``
(pyautogui's default) is the left button.

A program may hold several statements: :func:`parse_pyautogui_program`
returns them all; the registered parser returns the *first* action, except
that ``moveTo(a)`` directly followed by ``dragTo(b)`` reads as one DRAG from
``a`` to ``b`` (which is how a DRAG with a start point is written).

Conventions: ``scroll(n)``: positive ``n`` turns the wheel up, content above
comes into view: guirl ``direction="up"``, ``amount=abs(n)``; ``hscroll``:
positive = right. A scroll without an amount is written with
:data:`DEFAULT_SCROLL_CLICKS`. Key names are written in pyautogui's spelling
(guirl's ``cmd`` -> ``command``).

Frame: screen pixels (``Frame.screen()``).
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any

from guirl.actions.formats._common import (
    as_number,
    as_point,
    build,
    fail,
    fmt_number,
    missing,
    unsupported,
)
from guirl.actions.formats.registry import ActionFormat, register_format
from guirl.actions.frames import Frame
from guirl.actions.names import normalise_key
from guirl.actions.types import Action, ActionType, ParseFailure

NAME = "pyautogui"
#: Scroll clicks written for an action that carries no amount.
DEFAULT_SCROLL_CLICKS = 5
#: Longest code accepted (model outputs are far shorter).
MAX_CODE_CHARS = 20_000
#: guirl key name -> pyautogui key name, where they differ.
PYAUTOGUI_KEY_NAMES = {"cmd": "command"}

_T = ActionType
#: function -> positional parameter names (pyautogui's signatures, the parts guirl reads).
_SIGNATURES: dict[str, tuple[str, ...]] = {
    "click": ("x", "y", "clicks", "interval", "button", "duration", "tween"),
    "doubleClick": ("x", "y", "interval", "button", "duration", "tween"),
    "tripleClick": ("x", "y", "interval", "button", "duration", "tween"),
    "rightClick": ("x", "y", "duration", "tween"),
    "middleClick": ("x", "y", "duration", "tween"),
    "moveTo": ("x", "y", "duration", "tween"),
    "dragTo": ("x", "y", "duration", "tween", "button"),
    "mouseDown": ("x", "y", "button", "duration", "tween"),
    "mouseUp": ("x", "y", "button", "duration", "tween"),
    "scroll": ("clicks", "x", "y"),
    "vscroll": ("clicks", "x", "y"),
    "hscroll": ("clicks", "x", "y"),
    "typewrite": ("message", "interval"),
    "write": ("message", "interval"),
    "press": ("keys", "presses", "interval"),
    "keyDown": ("key",),
    "keyUp": ("key",),
    "sleep": ("secs",),
}
_CLICK_TYPES = {
    ("left", 1): _T.CLICK,
    ("left", 2): _T.DOUBLE_CLICK,
    ("left", 3): _T.TRIPLE_CLICK,
    ("right", 1): _T.RIGHT_CLICK,
    ("middle", 1): _T.MIDDLE_CLICK,
}
_TOKENS = {"WAIT": {"type": _T.WAIT}, "DONE": {"type": _T.TERMINATE, "status": "success"}}
_TOKENS["FAIL"] = {"type": _T.TERMINATE, "status": "failure"}
_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError)


class _Refuse(Exception):
    """Internal: this statement cannot be read (message says why)."""


#: One fenced block (closing fence optional at the end of the text).
_FENCE = re.compile(r"```(.*?)(?:```|\Z)", re.DOTALL)


def extract_code(text: str) -> str:
    """The code of ``text``: every fenced block joined in order (OSWorld runs them all), else the text.

    A first line that is one bare word other than WAIT / DONE / FAIL is a
    language tag (```` ```python ````) and is dropped.
    """
    blocks = []
    for match in _FENCE.finditer(text[: MAX_CODE_CHARS * 2]):
        body = re.sub(r"\A(?:python3?|py)(?=\s)", "", match.group(1), flags=re.IGNORECASE)
        first, _, rest = body.partition("\n")
        if re.fullmatch(r"[ \t]*[A-Za-z][\w+-]*[ \t]*", first) and first.strip().upper() not in _TOKENS:
            body = rest
        if body.strip():
            blocks.append(body.strip())
    return "\n".join(blocks) if blocks else text.strip()


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except _LITERAL_ERRORS:
        raise _Refuse(f"argument {ast.dump(node)[:60]} is not a literal") from None


def _bind(func: str, call: ast.Call) -> dict[str, Any]:
    params = _SIGNATURES[func]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise _Refuse(f"{func}: *args / **kwargs are not read")
    if len(call.args) > len(params):
        raise _Refuse(f"{func} takes at most {len(params)} positional arguments")
    bound = {name: _literal(node) for name, node in zip(params, call.args)}
    for keyword in call.keywords:
        if keyword.arg in bound:
            raise _Refuse(f"{func}: argument {keyword.arg} given twice")
        bound[keyword.arg] = _literal(keyword.value)
    return bound


def _point(args: dict[str, Any], required: bool, func: str) -> tuple[float, float] | None:
    x, y = args.get("x"), args.get("y")
    if isinstance(x, (tuple, list)) and y is None:
        point = as_point(x)
    elif x is None and y is None:
        point = None
    else:
        point = as_point((x, y))
    if point is None and (required or x is not None or y is not None):
        raise _Refuse(f"{func} needs numeric x and y")
    return point


def _button(args: dict[str, Any], func: str, allowed: tuple[str, ...] = ("left", "primary")) -> str:
    """The button argument, lower-cased (pyautogui's default ``primary`` is the left button)."""
    button = args.get("button", "left")
    if not isinstance(button, str) or button.lower() not in allowed:
        raise _Refuse(f"{func}: button {str(button)[:20]!r} is not one of {list(allowed)}")
    return {"primary": "left", "secondary": "right"}.get(button.lower(), button.lower())


def _key_names(value: Any, func: str) -> tuple[str, ...]:
    if not isinstance(value, str) or not value:
        raise _Refuse(f"{func} needs key names as strings")
    return (normalise_key(value),)


def _call_fields(func: str, call: ast.Call) -> dict[str, Any]:
    if func == "hotkey":
        timing_only = all(k.arg in ("interval", "logScreenshot", "_pause") for k in call.keywords)
        if not timing_only or any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
            raise _Refuse("hotkey takes key names as positional strings")
        values = [_literal(a) for a in call.args]
        if len(values) == 1 and isinstance(values[0], (list, tuple)):
            values = list(values[0])
        return {"type": _T.KEY, "keys": tuple(k for v in values for k in _key_names(v, func))}
    if func not in _SIGNATURES:
        raise _Refuse(f"pyautogui.{func} is not a supported action")
    args = _bind(func, call)
    if func in ("click", "doubleClick", "tripleClick", "rightClick", "middleClick"):
        clicks = {"doubleClick": 2, "tripleClick": 3}.get(func, args.get("clicks", 1))
        button = {"rightClick": "right", "middleClick": "middle"}.get(func) or _button(
            args, func, ("left", "right", "middle", "primary", "secondary")
        )
        kind = _CLICK_TYPES.get((button, clicks)) if isinstance(clicks, int) else None
        if kind is None:
            raise _Refuse(f"{func} with button={button!r}, clicks={clicks!r} is not one action")
        return {"type": kind, "point": _point(args, False, func)}
    if func in ("moveTo", "dragTo"):
        point = _point(args, True, func)
        if func == "moveTo":
            return {"type": _T.MOVE, "point": point}
        _button(args, func)
        return {"type": _T.DRAG, "end_point": point}
    if func in ("mouseDown", "mouseUp"):
        _button(args, func)
        return {"type": _T.MOUSE_DOWN if func == "mouseDown" else _T.MOUSE_UP, "point": _point(args, False, func)}
    if func in ("scroll", "vscroll", "hscroll"):
        clicks = as_number(args.get("clicks"))
        if clicks is None or clicks == 0:
            raise _Refuse(f"{func} needs a non-zero number of clicks")
        up = clicks > 0
        direction = ("right" if up else "left") if func == "hscroll" else ("up" if up else "down")
        return {"type": _T.SCROLL, "direction": direction, "amount": abs(clicks), "point": _point(args, False, func)}
    if func in ("typewrite", "write"):
        if not isinstance(args.get("message"), str):
            raise _Refuse(f"{func} needs a string (a list of keys is a key sequence, not one action)")
        return {"type": _T.TYPE, "text": args["message"]}
    if func == "press":
        keys = args.get("keys")
        if isinstance(keys, (list, tuple)) and len(keys) == 1:
            keys = keys[0]
        if args.get("presses", 1) != 1:
            raise _Refuse("press with presses != 1 is a sequence, not one action")
        return {"type": _T.KEY, "keys": _key_names(keys, func)}
    if func in ("keyDown", "keyUp"):
        return {"type": _T.KEY_DOWN if func == "keyDown" else _T.KEY_UP, "keys": _key_names(args.get("key"), func)}
    raise _Refuse(f"pyautogui.{func} is not a supported action")  # sleep is only read as time.sleep


def _statement_fields(stmt: ast.stmt) -> dict[str, Any] | None:
    """Fields of one statement's action; None for statements that do nothing (imports)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return None
    if not isinstance(stmt, ast.Expr):
        raise _Refuse(f"line {stmt.lineno}: only pyautogui calls are read, not {type(stmt).__name__}")
    node = stmt.value
    if isinstance(node, ast.Name) and node.id.upper() in _TOKENS:
        return dict(_TOKENS[node.id.upper()])
    func = node.func if isinstance(node, ast.Call) else None
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        raise _Refuse(f"line {stmt.lineno}: only pyautogui.<function>(...) calls are read")
    module, name = func.value.id, func.attr
    if module == "time" and name == "sleep":
        secs = as_number(_bind("sleep", node).get("secs"))
        if secs is None or secs < 0:
            raise _Refuse("time.sleep needs a non-negative number of seconds")
        return {"type": _T.WAIT, "amount": secs}
    if module != "pyautogui":
        raise _Refuse(f"line {stmt.lineno}: {module}.{name} is not a pyautogui call")
    return _call_fields(name, node)


def parse_pyautogui_program(text: str, frame: Frame | None = None) -> list[Action] | ParseFailure:
    """Every action of a pyautogui program, in order (never executed; see module docstring)."""
    if not isinstance(text, str):
        return ParseFailure(reason=f"{NAME}: expected model output as str, got {type(text).__name__}")
    frame = frame if frame is not None else Frame.screen()
    code = extract_code(text)
    if code.upper() in _TOKENS:
        action = build(NAME, text, frame, **_TOKENS[code.upper()])
        return action if isinstance(action, ParseFailure) else [action]
    if len(code) > MAX_CODE_CHARS:
        return fail(NAME, f"code longer than {MAX_CODE_CHARS} characters", text)
    try:
        with warnings.catch_warnings():  # invalid escapes in model code are its problem, not the log's
            warnings.simplefilter("ignore")
            tree = ast.parse(code, mode="exec")
        fields = [f for f in (_statement_fields(s) for s in tree.body) if f is not None]
    except _Refuse as err:
        return fail(NAME, str(err), text)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as err:
        return fail(NAME, f"not valid Python: {type(err).__name__}: {str(err)[:80]}", text)
    actions: list[Action] = []
    for item in fields:
        action = build(NAME, text, frame, **item)
        if isinstance(action, ParseFailure):
            return action
        actions.append(action)
    return actions


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """The first action of a pyautogui program (``moveTo`` + ``dragTo`` -> one DRAG)."""
    actions = parse_pyautogui_program(text, frame)
    if isinstance(actions, ParseFailure):
        return actions
    if not actions:
        return fail(NAME, "no pyautogui action found", text)
    first = actions[0]
    if len(actions) > 1 and first.type is _T.MOVE and actions[1].type is _T.DRAG and actions[1].point is None:
        return actions[1].model_copy(update={"point": first.point})
    return first


def _xy(point: tuple[float, float]) -> str:
    return f"{fmt_number(point[0])}, {fmt_number(point[1])}"


def _key(name: str) -> str:
    return repr(PYAUTOGUI_KEY_NAMES.get(name, name))


_CLICK_FUNCS = {
    _T.CLICK: "click",
    _T.DOUBLE_CLICK: "doubleClick",
    _T.TRIPLE_CLICK: "tripleClick",
    _T.RIGHT_CLICK: "rightClick",
    _T.MIDDLE_CLICK: "middleClick",
    _T.MOUSE_DOWN: "mouseDown",
    _T.MOUSE_UP: "mouseUp",
}
SUPPORTED = frozenset({*_CLICK_FUNCS, _T.MOVE, _T.DRAG, _T.SCROLL, _T.TYPE, _T.KEY, _T.KEY_DOWN, _T.KEY_UP})
SUPPORTED = SUPPORTED | {_T.WAIT, _T.TERMINATE}


def format(action: Action) -> str:
    """Write ``action`` as pyautogui code (or OSWorld's WAIT / DONE / FAIL)."""
    kind, point = action.type, action.target_point()
    if kind in _CLICK_FUNCS:
        return f"pyautogui.{_CLICK_FUNCS[kind]}({_xy(point) if point is not None else ''})"
    if kind is _T.MOVE:
        if point is None:
            raise missing(NAME, action, "a point")
        return f"pyautogui.moveTo({_xy(point)})"
    if kind is _T.DRAG:
        if action.end_point is None:
            raise missing(NAME, action, "end_point")
        drag = f"pyautogui.dragTo({_xy(action.end_point)}, button='left')"
        return drag if point is None else f"pyautogui.moveTo({_xy(point)})\n{drag}"
    if kind is _T.SCROLL:
        if action.direction is None:
            raise missing(NAME, action, "direction")
        size = fmt_number(action.amount) if action.amount is not None else DEFAULT_SCROLL_CLICKS
        sign = "" if action.direction in ("up", "right") else "-"
        func = "scroll" if action.direction in ("up", "down") else "hscroll"
        where = f", x={fmt_number(point[0])}, y={fmt_number(point[1])}" if point is not None else ""
        return f"pyautogui.{func}({sign}{size}{where})"
    if kind is _T.TYPE:
        if action.text is None:
            raise missing(NAME, action, "text")
        return f"pyautogui.typewrite({action.text!r})"
    if kind in (_T.KEY, _T.KEY_DOWN, _T.KEY_UP):
        if not action.keys:
            raise missing(NAME, action, "keys")
        if kind is _T.KEY:
            func = "press" if len(action.keys) == 1 else "hotkey"
            return f"pyautogui.{func}({', '.join(_key(k) for k in action.keys)})"
        func = "keyDown" if kind is _T.KEY_DOWN else "keyUp"
        return "\n".join(f"pyautogui.{func}({_key(k)})" for k in action.keys)
    if kind is _T.WAIT:
        return "WAIT" if action.amount is None else f"time.sleep({fmt_number(action.amount)})"
    if kind is _T.TERMINATE:
        return "FAIL" if action.status == "failure" else "DONE"
    raise unsupported(NAME, action, SUPPORTED)


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame.screen(),
        supported_types=SUPPORTED,
        description="OSWorld pyautogui code (parsed with ast, never executed), plus WAIT / DONE / FAIL",
    )
)

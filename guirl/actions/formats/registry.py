"""The registry of output formats (an extension point: formats are added by name)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.registry import Registry


@dataclass(frozen=True)
class ActionFormat:
    """A model output format.

    ``parse(text, frame)`` returns an Action whose coordinates are stamped
    with ``frame`` (the frame the model writes in), or a ParseFailure; it must
    never raise. ``format(action)`` writes the action as the model would
    (coordinates written as they are, in the action's own frame).
    ``default_frame`` says which frame the format's coordinates are usually
    in when the caller does not know better. ``supported_types`` lists the
    action types the format can express; ``format`` raises ValueError (naming
    the format and the type) for any other.
    """

    name: str
    parse: Callable[[str, Frame], Action | ParseFailure]
    format: Callable[[Action], str]
    default_frame: Frame
    supported_types: frozenset[ActionType]
    description: str = ""


#: Modules under guirl/actions/formats that register the built-in formats.
_BUILTIN_FORMAT_MODULES = [
    "litegui",
    "guilibra",
    "qwen_computer_use",
    "qwen_mobile_use",
    "uis1",
    "pyautogui",
    "computer_13",
]
FORMATS: Registry[ActionFormat] = Registry(
    "action format", [f"guirl.actions.formats.{m}" for m in _BUILTIN_FORMAT_MODULES]
)


def register_format(fmt: ActionFormat) -> ActionFormat:
    return FORMATS.add(fmt.name, fmt)


def get_format(name: str) -> ActionFormat:
    return FORMATS.get(name)


def available_formats() -> list[str]:
    return FORMATS.names()


def parse_action(text: str, fmt: str, frame: Frame | None = None) -> Action | ParseFailure:
    """Parse model output ``text`` written in format ``fmt``. Never raises on bad text."""
    spec = get_format(fmt)
    if not isinstance(text, str):
        return ParseFailure(reason=f"expected model output as str, got {type(text).__name__}")
    try:
        return spec.parse(text, frame if frame is not None else spec.default_frame)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError) as err:
        # Parsers validate explicitly; this is the last line of defence, and it
        # still says what went wrong.
        return ParseFailure(reason=f"{fmt}: {type(err).__name__}: {err}", raw=text[:200])


def format_action(action: Action, fmt: str) -> str:
    return get_format(fmt).format(action)

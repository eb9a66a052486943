"""guirl's one action and coordinate layer."""

from guirl.actions.formats import available_formats, format_action, get_format, parse_action
from guirl.actions.frames import Frame, smart_resize
from guirl.actions.names import (
    ActionName,
    normalise_action_name,
    normalise_key,
    resolve_action_name,
    split_key_combo,
)
from guirl.actions.types import POINTED_TYPES, Action, ActionType, Box, ParseFailure, Point, xywh_to_xyxy

__all__ = [
    "POINTED_TYPES",
    "Action",
    "ActionName",
    "ActionType",
    "Box",
    "Frame",
    "ParseFailure",
    "Point",
    "available_formats",
    "format_action",
    "get_format",
    "normalise_action_name",
    "normalise_key",
    "parse_action",
    "resolve_action_name",
    "smart_resize",
    "split_key_combo",
    "xywh_to_xyxy",
]

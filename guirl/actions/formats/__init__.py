"""Output formats: parsers and formatters, registered by name.

Each format module registers an :class:`ActionFormat` with
:func:`register_format`. Use :func:`parse_action` / :func:`format_action`.
"""

from guirl.actions.formats._common import extract_reasoning
from guirl.actions.formats.registry import (
    ActionFormat,
    available_formats,
    format_action,
    get_format,
    parse_action,
    register_format,
)

__all__ = [
    "ActionFormat",
    "available_formats",
    "extract_reasoning",
    "format_action",
    "get_format",
    "parse_action",
    "register_format",
]

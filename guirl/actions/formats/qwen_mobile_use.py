"""Qwen ``mobile_use`` tool calls, as InfiGUI-R1 writes them (docs/methods.md section 3).

Output::

    <think> ... <step>open the Settings app</step> ... </think>
    <tool_call>
    {"name": "mobile_use", "arguments": {"action": "click", "coordinate": [540, 1200]}}
    </tool_call>

InfiGUI-R1's system prompt (``eval/android_control/android_control.py`` in
Reallm-Labs/InfiGUI-R1) asks for reasoning inside ``<think>`` and the current
step's sub-goal inside ``<step>``; the action is one ``mobile_use`` call in
``<tool_call>``. The thinking part is optional (non-thinking prompts).
:func:`extract_sub_goal` returns the ``<step>`` text (the sub-goal reward
compares it with the ground-truth sub-goal). The argument dict is described
in :mod:`guirl.actions.formats._mobile`.

Like InfiGUI-R1's own scorer, only the text after the last ``</think>`` is
searched (a tool call quoted inside the reasoning is not the answer; a
``</think>`` inside an open ``<tool_call>``, as in typed text, is not the
reasoning's end), and a
missing ``</tool_call>`` or missing ``<tool_call>`` tags are tolerated when a
``{"name": ..., "arguments": ...}`` object is present.

Frame: InfiGUI-R1 (Qwen2.5-VL) writes absolute pixels of the smart-resized
image, so the default frame is ``resized`` (size unknown until a screenshot
is seen: pass ``Frame.resized(w, h, ...)`` to convert). Its AndroidControl
evaluation resizes with ``max_pixels = 6400 * 28 * 28``
(:data:`INFIGUI_MAX_PIXELS`), not the processor default: pass
``Frame.resized(w, h, max_pixels=INFIGUI_MAX_PIXELS)`` to match it. For a
Qwen3-VL policy pass ``Frame.relative(1000)``.
"""

from __future__ import annotations

import re

from guirl.actions.formats._common import (
    MAX_SCAN_CHARS,
    decode_json_at,
    dumps,
    fail,
    first_json_object_after,
    iter_json_objects,
    tag_positions,
)
from guirl.actions.formats._mobile import MOBILE_TYPES, action_to_mobile_args, mobile_args_to_action
from guirl.actions.formats.registry import ActionFormat, register_format
from guirl.actions.frames import Frame
from guirl.actions.types import Action, ParseFailure

NAME = "qwen_mobile_use"
TOOL_NAME = "mobile_use"
#: ``max_pixels`` of InfiGUI-R1's AndroidControl evaluation (``eval/android_control/android_control.py``).
INFIGUI_MAX_PIXELS = 6400 * 28 * 28


def find_tool_call(text: str, tool_name: str) -> dict | str:
    """The ``arguments`` dict of the first ``tool_name`` call in ``text``, or why none was found."""
    candidates = [first_json_object_after(text, pos) for pos in tag_positions(text, "tool_call")]
    candidates += [obj for _, obj in iter_json_objects(text) if "arguments" in obj]
    for call in candidates:
        if not isinstance(call, dict) or "arguments" not in call:
            continue
        name = call.get("name", tool_name)
        if name != tool_name:
            return f"tool call names {str(name)[:40]!r}, expected {tool_name!r}"
        args = call["arguments"]
        if isinstance(args, str):  # some servers send arguments as a JSON string
            decoded = decode_json_at(args.strip(), 0) if args.strip().startswith("{") else None
            args = decoded[0] if decoded else None
        if not isinstance(args, dict):
            return "tool call arguments must be a JSON object"
        return args
    return f'no {{"name": "{tool_name}", "arguments": {{...}}}} tool call found'


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """Parse one InfiGUI-R1 / Qwen mobile_use output (see module docstring)."""
    end = text.rfind("</think>", 0, MAX_SCAN_CHARS)
    args = find_tool_call(text[end + len("</think>") :] if end != -1 else text, TOOL_NAME)
    opening = text.rfind("<tool_call>", 0, end) if isinstance(args, str) and end != -1 else -1
    if opening != -1 and not 0 <= text.find("</tool_call>", opening) < end:  # that "</think>" is inside a call
        found = find_tool_call(text[opening:], TOOL_NAME)  # (typed text holding it): the call is the answer
        args = found if not isinstance(found, str) else args
    if isinstance(args, str):
        return fail(NAME, args, text)
    return mobile_args_to_action(NAME, args, text, frame)


def format(action: Action) -> str:
    """Write ``action`` as a mobile_use tool call (no thinking part)."""
    call = {"name": TOOL_NAME, "arguments": action_to_mobile_args(NAME, action)}
    return f"<tool_call>\n{dumps(call)}\n</tool_call>"


def extract_sub_goal(text: str) -> str | None:
    """The sub-goal inside the first ``<step>...</step>`` (InfiGUI-R1), or None.

    >>> extract_sub_goal("<think>The list is open. <step>Open the first email</step></think>")
    'Open the first email'
    """
    if not isinstance(text, str):
        return None
    match = re.search(r"<step>(.*?)</step>", text[:100_000], re.DOTALL)
    if match is None or not match.group(1).strip():
        return None
    return match.group(1).strip()


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame(kind="resized"),
        supported_types=MOBILE_TYPES,
        description="InfiGUI-R1 / Qwen mobile_use: <think> with a <step> sub-goal, then <tool_call>{...}</tool_call>",
    )
)

"""UI-S1 / CCPO output: ``<think>...</think><action>{json}</action>`` (docs/methods.md section 5).

UI-S1's JSON format (``x/data/agent/json.py`` and the action space in
``x/data/agent/space/std_space.py`` of the UI-S1 code) writes the reasoning
in ``<think>`` and one action object in ``<action>``::

    <think>
    The search box is at the top; tap it first.
    </think>
    <action>
    {"action": "click", "coordinate": [540, 160]}
    </action>

The action object is the ``mobile_use`` argument dict (``key``, ``click``,
``long_press``, ``swipe`` with ``coordinate2``, ``type``, ``answer``,
``system_button``, ``open``, ``wait``, ``terminate``), mapped as described in
:mod:`guirl.actions.formats._mobile`. UI-S1's own parser repairs a doubled
closing brace (``}}</action>``); decoding the first JSON value after
``<action>`` ignores such trailing text too. ``<think>`` is optional.

Scroll/swipe convention: UI-S1's AndroidControl conversion flips the dataset's
scroll direction into finger coordinates (``coordinate`` -> ``coordinate2``),
so a swipe here is a finger movement; guirl keeps both points unchanged.

Frame: UI-S1-7B is Qwen2.5-VL, which writes absolute pixels of the resized
image, so the default frame is ``resized`` (size unknown; pass
``Frame.resized(w, h, ...)`` to convert). UI-S1 resizes with 1 to 12800
tokens of 28x28 pixels (``x/qwen/image.py``: ``update_image_size_``), not the
processor default: pass ``Frame.resized(w, h, min_pixels=UIS1_MIN_PIXELS,
max_pixels=UIS1_MAX_PIXELS)``. Its data writers round coordinates to
integers (``x/data/agent/base.py``); ``format`` writes them as given.
"""

from __future__ import annotations

from guirl.actions.formats._common import (
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

NAME = "uis1"
#: UI-S1's smart_resize bounds: 1 and 12800 tokens of 28x28 pixels.
UIS1_MIN_PIXELS = 28 * 28
UIS1_MAX_PIXELS = 12800 * 28 * 28


def parse(text: str, frame: Frame) -> Action | ParseFailure:
    """Parse one UI-S1 output (see module docstring)."""
    candidates = [first_json_object_after(text, pos) for pos in tag_positions(text, "action")]
    candidates += [obj for _, obj in iter_json_objects(text) if isinstance(obj.get("action"), str)]
    for obj in candidates:
        if isinstance(obj, dict) and isinstance(obj.get("action"), str):
            return mobile_args_to_action(NAME, obj, text, frame)
    return fail(NAME, 'no <action>{"action": ...}</action> object found', text)


def format(action: Action) -> str:
    """Write ``action`` as ``<action>{json}</action>`` (no thinking part)."""
    return f"<action>\n{dumps(action_to_mobile_args(NAME, action))}\n</action>"


FORMAT = register_format(
    ActionFormat(
        name=NAME,
        parse=parse,
        format=format,
        default_frame=Frame(kind="resized"),
        supported_types=MOBILE_TYPES,
        description='UI-S1 / CCPO: <think>...</think><action>{"action": "click", "coordinate": [x, y]}</action>',
    )
)

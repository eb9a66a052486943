"""Strict JSON extraction from judge answers (model garbage -> None, never raise)."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def extract_json_object(text: Any) -> dict[str, Any] | None:
    """The JSON object a judge answered with, or None.

    Reasoning in ``<think>...</think>`` is dropped; a fenced ```json block
    wins; otherwise the first ``{`` that starts a complete JSON object.
    Arrays, scalars, truncated or invalid JSON give None.
    """
    if not isinstance(text, str):
        return None
    text = _THINK.sub("", text)
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for chunk in candidates:
        for start in (i for i, ch in enumerate(chunk) if ch == "{"):
            try:
                obj, _ = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    return None

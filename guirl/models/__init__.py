"""Policies: build tiny Qwen-VL models, load any Qwen2.5-VL / Qwen3-VL checkpoint, prompt, generate, score.

- :mod:`guirl.models.build`: ``build_model_dir(arch, out, size="tiny", seed=0)``
- :mod:`guirl.models.load`: ``load_policy(path, lora=None, dtype, device)`` -> :class:`LoadedPolicy`
- :mod:`guirl.models.prompts`: ``build_messages(instruction, screenshot, history, fmt, frame)``
- :mod:`guirl.models.generate`: ``generate_actions``, ``sample_completions``, ``completion_logprobs``,
  ``batch_completion_logprobs``
- :mod:`guirl.models.tokenizer`: the locally trained byte-level BPE tokenizer

Names are imported lazily (transformers is heavy), so ``import guirl.models`` is cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "build_model_dir": "guirl.models.build",
    "LoadedPolicy": "guirl.models.load",
    "load_policy": "guirl.models.load",
    "default_lora_config": "guirl.models.load",
    "build_messages": "guirl.models.prompts",
    "Generation": "guirl.models.generate",
    "generate_actions": "guirl.models.generate",
    "sample_completions": "guirl.models.generate",
    "completion_logprobs": "guirl.models.generate",
    "batch_completion_logprobs": "guirl.models.generate",
    "train_tokenizer": "guirl.models.tokenizer",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'guirl.models' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)

"""Tiny models shared by the tests/test_models_*.py files (built once per process).

A plain cache rather than a pytest fixture so every test module that imports
it gets the same directories; they are removed when the process exits.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from guirl.models.build import build_model_dir  # noqa: E402
from guirl.models.load import LoadedPolicy, load_policy  # noqa: E402

torch.set_num_threads(1)  # tiny models: one thread is fastest, most of all on a shared machine

_ROOT = Path(tempfile.mkdtemp(prefix="guirl-tiny-models-"))
atexit.register(shutil.rmtree, _ROOT, True)

ARCHS = ("qwen2_5_vl", "qwen3_vl")


@functools.cache
def tiny_model_dir(arch: str) -> Path:
    """A tiny ``arch`` checkpoint built with seed 0 (do not modify it in a test)."""
    return build_model_dir(arch, _ROOT / arch, size="tiny", seed=0)


@functools.cache
def tiny_policy(arch: str) -> LoadedPolicy:
    """The tiny ``arch`` policy, loaded once (do not train it in a test: load your own copy)."""
    return load_policy(tiny_model_dir(arch))

"""Every shipped recipe loads into its trainer's config."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from guirl.commands.train import METHODS, resolve_method
from guirl.config import load_config

RECIPES = sorted((Path(__file__).resolve().parents[1] / "recipes").glob("*.yaml"))


def test_there_are_recipes():
    assert {p.name for p in RECIPES} >= {"base_agent_tiny.yaml", "sft_tiny.yaml", "asft_tiny.yaml"}


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_recipe_loads(path):
    text = path.read_text()
    found = re.search(r"guirl train (\w+)", text)
    assert found, f"{path.name} must say how to run it ('guirl train <method> --config ...')"
    method = found.group(1)
    assert method in METHODS, f"{path.name}: unknown method {method!r}"
    cfg = load_config(resolve_method(METHODS[method][0]), path)
    # every value the recipe sets reaches the config (not dropped, not left at its default)
    _assert_applied(yaml.safe_load(text), cfg.model_dump(), path.name)


def _assert_applied(written, loaded, where: str) -> None:
    if isinstance(written, dict):
        assert isinstance(loaded, dict), where
        for key, value in written.items():
            assert key in loaded, f"{where}: {key} missing from the loaded config"
            _assert_applied(value, loaded[key], f"{where}.{key}")
    elif isinstance(written, list) and isinstance(loaded, (list, tuple)):
        assert len(written) == len(loaded), where
        for i, (w, v) in enumerate(zip(written, loaded, strict=True)):
            _assert_applied(w, v, f"{where}[{i}]")
    else:
        assert loaded == written, f"{where}: recipe says {written!r}, config holds {loaded!r}"

"""Typed configs from YAML with dotted overrides."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from guirl.config import ConfigError, config_help, load_config


class Optim(BaseModel):
    lr: float = Field(1e-3, description="peak learning rate", gt=0)
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas")


class Cfg(BaseModel):
    seed: int = Field(0, description="random seed")
    name: str = Field("run", description="run name")
    optim: Optim = Field(default_factory=Optim, description="optimiser")


def test_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("seed: 3\noptim:\n  lr: 0.01\n")
    cfg = load_config(Cfg, path, ["optim.lr=2e-4", "name=tiny", "optim.betas=[0.8, 0.9]"])
    assert cfg.seed == 3 and cfg.name == "tiny"
    assert cfg.optim.lr == pytest.approx(2e-4)
    assert cfg.optim.betas == (0.8, 0.9)
    # overrides into a section absent from the file
    assert load_config(Cfg, None, ["optim.lr=0.5"]).optim.lr == 0.5


def test_unknown_keys_and_bad_values_are_explained(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown field 'lrr' at optim; valid fields: \['betas', 'lr'\]"):
        load_config(Cfg, None, ["optim.lrr=1"])
    with pytest.raises(ConfigError, match="must look like key.subkey=value"):
        load_config(Cfg, None, ["optim.lr"])
    with pytest.raises(ConfigError, match=r"field 'optim.lr'.*peak learning rate"):
        load_config(Cfg, None, ["optim.lr=-1"])
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(Cfg, tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(Cfg, bad)


def test_help_lists_every_leaf_with_its_text():
    # one line per leaf field (the optim section itself is not a leaf), dotted path, type, default, help text
    assert config_help(Cfg) == [
        "seed (int, default 0): random seed",
        "name (str, default 'run'): run name",
        "optim.lr (float, default 0.001): peak learning rate",
        "optim.betas (tuple, default (0.9, 0.999)): AdamW betas",
    ]

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


def test_a_config_file_with_an_unknown_key_is_refused_naming_it(tmp_path):
    """A misspelt key in a YAML file is an error naming the file, the key and the valid fields, at the top level,
    in a nested section and in a list of sections (it used to fall back to the default without a word)."""
    from guirl.trainers.curriculum import CurriculumConfig
    from guirl.trainers.grpo import GRPOConfig

    path = tmp_path / "typo.yaml"
    path.write_text("max_step: 10\n")
    with pytest.raises(ConfigError, match=r"typo.yaml: unknown field 'max_step'; valid fields: .*'max_steps'"):
        load_config(GRPOConfig, path)
    path.write_text("optim:\n  learning_rate: 1.0e-4\n")
    with pytest.raises(ConfigError, match=r"unknown field 'optim.learning_rate'; valid fields of optim: .*'lr'"):
        load_config(GRPOConfig, path)
    path.write_text("stages:\n  - name: a\n    data: locate\n  - name: b\n    data: grounding\n    max_step: 5\n")
    with pytest.raises(ConfigError, match=r"unknown field 'stages\[1\].max_step'"):
        load_config(CurriculumConfig, path)
    path.write_text("optim:\n  lr: 1.0e-4\nmax_steps: 3\n")
    assert load_config(GRPOConfig, path).optim.lr == 1e-4

"""Multi-stage recipes (``guirl train pipeline``): run trainers one after another, each from the last one's model.

A pipeline YAML lists stages; each names a method of ``guirl train`` (``sft``, ``opd``, ``grpo``, ...), that
method's recipe file, and fields set on top of it (``set``: dotted keys, e.g. ``model``, ``output_dir``,
``optim.lr``). A stage whose ``output_dir/final`` already holds a model is skipped, and the trainers resume
from their checkpoints, so rerunning an interrupted pipeline finishes it. LiteGUI's SFT-free recipe
(``recipes/litegui_sft_free_tiny.yaml``) is guided OPD then MD-GRPO from the OPD checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class PipelineStage(BaseModel):
    method: str = Field(description="a method of `guirl train` (sft, opd, grpo, ...)")
    config: str = Field(description="that method's YAML recipe")
    set: dict[str, Any] = Field(default_factory=dict, description="fields set on top of the recipe (dotted keys)")


class PipelineConfig(BaseModel):
    stages: list[PipelineStage] = Field(min_length=1, description="stages run in order")


def stage_config(stage: PipelineStage):
    """The validated config of one stage (recipe file plus its ``set`` fields)."""
    import json

    from guirl.config import ConfigError, load_config
    from guirl.trainers.methods import METHODS, canonical_method, resolve_method

    method = canonical_method(stage.method)  # `semi-online` is `semi_online`, as on the command line
    if method not in METHODS or method == "pipeline":
        raise ConfigError(f"stage method {stage.method!r} is not a trainer; choose one of "
                          f"{[m for m in METHODS if m != 'pipeline']}")
    config_cls, entry = (resolve_method(s) for s in METHODS[method])
    overrides = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in stage.set.items()]
    return load_config(config_cls, stage.config, overrides), entry


def train_pipeline(cfg: PipelineConfig) -> dict[str, Any]:
    """Run every stage not finished yet; returns the last stage's result."""
    configs = [stage_config(stage) for stage in cfg.stages]  # every stage validated before the first one runs
    result: dict[str, Any] = {}
    for stage, (stage_cfg, entry) in zip(cfg.stages, configs, strict=True):
        final = Path(stage_cfg.output_dir) / "final"
        if (final / "config.json").is_file():
            print(f"stage {stage.method} ({stage.config}): done already, {final}")
            result = {"step": stage_cfg.max_steps, "final_dir": final}
            continue
        result = entry(stage_cfg)
        print(f"stage {stage.method} ({stage.config}): {result['step']} steps, final model in {result['final_dir']}")
    return result

"""Every shipped recipe loads into its trainer's config: the tiny CPU recipes (recipes/*.yaml) and the untested
GPU recipes with the papers' settings (recipes/gpu/*.yaml)."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import yaml

from guirl.config import load_config
from guirl.trainers.methods import METHODS, resolve_method

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted((ROOT / "recipes").glob("*.yaml"))
GPU_RECIPES = sorted((ROOT / "recipes" / "gpu").glob("*.yaml"))
#: a GPU recipe's first line: how to launch it
GPU_LAUNCH = re.compile(r"^# accelerate launch (.* )?-m guirl train (\w+) --config (recipes/gpu/\S+\.yaml)$")


def test_there_are_recipes():
    assert {p.name for p in RECIPES} >= {"base_agent_tiny.yaml", "sft_tiny.yaml", "asft_tiny.yaml"}


def test_there_are_gpu_recipes():
    assert {p.name for p in GPU_RECIPES} >= {
        "sft.yaml", "asft.yaml", "guilibra_kl_grpo_sngs.yaml", "reasoning_injection.yaml", "infigui_rloo.yaml",
        "litegui_teacher.yaml", "litegui_opd.yaml", "litegui_mdgrpo.yaml", "litegui_sft_free.yaml",
        "computersd.yaml", "computersd_analyzer.yaml", "ccpo_semi_online.yaml"}


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_recipe_loads(path):
    text = path.read_text()
    found = re.search(r"guirl train (\w+)", text)
    assert found, f"{path.name} must say how to run it ('guirl train <method> --config ...')"
    method = found.group(1)
    assert method in METHODS, f"{path.name}: unknown method {method!r}"
    _check_recipe(method, path, text)


@pytest.mark.parametrize("path", GPU_RECIPES, ids=lambda p: p.name)
def test_gpu_recipe_loads(path, monkeypatch):
    text = path.read_text()
    lines = text.splitlines()
    launch = GPU_LAUNCH.match(lines[0])
    assert launch, f"{path.name}: the first line must be '# accelerate launch ... -m guirl train <method> --config " \
                   f"recipes/gpu/{path.name}'"
    method, named = launch.group(2), launch.group(3)
    assert named == path.relative_to(ROOT).as_posix(), f"{path.name}: its first line runs {named}"
    assert method in METHODS, f"{path.name}: unknown method {method!r}"
    header = "\n".join(line for line in lines[:3] if line.startswith("#"))
    assert "UNTESTED" in header, f"{path.name}: its top lines must say that it is untested"
    monkeypatch.chdir(ROOT)  # a pipeline's stages name their recipes relative to the checkout
    _check_recipe(method, path, text)


@pytest.mark.parametrize("path", RECIPES + GPU_RECIPES, ids=lambda p: p.relative_to(ROOT / "recipes").as_posix())
def test_recipe_links_exist(path):
    """Every recipe a recipe's comments name exists: a tiny recipe's pointer to its GPU recipe, a GPU recipe's
    CPU counterpart and the recipes of the stages before and after it."""
    for named in re.findall(r"recipes/[\w/.-]+?\.yaml", path.read_text()):
        if "accelerate/" not in named:
            assert (ROOT / named).is_file(), f"{path.name} names {named}, which does not exist"


def test_gpu_recipe_check_catches_an_unknown_field(tmp_path):
    """The GPU recipe test fails on a misspelt field (the loader refuses it, naming it) and on an invalid value."""
    from guirl.config import ConfigError

    text = (ROOT / "recipes" / "gpu" / "guilibra_kl_grpo_sngs.yaml").read_text()
    bad = tmp_path / "typo.yaml"
    bad.write_text(text.replace("top_p: 0.98", "topp: 0.98"))
    with pytest.raises(ConfigError, match="unknown field 'topp'"):
        _check_recipe("grpo", bad, bad.read_text())
    bad.write_text(text.replace("top_p: 0.98", "top_p: 1.5"))
    with pytest.raises(ConfigError, match="top_p"):
        _check_recipe("grpo", bad, bad.read_text())


def _check_recipe(method: str, path: Path, text: str) -> None:
    cfg = load_config(resolve_method(METHODS[method][0]), path)
    # every value the recipe sets reaches the config (not dropped, not left at its default)
    _assert_applied(yaml.safe_load(text), cfg.model_dump(), path.name)
    _assert_names_resolve(cfg, path.name)


def _assert_names_resolve(cfg, where: str) -> None:
    """The registered names a config holds exist and take the arguments it gives them: output format, dataset
    format, rewards (and the judges they build), advantage estimator, analyzer; a pipeline's stages load."""
    from guirl.actions.formats.registry import get_format
    from guirl.algorithms.registry import get_adv_est
    from guirl.data.adapters import ADAPTERS
    from guirl.judges import make_judge
    from guirl.rewards import make_reward

    if getattr(cfg, "stages", None) and hasattr(cfg.stages[0], "config"):
        from guirl.trainers.pipeline import stage_config

        for stage in cfg.stages:
            stage_config(stage)
        return
    if getattr(cfg, "format", None):
        get_format(cfg.format)
    data_format = getattr(cfg, "data_format", "guirl")
    assert data_format in {"guirl", *ADAPTERS}, f"{where}: unknown data_format {data_format!r}"
    for spec in getattr(cfg, "rewards", []):
        make_reward(spec.name, **spec.kwargs)
    if hasattr(cfg, "advantage"):
        inspect.signature(get_adv_est(cfg.advantage)).bind_partial(**getattr(cfg, "advantage_kwargs", {}))
    if getattr(cfg, "analyzer", None):
        make_judge(cfg.analyzer, **cfg.analyzer_kwargs)


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


#: the tiny recipes of the method issues, run for 2 steps from the checkpoint each names (on small sim data)
RUN_RECIPES = ["guilibra_kl_grpo_sngs_tiny", "infigui_rloo_tiny", "litegui_mdgrpo_tiny", "ccpo_semi_online_tiny",
               "ccpo_offline_grpo_tiny", "ccpo_start_tiny", "asft_history_tiny", "reasoning_injection_history_tiny"]


@pytest.mark.parametrize("name", RUN_RECIPES)
def test_rl_recipe_runs_two_steps(name, sim_data, tmp_path):
    """The shipped recipe, as written but for its data, budget and output, trains 2 steps from its start and
    writes a final model."""
    path = ROOT / "recipes" / f"{name}.yaml"
    method = re.search(r"guirl train (\w+)", path.read_text()).group(1)
    config_cls, entry = (resolve_method(s) for s in METHODS[method])
    cfg = load_config(config_cls, path, [f"train_data=[{sim_data}]", "max_steps=2", f"output_dir={tmp_path / 'run'}",
                                         "report_to=[]", "num_threads=1"])
    assert (ROOT / cfg.model).is_dir(), f"{name}: its start {cfg.model} is not shipped"
    cfg = cfg.model_copy(update={"model": str(ROOT / cfg.model)})
    result = entry(cfg)
    assert result["step"] == 2 and (Path(result["final_dir"]) / "guirl_prompt.json").is_file()


def test_reasoning_injection_keeps_its_starts_prompt():
    """InfiGUI-R1's reasoning injection from the history-reading agent trains recorded reasoning only (no direct
    copies) in the prompt its start was trained with, "Think first." included, so the RLOO after it prompts the same."""
    from guirl.models.prompts import PromptSpec
    from guirl.trainers.sft import SFTConfig, prompt_spec

    cfg = load_config(SFTConfig, ROOT / "recipes" / "reasoning_injection_history_tiny.yaml", [])
    start = PromptSpec(**json.loads((ROOT / cfg.model / "guirl_prompt.json").read_text()))
    assert prompt_spec(cfg) == start and start.reasoning is True
    assert prompt_spec(cfg.model_copy(update={"direct_fraction": 0.5})).reasoning is False  # GUI-Libra's mixed data


def test_computersd_history_recipe_runs_two_steps(tmp_path):
    """ComputerSD from the history-reading agent, as written but for its budget: 2 steps of one group of 2 short
    episodes; the analyzer judges the agent's steps (the reasoning agent's Action sentence after its thought is
    read), so OPSD has privileged steps to rescore."""
    path = ROOT / "recipes" / "computersd_history_tiny.yaml"
    config_cls, entry = (resolve_method(s) for s in METHODS["computersd"])
    cfg = load_config(config_cls, path, ["max_steps=2", "group_size=2", "batch_size=1", "max_episode_steps=3",
                                         f"output_dir={tmp_path / 'run'}", "report_to=[]", "num_threads=1",
                                         "mode=sync", "save_every=0"])
    cfg = cfg.model_copy(update={"model": str(ROOT / cfg.model)})
    result = entry(cfg)
    assert result["step"] == 2 and (Path(result["final_dir"]) / "guirl_prompt.json").is_file()
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert sum(r["opsd/rescored_steps"] for r in rows) > 0

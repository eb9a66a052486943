"""``benchmarks/litegui_opd.py``'s conditions: each is an ``rl_recipes.py`` run, and MD-GRPO starts from the
directory the same seed's Most-Matched OPD run writes to."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import litegui_opd  # noqa: E402
import rl_recipes  # noqa: E402


def _args(tmp_path, **kw):
    return argparse.Namespace(**{"teacher": str(ROOT / "checkpoints" / "litegui-teacher-history-tiny"),
                                 "student": str(litegui_opd.STUDENT), "eval_seed": 7, "per_task": 24,
                                 "out": str(tmp_path), "mdgrpo_steps": 200} | kw)


def _overrides(cmd: list[str]) -> list[str]:
    return cmd[2:cmd.index("--recipes")]


def test_mdgrpo_starts_from_the_directory_of_the_same_seeds_opd_run(tmp_path):
    args = _args(tmp_path)
    opd, mdgrpo = litegui_opd.condition_commands("opd_mdgrpo", 2, args)
    assert opd == litegui_opd.condition_commands("opd_most_matched", 2, args)[0]
    # the directory rl_recipes.train names for that run: its overrides, then the model it starts from
    run = Path(args.out) / f"litegui_opd_tiny-{rl_recipes.overrides_tag([*_overrides(opd), f'model={args.student}'])}-seed2"
    start = mdgrpo[mdgrpo.index("--start") + 1].replace("{seed}", "2")
    assert start == str(run / "final")
    assert mdgrpo[mdgrpo.index("--tag") + 1] == "after OPD, 200 steps" and "max_steps=200" in _overrides(mdgrpo)


def test_the_no_rsub_ablation_changes_only_the_subtask_weight(tmp_path):
    _, mdgrpo = litegui_opd.condition_commands("opd_mdgrpo_no_rsub", 0, _args(tmp_path))
    (rewards,) = [o for o in _overrides(mdgrpo) if o.startswith("rewards=")]
    recipe = yaml.safe_load((ROOT / "recipes" / "litegui_mdgrpo_tiny.yaml").read_text())["rewards"]
    ablated = json.loads(rewards.removeprefix("rewards="))
    assert ablated[0]["kwargs"].pop("w_subtask") == 0.0 and recipe[0]["kwargs"].pop("w_subtask") == 0.3
    assert ablated == recipe


def test_sft_gets_the_opd_budget_and_a_teacher_path_is_passed_only_when_it_differs(tmp_path):
    recipe = yaml.safe_load(litegui_opd.OPD_RECIPE.read_text())
    (sft,) = litegui_opd.condition_commands("sft", 0, _args(tmp_path))
    assert f"batch_size={recipe['batch_size'] * recipe['samples_per_state']}" in _overrides(sft)
    assert f"max_steps={recipe['max_steps']}" in _overrides(sft) and f"optim.lr={recipe['optim']['lr']}" in _overrides(sft)
    (plain,) = litegui_opd.condition_commands("opd_single", 0, _args(tmp_path))
    (other,) = litegui_opd.condition_commands("opd_single", 0, _args(tmp_path, teacher=str(tmp_path / "t")))
    assert _overrides(plain) == ["guidance=single"] and _overrides(other) == ["guidance=single", f"teacher={tmp_path / 't'}"]


def test_sft_then_mdgrpo_starts_from_the_same_seeds_sft_run(tmp_path):
    args = _args(tmp_path)
    sft, mdgrpo = litegui_opd.condition_commands("sft_mdgrpo", 1, args)
    assert sft == litegui_opd.condition_commands("sft", 1, args)[0]
    run = Path(args.out) / (f"litegui_teacher_history_tiny-"
                            f"{rl_recipes.overrides_tag([*_overrides(sft), f'model={args.student}'])}-seed1")
    assert mdgrpo[mdgrpo.index("--start") + 1].replace("{seed}", "1") == str(run / "final")
    assert mdgrpo[mdgrpo.index("--tag") + 1] == "after SFT, 200 steps"


def test_the_single_solution_reward_ablation_only_cuts_the_ground_truth(tmp_path):
    _, full = litegui_opd.condition_commands("opd_mdgrpo", 0, _args(tmp_path))
    _, single = litegui_opd.condition_commands("opd_mdgrpo_single", 0, _args(tmp_path))
    assert _overrides(single) == [*_overrides(full), "ground_truth=recorded"]
    assert single[single.index("--tag") + 1] == "after OPD, 200 steps, single-solution reward"
    assert single[single.index("--start") + 1] == full[full.index("--start") + 1]

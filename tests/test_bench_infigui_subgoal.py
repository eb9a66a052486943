"""benchmarks/infigui_subgoal.py: the sub-goal diagnosis on a real model and a real generated dataset."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import infigui_subgoal  # noqa: E402
import rl_recipes  # noqa: E402


def test_doctests():
    assert doctest.testmod(infigui_subgoal).failed == 0


def test_scores_the_same_steps_as_the_recipe_benchmark(tmp_path):
    """The success vector is rl_recipes' on the same steps (every generated step records a sub-goal), and each S is
    the judge's score of that step's own reasoning."""
    from guirl.envs.sim import generate_dataset

    generate_dataset(out_dir=str(tmp_path), seed=5, train_per_task=1, test_per_task=2, grounding_train=1,
                     grounding_test=1, tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[])
    model = ROOT / "checkpoints" / "base-agent-history-tiny"
    success, scores = infigui_subgoal.score_model(model, tmp_path)
    expected = rl_recipes.evaluate_model(model, tmp_path, 0, 0, splits=["steps_unseen_seeds"])
    assert success == expected["per_step"]["steps_unseen_seeds"]
    assert len(scores) == len(success) and all(0 <= s <= 10 for s in scores)
    assert any(s >= 8 for s in scores)  # the agent writes its sub-goal in <think>
    row = infigui_subgoal.summarise(success, scores)
    assert row["steps"] == len(success) and row["named_steps"] == sum(s >= 8 for s in scores)


@pytest.mark.parametrize("args,says", [
    (["--models", "nolabel"], "--models nolabel: write LABEL=MODEL_DIR"),
    (["--models", "a=no/such/dir"], "a=no/such/dir: no/such/dir is not a model directory"),
    (["--named", "11"], "--named 11: S runs from 0 to 10"),
    (["--max-new-tokens", "0"], "--max-new-tokens 0: give a positive number of tokens"),
    (["--groups", "1"], "--groups 1 --states 300: RLOO needs groups of 2"),
    (["--groups", "8", "--train-data", "no/such.jsonl"], "--train-data no/such.jsonl: no such file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "infigui_subgoal.py"), *args, "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_groups_split_the_recipe_reward_into_the_sub_goal_term_and_the_rest(tmp_path):
    """On a real model, the recipe's reward and real recorded states: every state gives one group, the shares are
    shares, and a recipe without a sub-goal judge is refused (there is no term to split)."""
    from guirl.envs.sim import generate_dataset

    generate_dataset(out_dir=str(tmp_path), seed=5, train_per_task=1, test_per_task=1, grounding_train=1,
                     grounding_test=1, tasks=["desktop.open_file", "mobile.toggle_setting"], heldout_tasks=[])
    model = ROOT / "checkpoints" / "base-agent-history-tiny"
    recipe = ROOT / "recipes" / "infigui_rloo_tiny.yaml"
    train = [str(tmp_path / "trajectories" / "train.jsonl"), str(tmp_path / "trajectories" / "recovery.jsonl")]
    row = infigui_subgoal.sample_groups(model, recipe, 6, 4, train)
    assert row["groups"] == 6 and row["group_size"] == 4
    assert all(0.0 <= row[k] <= 1.0 for k in ("moving", "subgoal_varies", "subgoal_alone", "sign_set"))
    assert row["subgoal_alone"] <= row["subgoal_varies"]
    assert sum(r["states"] for r in row["by_label"].values()) == 6 and set(row["by_label"]) <= {"correct", "error_escape", "back_on_track"}
    no_judge = tmp_path / "no_judge.yaml"
    no_judge.write_text(recipe.read_text().replace("subgoal_judge: ground_truth_subgoal", "subgoal_judge: null"))
    with pytest.raises(ValueError, match="no reward with a sub-goal judge"):
        infigui_subgoal.sample_groups(model, no_judge, 2, 4, train)


def test_a_term_that_alone_differs_sets_every_sign():
    """A group whose rewards differ only by the sub-goal term: its whole advantage is the term's."""
    row = infigui_subgoal.subgoal_in_groups([0.1, 0.28, 0.1, 0.1], [0.0, 0.18, 0.0, 0.0], 4)
    assert row["moving"] == row["subgoal_varies"] == row["subgoal_alone"] == 1.0
    assert row["subgoal_share"] == pytest.approx(1.0) and row["sign_set"] == 1.0
    with pytest.raises(ValueError, match="in groups of 4"):
        infigui_subgoal.subgoal_in_groups([0.0] * 6, [0.0] * 6, 4)

"""gen-data: seeded datasets in the project schema, with splits and error-recovery labels."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pytest

from guirl.actions.types import ActionType
from guirl.commands import UsageError
from guirl.data import read_episodes
from guirl.data.schema import StepLabel
from guirl.envs.sim import generate_dataset

SMALL = {"domains": ("desktop", "mobile"), "tasks": ("desktop.open_file", "mobile.toggle_setting", "mobile.find_contact"),
         "heldout_tasks": ("mobile.find_contact",), "train_per_task": 2, "test_per_task": 1, "grounding_train": 3,
         "grounding_test": 2, "recovery_prob": 0.5, "seed": 3}


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("simdata")
    generate_dataset(out_dir=str(out), **SMALL)
    return out


def test_reads_back_with_splits(dataset):
    train = read_episodes(dataset / "trajectories" / "train.jsonl")
    test_seed = read_episodes(dataset / "trajectories" / "test_seed.jsonl")
    test_task = read_episodes(dataset / "trajectories" / "test_task.jsonl")
    assert len(train) == 4 and len(test_seed) == 2 and len(test_task) == 1
    assert {e.task for e in train} == {"desktop.open_file", "mobile.toggle_setting"}
    assert {e.task for e in test_task} == {"mobile.find_contact"}  # held out by task template
    assert not {e.extra["seed"] for e in train} & {e.extra["seed"] for e in test_seed}  # held out by seed
    for episode in train + test_seed + test_task:
        assert episode.success and episode.source == "guirl.sim" and episode.platform in ("desktop", "mobile")
        last = episode.steps[-1]
        assert last.action.type in (ActionType.TERMINATE, ActionType.ANSWER) and last.reward == 1.0
        for step in episode.steps:
            assert step.valid_actions and step.action in step.valid_actions
            assert step.sub_goal and step.subtasks and step.a11y
            assert len(step.history) == step.index
    grounding = read_episodes(dataset / "grounding" / "train.jsonl")
    assert len(grounding) == 6 and all(len(e.steps) == 1 and e.steps[0].valid_actions[0].box for e in grounding)


def test_error_recovery_pairs(dataset):
    recovery = read_episodes(dataset / "trajectories" / "recovery.jsonl")
    assert recovery, "recovery_prob=0.5 over ~20 steps should give some pairs"
    by_id = {e.id: e.steps[0] for e in recovery}
    # every record is one half of an (escape, back) pair: without this the loop below could check nothing
    escapes = [i for i, step in by_id.items() if step.label is StepLabel.ERROR_ESCAPE]
    assert escapes and 2 * len(escapes) == len(by_id)
    assert all(by_id[i.replace("-escape", "-back")].label is StepLabel.BACK_ON_TRACK for i in escapes)
    for episode_id, step in by_id.items():
        if step.label is StepLabel.ERROR_ESCAPE:
            back = by_id[episode_id.replace("-escape", "-back")]
            assert back.label is StepLabel.BACK_ON_TRACK
            wrong = step.history[-1].action
            # back on track: history + wrong + escape; target = the original correct action on the original screen
            assert back.history[-2].action == wrong and back.history[-1].action == step.action
            assert back.action in back.valid_actions and wrong not in back.valid_actions
            assert back.screenshot == step.history[-1].screenshot  # the original screen I_s
            assert step.screenshot != back.screenshot  # the screen after the wrong action


def test_same_seed_same_files(dataset, tmp_path):
    generate_dataset(out_dir=str(tmp_path), **SMALL)
    assert _digest(tmp_path) == _digest(dataset)


def small_argv(out):
    return ["gen-data", "--out", str(out), "--domains", "web", "--tasks", "web.search_open", "--heldout-tasks", "",
            "--train-per-task", "1", "--test-per-task", "1", "--grounding-train", "1", "--grounding-test", "1"]


def test_cli_writes_a_dataset(tmp_path, capsys):
    from guirl.commands import gen_data

    parser = argparse.ArgumentParser()
    gen_data.add_parser(parser.add_subparsers())
    args = parser.parse_args(small_argv(tmp_path))
    assert args.func(args) == 0
    assert "trajectories/train: 1 episodes" in capsys.readouterr().out
    assert len(read_episodes(tmp_path / "trajectories" / "train.jsonl")) == 1
    # a second run into the same directory would replace the dataset: refused unless asked for
    with pytest.raises(UsageError, match=r"already holds a dataset \(manifest.json\).*--overwrite"):
        args.func(args)
    again = parser.parse_args([*small_argv(tmp_path), "--overwrite"])
    assert again.func(again) == 0
    bad = parser.parse_args(["gen-data", "--out", str(tmp_path), "--domains", "tv"])
    with pytest.raises(UsageError, match="domains"):
        bad.func(bad)
    with pytest.raises(ValueError, match="unknown sim tasks"):
        generate_dataset(out_dir=str(tmp_path), tasks=("web.nope",))

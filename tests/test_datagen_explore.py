"""LiteGUI multi-solution exploration: de-duplication, windows, output contract, merge of verified labels.

De-duplication is checked on hand-made actions with worked distances; the
output contract on built-in world data with a real tiny Qwen3-VL through
HFEngine (its samples are mostly unparsable, which the counts must say).
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.commands import UsageError
from guirl.data import read_episodes
from guirl.data.schema import A11yNode
from guirl.datagen import explore as explore_module
from guirl.datagen.explore import (
    Candidate,
    ExploreConfig,
    ExploredStep,
    deduplicate,
    merge_verified,
    same_candidate,
    windows,
    write_exploration,
)
from guirl.envs.sim import generate_dataset
from guirl.matching.step import match_action

SIZE = (1000, 800)  # tolerance 0.04 x max(W, H) = 40 px
PX = Frame.screen(*SIZE)
NODES = [A11yNode(id="window", role="window", box=(0, 0, 1000, 800)),
         A11yNode(id="save", role="button", box=(100, 100, 300, 140)),
         A11yNode(id="cancel", role="button", box=(305, 100, 400, 140))]


def click(x: float, y: float, kind: ActionType = ActionType.CLICK) -> Action:
    return Action(type=kind, point=(x, y), frame=PX)


def typed(text: str) -> Action:
    return Action(type=ActionType.TYPE, text=text, frame=PX)


def test_doctests():
    assert doctest.testmod(explore_module).failed == 0


def test_same_element_merges_points_beyond_the_tolerance():
    # (110, 120) and (290, 120) are 180 px apart (> 40) but both inside 'save', its smallest box
    assert same_candidate(click(110, 120), click(290, 120), SIZE, NODES)
    # without the a11y tree the distance decides
    assert not same_candidate(click(110, 120), click(290, 120), SIZE, None)


def test_different_elements_stay_apart_within_the_tolerance():
    # (298, 120) in 'save', (307, 120) in 'cancel': 9 px apart but two targets
    assert not same_candidate(click(298, 120), click(307, 120), SIZE, NODES)
    assert same_candidate(click(298, 120), click(307, 120), SIZE, None)


def test_tolerance_decides_when_a_point_hits_no_element():
    # outside every node (the window is 1000x800, the points beyond it): 30 px apart <= 40 px, 50 px > 40 px
    assert same_candidate(click(1010, 900), click(1040, 900), SIZE, NODES)
    assert not same_candidate(click(1010, 900), click(1060, 900), SIZE, NODES)
    assert same_candidate(click(10, 10), click(40, 10), SIZE, None, tolerance=0.04)
    assert not same_candidate(click(10, 10), click(40, 10), SIZE, None, tolerance=0.02)  # 20 px


def test_type_text_and_keys_are_normalised():
    assert not same_candidate(click(110, 120), click(110, 120, ActionType.DOUBLE_CLICK), SIZE, NODES)
    assert same_candidate(typed("Hello  World "), typed("hello world"), SIZE)
    assert not same_candidate(typed("hello"), typed("goodbye"), SIZE)
    ctrl_a = Action(type=ActionType.KEY, keys=("Control", "A"), frame=PX)
    a_ctrl = Action(type=ActionType.KEY, keys=("a", "ctrl"), frame=PX)
    assert same_candidate(ctrl_a, a_ctrl, SIZE)
    assert not same_candidate(ctrl_a, Action(type=ActionType.KEY, keys=("ctrl", "c"), frame=PX), SIZE)


def test_deduplicate_counts_samples_and_drops_unparsable():
    recorded = click(200, 120)
    samples = [click(110, 120), ParseFailure(reason="no action"), click(350, 120), typed("Hi"), typed("hi "),
               click(120, 125), ParseFailure(reason="bad json")]
    candidates, dropped = deduplicate(samples, SIZE, NODES, recorded=recorded)
    assert dropped == 2
    # recorded 'save' takes both save clicks; then 'cancel', then one typed text
    assert [(c.source, c.count) for c in candidates] == [("recorded", 2), ("sample", 1), ("sample", 2)]
    assert candidates[0].action == recorded and candidates[2].action.text == "Hi"
    assert sum(c.count for c in candidates) + dropped == len(samples)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    generate_dataset(out_dir=str(out), domains=("desktop", "mobile"), tasks=("desktop.open_file", "mobile.toggle_setting"),
                     heldout_tasks=(), train_per_task=1, test_per_task=0, grounding_train=0, grounding_test=0,
                     recovery_prob=0.0, seed=0)
    return out / "trajectories"


def test_windows_hold_at_most_three_steps(dataset):
    episode = max(read_episodes(dataset / "train.jsonl"), key=lambda e: len(e.steps))
    assert len(episode.steps) > 3
    cut = windows(episode, 3)
    assert len(cut) == len(episode.steps)
    for t, window in enumerate(cut):
        assert [s.index for s in window] == list(range(max(0, t - 2), t + 1))  # the step and up to 2 before it
        record = ExploredStep(episode, window[-1], window).record()
        assert record["history"] == [h.description for h in episode.steps[t].history][-2:]
        assert len(record["history"]) == min(t, 2)


@pytest.fixture(scope="module")
def explored_out(dataset, tmp_path_factory) -> Path:
    from models_fixtures import tiny_model_dir

    from guirl.cli import build_parser

    out = tmp_path_factory.mktemp("explore")
    argv = ["datagen", "explore", "--episodes", str(dataset / "train.jsonl"), "--model", str(tiny_model_dir("qwen3_vl")),
            "--out", str(out), "--samples", "3", "--limit-steps", "4", "--max-new-tokens", "8"]
    args = build_parser().parse_args(argv)
    assert args.func(args) == 0
    with pytest.raises(UsageError, match="already holds"):
        args.func(build_parser().parse_args(argv))
    return out


def test_output_contract_with_a_real_tiny_model(explored_out, dataset):
    manifest = json.loads((explored_out / "manifest.json").read_text())
    assert manifest["episodes"] == str((dataset / "train.jsonl").resolve())
    assert (manifest["samples"], manifest["temperature"], manifest["window"]) == (3, 1.0, 3)
    assert manifest["dedup"]["tolerance"] == 0.04
    counts = manifest["counts"]
    assert counts["steps_explored"] == 4 and counts["samples"] == 12
    records = [json.loads(line) for line in (explored_out / "candidates.jsonl").read_text().splitlines()]
    assert len(records) == 4
    episodes = {e.id: e for e in read_episodes(dataset / "train.jsonl")}
    in_candidates = 0
    for record in records:
        assert set(record) == {"episode_id", "step_index", "instruction", "screenshot", "screen_size", "history",
                               "recorded_action", "candidates"}
        step = episodes[record["episode_id"]].steps[record["step_index"]]
        assert record["screenshot"] == step.screenshot.path
        assert (dataset / record["screenshot"]).is_file()  # relative to the episodes file's directory
        assert record["screen_size"] == [step.screenshot.width, step.screenshot.height]
        assert len(record["history"]) <= 2
        assert Action.model_validate(record["recorded_action"]) == step.action
        first, *rest = record["candidates"]
        assert first["source"] == "recorded" and first["oracle_label"] is True  # the oracle's own choice
        for k, cand in enumerate(record["candidates"]):
            assert set(cand) == {"id", "action", "source", "count", "oracle_label"}
            assert cand["id"] == f"{record['episode_id']}/{record['step_index']}/{k}"
            assert isinstance(cand["oracle_label"], bool)  # built-in world: all pre-labelled
            Action.model_validate(cand["action"])
        assert all(c["source"] == "sample" and c["count"] >= 1 for c in rest)
        in_candidates += sum(c["count"] for c in record["candidates"])
    assert in_candidates + counts["samples_unparsed"] == counts["samples"]


def test_no_oracle_leaves_labels_for_people(dataset, tmp_path):
    from models_fixtures import tiny_policy

    from guirl.rollout.hf_engine import HFEngine

    policy = tiny_policy("qwen3_vl")
    episodes = read_episodes(dataset / "train.jsonl")
    config = ExploreConfig(samples=2, max_new_tokens=8, max_steps=2, oracle=False)
    explored, counts = explore_module.explore(HFEngine.from_policy(policy), policy.prompt, policy.frame_for,
                                              episodes, dataset, config)
    assert counts["steps_without_oracle"] == 2
    path = write_exploration(tmp_path, dataset / "train.jsonl", "tiny", explored, counts, config)
    labels = [c["oracle_label"] for line in path.read_text().splitlines() for c in json.loads(line)["candidates"]]
    assert labels and all(label is None for label in labels)


def test_merge_verified_adds_only_new_true_candidates(dataset, tmp_path):
    episodes = read_episodes(dataset / "train.jsonl")
    episode = episodes[0]
    step = episode.steps[0]
    size = (step.screenshot.width, step.screenshot.height)
    px = Frame.screen(*size)
    box = step.action.box
    inside = Action(type=step.action.type, point=((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), frame=px)
    far = Action(type=ActionType.KEY, keys=("ctrl", "o"), frame=px)  # a new way the oracle did not list
    wrong = Action(type=ActionType.KEY, keys=("esc",), frame=px)
    item = ExploredStep(episode, step, [step], [Candidate(step.action, "recorded"), Candidate(inside, "sample", 2),
                                                  Candidate(far, "sample", 1), Candidate(wrong, "sample", 1)])
    path = write_exploration(tmp_path, dataset / "train.jsonl", "hand-made", [item], {}, ExploreConfig())
    base = f"{episode.id}/0"
    merged = merge_verified(path, {f"{base}/0": True, f"{base}/1": True, f"{base}/2": True, f"{base}/3": False})
    new_step = next(e for e in merged if e.id == episode.id).steps[0]
    assert new_step.valid_actions == [*step.valid_actions, far]  # 'inside' already matched A*_t: not repeated
    assert match_action(inside, new_step.valid_actions, screen_size=size, a11y=step.a11y).success
    untouched = {(e.id, s.index): s.valid_actions for e in episodes for s in e.steps}
    assert all(s.valid_actions == untouched[(e.id, s.index)] for e in merged for s in e.steps
               if (e.id, s.index) != (episode.id, 0))
    with pytest.raises(ValueError, match="not in"):
        merge_verified(path, {f"{base}/9": True})


def test_cli_missing_episodes_is_one_line(tmp_path):
    from guirl.cli import build_parser

    missing = tmp_path / "nope.jsonl"
    args = build_parser().parse_args(["datagen", "explore", "--episodes", str(missing), "--model", str(tmp_path),
                                      "--out", str(tmp_path / "out")])
    with pytest.raises(UsageError) as info:
        args.func(args)
    message = str(info.value)
    assert "\n" not in message and "--episodes" in message and str(missing) in message

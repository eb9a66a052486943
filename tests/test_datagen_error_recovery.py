"""InfiGUI-R1 error-recovery scenarios from sampled mistakes, checked against the built-in world.

A scripted engine (a second, tiny implementation of the GenerationEngine
protocol) returns chosen texts per recorded step, so the tests pick the
mistakes; the world (replayed from the episode's seed) is the reference for
every screen and target. One CLI run uses a real tiny Qwen3-VL through HFEngine.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from PIL import Image

from guirl.actions import Action, ActionType, Frame, format_action
from guirl.data import read_episodes
from guirl.data.schema import StepLabel
from guirl.datagen import ErrorRecoveryConfig, build_error_recovery_data, error_recovery
from guirl.envs.sim import generate_dataset, is_advancing
from guirl.envs.sim.engine import state_key
from guirl.envs.sim.replay import ReplayError, env_for_episode, replay_snapshots, same_image
from guirl.models.prompts import PromptSpec
from guirl.rollout.engine import Completion, SamplingParams

FMT = "qwen_computer_use"
SPEC = PromptSpec(fmt=FMT, style="compact", history_window=2)
OPEN_FILE, TOGGLE = "train-desktop.open_file-0", "train-mobile.toggle_setting-0"


def frame_for(width: int, height: int) -> Frame:
    return Frame.screen(width, height)  # the scripted policy answers in screen pixels


class ScriptedEngine:
    """GenerationEngine that answers each prompt (by its key, ``episode/step``) with chosen texts."""

    policy_version = 0

    def __init__(self, texts: dict[str, list[str]], default: dict[str, str]):
        self.texts, self.default, self.calls = texts, default, []

    def generate(self, prompts, params: SamplingParams) -> list[list[Completion]]:
        self.calls.append((len(prompts), params))
        out = []
        for i, prompt in enumerate(prompts):
            texts = self.texts.get(prompt.key) or [self.default[prompt.key]]
            out.append([Completion(i, s, [], [], texts[s % len(texts)], "stop", 0) for s in range(params.n)])
        return out

    def update_weights(self, model, version: int) -> None:
        self.policy_version = version


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    generate_dataset(out_dir=str(out), domains=("desktop", "mobile"), tasks=("desktop.open_file", "mobile.toggle_setting"),
                     heldout_tasks=(), train_per_task=1, test_per_task=0, grounding_train=0, grounding_test=0,
                     recovery_prob=0.0, seed=0)
    return out / "trajectories"


@pytest.fixture(scope="module")
def episodes(dataset):
    return {e.id: e for e in read_episodes(dataset / "train.jsonl")}


def _text(action: Action) -> str:
    return format_action(action, FMT)


def _correct_texts(episodes) -> dict[str, str]:
    """Every step's recorded action (or a formattable valid one) as the policy's text: all correct."""
    out = {}
    for e in episodes.values():
        for s in e.steps:
            writable = [a for a in [s.action, *s.valid_actions] if a.type is not ActionType.OPEN_APP]
            out[f"{e.id}/{s.index}"] = _text(writable[0]) if writable else "no action"
    return out


def _world_at(episode, index):
    env = env_for_episode(episode)
    env.reset(seed=episode.extra["seed"], options={"task": episode.task})
    for step in episode.steps[:index]:
        env.step(step.action)
    return env


def _wrong_click(episode, index, name: str) -> Action:
    """The oracle's candidate whose description is ``name`` at step ``index`` (checked to be a real mistake)."""
    env = _world_at(episode, index)
    action = next(a for a in env.oracle.candidates(env.state) if a.description == name)
    assert not is_advancing(env, action)
    return action


def _run(dataset, episodes, tmp_path, scripted, **config):
    engine = ScriptedEngine(scripted, _correct_texts(episodes))
    counts = build_error_recovery_data(engine, SPEC, frame_for, list(episodes.values()), dataset, tmp_path,
                                       ErrorRecoveryConfig(samples=4, **config))
    return engine, counts, {e.id: e for e in read_episodes(tmp_path / "episodes.jsonl")}


def test_replay_restores_every_recorded_screen(dataset, episodes):
    for episode in episodes.values():
        env = env_for_episode(episode)
        snapshots = replay_snapshots(env, episode, dataset)  # raises unless every replayed screen is the recorded one
        obs = env.restore(snapshots[2])
        with Image.open(dataset / episode.steps[2].screenshot.path) as recorded:
            assert same_image(obs.screenshot, recorded)
        assert obs.valid_actions == episode.steps[2].valid_actions
    grounding = episodes[OPEN_FILE].model_copy(update={"task": "desktop.ground"})
    with pytest.raises(ReplayError, match="grounding"):
        env_for_episode(grounding)


def test_config_errors_name_the_choices():
    with pytest.raises(ValueError, match="strictly between"):
        ErrorRecoveryConfig(samples=1)
    with pytest.raises(ValueError, match="'match', 'oracle'"):
        ErrorRecoveryConfig(scorer="judge")
    with pytest.raises(ValueError, match="temperature"):
        ErrorRecoveryConfig(temperature=-1.0)
    assert doctest.testmod(error_recovery).failed == 0


def test_episodes_that_do_not_replay_are_counted(dataset, episodes, tmp_path):
    # a trajectory without its seed (not from gen-data) and one whose recorded screen is not the replayed one
    unseeded = episodes[OPEN_FILE].model_copy(update={"id": "unseeded", "extra": {"preset": "coarse", "domain": "desktop"}})
    moved = episodes[TOGGLE].model_copy(update={"id": "moved", "extra": {**episodes[TOGGLE].extra, "seed": 99}})
    engine = ScriptedEngine({}, _correct_texts(episodes))
    counts = build_error_recovery_data(engine, SPEC, frame_for, [unseeded, moved], dataset, tmp_path,
                                       ErrorRecoveryConfig(samples=2))
    assert counts["error_recovery/episodes_not_replayable"] == 2 and not engine.calls
    assert counts["error_recovery/steps_not_eligible"] == counts["error_recovery/steps"] > 0


def test_escape_and_back_on_track_from_a_sampled_mistake(dataset, episodes, tmp_path):
    # open_file-0 step 0 is the desktop; the target is the Files icon. Two of four samples double-click
    # Trash (opens the Trash window): success rate 2/4, an error-prone step.
    episode, index = episodes[OPEN_FILE], 0
    step = episode.steps[index]
    wrong = _wrong_click(episode, index, "double-click the 'Trash' icon")
    scripted = {f"{OPEN_FILE}/{index}": [_text(step.action), _text(wrong)]}
    engine, counts, written = _run(dataset, episodes, tmp_path, scripted)
    assert len(engine.calls) == 1 and engine.calls[0][0] == counts["error_recovery/steps_sampled"]  # one batched call
    assert counts["error_recovery/steps_error_prone"] == 1 and counts["error_recovery/steps_all_correct"] == \
        counts["error_recovery/steps_sampled"] - 1
    assert sorted(written) == [f"{OPEN_FILE}-s0-back", f"{OPEN_FILE}-s0-escape"]
    escape, back = written[f"{OPEN_FILE}-s0-escape"].steps[0], written[f"{OPEN_FILE}-s0-back"].steps[0]

    env = _world_at(episode, index)  # the world, independently: restore step 0, then take the wrong action
    obs_after, *_ = env.step(wrong)
    assert escape.label is StepLabel.ERROR_ESCAPE
    with Image.open(tmp_path / escape.screenshot.path) as image:
        assert same_image(image, obs_after.screenshot)  # the real post-mistake screen
    with Image.open(dataset / step.screenshot.path) as original:
        assert not same_image(obs_after.screenshot, original)
    assert escape.valid_actions == obs_after.valid_actions and escape.action in escape.valid_actions
    assert all(is_advancing(env, a) for a in escape.valid_actions)  # every target is valid there per the oracle
    assert escape.history[-1].action.point == wrong.point and escape.history[-1].description == "double-click the 'Trash' icon"
    assert len(escape.history) == len(step.history) + 1 and escape.sub_goal == obs_after.sub_goal

    env.step(escape.action)  # the escape really undoes the mistake
    assert state_key(env.state) == state_key(_world_at(episode, index).state)
    assert back.label is StepLabel.BACK_ON_TRACK and back.valid_actions == step.valid_actions
    with Image.open(tmp_path / back.screenshot.path) as image, Image.open(dataset / step.screenshot.path) as original:
        assert same_image(image, original)
    assert [h.action for h in back.history[-2:]] == [escape.history[-1].action, escape.action]
    assert back.history[-1].screenshot == escape.screenshot  # the escape was taken on the post-mistake screen
    manifest = json.loads((tmp_path / "error_recovery_manifest.json").read_text())
    assert manifest["correct_samples_histogram"]["2"] == 1


def test_no_back_on_track_when_nothing_undoes_the_mistake(dataset, episodes, tmp_path):
    # open_file-0 step 1: the Files icon is selected. Double-clicking Terminal opens it; closing it again leaves
    # the desktop with nothing selected, not the selected Files icon: no valid action returns to I_s.
    episode, index = episodes[OPEN_FILE], 1
    wrong = _wrong_click(episode, index, "double-click the 'Terminal' icon")
    scripted = {f"{OPEN_FILE}/{index}": [_text(episode.steps[index].action), _text(wrong)]}
    _, counts, written = _run(dataset, episodes, tmp_path, scripted)
    (only,) = written.values()
    env = _world_at(episode, index)
    here = state_key(env.state)
    env.step(wrong)
    assert only.steps[0].label is StepLabel.ERROR_ESCAPE and counts["error_recovery/skipped_back/no_undo"] == 1
    assert all(is_advancing(env, a) for a in only.steps[0].valid_actions)
    assert all(state_key(env.world.simulate(env.state, a)[0]) != here for a in only.steps[0].valid_actions)


def test_noop_mistakes_follow_the_rule(dataset, episodes, tmp_path):
    # toggle_setting-0 step 1 scrolls the Settings list; a click at the bottom of the empty list area does nothing.
    episode, index = episodes[TOGGLE], 1
    step = episode.steps[index]
    env = _world_at(episode, index)
    empty = Action(type=ActionType.CLICK, point=(3.0, 3.0), frame=env.world.frame)
    after, _ = env.world.simulate(env.state, empty)
    assert state_key(after) == state_key(env.state)  # precondition: a click with no visible effect
    scripted = {f"{TOGGLE}/{index}": [_text(step.action), _text(empty)]}
    _, counts, written = _run(dataset, episodes, tmp_path / "skip", scripted)
    assert counts["error_recovery/steps_error_prone"] == 1 and counts["error_recovery/skipped/only_noop_wrong"] == 1
    assert not written
    _, counts, written = _run(dataset, episodes, tmp_path / "keep", scripted, noop="keep")
    (only,) = written.values()
    assert only.steps[0].label is StepLabel.ERROR_ESCAPE and counts["error_recovery/skipped_back/noop"] == 1
    assert only.steps[0].valid_actions == step.valid_actions  # nothing changed: the target is A*_t itself


def test_unexecutable_mistakes_are_counted_not_written(dataset, episodes, tmp_path):
    # half the samples are correct, the rest are a parse failure or an early terminate: error-prone, but no
    # wrong action the world can execute and escape from
    key = f"{OPEN_FILE}/1"
    stop = Action(type=ActionType.TERMINATE, status="success")
    scripted = {key: [_text(episodes[OPEN_FILE].steps[1].action), "garbage", _text(episodes[OPEN_FILE].steps[1].action),
                      _text(stop)]}
    _, counts, written = _run(dataset, episodes, tmp_path, scripted, scorer="oracle")
    assert not written and counts["error_recovery/skipped/no_executable_wrong"] == 1
    assert counts["error_recovery/wrong_samples_unparsed"] == 1 and counts["error_recovery/wrong_samples_ending_episode"] == 1


def test_cli_with_a_real_tiny_model(dataset, tmp_path):
    from models_fixtures import tiny_model_dir

    from guirl.cli import build_parser
    from guirl.commands import UsageError

    out = tmp_path / "out"
    argv = ["datagen", "error-recovery", "--episodes", str(dataset / "train.jsonl"), "--model",
            str(tiny_model_dir("qwen3_vl")), "--out", str(out), "--samples", "2", "--limit-steps", "3",
            "--max-new-tokens", "8"]
    args = build_parser().parse_args(argv)
    assert args.func(args) == 0
    manifest = json.loads((out / "error_recovery_manifest.json").read_text())
    counts = manifest["counts"]
    assert counts["error_recovery/steps_sampled"] == 3 and counts["error_recovery/samples"] == 6
    assert sum(manifest["correct_samples_histogram"].values()) == 3
    read_episodes(out / "episodes.jsonl")  # written and valid, possibly empty for an untrained model
    with pytest.raises(UsageError, match="already holds"):
        args.func(build_parser().parse_args(argv))

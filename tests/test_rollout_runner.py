"""Episode runner, history window, policy adapters and recorder, on a tiny in-test env.

The env below is a complete (if tiny) implementation of the Env protocol: a
row of 4 numbered cells on a 40x10 screen; the task "click cell k" succeeds
when the cell's centre is clicked. The screenshot encodes the step count in
its red channel so tests can tell which screenshot a history entry shows.
"""

from __future__ import annotations

import time

import pytest
from PIL import Image

from guirl.actions.formats.registry import format_action
from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.data.io import read_episodes
from guirl.envs.base import Observation
from guirl.rollout import EpisodeRunner, EpisodeSpec, PolicyInput, PolicyOutput, TrajectoryRecorder, WindowHistory
from guirl.rollout.policy import as_policy, load_callable, oracle_policy

SCREEN = Frame.screen(40, 10)


class CellsEnv:
    """Click cell ``target`` (0..3, each 10 px wide) to succeed; wrong clicks do nothing."""

    def __init__(self, crash_at_step: int | None = None, hang_at_step: int | None = None):
        self.crash_at_step = crash_at_step
        self.hang_at_step = hang_at_step
        self.target = 0
        self.steps = 0
        self.closed = False

    def _obs(self) -> Observation:
        image = Image.new("RGB", (40, 10), (self.steps, 0, 0))
        centre = Action(type=ActionType.CLICK, point=(self.target * 10 + 5, 5), frame=SCREEN)
        return Observation(screenshot=image, instruction=f"click cell {self.target}", valid_actions=[centre])

    def reset(self, seed=None, options=None) -> Observation:
        self.target = (seed or 0) % 4
        self.steps = 0
        return self._obs()

    def step(self, action: Action):
        self.steps += 1
        if self.crash_at_step is not None and self.steps == self.crash_at_step:
            raise ConnectionError("the browser went away")
        if self.hang_at_step is not None and self.steps == self.hang_at_step:
            time.sleep(600)  # a hung browser: the pool's timeout must end this
        point = action.to_frame(SCREEN).target_point()
        hit = action.type is ActionType.CLICK and point is not None and int(point[0] // 10) == self.target
        return self._obs(), (1.0 if hit else 0.0), hit, False, {"success": hit}

    def close(self) -> None:
        self.closed = True


def click_cell(cell: int) -> Action:
    return Action(type=ActionType.CLICK, point=(cell * 10 + 5, 5), frame=SCREEN)


def test_oracle_succeeds_in_one_step_and_records_timings():
    runner = EpisodeRunner(oracle_policy, max_steps=5)
    rollout = runner.run_episode(CellsEnv(), EpisodeSpec(seed=6))  # target = 6 % 4 = 2
    assert rollout.success and rollout.failure_reason is None
    assert len(rollout.steps) == 1
    assert rollout.steps[0].action.point == (25, 5)  # centre of cell 2: 2*10 + 5
    assert set(rollout.steps[0].timings) == {"policy", "env"}
    assert rollout.total_reward == 1.0


def test_step_limit_ends_a_failing_episode():
    runner = EpisodeRunner(lambda inputs: click_cell(3), max_steps=4)
    rollout = runner.run_episode(CellsEnv(), EpisodeSpec(seed=0))  # target 0, always clicks 3
    assert not rollout.success
    assert len(rollout.steps) == 4
    assert rollout.failure_reason == "step limit reached (4 steps)"


def test_history_window_shows_last_outputs_and_images():
    seen: list[PolicyInput] = []

    def policy(inputs: PolicyInput) -> PolicyOutput:
        seen.append(inputs)
        return PolicyOutput(text=f"try {inputs.step_index}", action=click_cell(3))

    runner = EpisodeRunner(policy, max_steps=5, history=WindowHistory(steps=2, images=1))
    runner.run_episode(CellsEnv(), EpisodeSpec(seed=0))
    # step 4 sees steps 2 and 3; only step 3 (the newest) with its screenshot, whose red channel is 3
    last = seen[4]
    assert [item.output for item in last.history] == ["try 2", "try 3"]
    assert last.history_images[0] is None
    assert last.history_images[1].getpixel((0, 0)) == (3, 0, 0)
    assert last.episode["history_steps"] == [2, 3]
    assert seen[0].history == []


def test_text_answers_are_parsed_with_the_runner_format_and_garbage_is_a_noop_step():
    answers = iter(["I am not sure", format_action(click_cell(1), "pyautogui")])
    runner = EpisodeRunner(lambda inputs: next(answers), max_steps=3, action_format="pyautogui")
    rollout = runner.run_episode(CellsEnv(), EpisodeSpec(seed=1))
    first, second = rollout.steps
    assert first.action is None and "pyautogui" in first.parse_failure
    assert first.timings["env"] == 0.0  # nothing executed
    assert second.action.point == (15, 5) and rollout.success


def test_env_crash_fails_only_that_episode_with_the_reason():
    runner = EpisodeRunner(lambda inputs: click_cell(3), max_steps=5)
    env = CellsEnv(crash_at_step=2)
    crashed = runner.run_episode(env, EpisodeSpec(seed=0))
    assert not crashed.success and crashed.extra["crashed"]
    assert crashed.failure_reason == "step 1 failed: ConnectionError: the browser went away"
    assert len(crashed.steps) == 2 and crashed.steps[1].info["env_error"] == crashed.failure_reason
    env.crash_at_step = None
    assert EpisodeRunner(oracle_policy).run_episode(env, EpisodeSpec(seed=3)).success


def test_terminate_action_ends_the_episode():
    runner = EpisodeRunner(lambda inputs: Action(type=ActionType.TERMINATE, status="success"), max_steps=5)
    rollout = runner.run_episode(CellsEnv(), EpisodeSpec(seed=0))
    assert len(rollout.steps) == 1 and not rollout.success
    assert rollout.failure_reason == "the policy terminated before success"


def test_group_rollouts_and_recorder_round_trip(tmp_path):
    with TrajectoryRecorder(tmp_path, source="test", platform="web") as recorder:
        runner = EpisodeRunner(
            oracle_policy, max_steps=3, history=WindowHistory(steps=1, images=1), on_episode=recorder.record
        )
        group = runner.run_group(CellsEnv(), task=None, seed=5, group_size=3)
    assert [r.spec.group for r in group] == [0, 1, 2]
    episodes = read_episodes(tmp_path / "episodes.jsonl")  # validates every image reference
    assert len(episodes) == 3
    step = episodes[0].steps[0]
    assert episodes[0].success and episodes[0].extra["seed"] == 5
    assert step.valid_actions[0].point == (15, 5)  # target 5 % 4 = 1
    assert (tmp_path / step.screenshot.path).is_file()
    assert set(step.timings) == {"policy", "env"}


def test_policy_adapters_reject_bad_input():
    with pytest.raises(ValueError, match="package.module:callable"):
        load_callable("no_colon_here")
    with pytest.raises(ValueError, match="has no attribute"):
        load_callable("guirl.rollout.policy:nope")
    assert load_callable("guirl.rollout.policy:oracle_policy") is oracle_policy
    with pytest.raises(TypeError, match="PolicyOutput"):
        as_policy(lambda inputs: 42)(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_steps"):
        EpisodeRunner(oracle_policy, max_steps=0)
    with pytest.raises(ValueError, match="cannot exceed"):
        WindowHistory(steps=1, images=2)

"""Every registered MiniWoB++ task resets and steps in headless Chromium."""

from __future__ import annotations

import pytest

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.envs import make_env
from guirl.envs.miniwob import available_tasks

pytestmark = pytest.mark.browser  # no browser: skipped, or failed under GUIRL_REQUIRE_BROWSER=1 (conftest.py)


def reset_and_step(env, task: str) -> None:
    obs = env.reset(seed=0, options={"task": task})
    width, height = obs.screenshot.size
    assert obs.instruction, task
    assert obs.a11y, task
    # a click in the middle of the task area, in the unit frame (the Action default)
    result = env.step(Action(type=ActionType.CLICK, point=(0.5, 0.6), frame=Frame.unit()))
    assert result[0].screenshot.size == (width, height), task
    assert "action_error" not in result[4], (task, result[4])


def test_flight_tasks_get_the_larger_window():
    env = make_env("miniwob", task="flight.AA")
    try:
        obs = env.reset(seed=0)
        assert obs.screenshot.size == (375, 667)
        assert env._instance.inner_height >= 800  # the whole 800 px window is viewport
        assert max(node.box[3] for node in obs.a11y) > 400  # elements far below the 210 px of other tasks
    finally:
        env.close()


def test_task_registry_is_complete():
    tasks = available_tasks()
    assert len(tasks) >= 100
    assert {"click-button", "login-user", "flight.AA", "book-flight"} <= set(tasks)


@pytest.mark.slow
def test_every_registered_task_resets_and_steps():
    env = make_env("miniwob")
    failures = []
    try:
        for task in available_tasks():
            try:
                reset_and_step(env, task)
            except AssertionError as err:
                failures.append(f"{task}: {err}")
    finally:
        env.close()
    assert failures == []

"""MiniWoB++ through the real headless Chromium: scripted policies, action
conversion, a11y tree, task switching and the episode timer."""

from __future__ import annotations

import pytest

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.envs import make_env
from guirl.envs.miniwob.a11y import centre, find_nodes
from guirl.envs.miniwob.scripted import SCRIPTED_TASKS, scripted_policy
from guirl.rollout import EpisodeRunner, group_specs

pytestmark = pytest.mark.browser  # no browser: skipped, or failed under GUIRL_REQUIRE_BROWSER=1 (conftest.py)

REQUIRED_TASKS = ["click-button", "enter-text", "click-checkboxes", "login-user", "click-dialog"]


@pytest.fixture(scope="module")
def env():
    environment = make_env("miniwob", task="click-button")
    yield environment
    environment.close()


def test_scripted_policies_succeed_on_several_seeds(env):
    runner = EpisodeRunner(scripted_policy, max_steps=8)
    rollouts = runner.run_many(env, group_specs(REQUIRED_TASKS, seeds=range(4)))
    failures = [(r.spec.task, r.spec.seed, r.failure_reason) for r in rollouts if not r.success]
    assert failures == []
    assert set(REQUIRED_TASKS) <= set(SCRIPTED_TASKS)
    # login-user takes exactly 3 actions: type user, type password, click Login
    assert {len(r.steps) for r in rollouts if r.spec.task == "login-user"} == {3}


def test_observation_has_screenshot_instruction_and_a11y(env):
    obs = env.reset(seed=3, options={"task": "click-checkboxes"})
    assert obs.screenshot.size == (160, 210)
    assert obs.instruction.startswith("Select ")
    boxes = find_nodes(obs.a11y, role="checkbox")
    assert boxes and all(b.checked is False for b in boxes)
    # click the first checkbox with a point in Qwen3-VL's relative 0..1000 frame
    x, y = centre(boxes[0])
    relative = Action(type=ActionType.CLICK, point=(x / 160 * 1000, y / 210 * 1000), frame=Frame.relative(1000))
    obs, reward, terminated, _, info = env.step(relative)
    assert "action_error" not in info and not terminated
    assert find_nodes(obs.a11y, role="checkbox")[0].checked is True


def test_keys_typing_and_bad_actions(env):
    obs = env.reset(seed=1, options={"task": "enter-text"})
    field = find_nodes(obs.a11y, role="textbox")[0]
    screen = obs.frame
    obs, *_ = env.step(Action(type=ActionType.TYPE, point=centre(field), text="abc", frame=screen))
    assert find_nodes(obs.a11y, role="textbox")[0].value == "abc"
    obs, *_ = env.step(Action(type=ActionType.KEY, keys=("backspace",)))
    assert find_nodes(obs.a11y, role="textbox")[0].value == "ab"
    obs, *_ = env.step(Action(type=ActionType.KEY, keys=("ctrl", "a")))
    obs, *_ = env.step(Action(type=ActionType.TYPE, text="z"))  # replaces the selection
    assert find_nodes(obs.a11y, role="textbox")[0].value == "z"
    _, _, terminated, _, info = env.step(Action(type=ActionType.CLICK, point=(500, 5), frame=screen))
    assert "outside the 160x210 screen" in info["action_error"] and not terminated
    _, _, _, _, info = env.step(Action(type=ActionType.KEY, keys=("hyperspace",)))
    assert "unknown key name" in info["action_error"]
    _, _, _, _, info = env.step(Action(type=ActionType.OPEN_APP, text="mail"))
    assert info["action_error"] == "open_app is not supported in MiniWoB"


def test_terminate_ends_without_success(env):
    env.reset(seed=0, options={"task": "click-button"})
    _, reward, terminated, _, info = env.step(Action(type=ActionType.TERMINATE, status="success"))
    assert terminated and reward == 0.0 and info["success"] is False


def test_episode_timer_is_extended(env):
    env.reset(seed=0, options={"task": "click-button"})
    driver = env._instance.driver
    assert driver.execute_script("return core.EPISODE_MAX_TIME;") == 600_000  # default 600 s, task default 10 s


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(ValueError, match="known tasks: .*click-button"):
        make_env("miniwob", task="click-nothing")


def test_scroll_moves_the_content_by_wheel_clicks(env):
    env.reset(seed=3, options={"task": "scroll-text-2"})
    driver = env._instance.driver
    scroll_top = "return document.querySelector('textarea').scrollTop;"
    before = driver.execute_script(scroll_top)
    env.step(Action(type=ActionType.SCROLL, point=(70, 100), direction="down", amount=2, frame=env.frame))
    after_down = driver.execute_script(scroll_top)
    env.step(Action(type=ActionType.SCROLL, point=(70, 100), direction="up", amount=1, frame=env.frame))
    # 2 wheel clicks of miniwob's 50 px down, then 1 up: +100, then -50
    assert (after_down - before, driver.execute_script(scroll_top) - after_down) == (100, -50)


def test_drag_moves_the_small_box_into_the_large_one(env):
    obs = env.reset(seed=1, options={"task": "drag-box"})
    small, large = find_nodes(obs.a11y, text="s")[0], find_nodes(obs.a11y, text="L")[0]
    obs, *_ = env.step(Action(type=ActionType.DRAG, point=centre(small), end_point=centre(large), frame=obs.frame))
    submit = find_nodes(obs.a11y, role="button", text="Submit")[0]
    _, reward, terminated, _, info = env.step(Action(type=ActionType.CLICK, point=centre(submit), frame=obs.frame))
    assert terminated and reward == 1.0 and info["success"]


def test_oracle_gives_the_experts_valid_actions_and_advancing():
    """``oracle=True``: A*_t from the scripted expert in every non-final observation; ``advancing`` after a step
    says whether the action matched it (or won); a task with no script gets neither."""
    environment = make_env("miniwob", task="login-user", oracle=True)
    try:
        obs = environment.reset(seed=2)
        (expected,) = obs.valid_actions
        assert expected.type is ActionType.TYPE  # the user name into its field
        wrong = Action(type=ActionType.CLICK, point=(2, 2), frame=obs.frame)
        obs, _, terminated, _, info = environment.step(wrong)
        assert info["advancing"] is False and not terminated
        assert obs.valid_actions == [expected]  # nothing changed on the page: the expert wants the same action
        for _ in range(3):  # type user, type password, click Login
            obs, _, terminated, _, info = environment.step(obs.valid_actions[0])
            assert info["advancing"] is True
            if terminated:
                break
        assert terminated and info["success"] and obs.valid_actions is None  # the final page has no next action
        obs = environment.reset(seed=0, options={"task": "click-link"})  # no scripted expert
        assert obs.valid_actions is None
        _, _, _, _, info = environment.step(Action(type=ActionType.CLICK, point=(80, 100), frame=obs.frame))
        assert "advancing" not in info
    finally:
        environment.close()

"""``routed``: one environment slot playing built-in-world and MiniWoB++ tasks by the task's prefix."""

from __future__ import annotations

import pytest

from guirl.actions import Action, ActionType, Frame
from guirl.envs import make_env
from guirl.envs.sim.env import SimEnv


def test_routed_sends_the_task_to_its_environment_and_steps_it():
    env = make_env("routed", envs={"sim": {"preset": "coarse"}})
    try:
        obs = env.reset(seed=4, options={"task": "sim:web.ground"})
        alone = SimEnv(preset="coarse").reset(seed=4, options={"task": "web.ground"})
        assert obs.instruction == alone.instruction and obs.info["env"] == "sim"
        valid = obs.valid_actions[0]
        _, reward, terminated, _, info = env.step(valid)
        assert terminated and reward == 1.0 and info["success"]
        with pytest.raises(ValueError, match="'<env>:<task>'"):
            env.reset(seed=1, options={"task": "web.ground"})
        with pytest.raises(ValueError, match="was not given"):
            env.reset(seed=1, options={"task": "miniwob:click-button"})
    finally:
        env.close()


@pytest.mark.browser
def test_routed_mixes_the_built_in_world_and_miniwob():
    env = make_env("routed", envs={"sim": {"preset": "coarse"}, "miniwob": {}})
    try:
        web = env.reset(seed=0, options={"task": "miniwob:click-button"})
        assert web.info["env"] == "miniwob" and web.screenshot.size == (160, 210)
        env.step(Action(type=ActionType.CLICK, point=(80, 100), frame=Frame.screen(160, 210)))
        sim = env.reset(seed=0, options={"task": "sim:desktop.open_file"})
        assert sim.info["env"] == "sim" and sim.valid_actions
        again = env.reset(seed=1, options={"task": "miniwob:click-button"})
        assert again.info["env"] == "miniwob"
    finally:
        env.close()

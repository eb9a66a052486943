"""The sim world behind the Env protocol: determinism, robustness, frames, presets, a11y."""

from __future__ import annotations

import random

import pytest

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.envs import Env, make_env
from guirl.envs.sim import SimEnv, available_tasks, get_preset
from guirl.envs.sim.engine import state_key


def test_registered_and_protocol():
    env = make_env("sim", domain="web", preset="coarse")
    assert isinstance(env, Env)
    obs = env.reset(seed=0)
    assert obs.screenshot.size == (512, 512) and obs.instruction and obs.valid_actions
    assert obs.info["domain"] == "web" and obs.info["task"].startswith("web.") and obs.info["step"] == 0
    env.close()


def test_unknown_names_error_with_choices():
    with pytest.raises(ValueError, match="choose one of"):
        SimEnv(task="desktop.nope")
    with pytest.raises(ValueError, match="preset"):
        SimEnv(preset="huge")
    with pytest.raises(ValueError, match="domain"):
        SimEnv(domain="tv")


def _rollout_bytes(task: str, seed: int, preset: str) -> list[bytes]:
    env = SimEnv(task=task, preset=preset)
    obs = env.reset(seed=seed)
    rng = random.Random(seed)
    shots = [obs.screenshot.tobytes()]
    done = False
    while not done:
        obs, _, term, trunc, _ = env.step(rng.choice(obs.valid_actions))
        shots.append(obs.screenshot.tobytes())
        done = term or trunc
    return shots


@pytest.mark.parametrize("task,preset", [("desktop.export_document", "realistic"), ("web.shopping", "coarse"),
                                         ("mobile.add_contact", "hd")])
def test_same_seed_same_pixels(task, preset):
    assert _rollout_bytes(task, 7, preset) == _rollout_bytes(task, 7, preset)
    assert _rollout_bytes(task, 7, preset) != _rollout_bytes(task, 8, preset)


def test_bad_actions_never_crash():
    env = SimEnv(domain="desktop", task="desktop.open_file", preset="realistic")
    env.reset(seed=0)
    before = state_key(env.state)
    frame = env.world.frame
    for action in [
        Action(type=ActionType.CLICK, point=(5000, -3), frame=frame),  # off screen
        Action(type=ActionType.CLICK, point=(1.5, 0.5)),  # unit frame, off screen
        Action(type=ActionType.DRAG, point=(10, 10), end_point=(50, 50), frame=frame),
        Action(type=ActionType.TYPE, text="nothing is focused"),
        Action(type=ActionType.KEY, keys=("ctrl", "alt", "f13")),
        Action(type=ActionType.SELECT, point=(20, 20), text="Nope", frame=frame),
        Action(type=ActionType.SCROLL, direction="left"),
        Action(type=ActionType.OPEN_APP, text="Files"),
        Action(type=ActionType.CLICK),  # no point
        Action(type=ActionType.CLICK, point=(10, 10), frame=Frame.screen()),  # a frame without size
        ParseFailure(reason="garbage"),
    ]:
        _, reward, terminated, truncated, info = env.step(action)
        assert reward == 0.0 and not terminated
        assert info["effect"] in ("no_effect", "out_of_screen", "unsupported", "invalid_action"), (action, info)
        assert info["advancing"] is False if "advancing" in info else True
        if truncated:
            break
    assert state_key(env.state) == before


def test_action_in_relative_frame_is_converted():
    env = SimEnv(task="desktop.open_file", preset="realistic")
    env.reset(seed=0)
    widget = env.world.screen().find("icon.Files")
    x1, y1, x2, y2 = widget.box
    # the icon centre in Qwen3-VL's 0-1000 frame: x = cx / 1280 * 1000, y = cy / 800 * 1000
    point = ((x1 + x2) / 2 / 1280 * 1000, (y1 + y2) / 2 / 800 * 1000)
    _, _, _, _, info = env.step(Action(type=ActionType.DOUBLE_CLICK, point=point, frame=Frame.relative(1000)))
    assert info["hit"] == "icon.Files" and info["advancing"] and env.state["app"] == "files"


def test_step_limit_truncates_and_terminate_early_fails():
    env = SimEnv(task="web.search_open", preset="coarse", max_steps=3)
    env.reset(seed=1)
    results = [env.step(Action(type=ActionType.WAIT)) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True] and all(r[1] == 0.0 for r in results)
    assert env.step(Action(type=ActionType.WAIT))[4]["effect"] == "episode_over"
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step(Action(type=ActionType.TERMINATE, status="success"))
    assert terminated and not truncated and reward == 0.0 and info["success"] is False


def test_grounding_is_one_click_checked_by_state():
    env = SimEnv(domain="mobile", task="ground", preset="coarse")
    for seed in range(5):
        obs = env.reset(seed=seed)
        assert obs.instruction.startswith("Tap ") and len(obs.valid_actions) == 1
        target = obs.valid_actions[0]
        x1, y1, x2, y2 = target.box
        _, reward, terminated, _, _ = env.step(target.model_copy(update={"point": (x1 + 1, y2 - 1)}))
        assert terminated and reward == 1.0
        obs = env.reset(seed=seed)
        _, reward, terminated, _, _ = env.step(Action(type=ActionType.CLICK, point=(x2 + 1000, y1), frame=env.world.frame))
        assert terminated and reward == 0.0


def test_observation_fields_and_a11y():
    env = SimEnv(task="desktop.change_settings", preset="coarse")
    obs = env.reset(seed=2)
    ids = {n.id for n in obs.a11y}
    assert all(n.parent is None or n.parent in ids for n in obs.a11y)
    assert obs.subtasks[0].status == "in_progress" and all(s.status == "pending" for s in obs.subtasks[1:])
    assert obs.sub_goal == obs.subtasks[0].description
    for action in obs.valid_actions:
        assert action.frame == Frame.screen(512, 512)
        if action.box:
            assert 0 <= action.box[0] < action.box[2] <= 512 and 0 <= action.box[1] < action.box[3] <= 512
    while obs.valid_actions[0].type is not ActionType.TERMINATE:
        obs = env.step(obs.valid_actions[0])[0]
    assert all(s.status == "done" for s in obs.subtasks)
    checked = [n for n in obs.a11y if n.role == "checkbox"]
    assert checked and all(n.checked is not None for n in checked)


@pytest.mark.parametrize("domain", ["desktop", "web", "mobile"])
def test_coarse_widgets_stay_large_after_downscaling(domain):
    # the tiny models: at a 256x256 input a target must cover at least one merged 32-px vision token; coarse
    # controls are 72 px on a 512-high screen -> 72 * 256 / 512 = 36 px
    preset = get_preset("coarse", domain)
    scale = 256 / preset.height
    for seed in range(25):
        obs = SimEnv(domain=domain, task="ground", preset="coarse").reset(seed=seed)
        _, y1, _, y2 = obs.valid_actions[0].box
        assert (y2 - y1) * scale >= 32, (obs.instruction, y2 - y1)


def test_presets_and_screen_sizes():
    assert (get_preset("realistic", "desktop").width, get_preset("realistic", "desktop").height) == (1280, 800)
    assert (get_preset("realistic", "mobile").width, get_preset("realistic", "mobile").height) == (540, 1200)
    assert (get_preset("hd", "mobile").width, get_preset("hd", "mobile").height) == (1080, 2400)
    env = SimEnv(domain="web", preset="realistic", screen_size=(1024, 768), task="web.search_open")
    assert env.reset(seed=0).screenshot.size == (1024, 768)
    with pytest.raises(ValueError, match="too small"):
        get_preset("coarse", "web", (50, 50))
    assert len(available_tasks()) == 13


def test_example_images_are_reproducible_and_small(tmp_path):
    from pathlib import Path

    from PIL import Image

    from guirl.envs.sim.examples import save_example_images

    docs = Path(__file__).resolve().parents[1] / "docs" / "images"
    for path in save_example_images(tmp_path):
        assert path.stat().st_size < 150_000, path
        committed = docs / path.name
        assert committed.stat().st_size < 150_000, committed
        with Image.open(committed) as old, Image.open(path) as new:  # pixels may differ across Pillow versions
            assert old.size == new.size, f"regenerate {committed} with python -m guirl.envs.sim.examples"


def test_an_env_without_a_domain_follows_each_resets_task():
    from guirl.envs.sim.env import SimEnv

    env = SimEnv()
    for task in ("desktop.open_file", "mobile.add_contact", "web.fill_form", "desktop.ground"):
        obs = env.reset(seed=11, options={"task": task})
        alone = SimEnv(domain=task.split(".")[0]).reset(seed=11, options={"task": task})
        assert obs.info["domain"] == task.split(".")[0] and obs.instruction == alone.instruction
        assert obs.screenshot.tobytes() == alone.screenshot.tobytes()
    with pytest.raises(ValueError, match="not in domain"):
        SimEnv(domain="desktop", task="web.fill_form")

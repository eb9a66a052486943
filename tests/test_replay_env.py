"""The replay env (semi-online RL of UI-S1 / CCPO): matching, patching, threshold, data loading."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.io import write_episodes
from guirl.data.schema import Episode, ImageRef, Step, StepLabel
from guirl.envs import Env, make_env
from guirl.envs.replay import ReplayEnv, UIS1Matcher
from guirl.rollout.runner import EpisodeRunner

FIXTURES = Path(__file__).parent / "fixtures" / "datasets"
W, H = 100, 200
SCREEN = Frame.screen(W, H)
COLOURS = [(200, 0, 0), (0, 200, 0), (0, 0, 200), (200, 200, 0), (0, 200, 200)]


def click(x: float, y: float, box=None) -> Action:
    return Action(type=ActionType.CLICK, point=(x, y), box=box, frame=SCREEN)


GT = [
    click(50, 40, box=(40, 30, 60, 50)),
    Action(type=ActionType.TYPE, text="Hello World"),
    Action(type=ActionType.SCROLL, direction="down"),
    click(20, 150),
    Action(type=ActionType.TERMINATE, status="success"),
]
WRONG = click(95, 195)  # far from every target


def px(action: Action) -> Action:
    """The env gives recorded actions in screen pixels of the screenshot."""
    return action.to_frame(SCREEN)


def make_episode(root: Path, eid: str = "ep0", n: int = 5, thoughts: bool = True, low_level: bool = False) -> Episode:
    steps = []
    for i in range(n):
        name = f"{eid}_{i}.png"
        Image.new("RGB", (W, H), COLOURS[i % len(COLOURS)]).save(root / name)
        steps.append(Step(index=i, screenshot=ImageRef(path=name, width=W, height=H), action=GT[i],
                          reasoning=f"thought {i}" if thoughts else None,
                          instruction=f"do step {i}" if low_level else None))
    return Episode(id=eid, instruction=f"goal of {eid}", steps=steps, source="test")


@pytest.fixture
def env(tmp_path) -> ReplayEnv:
    return ReplayEnv([make_episode(tmp_path)], tmp_path)


def colour(obs) -> tuple[int, int, int]:
    return obs.screenshot.getpixel((0, 0))


def test_protocol_and_reset(env):
    assert isinstance(env, Env)
    obs = env.reset(seed=0)
    assert obs.instruction == "goal of ep0" and obs.screenshot.size == (W, H) and colour(obs) == COLOURS[0]
    assert obs.valid_actions == [px(GT[0])]
    assert obs.info["episode"] == "ep0" and obs.info["step"] == 0 and obs.info["steps"] == 5
    assert obs.info["first_mismatch"] is None and obs.info["patches_used"] == 0


def test_all_matched_is_success(env):
    env.reset(options={"episode": "ep0"})
    rewards = []
    for i, action in enumerate(GT):
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        assert info["matched"] and not info["patched"] and info["history_action"] == action
        assert info["history_thought"] is None and info["judged_step"] == i and info["valid_actions"] == [px(GT[i])]
        assert terminated == (i == len(GT) - 1) and not truncated
        if not terminated:
            assert colour(obs) == COLOURS[i + 1] and obs.info["step"] == i + 1
    assert rewards == [1.0] * 5 and info["success"] and info["patches_used"] == 0
    assert info["first_mismatch"] is None and obs.valid_actions is None


def test_one_mismatch_is_patched_and_continues(env):
    env.reset(options={"episode": 0})
    env.step(GT[0])
    obs, reward, terminated, _, info = env.step(Action(type=ActionType.TYPE, text="something else"))
    assert reward == 0.0 and not terminated and not info["matched"] and info["patched"]
    assert info["history_action"] == px(GT[1]) and info["history_thought"] == "thought 1"
    assert info["expert_action"] == px(GT[1]) and info["patches_used"] == 1 and info["first_mismatch"] == 1
    assert colour(obs) == COLOURS[2] and obs.valid_actions == [px(GT[2])]  # moved to the next recorded screen
    for action in GT[2:]:
        obs, reward, terminated, _, info = env.step(action)
        assert reward == 1.0 and info["first_mismatch"] == 1
    assert terminated and not info["success"] and info["patches_used"] == 1


def test_threshold_ends_at_the_mismatch_after_the_last_patch(tmp_path):
    env = ReplayEnv([make_episode(tmp_path)], tmp_path, patch_threshold=2)
    env.reset(seed=1)
    results = [env.step(WRONG) for _ in range(3)]
    assert [r[2] for r in results] == [False, False, True]  # the 3rd mismatch ends it
    assert [r[4]["patched"] for r in results] == [True, True, False]
    obs, reward, _, _, info = results[-1]
    assert reward == 0.0 and info["effect"] == "ended" and not info["success"] and info["patches_used"] == 2
    assert info["judged_step"] == 2 and obs.info["step"] == 2 and colour(obs) == COLOURS[2]  # did not move
    assert info["first_mismatch"] == 0 and "after 2 patches" in info["reason"]
    obs, reward, terminated, _, info = env.step(GT[3])  # stepping an ended episode is harmless
    assert terminated and reward == 0.0 and info["effect"] == "episode_over"


@pytest.mark.parametrize("threshold, ends_at", [(0, 0), (1, 1), (-1, None)])
def test_threshold_values(tmp_path, threshold, ends_at):
    env = ReplayEnv([make_episode(tmp_path)], tmp_path, patch_threshold=threshold)
    env.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(WRONG)
    if ends_at is None:  # -1: every mismatch patched, the episode runs to its end
        assert info["judged_step"] == 4 and info["patched"] and info["patches_used"] == 5 and not info["success"]
    else:
        assert info["judged_step"] == ends_at and not info["patched"] and info["effect"] == "ended"


def test_garbage_counts_as_mismatch(env):
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(ParseFailure(reason="no action tag", raw="blah"))
    assert reward == 0.0 and not terminated and info["patched"] and "parse failure" in info["match_error"]
    _, _, _, _, info = env.step(None)
    assert info["patched"] and info["history_action"] == px(GT[1])
    _, _, terminated, _, info = env.step("click(3, 4)")  # not an Action at all
    assert terminated and not info["matched"] and "not an Action" in info["match_error"]
    assert info["history_action"] is None


def test_unconvertible_action_is_a_mismatch_not_a_crash(env):
    env.reset(seed=0)
    sizeless = Action(type=ActionType.CLICK, point=(50, 40), frame=Frame(kind="resized"))
    _, reward, _, _, info = env.step(sizeless)
    assert reward == 0.0 and info["patched"] and "ValueError" in info["match_error"]


def test_default_matcher_is_uis1(env):
    matcher = env.matcher
    assert isinstance(matcher, UIS1Matcher)
    assert matcher.options == {"rule": "uis1", "value_rule": "substring", "direction_rule": "exact",
                               "merge_scroll_swipe": True}
    steps = env.episodes[0].steps
    assert matcher(click(61, 40), steps[0])  # outside the box, inside it enlarged 1.2x (x 38..62)
    assert not matcher(click(80, 40), steps[0])
    assert matcher(click(23, 150), steps[3])  # point target: normalised distance 0.03 <= 0.04
    assert not matcher(click(23, 157), steps[3])  # sqrt(0.03^2 + 0.035^2) = 0.046: no aspect correction
    assert matcher(Action(type=ActionType.TYPE, text="hello"), steps[1])  # substring, case-insensitive
    assert not matcher(Action(type=ActionType.TYPE, text="goodbye"), steps[1])
    assert matcher(Action(type=ActionType.SWIPE, direction="down"), steps[2])  # scroll == swipe type
    assert not matcher(Action(type=ActionType.SCROLL, direction="up"), steps[2])
    assert not matcher(ParseFailure(reason="x"), steps[0]) and not matcher(None, steps[0])
    with pytest.raises(ValueError, match="value_rule"):
        UIS1Matcher(value_rule="fuzzy")


def test_matcher_is_replaceable(tmp_path):
    seen = []

    def always(action, step):
        seen.append((action, step.index))
        return True

    env = ReplayEnv([make_episode(tmp_path)], tmp_path, matcher=always)
    env.reset(seed=0)
    for _ in range(5):
        _, reward, terminated, _, info = env.step(WRONG)
        assert reward == 1.0 and info["history_action"] == WRONG
    assert terminated and info["success"] and [i for _, i in seen] == [0, 1, 2, 3, 4]
    lenient = ReplayEnv([make_episode(tmp_path)], tmp_path, direction_rule="any")
    lenient.reset(seed=0)
    lenient.step(GT[0])
    lenient.step(GT[1])
    assert lenient.step(Action(type=ActionType.SCROLL, direction="up"))[4]["matched"]
    with pytest.raises(ValueError, match="module:callable"):
        ReplayEnv([make_episode(tmp_path)], tmp_path, matcher="not a spec")


def test_reset_choice_and_instruction_levels(tmp_path):
    episodes = [make_episode(tmp_path, f"ep{i}", n=2, low_level=i == 1) for i in range(4)]
    env = ReplayEnv(episodes, tmp_path)
    picks = [env.reset(seed=s).info["episode"] for s in range(6)]
    assert picks == [env.reset(seed=s).info["episode"] for s in range(6)]  # seeded choice is deterministic
    assert env.reset(options={"episode": "ep1"}).instruction == "do step 0"  # low level: the step's
    assert env.reset(options={"episode": -1}).instruction == "goal of ep3"
    assert ReplayEnv(episodes, tmp_path, instruction="episode").reset(options={"episode": 1}).instruction == "goal of ep1"
    with pytest.raises(ValueError, match="no episode with id 'nope'"):
        env.reset(options={"episode": "nope"})
    with pytest.raises(ValueError, match="out of range"):
        env.reset(options={"episode": 9})
    with pytest.raises(ValueError, match="step ep0|no step instruction"):
        ReplayEnv(episodes, tmp_path, instruction="step")
    with pytest.raises(RuntimeError, match="reset"):
        ReplayEnv(episodes, tmp_path).step(GT[0])


def test_make_env_guirl_jsonl(tmp_path):
    episodes = [make_episode(tmp_path, f"ep{i}", n=3) for i in range(2)]
    write_episodes(tmp_path / "episodes.jsonl", episodes)
    for data in (tmp_path / "episodes.jsonl", tmp_path):
        env = make_env("replay", data=str(data), data_format="guirl", patch_threshold=0)
        assert isinstance(env, ReplayEnv) and env.patch_threshold == 0
        obs = env.reset(options={"episode": "ep1"})
        assert obs.valid_actions == [px(GT[0])]
        for action in GT[:3]:
            *_, terminated, _, info = env.step(action)
        assert terminated and info["success"]
    with pytest.raises(ValueError, match="no split"):
        make_env("replay", data=str(tmp_path), split="train")


@pytest.mark.parametrize("fmt, low", [("androidcontrol", False), ("androidcontrol_low", True)])
def test_adapter_format(fmt, low):
    env = make_env("replay", data=str(FIXTURES / "androidcontrol" / "episodes.jsonl"), data_format=fmt)
    obs = env.reset(seed=0)
    assert obs.instruction == ("Open the Settings app" if low else "Turn on Wi-Fi in the settings")
    assert obs.a11y and obs.screenshot.size == (108, 240)
    terminated = False
    while not terminated:  # the expert replays its own trajectory
        obs, reward, terminated, _, info = env.step(obs.valid_actions[0])
        assert reward == 1.0
    assert info["success"] and info["steps"] == 3


def test_runner_drives_replay(env):
    runner = EpisodeRunner(lambda inputs: inputs.observation.valid_actions[0], max_steps=10)
    rollout = runner.run_episode(env)
    assert rollout.success and len(rollout.steps) == 5 and rollout.total_reward == 5.0
    wrong = EpisodeRunner(lambda inputs: WRONG, max_steps=10).run_episode(env)
    assert not wrong.success and len(wrong.steps) == 3 and wrong.total_reward == 0.0


def _bad(tmp_path, **changes) -> Episode:
    ep = make_episode(tmp_path, "bad", n=3)
    steps = list(ep.steps)
    steps[1] = steps[1].model_copy(update=changes)
    return ep.model_copy(update={"steps": steps})


def test_bad_data_errors_at_construction(tmp_path):
    good = make_episode(tmp_path, "good", n=2)
    with pytest.raises(ValueError, match="episode 'empty' has no steps"):
        ReplayEnv([good, Episode(id="empty", instruction="x")], tmp_path)
    with pytest.raises(ValueError, match="episode 'bad', step 1 .*no ground truth"):
        ReplayEnv([_bad(tmp_path, action=None, valid_actions=[])], tmp_path)
    missing = ImageRef(path="nowhere.png", width=W, height=H)
    with pytest.raises(ValueError, match="episode 'bad', step 1 .*'nowhere.png' does not exist"):
        ReplayEnv([_bad(tmp_path, screenshot=missing)], tmp_path)
    with pytest.raises(ValueError, match="episode 'bad', step 1 .*labelled 'error'"):
        ReplayEnv([_bad(tmp_path, label=StepLabel.ERROR)], tmp_path)
    sizeless = Action(type=ActionType.CLICK, point=(1, 1), frame=Frame(kind="resized"))
    with pytest.raises(ValueError, match="episode 'bad', step 1 .*screen pixels"):
        ReplayEnv([_bad(tmp_path, action=sizeless)], tmp_path)
    with pytest.raises(ValueError, match="at least one"):
        ReplayEnv([], tmp_path)
    with pytest.raises(ValueError, match="twice"):
        ReplayEnv([good, good], tmp_path)
    with pytest.raises(ValueError, match="patch_threshold"):
        ReplayEnv([good], tmp_path, patch_threshold=-2)


@pytest.mark.parametrize("fmt, data", [("gui_odyssey", "gui_odyssey/annotations"), ("aitw", "aitw/steps.jsonl"),
                                       ("mind2web", "mind2web/tasks.json")])
def test_expert_replays_public_formats(fmt, data):
    env = make_env("replay", data=str(FIXTURES / data), data_format=fmt)
    obs, terminated = env.reset(options={"episode": 0}), False
    while not terminated:
        obs, reward, terminated, _, info = env.step(obs.valid_actions[0])
        assert reward == 1.0
    assert info["success"]

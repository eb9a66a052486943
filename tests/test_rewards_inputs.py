"""Reward inputs: the columns built from a built-in-world Step are the ones the rewards read,
and every registered reward accepts them (the oracle action scores its top, garbage 0)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from guirl.actions import Action, Frame, format_action
from guirl.data.schema import Episode, HistoryItem, ImageRef, Step
from guirl.judges import JudgeRequest, JudgeResult
from guirl.rewards import available_rewards, columns_for, make_reward, reward_columns
from guirl.rewards.inputs import COLUMN_NAMES

REWARDS_DIR = Path(__file__).resolve().parents[1] / "guirl" / "rewards"


class FullMarksJudge:
    def __call__(self, request: JudgeRequest) -> JudgeResult:
        return JudgeResult(verdict={"score": 10 if request.role == "subgoal" else 1.0})


def build(name: str):
    if name == "litegui_md":
        return make_reward(name, judge=FullMarksJudge())
    if name == "infigui_agent":
        return make_reward(name, subgoal_judge=FullMarksJudge())
    return make_reward(name)


def test_columns_of_a_sim_step(sim_episode):
    step = sim_episode.steps[1]  # the second click: one valid action, one history item
    frame = Frame.screen(step.screenshot.width, step.screenshot.height)
    columns = reward_columns(step, sim_episode, frame)
    assert tuple(columns) == COLUMN_NAMES
    assert columns["valid_actions"] == step.valid_actions and columns["output_frame"] == frame
    assert columns["screen_size"] == (384, 512)
    assert columns["instruction"] == sim_episode.instruction and columns["sub_goal"] == "Open 'Airplane mode'"
    assert columns["history"] == ["click the 'Settings' icon"]  # the recorded action description
    assert columns["plan"][0] == {"description": "Open Settings", "status": "done"}
    assert columns["images"] == [] and columns["is_grounding"] is False
    json.dumps(columns["plan"])  # plain data, not pydantic models
    # the policy's own outputs replace the recorded history
    assert reward_columns(step, sim_episode, frame, history_outputs=["y0"])["history"] == ["y0"]


def test_fallbacks_and_errors():
    shot = ImageRef(path="s.png", width=100, height=200)
    recorded = Action(type="back")
    step = Step(index=0, screenshot=shot, action=recorded, instruction="go back now",
                history=[HistoryItem(output="<answer>y</answer>"), HistoryItem(action=Action(type="home"))])
    episode = Episode(id="e", instruction="the task", steps=[step])
    columns = reward_columns(step, episode, Frame.screen(100, 200))
    assert columns["valid_actions"] == [recorded]  # no A*_t annotated: the recorded action
    assert columns["instruction"] == "go back now" and columns["plan"] is None
    assert columns["history"] == ["<answer>y</answer>", '{"type":"home"}']  # raw output, else the action
    with pytest.raises(ValueError, match="step 0: no valid_actions"):
        reward_columns(step.model_copy(update={"action": None}), episode, Frame.screen(100, 200))


def test_columns_for_repeats_each_step_for_its_group():
    stacked = columns_for([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], group_size=3)
    assert stacked == {"a": [1, 1, 1, 2, 2, 2], "b": ["x", "x", "x", "y", "y", "y"]}
    with pytest.raises(ValueError, match="group_size"):
        columns_for([{"a": 1}], group_size=0)
    with pytest.raises(ValueError, match="step 1 has columns"):
        columns_for([{"a": 1}, {"b": 2}], group_size=1)


def test_names_are_exactly_those_the_rewards_read():
    read = set()
    for path in REWARDS_DIR.glob("*.py"):
        read |= set(re.findall(r'get_column\(\s*columns,\s*"(\w+)"', path.read_text()))
    per_completion = {"completion_ids"}  # TRL passes it per completion
    alternative = {"action"}  # the one-action form of valid_actions
    assert read - per_completion - alternative == set(COLUMN_NAMES)


def test_every_registered_reward_accepts_the_columns(sim_episode):
    steps = sim_episode.steps[:3]  # three clicks (box and point), G = 2 completions each
    frame = Frame.screen(384, 512)
    columns = columns_for([reward_columns(s, sim_episode, frame) for s in steps], group_size=2)
    from guirl.rewards.base import REWARDS

    names = [n for n in available_rewards() if REWARDS.get(n).__module__.startswith("guirl.")]  # not test rewards
    assert len(names) >= 8
    for name in names:
        reward = build(name)
        fmt = getattr(reward, "fmt", None) or reward.ms.fmt
        oracle = [f"<think>the target is on screen</think>{format_action(s.valid_actions[0], fmt)}" for s in steps]
        completions = [text for o in oracle for text in (o, "no idea")]  # [B x G]: oracle, garbage per step
        scores = reward(completions, completion_ids=[[0] * 8] * len(completions), **columns)
        low, high = reward.score_range
        assert scores[1::2] == [low] * 3, name  # garbage: the bottom of the range
        if name != "infigui_box":  # infigui_box scores predicted boxes; a click has none (format only)
            assert scores[0::2] == pytest.approx([high] * 3), name

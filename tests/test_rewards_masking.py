"""A judge that fails masks its component (nan, flagged, left out of the score); the rest is kept."""

from __future__ import annotations

import json
import math

import pytest

from guirl.actions import Action, Frame
from guirl.judges import JudgeRequest, JudgeResult
from guirl.rewards import RewardOutput, make_reward

SCREEN = Frame.screen(1000, 1000)
CLICK_GT = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)


class FlakyJudge:
    """Answers ``score`` unless the request's text holds a trigger word: ``RAISE`` -> the call
    raises, ``NOTOK`` -> ``ok=False``, ``JUNK`` -> an ok answer with no number."""

    def __init__(self, score: float) -> None:
        self.score, self.calls = score, 0

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        self.calls += 1
        text = json.dumps(request.fields, default=str)
        if "RAISE" in text:
            raise ConnectionError("judge server went away")
        if "NOTOK" in text:
            return JudgeResult(verdict={}, raw="<garbled>", ok=False, reason="unreadable")
        if "JUNK" in text:
            return JudgeResult(verdict={"score": "high"}, raw='{"score": "high"}')
        return JudgeResult(verdict={"score": self.score}, raw=json.dumps({"score": self.score}))


def test_metrics_average_valid_values_and_count_failures():
    out = RewardOutput(
        scores=[0.9, 0.6, 0.3],
        components={"subtask": [1.0, math.nan, 0.5], "gui": [1.0, 1.0, 0.5]},
        failed={"subtask": [False, True, False]},
    )
    m = out.metrics("md")
    # subtask: mean of the valid 1.0 and 0.5 = 0.75 (not (1 + 0 + 0.5) / 3 = 0.5); one failure
    assert m["rewards/md/subtask"] == pytest.approx(0.75) and m["rewards/md/subtask_failed"] == 1.0
    assert m["rewards/md/score"] == pytest.approx(0.6) and m["rewards/md/gui"] == pytest.approx(2.5 / 3)
    all_failed = RewardOutput([0.0], {"subtask": [math.nan]}, {"subtask": [True]}).metrics("md")
    assert math.isnan(all_failed["rewards/md/subtask"]) and all_failed["rewards/md/subtask_failed"] == 1.0


def litegui(plan: str) -> str:
    action = {"type": "CLICK", "position": [275, 150]}  # R_ms = (1 + 0.75) / 2 = 0.875
    return json.dumps({"reasoning": "r", "subtasks": [{"description": plan, "status": "in_progress"}],
                       "action": action})


def test_planning_judge_failures_are_masked():
    judge = FlakyJudge(0.8)
    reward = make_reward("litegui_md", judge=judge)
    completions = [litegui("open settings"), litegui("RAISE"), litegui("NOTOK"), litegui("JUNK"), "no plan"]
    out = reward.score(
        completions,
        valid_actions=[[CLICK_GT]] * 5,
        output_frame=[SCREEN] * 5,
        instruction=["open settings"] * 5,
        completion_ids=[[0] * 10] * 5,
    )
    # judged: 0.6 * 0.875 + 0.3 * 0.8 + 0.1 * 1 = 0.865
    # failed (raised / not ok / no number): R_sub masked, the rest kept: 0.6 * 0.875 + 0.1 * 1 = 0.625
    # no subtask list: the policy's fault, not the judge's -> R_sub = 0, R_ms = 0 (unparsable), format 0 -> 0
    assert out.scores == pytest.approx([0.865, 0.625, 0.625, 0.625, 0.0])
    assert out.failed == {"subtask": [False, True, True, True, False]}
    subtask = out.components["subtask"]
    assert subtask[0] == pytest.approx(0.8) and all(math.isnan(v) for v in subtask[1:4]) and subtask[4] == 0.0
    assert out.components["gui"] == pytest.approx([0.875] * 4 + [0.0])  # the other components are untouched
    assert judge.calls == 4  # "no plan" never reaches the judge
    m = out.metrics("litegui_md")
    assert m["rewards/litegui_md/subtask"] == pytest.approx(0.4)  # mean of the valid 0.8 and 0.0
    assert m["rewards/litegui_md/subtask_failed"] == 3.0
    plain = reward(completions, valid_actions=[[CLICK_GT]] * 5, output_frame=[SCREEN] * 5,
                   instruction=["open settings"] * 5, completion_ids=[[0] * 10] * 5)
    assert plain == pytest.approx(out.scores) and not any(math.isnan(s) for s in plain)


def mobile(action: dict, think: str) -> str:
    return f"<think>{think}</think><tool_call>\n" + json.dumps({"name": "mobile_use", "arguments": action}) + "\n</tool_call>"


def test_subgoal_judge_failures_are_masked():
    judge = FlakyJudge(10)
    reward = make_reward("infigui_agent", subgoal_judge=judge)
    miss = {"action": "click", "coordinate": [500, 150]}  # right type, outside the box: R_param = 0 -> judge
    hit = {"action": "click", "coordinate": [200, 150]}
    completions = [mobile(miss, "open the menu"), mobile(miss, "RAISE"), mobile(miss, "NOTOK"), mobile(hit, "NOTOK")]
    out = reward.score(completions, valid_actions=[[CLICK_GT]] * 4, output_frame=[SCREEN] * 4,
                       sub_goal=["open the menu"] * 4)
    # judged 10/10: 0.1 + 0.9 * (0.2 * 1 + 0.2 * 1.0) = 0.46
    # judge failed: R_subgoal masked, w_s not redistributed: 0.1 + 0.9 * 0.2 = 0.28
    # R_param = 1: the judge is not asked, whatever it would say: 1.0
    assert out.scores == pytest.approx([0.46, 0.28, 0.28, 1.0])
    assert out.failed == {"subgoal": [False, True, True, False]}
    assert out.components["subgoal"][0] == 1.0 and all(math.isnan(v) for v in out.components["subgoal"][1:3])
    assert out.components["type"] == [1.0] * 4 and judge.calls == 3
    assert out.metrics("infigui_agent")["rewards/infigui_agent/subgoal_failed"] == 2.0
    # without a judge there is nothing to mask
    assert make_reward("infigui_agent").score(completions[:1], valid_actions=[[CLICK_GT]],
                                              output_frame=[SCREEN]).failed == {}

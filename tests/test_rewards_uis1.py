"""UI-S1 step reward (1.0 / 0.5 / 0.1 / 0) and the CCPO distance-based coordinate reward."""

from __future__ import annotations

import json
import math

import pytest

from guirl.actions import Action, Frame, ParseFailure
from guirl.rewards import distance_reward, make_reward, uis1_action_score

SCREEN = Frame.screen(1000, 1000)
GT = Action(type="click", point=(200, 150), frame=SCREEN)


def act(action: dict) -> str:
    return "<think>tap</think><action>\n" + json.dumps(action) + "\n</action>"


def test_action_score_levels_by_hand():
    assert uis1_action_score(Action(type="click", point=(210, 150), frame=SCREEN), GT) == 1.0  # 0.01 <= 0.04
    assert uis1_action_score(Action(type="click", point=(400, 150), frame=SCREEN), GT) == 0.5  # type only
    assert uis1_action_score(Action(type="type", text="x"), GT) == 0.1  # parsed, wrong type
    assert uis1_action_score(ParseFailure(reason="x"), GT) == 0.0


def test_distance_reward_by_hand():
    assert distance_reward(0.03, tau_min=0.04) == 1.0
    assert distance_reward(0.06, tau_min=0.04) == pytest.approx(math.exp(-0.5))  # exp(-(0.06 - 0.04) / 0.04)
    assert distance_reward(0.24, tau_min=0.1) == pytest.approx(math.exp(-1.4))  # AITW tau_min
    with pytest.raises(ValueError, match="tau_min"):
        distance_reward(0.1, tau_min=0.0)


def test_step_reward_on_text():
    reward = make_reward("uis1_step", fmt="uis1")
    out = reward.score(
        [
            act({"action": "click", "coordinate": [210, 150]}),  # 0.1 + 0.9 * 1.0 = 1.0
            act({"action": "click", "coordinate": [400, 150]}),  # 0.1 + 0.9 * 0.5 = 0.55
            act({"action": "type", "text": "hello"}),  # 0.1 + 0.9 * 0.1 = 0.19
            "no action here",  # 0
        ],
        valid_actions=[[GT]] * 4,
        output_frame=[SCREEN] * 4,
    )
    assert out.scores == pytest.approx([1.0, 0.55, 0.19, 0.0])


def test_step_reward_with_distance_and_ccpo_reward():
    # pred 60 px away on a 1000 px screen: d = 0.06 -> r_dist = exp(-0.5) = 0.606531
    # step: 0.5 + 0.5 * 0.606531 = 0.803265 -> 0.1 + 0.9 * 0.803265 = 0.822939
    completion = [act({"action": "click", "coordinate": [260, 150]})]
    step = make_reward("uis1_step", coordinate_reward="distance", tau_min=0.04)
    assert step(completion, valid_actions=[[GT]], output_frame=[SCREEN]) == pytest.approx(
        [0.1 + 0.9 * (0.5 + 0.5 * math.exp(-0.5))]
    )
    ccpo = make_reward("ccpo_distance", tau_min=0.04)
    assert ccpo(completion, valid_actions=[[GT]], output_frame=[SCREEN]) == pytest.approx([math.exp(-0.5)])
    # inside a box the distance is 0 -> full reward; a non-coordinate action is all or nothing
    box_gt = Action(type="click", box=(250, 100, 300, 200), frame=SCREEN)
    assert ccpo(completion, valid_actions=[[box_gt]], output_frame=[SCREEN]) == [1.0]
    typed = Action(type="type", text="hello")
    assert ccpo([act({"action": "type", "text": "hello"})], valid_actions=[[typed]], output_frame=[SCREEN]) == [1.0]
    assert ccpo([act({"action": "type", "text": "bye"})], valid_actions=[[typed]], output_frame=[SCREEN]) == [0.0]

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


def test_require_think_needs_a_non_empty_block_as_uis1_code():
    # UI-S1 code: format = 1 iff think_str.strip() is non-empty
    # "<think> </think>" -> r_fmt 0: 0.1 * 0 + 0.9 * 1.0 = 0.9; "<think>tap</think>" -> 1.0
    reward = make_reward("uis1_step", require_think=True)
    action = json.dumps({"action": "click", "coordinate": [210, 150]})
    empty = "<think> </think><action>\n" + action + "\n</action>"
    full = act({"action": "click", "coordinate": [210, 150]})
    out = reward.score([empty, full], valid_actions=[[GT]] * 2, output_frame=[SCREEN] * 2)
    assert out.scores == pytest.approx([0.9, 1.0])


def test_code_match_variant_by_hand():
    # unit frame on a 1000 x 1000 screen
    box_gt = Action(type="click", box=(100, 100, 200, 200), point=(150, 150), frame=SCREEN)
    # (205, 150) -> (0.205, 0.15): outside the box [0.1, 0.2] (strict: type only, 0.5);
    # box x1.2 about centre 0.15: half-width 0.06 -> [0.09, 0.21] contains 0.205 (code: 1.0)
    near = Action(type="click", point=(205, 150), frame=SCREEN)
    assert uis1_action_score(near, box_gt) == 0.5
    assert uis1_action_score(near, box_gt, match="code") == 1.0
    # (230, 150): 0.23 > 0.21, and 0.08 from the point > 0.04 -> 0.5 either way
    assert uis1_action_score(Action(type="click", point=(230, 150), frame=SCREEN), box_gt, match="code") == 0.5
    # small box [0.1, 0.12], point (0.11, 0.11); pred (0.14, 0.11): enlarged box [0.098, 0.122] misses,
    # but the point is 0.03 <= 0.04 away -> code 1.0 (strict checks the box only -> 0.5)
    small = Action(type="click", box=(100, 100, 120, 120), point=(110, 110), frame=SCREEN)
    pred = Action(type="click", point=(140, 110), frame=SCREEN)
    assert (uis1_action_score(pred, small), uis1_action_score(pred, small, match="code")) == (0.5, 1.0)
    # text: "hello" is a substring of "hello world" (code) but not equal (strict)
    typed = Action(type="type", text="Hello World")
    assert uis1_action_score(Action(type="type", text="hello"), typed, match="code") == 1.0
    assert uis1_action_score(Action(type="type", text="hello"), typed) == 0.5
    assert uis1_action_score(Action(type="type", text="bye"), typed, match="code") == 0.5
    # terminate: the code checks the type only
    done = Action(type="terminate", status="success")
    assert uis1_action_score(Action(type="terminate", status="failure"), done, match="code") == 1.0
    assert uis1_action_score(Action(type="terminate", status="failure"), done) == 0.5
    # swipe by direction only: finger (500, 300) -> (500, 700) moves down = content "up"
    swipe_gt = Action(type="swipe", direction="up", point=(100, 100), frame=SCREEN)
    finger_down = Action(type="swipe", point=(500, 300), end_point=(500, 700), frame=SCREEN)
    assert uis1_action_score(finger_down, swipe_gt, match="code") == 1.0
    assert uis1_action_score(Action(type="swipe", direction="down"), swipe_gt, match="code") == 0.5
    with pytest.raises(ValueError, match="match"):
        uis1_action_score(near, box_gt, match="loose")


def test_distance_rewards_give_a_click_inside_the_box_full_credit():
    # box (100, 100, 300, 200) and point (200, 150) on a 1000 px screen; pred (290, 150) is in the box:
    # d = 0 (distance to the box) -> r_dist = 1 -> ccpo 1.0, step 0.1 + 0.9 * (0.5 + 0.5 * 1) = 1.0
    # (measured to the point it was d = 0.09 -> exp(-1.25) = 0.287 and 0.1 + 0.9 * 0.643 = 0.679)
    both = Action(type="click", box=(100, 100, 300, 200), point=(200, 150), frame=SCREEN)
    step = make_reward("uis1_step", coordinate_reward="distance", tau_min=0.04)
    ccpo = make_reward("ccpo_distance", tau_min=0.04)
    inside = [act({"action": "click", "coordinate": [290, 150]})]
    assert step(inside, valid_actions=[[both]], output_frame=[SCREEN]) == pytest.approx([1.0])
    assert ccpo(inside, valid_actions=[[both]], output_frame=[SCREEN]) == pytest.approx([1.0])
    assert uis1_action_score(
        Action(type="click", point=(290, 150), frame=SCREEN), both, coordinate_reward="distance"
    ) == pytest.approx(1.0)
    # outside the box the distance is to the box: (360, 150) is 0.06 right of x2 = 0.3
    # -> exp(-(0.06 - 0.04) / 0.04) = exp(-0.5) (to the point, 0.16, it would be exp(-3))
    outside = [act({"action": "click", "coordinate": [360, 150]})]
    assert ccpo(outside, valid_actions=[[both]], output_frame=[SCREEN]) == pytest.approx([math.exp(-0.5)])
    assert step(outside, valid_actions=[[both]], output_frame=[SCREEN]) == pytest.approx(
        [0.1 + 0.9 * (0.5 + 0.5 * math.exp(-0.5))]
    )
    # a wrong type still scores nothing from the distance
    assert ccpo(
        [act({"action": "long_press", "coordinate": [290, 150], "time": 2})],
        valid_actions=[[both]],
        output_frame=[SCREEN],
    ) == [0.0]


def test_paper_mode_reads_a_swipe_path_against_a_direction():
    # the uis1 format writes a swipe as coordinate -> coordinate2; finger (500, 300) -> (500, 700) moves
    # down = content "up" (guirl's convention) -> full match against direction "up": 0.1 + 0.9 = 1.0
    reward = make_reward("uis1_step")
    up = Action(type="swipe", direction="up")
    down_path = act({"action": "swipe", "coordinate": [500, 300], "coordinate2": [500, 700]})
    up_path = act({"action": "swipe", "coordinate": [500, 700], "coordinate2": [500, 300]})
    assert reward([down_path, up_path], valid_actions=[[up]] * 2, output_frame=[SCREEN] * 2) == pytest.approx(
        [1.0, 0.55]
    )

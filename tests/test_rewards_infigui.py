"""InfiGUI-R1 rewards: format gating, type/param weights, sub-goal variant, point and box grounding."""

from __future__ import annotations

import json

import pytest

from guirl.actions import Action, Frame
from guirl.judges import JudgeRequest, JudgeResult
from guirl.rewards import agent_accuracy, box_iou, box_reward, make_reward

SCREEN = Frame.screen(1000, 1000)
CLICK_GT = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)


def mobile(action: dict, think: str | None = "the settings icon is at the top") -> str:
    call = "<tool_call>\n" + json.dumps({"name": "mobile_use", "arguments": action}) + "\n</tool_call>"
    return (f"<think>{think}</think>" if think is not None else "") + call


def score(reward, completions, valid, **extra):
    n = len(completions)
    return reward.score(completions, valid_actions=valid, output_frame=[SCREEN] * n, **extra)


def test_agent_accuracy_by_hand():
    assert agent_accuracy(Action(type="click", point=(200, 150), frame=SCREEN), CLICK_GT) == (1.0, 1.0)
    assert agent_accuracy(Action(type="click", point=(500, 150), frame=SCREEN), CLICK_GT) == (1.0, 0.0)
    assert agent_accuracy(Action(type="long_press", point=(200, 150), frame=SCREEN), CLICK_GT) == (0.0, 0.0)
    gt_type = Action(type="type", text="Hello World")
    assert agent_accuracy(Action(type="type", text="hello world"), gt_type) == (1.0, 1.0)
    assert agent_accuracy(Action(type="type", text="hello"), gt_type) == (1.0, 0.0)


def test_agent_reward_on_text():
    reward = make_reward("infigui_agent", fmt="qwen_mobile_use")
    out = score(
        reward,
        [
            mobile({"action": "click", "coordinate": [200, 150]}),  # 0.1 + 0.9 * (0.2 + 0.8) = 1.0
            mobile({"action": "click", "coordinate": [500, 150]}),  # type only: 0.1 + 0.9 * 0.2 = 0.28
            mobile({"action": "click", "coordinate": [200, 150]}, think=None),  # no <think>: format 0 gates all -> 0
            mobile({"action": "long_press", "coordinate": [200, 150]}),  # wrong type: 0.1 + 0 = 0.1
            "<think>hmm</think> tap it",  # no action: format 0 -> 0
        ],
        [[CLICK_GT]] * 5,
    )
    assert out.scores == pytest.approx([1.0, 0.28, 0.0, 0.1, 0.0])
    assert out.components["format"] == [1.0, 1.0, 0.0, 1.0, 0.0]
    assert out.components["param"] == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_agent_point_tolerance_for_point_ground_truth():
    gt = Action(type="click", point=(200, 150), frame=SCREEN)
    reward = make_reward("infigui_agent", fmt="qwen_mobile_use", point_tolerance=0.04)
    # 30 px on a 1000 px screen = 0.03 <= 0.04 -> full; 50 px = 0.05 -> type only
    out = score(
        reward,
        [mobile({"action": "click", "coordinate": [230, 150]}), mobile({"action": "click", "coordinate": [250, 150]})],
        [[gt]] * 2,
    )
    assert out.scores == pytest.approx([1.0, 0.28])


class KnownSubgoalJudge:
    """A sub-goal scorer backed by the ground-truth sub-goal: 10 when the reasoning
    contains it verbatim, 5 when it shares a word, 0 otherwise (S_raw in 0..10)."""

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        reasoning, sub_goal = request.fields["reasoning"].lower(), request.fields["sub_goal"].lower()
        if sub_goal in reasoning:
            s = 10
        elif set(reasoning.split()) & set(sub_goal.split()):
            s = 5
        else:
            s = 0
        return JudgeResult(verdict={"score": s}, raw=json.dumps({"score": s}))


def test_subgoal_conditioned_variant():
    reward = make_reward("infigui_agent", fmt="qwen_mobile_use", subgoal_judge=KnownSubgoalJudge())
    miss = {"action": "click", "coordinate": [500, 150]}
    out = score(
        reward,
        [
            mobile(
                miss, think="I need to open the settings menu"
            ),  # R_param 0: 0.2 * 1 + 0.2 * 10/10 = 0.4 -> 0.1 + 0.36
            mobile(miss, think="maybe the menu"),  # S_raw 5: 0.2 + 0.2 * 0.5 = 0.3 -> 0.1 + 0.27
            mobile({"action": "click", "coordinate": [200, 150]}, think="whatever"),  # R_param 1: judge not used -> 1.0
        ],
        [[CLICK_GT]] * 3,
        sub_goal=["open the settings menu"] * 3,
    )
    assert out.scores == pytest.approx([0.46, 0.37, 1.0])
    assert out.components["subgoal"] == pytest.approx([1.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="sub_goal"):
        score(reward, [mobile(miss)], [[CLICK_GT]])


def test_point_reward():
    reward = make_reward("infigui_point", fmt="qwen_mobile_use")
    out = score(
        reward,
        [mobile({"action": "click", "coordinate": [150, 120]}), mobile({"action": "click", "coordinate": [350, 120]})],
        [[CLICK_GT]] * 2,
    )
    assert out.scores == pytest.approx([1.0, 0.1])  # inside: 0.1 + 0.9; outside: format only


def test_box_reward_by_hand():
    # gt (0, 0, 10, 10), pred (5, 0, 15, 10): intersection 50, union 150 -> IoU 1/3 -> (1/3) / 0.7 = 0.476190
    assert box_iou((5, 0, 15, 10), (0, 0, 10, 10)) == pytest.approx(1 / 3)
    assert box_reward((5, 0, 15, 10), (0, 0, 10, 10), tau=0.7) == pytest.approx(1 / 3 / 0.7)
    # IoU 0.8 >= 0.7 -> 1: pred (0, 0, 10, 8) inside gt: 80 / 100
    assert box_reward((0, 0, 10, 8), (0, 0, 10, 10), tau=0.7) == 1.0
    assert box_reward((20, 20, 30, 30), (0, 0, 10, 10)) == 0.0


def test_box_reward_on_text():
    reward = make_reward("infigui_box", fmt="litegui", tau=0.7)
    gt = Action(type="click", box=(100, 100, 200, 200), frame=SCREEN)
    action = {"type": "CLICK", "position": [150, 100, 250, 200]}
    text = "<think>the button</think>" + json.dumps({"reasoning": "r", "subtasks": [], "action": action})
    # IoU = 5000 / 15000 = 1/3 -> 0.1 + 0.9 * (1/3) / 0.7 = 0.528571
    assert score(reward, [text], [[gt]]).scores == pytest.approx([0.1 + 0.9 / 3 / 0.7])


def test_paper_boundaries_point_on_edge_iou_at_tau_and_format_gate():
    # paper: R_point = 1[(x, y) in B_gt] (closed box: the edge x = 100 of (100, 100, 300, 200) counts);
    # R_bbox = 1 if IoU >= tau: pred (0, 0, 10, 7) in gt (0, 0, 10, 10) -> IoU 70 / 100 = 0.7 = tau -> 1
    assert box_reward((0, 0, 10, 7), (0, 0, 10, 10), tau=0.7) == 1.0
    reward = make_reward("infigui_point", fmt="qwen_mobile_use")
    edge = {"action": "click", "coordinate": [100, 150]}
    # R_acc only when R_format = 1: an empty <think> scores 0 even on a hit (0.1 * 0 + 0.9 * 0)
    out = score(reward, [mobile(edge), mobile(edge, think=" ")], [[CLICK_GT]] * 2)
    assert out.scores == pytest.approx([1.0, 0.0])


TALL = Frame.screen(1080, 2400)
POINT_GT = Action(type="click", point=(540, 1200), frame=TALL)


def test_point_ground_truth_tolerance_in_screen_pixels():
    # 1080 x 2400: tolerance 0.04 * max(W, H) = 96 px (InfiGUI-R1's evaluation)
    xs = [540, 590, 640]  # 0 px, 50 px (0.046 of the width: over the old unit-square 0.04), 100 px (> 96)
    completions = [mobile({"action": "click", "coordinate": [x, 1200]}) for x in xs]
    columns = {"valid_actions": [[POINT_GT]] * 3, "output_frame": [TALL] * 3}
    # infigui_point: before [0.1, 0.1, 0.1] (only boxes were read, an exact hit scored format only)
    assert make_reward("infigui_point", fmt="qwen_mobile_use")(completions, **columns) == pytest.approx([1.0, 1.0, 0.1])
    # infigui_agent: before [1.0, 0.28, 0.28]; 100 px: type only, 0.1 + 0.9 * 0.2 = 0.28
    assert make_reward("infigui_agent")(completions, **columns) == pytest.approx([1.0, 1.0, 0.28])
    # the same with the size from the screen_size column and a 0-1000 ground truth
    relative = Action(type="click", point=(500, 500), frame=Frame.relative(1000))
    sized = {"valid_actions": [[relative]] * 3, "output_frame": [TALL] * 3, "screen_size": [(1080, 2400)] * 3}
    assert make_reward("infigui_point", fmt="qwen_mobile_use")(completions, **sized) == pytest.approx([1.0, 1.0, 0.1])
    with pytest.raises(ValueError, match="screen_size"):
        make_reward("infigui_point", fmt="qwen_mobile_use")(completions[:1], valid_actions=[[relative]],
                                                             output_frame=[TALL])


def test_require_reasoning_off_credits_a_direct_answer():
    """The tiny agent answers without <think>: with require_reasoning=False a right direct click scores
    0.1 format + 0.9 accuracy = 1.0 (with the default it scores 0: no reasoning, no accuracy)."""
    from guirl.actions import Action, ActionType, Frame, format_action
    from guirl.rewards import make_reward

    gt = Action(type=ActionType.CLICK, point=(540, 1200), frame=Frame.screen(1080, 2400))
    text = format_action(gt, "qwen_computer_use")
    columns = {"valid_actions": [[gt]], "screen_size": [(1080, 2400)], "output_frame": [Frame.screen(1080, 2400)]}
    assert make_reward("infigui_agent", fmt="qwen_computer_use")([text], **columns) == [0.0]
    direct = make_reward("infigui_agent", fmt="qwen_computer_use", require_reasoning=False)
    assert direct([text], **columns) == [pytest.approx(1.0)]


def test_point_tolerance_in_resized_pixels_as_the_authors_measure_it():
    # InfiGUI-R1's AndroidControl evaluator (check_click with the resized size): on a 1080 x 2400 screen resized
    # to 1092 x 2408, the prediction (153.86, 237.69) in the resized image against the point (71, 288):
    #   resized px: dx = (71/1080 - 153.86/1092) * 1092 = -82.07, dy = (288/2400 - 237.69/2408) * 2408 = 51.27
    #               -> 96.77 > 0.04 * 2408 = 96.32: a miss -> type only, 0.1 + 0.9 * 0.2 = 0.28
    #   screen px:  (152.17, 236.90) -> dx = 81.17, dy = 51.10 -> 95.91 <= 0.04 * 2400 = 96: a hit -> 1.0
    phone = Frame.screen(1080, 2400)
    resized = Frame(kind="resized", width=1092, height=2408)
    gt = Action(type="click", point=(71, 288), frame=phone)
    pred = mobile({"action": "click", "coordinate": [153.86, 237.69]})
    columns = {"valid_actions": [[gt]], "output_frame": [resized], "screen_size": [(1080, 2400)]}
    authors = make_reward("infigui_agent", fmt="qwen_mobile_use", tolerance_frame="output")
    assert authors([pred], **columns) == pytest.approx([0.28])
    assert make_reward("infigui_agent", fmt="qwen_mobile_use")([pred], **columns) == pytest.approx([1.0])
    # infigui_point: the same option, 0.1 vs 1.0
    point = {"fmt": "qwen_mobile_use"}
    assert make_reward("infigui_point", **point, tolerance_frame="output")([pred], **columns) == pytest.approx([0.1])
    assert make_reward("infigui_point", **point)([pred], **columns) == pytest.approx([1.0])
    # boxes do not depend on the frame: inside the box in either
    box_gt = Action(type="click", box=(40, 250, 110, 330), frame=phone)
    inside = mobile({"action": "click", "coordinate": [76, 290]})
    assert authors([inside], **{**columns, "valid_actions": [[box_gt]]}) == pytest.approx([1.0])
    # the option needs the model's image size: a relative output frame has none
    with pytest.raises(ValueError, match="tolerance_frame='output'"):
        authors([pred], **{**columns, "output_frame": [Frame.relative(1000)]})
    with pytest.raises(ValueError, match="tolerance_frame"):
        make_reward("infigui_agent", tolerance_frame="resized")

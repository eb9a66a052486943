"""LiteGUI rewards: phi_gui by hand, multi-solution max, format/length, dual level with a judge."""

from __future__ import annotations

import json
import math

import pytest

from guirl.actions import Action, Frame, ParseFailure
from guirl.judges import JudgeRequest, JudgeResult
from guirl.rewards import (
    make_reward,
    most_matched_action,
    multi_solution_score,
    phi_gui,
    point_position_score,
    position_score,
    value_score,
)

SCREEN = Frame.screen(1000, 1000)
BOX = (100.0, 100.0, 300.0, 200.0)  # w 200, h 100, centre (200, 150); central 50%: |dx| <= 50, |dy| <= 25
CLICK_GT = Action(type="click", box=BOX, frame=SCREEN)


def click(x, y, frame=SCREEN, kind="click"):
    return Action(type=kind, point=(x, y), frame=frame)


def test_position_score_by_hand():
    assert position_score((200, 150), BOX) == 1.0  # centre
    assert position_score((240, 170), BOX) == 1.0  # u = max(40/100, 20/50) = 0.4 <= 0.5: central region
    assert position_score((275, 150), BOX) == pytest.approx(0.75)  # u = 0.75 -> 1 - 0.5 * 0.25 / 0.5
    assert position_score((300, 150), BOX) == pytest.approx(0.5)  # on the edge, u = 1
    assert position_score((400, 150), BOX) == pytest.approx(0.5 * math.exp(-0.5))  # d = 100 px -> 0.303265
    assert position_score((400, 300), BOX) == pytest.approx(0.5 * math.exp(-math.hypot(100, 100) / 200))  # 0.246553


def test_phi_gui_by_hand():
    # click in the linear band: (1 * 1 + 1 * 0.75) / 2 = 0.875
    assert phi_gui(click(275, 150), CLICK_GT, SCREEN) == pytest.approx(0.875)
    # wrong type, perfect position: (0 + 1) / 2 = 0.5
    assert phi_gui(click(200, 150, kind="right_click"), CLICK_GT, SCREEN) == pytest.approx(0.5)
    # weights w_t = 1, w_p = 3: (1 + 3 * 0.75) / 4 = 0.8125
    assert phi_gui(click(275, 150), CLICK_GT, SCREEN, w_pos=3.0) == pytest.approx(0.8125)
    # text: exact after case/space folding 1, shared word 0.5 -> phi (1 + 0.5) / 2 = 0.75
    gt_text = Action(type="type", text="hello world")
    assert phi_gui(Action(type="type", text="Hello  World"), gt_text, SCREEN) == 1.0
    assert phi_gui(Action(type="type", text="hello"), gt_text, SCREEN) == pytest.approx(0.75)
    assert value_score(Action(type="type", text="goodbye"), gt_text) == 0.0
    # keys: same set 1, overlapping set 0.5
    gt_keys = Action(type="key", keys=("ctrl", "a"))
    assert phi_gui(Action(type="key", keys=("a", "ctrl")), gt_keys, SCREEN) == 1.0
    assert phi_gui(Action(type="key", keys=("ctrl", "c")), gt_keys, SCREEN) == pytest.approx(0.75)
    # SCROLL_UP vs SCROLL_DOWN are different LiteGUI types: (0) / 1 = 0
    assert phi_gui(Action(type="scroll", direction="up"), Action(type="scroll", direction="down"), SCREEN) == 0.0
    # wait: type only -> 1
    assert phi_gui(Action(type="wait"), Action(type="wait"), SCREEN) == 1.0
    assert phi_gui(ParseFailure(reason="garbage"), CLICK_GT, SCREEN) == 0.0


def test_phi_gui_converts_frames():
    # Qwen3-VL writes 0-1000 relative coordinates; on a 2000 x 1000 screen (100, 150) is (200, 150) px
    wide = Frame.screen(2000, 1000)
    gt = Action(type="click", box=BOX, frame=wide)
    assert phi_gui(click(100, 150, frame=Frame.relative(1000)), gt, wide) == 1.0
    # the same numbers read as screen pixels are 100 px left of the centre: u = 1 -> edge -> (1 + 0.5) / 2
    assert phi_gui(click(100, 150, frame=wide), gt, wide) == pytest.approx(0.75)


def test_multi_solution_max_and_most_matched():
    far = Action(type="click", box=(800, 800, 900, 900), frame=SCREEN)
    valid = [far, CLICK_GT]
    score, index = multi_solution_score(click(200, 150), valid, SCREEN)
    assert (score, index) == (1.0, 1)
    assert most_matched_action(click(200, 150), valid, SCREEN) is CLICK_GT
    assert most_matched_action(ParseFailure(reason="x"), valid, SCREEN) is far  # deterministic fallback: first


def litegui_output(action: dict, reasoning="the settings button is top left", subtasks=None) -> str:
    subtasks = [{"description": "open settings", "status": "in_progress"}] if subtasks is None else subtasks
    return json.dumps({"reasoning": reasoning, "subtasks": subtasks, "action": action})


def test_multi_solution_reward_on_text():
    reward = make_reward("litegui_ms", fmt="litegui")
    completions = [
        litegui_output({"type": "CLICK", "position": [275, 150]}),  # 0.875 against CLICK_GT
        litegui_output({"type": "TEXT_INPUT", "value": "hello"}),  # best: the typing solution, (1 + 0.5) / 2
        "I think I should click somewhere",  # unparsable -> 0
        [{"role": "assistant", "content": litegui_output({"type": "CLICK", "position": [200, 150]})}],  # TRL chat form
    ]
    valid = [[CLICK_GT], [CLICK_GT, Action(type="type", text="hello world", frame=SCREEN)], [CLICK_GT], [CLICK_GT]]
    out = reward.score(completions, valid_actions=valid, output_frame=[SCREEN] * 4)
    assert out.scores == pytest.approx([0.875, 0.75, 0.0, 1.0])
    assert out.components["parsed"] == [1.0, 1.0, 0.0, 1.0] and out.components["matched_index"][1] == 1.0
    assert reward(completions, valid_actions=valid, output_frame=[SCREEN] * 4) == out.scores
    assert reward.__name__ == "litegui_ms"
    assert out.metrics("litegui_ms")["rewards/litegui_ms/score"] == pytest.approx(2.625 / 4)


def test_reward_errors_name_the_column():
    reward = make_reward("litegui_ms")
    with pytest.raises(ValueError, match="valid_actions"):
        reward(["{}"])
    with pytest.raises(ValueError, match="2 entries for 1 completions"):
        reward(["{}"], valid_actions=[[CLICK_GT], [CLICK_GT]])
    with pytest.raises(ValueError, match="screen_size"):
        reward(["{}"], valid_actions=[[Action(type="click", box=(0, 0, 0.5, 0.5))]])  # unit frame, no screen size
    with pytest.raises(KeyError, match="valid names: .*litegui_ms"):
        make_reward("litegui_typo")


def test_format_length_by_hand():
    reward = make_reward("litegui_format_length", max_length=1024, cache_length=256)
    full = litegui_output({"type": "CLICK", "position": [1, 2]})
    partial = json.dumps({"action": {"type": "CLICK", "position": [1, 2]}})  # no reasoning / subtasks -> 0.5
    out = reward.score([full, full, partial, "not json"], completion_ids=[[0] * 100, [0] * 900, [0] * 10, [0] * 10])
    # 900 tokens: overlong band starts at 1024 - 256 = 768 -> factor 1 - (900 - 768) / 256 = 0.484375
    assert out.scores == pytest.approx([1.0, 0.484375, 0.5, 0.0])
    assert out.components["length_factor"] == pytest.approx([1.0, 0.484375, 1.0, 1.0])
    with pytest.raises(ValueError, match="completion_ids"):
        reward([full])
    chars = make_reward("litegui_format_length", max_length=20, cache_length=10, length_unit="chars")
    assert chars([full]) == [0.0]  # far beyond 20 characters


class KnownPlanJudge:
    """A planning judge backed by known reference plans (ground truth), not a model.

    Scores like the LiteGUI judge's scale: the reference plan -> 1.0; sharing
    at least one subtask -> 0.3; otherwise 0.0. An instruction it has no
    reference for gives ``ok=False`` (an unreadable judge answer).
    """

    def __init__(self, references: dict[str, list[str]]) -> None:
        self.references = references
        self.requests: list[JudgeRequest] = []

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        self.requests.append(request)
        reference = self.references.get(request.fields["instruction"])
        if reference is None:
            return JudgeResult(verdict={}, raw="no reference", ok=False, reason="unknown instruction")
        plan = [s.get("description") if isinstance(s, dict) else str(s) for s in request.fields["subtasks"]]
        score = 1.0 if plan == reference else (0.3 if set(plan) & set(reference) else 0.0)
        return JudgeResult(verdict={"score": score}, raw=json.dumps({"score": score}))


def test_dual_level_reward_with_known_judge():
    judge = KnownPlanJudge({"open settings": ["open settings"]})
    reward = make_reward("litegui_md", judge=judge, fmt="litegui", max_length=1024, cache_length=256)
    good = litegui_output({"type": "CLICK", "position": [275, 150]})
    wrong_plan = litegui_output({"type": "CLICK", "position": [200, 150]}, subtasks=[{"description": "log in"}])
    out = reward.score(
        [good, wrong_plan, "garbage", good],
        valid_actions=[[CLICK_GT]] * 4,
        output_frame=[SCREEN] * 4,
        instruction=["open settings", "open settings", "open settings", "unknown task"],
        completion_ids=[[0] * 10] * 4,
    )
    # good: 0.6 * 0.875 + 0.3 * 1.0 + 0.1 * 1.0 = 0.925
    # wrong plan: 0.6 * 1.0 + 0.3 * 0.0 + 0.1 * 1.0 = 0.7
    # garbage: no subtasks -> the judge is not asked; 0
    # unknown task: judge answer unreadable -> R_sub masked (nan), the rest kept: 0.6 * 0.875 + 0.1 = 0.625
    assert out.scores == pytest.approx([0.925, 0.7, 0.0, 0.625])
    assert out.failed["subtask"] == [False, False, False, True]
    assert math.isnan(out.components["subtask"][3]) and out.components["subtask"][:3] == [1.0, 0.0, 0.0]
    assert len(judge.requests) == 3 and judge.requests[0].role == "planning"
    assert "open settings" in judge.requests[0].prompt


def test_called_like_trl_with_dataset_rows():
    """TRL passes prompts, completions, completion_ids, trainer_state and the dataset columns as keywords;
    HF datasets store actions and frames as dicts, with None for absent fields."""
    reward = make_reward("litegui_ms")
    row_action = {**CLICK_GT.model_dump(mode="json"), "text": None, "keys": None}
    scores = reward(
        prompts=["open settings"],
        completions=[[{"role": "assistant", "content": litegui_output({"type": "CLICK", "position": [200, 150]})}]],
        completion_ids=[[1, 2, 3]],
        trainer_state=None,
        valid_actions=[[row_action]],
        output_frame=[SCREEN.model_dump()],
    )
    assert scores == [1.0]


def test_unsized_output_frame_is_refused_up_front():
    # Qwen2.5-VL resized pixels cannot be mapped to the screen without the resized size
    reward = make_reward("litegui_ms")
    with pytest.raises(ValueError, match="output_frame"):
        reward(["garbage"], valid_actions=[[CLICK_GT]], output_frame=[Frame(kind="resized")])


def test_phi_gui_drag_scores_start_point_only():
    # DRAG gt box BOX, end (900, 900); predicted start at the centre, end far away (10, 10):
    # only the start is scored -> (1 * 1 + 1 * 1) / 2 = 1.0
    gt = Action(type="drag", box=BOX, end_point=(900, 900), frame=SCREEN)
    pred = Action(type="drag", point=(200, 150), end_point=(10, 10), frame=SCREEN)
    assert phi_gui(pred, gt, SCREEN) == 1.0


class FixedScoreJudge:
    """Answers one fixed score for every plan (a stand-in for a judge whose answer is known)."""

    def __init__(self, score: float) -> None:
        self.score = score

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        return JudgeResult(verdict={"score": self.score}, raw=json.dumps({"score": self.score}))


def test_dual_level_paper_form_keeps_off_grid_judge_score():
    # paper eq. 14 with lambda_sub = 0.5: R = R_ms + 0.5 R_sub (w_gui 1, w_subtask 0.5, w_format 0)
    # click at (275, 150): R_ms = 0.875; judge 0.85 (A.3's example, not on the 5-value grid) is used as given
    # R = 0.875 + 0.5 * 0.85 = 1.3
    reward = make_reward("litegui_md", judge=FixedScoreJudge(0.85), w_gui=1.0, w_subtask=0.5, w_format=0.0)
    out = reward.score(
        [litegui_output({"type": "CLICK", "position": [275, 150]})],
        valid_actions=[[CLICK_GT]],
        output_frame=[SCREEN],
        instruction=["open settings"],
    )
    assert out.scores == pytest.approx([1.3])
    assert reward.score_range == (0.0, 1.5)


def test_schema_violations_score_zero():
    # docs/methods.md section 1: schema-violating output -> 0. Before the fix the bare action below scored 1.0
    # (type 1, centre of box (0, 0, 100, 100) -> m_pos 1: (1 + 1) / 2).
    gt = Action(type="click", box=(0, 0, 100, 100), frame=SCREEN)
    action = {"type": "CLICK", "position": [50, 50]}
    completions = [
        json.dumps(action),  # no reasoning, no subtasks
        json.dumps({"reasoning": ["not", "a string"], "subtasks": [], "action": action}),
        json.dumps({"reasoning": "r", "subtasks": "open settings", "action": action}),  # subtasks not a list
        json.dumps({"reasoning": "r", "subtasks": [1, 2], "action": action}),  # items neither text nor objects
        litegui_output(action),  # follows the schema: (1 + 1) / 2 = 1.0
    ]
    reward = make_reward("litegui_ms")
    out = reward.score(completions, valid_actions=[[gt]] * 5, output_frame=[SCREEN] * 5)
    assert out.scores == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert out.components["schema"] == [0.0, 0.0, 0.0, 0.0, 1.0] and out.components["parsed"] == [1.0] * 5
    # the old behaviour on request; formats other than litegui have no schema to check
    assert make_reward("litegui_ms", require_schema=False)(completions[:1], valid_actions=[[gt]]) == [1.0]
    # the format/length reward reads the same schema: JSON with some of the three keys but broken -> 0.5;
    # the bare action holds none of them -> 0
    fl = make_reward("litegui_format_length", length_unit="chars", max_length=10_000)
    assert fl(completions) == [0.0, 0.5, 0.5, 0.5, 1.0]


def test_point_ground_truth_is_scored_smoothly():
    # gt point (500, 500) on 1000 x 1000: disc radius 0.04 * 1000 = 40 px, central 50% = 20 px
    gt = Action(type="click", point=(500, 500), frame=SCREEN)

    def phi(dx):
        return phi_gui(click(500 + dx, 500), gt, SCREEN)

    assert phi(0) == 1.0
    assert phi(1) == 1.0  # before: a zero-size box, 0.5 * exp(-1 / 200) = 0.4988 -> (1 + 0.4988) / 2 = 0.748753
    assert phi(30) == pytest.approx(0.875)  # u = 0.75: m_pos = 1 - 0.5 * 0.25 / 0.5 = 0.75; before 0.715177
    assert phi(40) == pytest.approx(0.75)  # on the disc edge: m_pos 0.5; before 0.704683
    assert phi(140) == pytest.approx((1 + 0.5 * math.exp(-100 / 200)) / 2)  # 0.651633; before 0.624146
    sweep = [phi(dx) for dx in range(0, 400)]
    assert all(a >= b for a, b in zip(sweep, sweep[1:])) and max(a - b for a, b in zip(sweep, sweep[1:])) < 0.02
    # the radius follows the larger side: 1080 x 2400 -> 96 px; 48 px away is still the central region
    tall = Frame.screen(1080, 2400)
    assert phi_gui(click(588, 1200, frame=tall), Action(type="click", point=(540, 1200), frame=tall), tall) == 1.0
    assert point_position_score((530, 500), (500, 500), radius=40) == pytest.approx(0.75)


def test_gate_on_type_takes_the_position_credit_of_a_wrong_type():
    # the paper's sum pays a right-click on the target half the reward; gated, a wrong type scores 0
    assert phi_gui(click(200, 150, kind="right_click"), CLICK_GT, SCREEN, gate_on_type=True) == 0.0
    assert phi_gui(click(275, 150), CLICK_GT, SCREEN, gate_on_type=True) == pytest.approx(0.875)  # right type: as before
    typing = Action(type="type", text="hi", box=BOX, frame=SCREEN)
    assert phi_gui(click(200, 150), typing, SCREEN) == pytest.approx(1 / 3)  # a click on the field of a TYPE step
    reward = make_reward("litegui_ms", fmt="qwen_computer_use", gate_on_type=True)
    out = '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [200, 150]}}</tool_call>'
    assert reward([out], valid_actions=[[typing]], output_frame=[SCREEN]) == [0.0]
    assert reward([out], valid_actions=[[typing, CLICK_GT]], output_frame=[SCREEN]) == [1.0]  # max over A*_t


def test_plan_from_the_thought_is_judged_against_the_current_sub_goal():
    """plan_source="thought" (formats without a subtasks field): the <think> text is a one-item plan judged by
    the ground-truth planning judge against the step's sub-goal; a thought naming another sub-task and an
    answer without a thought score 0, so the group's rewards differ only by R_sub."""
    from guirl.models.prompts import written_action

    plan = [{"description": "Open Settings", "status": "done"}, {"description": "Type 25", "status": "in_progress"}]
    action = written_action(CLICK_GT, "qwen_computer_use", SCREEN)
    reward = make_reward("litegui_md", judge="ground_truth_planning", fmt="qwen_computer_use", plan_source="thought",
                         w_gui=0.6, w_subtask=0.3, w_format=0.0)
    texts = [f"<think>Type 25</think>{action}", f"<think>Open the Files app</think>{action}", action]
    out = reward.score(texts, valid_actions=[[CLICK_GT]] * 3, output_frame=[SCREEN] * 3, instruction=["t"] * 3,
                       plan=[plan] * 3, sub_goal=["Type 25"] * 3)
    assert out.components["subtask"] == [1.0, 0.0, 0.0] and out.failed["subtask"] == [False] * 3
    assert out.scores[0] - out.scores[1] == pytest.approx(0.3) and out.scores[1] == out.scores[2]
    # without a recorded sub-goal the plan's in_progress item is the reference
    out = reward.score(texts[:1], valid_actions=[[CLICK_GT]], output_frame=[SCREEN], instruction=["t"], plan=[plan])
    assert out.components["subtask"] == [1.0]
    with pytest.raises(ValueError, match="plan_source"):
        make_reward("litegui_md", judge="ground_truth_planning", plan_source="plan")

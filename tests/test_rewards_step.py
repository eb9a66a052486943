"""``step_match``: the reward is the offline evaluation's step success, sample for sample."""

import pytest

from guirl.actions import Action, Frame, format_action
from guirl.data.schema import A11yNode
from guirl.matching.step import match_action
from guirl.rewards import make_reward
from guirl.rewards.inputs import columns_for, reward_columns

FMT = "qwen_computer_use"
SCREEN = Frame.screen(400, 800)


def _out(action: Action) -> str:
    return format_action(action, FMT)


def test_reward_equals_evaluation_success_on_a_sim_episode(sim_episode):
    """Every recorded step, oracle / shifted / wrong-type / garbage outputs: reward == match_action().success."""
    reward = make_reward("step_match", fmt=FMT)
    step_columns, completions, expected = [], [], []
    for step in sim_episode.steps:
        frame = Frame.screen(step.screenshot.width, step.screenshot.height)
        gold = step.valid_actions[0]
        candidates = [gold, Action(type="key", keys=["enter"]), None]
        if gold.point is not None:
            candidates[1] = gold.model_copy(update={"point": (gold.point[0] + 150, gold.point[1] + 150), "box": None})
        step_columns.append(reward_columns(step, sim_episode, frame))
        for cand in candidates:
            completions.append("not an action" if cand is None else _out(cand.to_frame(frame)))
            expected.append(0.0 if cand is None else float(match_action(
                cand.to_frame(frame), step.valid_actions, screen_size=(frame.width, frame.height), a11y=step.a11y).success))
    scores = reward(completions, **columns_for(step_columns, group_size=3))
    assert scores == expected
    assert scores[0::3] == [1.0] * len(sim_episode.steps)  # the oracle always succeeds
    assert 0.0 in scores[1::3]  # the shifted / wrong outputs do not all pass


def test_rules_that_read_the_a11y_tree_get_it():
    gold = Action(type="click", point=(100, 100), frame=SCREEN)
    node = A11yNode(id="1", role="button", text="OK", box=(60, 80, 200, 140))
    inside_element = _out(Action(type="click", point=(190, 130), frame=SCREEN))  # 92 px from the point, on the button
    cols = {"valid_actions": [[gold]] * 2, "screen_size": [(400, 800)] * 2, "output_frame": [SCREEN] * 2}
    infigui = make_reward("step_match", fmt=FMT, rule="infigui")  # the smallest a11y box under the target point
    assert infigui([inside_element] * 2, **cols, a11y=[[node], []]) == [1.0, 0.0]  # without the tree: 92 px > 32 px
    inclusive = make_reward("step_match", fmt=FMT)  # the default rule: the exact point only
    assert inclusive([inside_element, _out(gold)], **cols, a11y=[[node], [node]]) == [0.0, 1.0]


def test_value_type_and_garbage():
    gold = Action(type="type", text="hello world", frame=SCREEN)
    reward = make_reward("step_match", fmt=FMT)
    outs = [_out(gold), _out(Action(type="type", text="hello", frame=SCREEN)), _out(Action(type="key", keys=["enter"])), "{]"]
    out = reward.score(outs, valid_actions=[[gold]] * 4, screen_size=[(400, 800)] * 4, output_frame=[SCREEN] * 4)
    assert out.scores == [1.0, 0.0, 0.0, 0.0]
    assert out.components["type_match"] == [1.0, 1.0, 0.0, 0.0] and out.components["parsed"] == [1.0, 1.0, 1.0, 0.0]
    f1 = make_reward("step_match", fmt=FMT, value_rule="substring")
    assert f1(outs[:2], valid_actions=[[gold]] * 2, screen_size=[(400, 800)] * 2, output_frame=[SCREEN] * 2) == [1.0, 1.0]
    with pytest.raises(ValueError, match="step_match: unknown value_rule 'fuzzy'"):
        make_reward("step_match", value_rule="fuzzy")

"""InfiGUI-R1's sub-goal reward reaches the loss: in the shipped RLOO recipe, a group of completions that
differ only in their thought (the same wrong click) gets different rewards, so non-zero advantages, when the
thought names the step's sub-goal; without the sub-goal judge the same group carries no gradient."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from guirl.actions import Action, Frame
from guirl.algorithms.registry import get_adv_est
from guirl.config import load_config
from guirl.models.prompts import written_action
from guirl.rewards import reward_columns
from guirl.trainers.grpo import GRPOConfig
from guirl.trainers.rl_common import WeightedRewards, load_states

RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "infigui_rloo_tiny.yaml"


def _group(sim_data):
    """A click state with a recorded sub-goal, and G completions: the same click far from every valid
    target (type right, parameters wrong: where the paper's sub-goal term applies), half of them thinking
    the sub-goal, half thinking something unrelated."""
    cfg = load_config(GRPOConfig, RECIPE, [f"train_data=[{sim_data}]"])
    state = next(s for s in load_states(cfg.train_data) if s.step.sub_goal and s.step.action is not None
                 and s.step.action.type == "click")
    frame = Frame.relative(1000)  # Qwen3-VL writes 0-1000
    columns = reward_columns(state.step, state.episode, frame)
    valid = columns["valid_actions"]
    far = next(p for p in [(5.0, 5.0), (995.0, 995.0), (5.0, 995.0), (995.0, 5.0)]
               if not any(a.to_frame(frame).box is not None and _inside(p, a.to_frame(frame).box) or
                          a.to_frame(frame).point is not None and _near(p, a.to_frame(frame).point) for a in valid))
    action = written_action(Action(type="click", point=far, frame=frame), "qwen_computer_use", frame)
    thoughts = [state.step.sub_goal, "Buy red shoes."] * (cfg.group_size // 2)
    completions = [f"<think>{t}</think>\n{action}" for t in thoughts]
    return cfg, completions, {k: [v] * len(completions) for k, v in columns.items()}


def _inside(p, box):
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def _near(p, q):
    return abs(p[0] - q[0]) < 100 and abs(p[1] - q[1]) < 100


@pytest.mark.parametrize("judge", [True, False])
def test_subgoal_term_gives_nonzero_advantages_only_when_on(sim_data, judge):
    cfg, completions, columns = _group(sim_data)
    specs = cfg.rewards if judge else [s.model_copy(update={"kwargs": {k: v for k, v in s.kwargs.items()
                                                                         if k != "subgoal_judge"}})
                                       for s in cfg.rewards]
    totals, named, _ = WeightedRewards(specs)(completions, columns)
    advantages, _ = get_adv_est(cfg.advantage)(torch.tensor(totals, dtype=torch.float64), cfg.group_size)
    if judge:
        # 0.1 format + 0.9 (0.2 type + 0.2 sub-goal/10): the thought naming the sub-goal scores 10, the other less
        assert named[0]["infigui_agent/subgoal"] == pytest.approx(1.0)
        assert named[1]["infigui_agent/subgoal"] < 1.0
        assert totals[0] > totals[1] and advantages.abs().max() > 0
        assert advantages[0] > 0 > advantages[1]
    else:
        assert len(set(totals)) == 1 and advantages.abs().max() == 0

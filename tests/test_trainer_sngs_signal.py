"""SNGS's success signal in the GRPO trainer: p_g from a named reward column, not from the total reward."""

from __future__ import annotations

import json

import pytest
import torch

from guirl.actions import Action, Frame
from guirl.algorithms import get_adv_est
from guirl.rewards import Reward, RewardOutput, register_reward
from guirl.rollout.sample import Sample
from guirl.trainers.grpo import GRPOConfig, success_column
from guirl.trainers.rl_common import RewardSpec, WeightedRewards

SCREEN = Frame.screen(1000, 1000)


@register_reward("test_constant_half")
class ConstantHalf(Reward):
    """0.5 for every completion: lifts the total without any success."""

    def score(self, completions, **columns):
        return RewardOutput([0.5] * len(completions))


def answer(point) -> str:
    body = json.dumps({"action_type": "Click", "action_description": "d", "value": "None", "point_2d": point})
    return f"<think>t</think><answer>{body}</answer>"


def test_well_formatted_all_wrong_group_has_zero_success_rate():
    # GUI-Libra's reward as the recipe weighs it: 4 well-formatted clicks, all outside the box -> 0.1 each
    spec = RewardSpec(name="guilibra", kwargs={"fmt": "guilibra", "w_format": 0.1})
    gt = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    texts = [answer([500 + 10 * i, 500]) for i in range(4)]
    totals, named, _ = WeightedRewards([spec])(texts, {"valid_actions": [[gt]] * 4, "output_frame": [SCREEN] * 4})
    assert totals == pytest.approx([0.1] * 4)
    assert [n["guilibra/accuracy"] for n in named] == [0.0] * 4 and [n["guilibra/format"] for n in named] == [1.0] * 4
    samples = [Sample(None, [1], [0.0], 0, "s", t, "stop", rewards=n, reward=r) for t, n, r in zip(texts, named, totals)]
    rewards = torch.tensor(totals, dtype=torch.float64)
    sngs = get_adv_est("sngs")
    _, metrics = sngs(rewards, 4, success=success_column(samples, "guilibra/accuracy"))
    assert metrics["advantages/sngs_success_mean"] == 0.0  # p_g = 0
    _, total_metrics = sngs(rewards, 4)
    assert total_metrics["advantages/sngs_success_mean"] == pytest.approx(0.1)  # the total would say 0.1
    with pytest.raises(ValueError, match="named reward columns"):
        success_column(samples, "guilibra/success")


def test_success_signal_config_checks():
    rewards = [RewardSpec(name="guilibra")]
    cfg = GRPOConfig(rewards=rewards, advantage="sngs", success_signal="guilibra/accuracy")
    assert cfg.success_signal == "guilibra/accuracy"
    with pytest.raises(ValueError, match="must name one of the rewards"):
        GRPOConfig(rewards=rewards, advantage="sngs", success_signal="litegui_ms")
    with pytest.raises(ValueError, match="does not read it"):
        GRPOConfig(rewards=rewards, advantage="grpo", success_signal="guilibra/accuracy")


def test_sampler_passes_the_success_signal_to_sngs(tmp_path, sim_data):
    # the sampler on a tiny model with the GUI-Libra reward in the tiny agent's format plus a constant 0.5: the
    # estimator's p_g is the batch's mean accuracy (the success signal), not its mean total reward
    from models_fixtures import tiny_model_dir

    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.grpo import GRPOSampler, load_rl_policy
    from guirl.trainers.rl_common import load_states

    reward = {"name": "guilibra", "kwargs": {"fmt": "qwen_computer_use", "w_format": 0.1, "format_rule": "parse"}}
    cfg = GRPOConfig(model=str(tiny_model_dir("qwen3_vl")), output_dir=str(tmp_path / "run"),
                     train_data=[str(sim_data)], batch_size=2, group_size=4, micro_batch_size=8, max_new_tokens=24,
                     rewards=[reward, {"name": "test_constant_half"}], advantage="sngs", success_signal="guilibra/accuracy", top_p=0.98,
                     report_to=[], num_threads=1)
    policy = load_rl_policy(cfg)
    states = load_states(cfg.train_data)
    batches, logged = GRPOSampler(cfg, policy, HFEngine.from_policy(policy), states)(policy.model, 0, [states[:2]])
    samples = [s for b in batches for s in b]
    assert len(samples) == 8
    accuracy = sum(s.rewards["guilibra/accuracy"] for s in samples) / 8
    assert logged["advantages/sngs_success_mean"] == pytest.approx(accuracy)
    assert logged["rewards/guilibra/accuracy"] == pytest.approx(accuracy)
    # the constant reward lifts every total by 0.5: the total's mean is not the success rate
    assert logged["rewards/total_mean"] == pytest.approx(0.5 + sum(s.rewards["guilibra"] for s in samples) / 8)

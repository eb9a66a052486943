"""Rewards: callables ``(completions, **columns) -> list[float]`` registered by name.

Build one with :func:`make_reward`; :meth:`Reward.score` also returns the
named sub-scores. See :mod:`guirl.rewards.base` for the columns they read.
"""

from guirl.rewards.base import (
    Reward,
    RewardOutput,
    as_action,
    available_rewards,
    completion_text,
    make_reward,
    register_reward,
)
from guirl.rewards.guilibra import guilibra_accuracy
from guirl.rewards.infigui import agent_accuracy, box_reward
from guirl.rewards.litegui import most_matched_action, multi_solution_score, phi_gui, position_score, value_score
from guirl.rewards.matching import box_iou, guilibra_f1
from guirl.rewards.uis1 import distance_reward, uis1_action_score

__all__ = [
    "guilibra_f1",
    "Reward",
    "RewardOutput",
    "agent_accuracy",
    "as_action",
    "available_rewards",
    "box_iou",
    "box_reward",
    "completion_text",
    "distance_reward",
    "guilibra_accuracy",
    "make_reward",
    "most_matched_action",
    "multi_solution_score",
    "phi_gui",
    "position_score",
    "register_reward",
    "uis1_action_score",
    "value_score",
]

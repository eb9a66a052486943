"""Rewards: callables ``(completions, **columns) -> list[float]`` registered by name.

Build one with :func:`make_reward`; :meth:`Reward.score` also returns the
named sub-scores (and which judge-backed ones are masked). See
:mod:`guirl.rewards.base` for the columns they read and
:func:`reward_columns` / :func:`columns_for` to build them from Steps.
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
from guirl.rewards.infigui import agent_accuracy, box_reward, point_hit
from guirl.rewards.inputs import columns_for, reward_columns
from guirl.rewards.litegui import (
    most_matched_action,
    multi_solution_score,
    phi_gui,
    point_position_score,
    position_score,
    schema_ok,
    value_score,
)
from guirl.rewards.matching import box_iou
from guirl.rewards.uis1 import distance_reward, uis1_action_score

__all__ = [
    "Reward",
    "RewardOutput",
    "agent_accuracy",
    "as_action",
    "available_rewards",
    "box_iou",
    "box_reward",
    "columns_for",
    "completion_text",
    "distance_reward",
    "guilibra_accuracy",
    "make_reward",
    "most_matched_action",
    "multi_solution_score",
    "phi_gui",
    "point_hit",
    "point_position_score",
    "position_score",
    "register_reward",
    "reward_columns",
    "schema_ok",
    "uis1_action_score",
    "value_score",
]

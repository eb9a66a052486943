"""Episode runner, policies, history building, recording (see guirl.rollout.runner)."""

from guirl.rollout.policy import CallablePolicy, ModelPolicy, Policy, PolicyInput, PolicyOutput, as_policy
from guirl.rollout.recorder import TrajectoryRecorder
from guirl.rollout.runner import EpisodeRunner, EpisodeSpec, EpisodeState, Rollout, StepRecord, group_specs
from guirl.rollout.window import HistoryBuilder, HistoryWindow, PastStep, WindowHistory

__all__ = [
    "CallablePolicy",
    "EpisodeRunner",
    "EpisodeSpec",
    "EpisodeState",
    "HistoryBuilder",
    "HistoryWindow",
    "ModelPolicy",
    "PastStep",
    "Policy",
    "PolicyInput",
    "PolicyOutput",
    "Rollout",
    "StepRecord",
    "TrajectoryRecorder",
    "WindowHistory",
    "as_policy",
    "group_specs",
]

"""Environments behind one protocol (see guirl.envs.base)."""

from guirl.envs.base import Env, Observation, StepResult, available_envs, make_env, register_env

__all__ = ["Env", "Observation", "StepResult", "available_envs", "make_env", "register_env"]

"""Registries for advantage estimators and policy losses (verl-style).

These are guirl's algorithm extension points: a new estimator or loss is a
pure function registered by name::

    @register_adv_est("my_estimator")
    def my_estimator(rewards, group_size, **scalars) -> tuple[Tensor, dict]: ...

Registering a name twice is an error; looking up an unknown name raises a
``KeyError`` that lists every valid name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from guirl.registry import Registry

ADVANTAGE_ESTIMATORS: Registry[Callable[..., Any]] = Registry("advantage estimator")
POLICY_LOSSES: Registry[Callable[..., Any]] = Registry("policy loss")


def register_adv_est(name: str):
    """Register an advantage estimator ``(rewards, group_size, **scalars) -> (advantages, metrics)``."""
    return ADVANTAGE_ESTIMATORS.register(name)


def get_adv_est(name: str) -> Callable[..., Any]:
    return ADVANTAGE_ESTIMATORS.get(name)


def available_adv_ests() -> list[str]:
    return ADVANTAGE_ESTIMATORS.names()


def register_policy_loss(name: str):
    """Register a policy loss ``(logprobs, old_logprobs, advantages, mask, **scalars) -> (loss, metrics)``."""
    return POLICY_LOSSES.register(name)


def get_policy_loss(name: str) -> Callable[..., Any]:
    return POLICY_LOSSES.get(name)


def available_policy_losses() -> list[str]:
    return POLICY_LOSSES.names()

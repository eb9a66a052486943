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
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_ADVANTAGE_ESTIMATORS: dict[str, Callable[..., Any]] = {}
_POLICY_LOSSES: dict[str, Callable[..., Any]] = {}


def _register(table: dict[str, Callable[..., Any]], kind: str, name: str) -> Callable[[F], F]:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a {kind} needs a non-empty string name, got {name!r}")

    def deco(fn: F) -> F:
        if name in table:
            raise ValueError(
                f"{kind} {name!r} is already registered (by {table[name].__qualname__}); pick another name"
            )
        table[name] = fn
        return fn

    return deco


def _lookup(table: dict[str, Callable[..., Any]], kind: str, name: str) -> Callable[..., Any]:
    try:
        return table[name]
    except KeyError:
        raise KeyError(f"unknown {kind} {name!r}; valid names: {sorted(table)}") from None


def register_adv_est(name: str) -> Callable[[F], F]:
    """Register an advantage estimator ``(rewards, group_size, **scalars) -> (advantages, metrics)``."""
    return _register(_ADVANTAGE_ESTIMATORS, "advantage estimator", name)


def get_adv_est(name: str) -> Callable[..., Any]:
    return _lookup(_ADVANTAGE_ESTIMATORS, "advantage estimator", name)


def available_adv_ests() -> list[str]:
    return sorted(_ADVANTAGE_ESTIMATORS)


def register_policy_loss(name: str) -> Callable[[F], F]:
    """Register a policy loss ``(logprobs, old_logprobs, advantages, mask, **scalars) -> (loss, metrics)``."""
    return _register(_POLICY_LOSSES, "policy loss", name)


def get_policy_loss(name: str) -> Callable[..., Any]:
    return _lookup(_POLICY_LOSSES, "policy loss", name)


def available_policy_losses() -> list[str]:
    return sorted(_POLICY_LOSSES)

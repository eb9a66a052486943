"""Registries for advantage estimators, policy losses and the distillation, OPSD and SFT losses (verl-style).

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


#: OPD's reverse-KL forms (``OPDConfig.loss``): ``(student, teacher, mask, *, loss_agg_mode, num_tokens,
#: num_sequences) -> (loss, metrics)``; the inputs are [B, T] sampled-token log-probs (``sampled_token``), [B, T, V]
#: log-probs (``full_vocab``) or [B, T, k] log-probs at the same k ids (``topk``).
DISTILL_LOSSES: Registry[Callable[..., Any]] = Registry("distillation loss")
register_distill_loss = DISTILL_LOSSES.register
get_distill_loss = DISTILL_LOSSES.get
available_distill_losses = DISTILL_LOSSES.names

#: ComputerSD's OPSD forms (``ComputerSDConfig.opsd_loss``, the same names as OPD's): ``sampled_token`` (value-gated,
#: eq. 7) and ``topk`` (top-k + tail reverse KL gated by the KL); ``(student, privileged, ..., mask, **) -> (loss,
#: metrics)``.
OPSD_LOSSES: Registry[Callable[..., Any]] = Registry("OPSD loss")
register_opsd_loss = OPSD_LOSSES.register
get_opsd_loss = OPSD_LOSSES.get
available_opsd_losses = OPSD_LOSSES.names

#: SFT losses: ``weighted_ce`` (per-token weighted cross-entropy; ASFT is its weights, uniform weights plain SFT).
SFT_LOSSES: Registry[Callable[..., Any]] = Registry("SFT loss")
register_sft_loss = SFT_LOSSES.register
get_sft_loss = SFT_LOSSES.get
available_sft_losses = SFT_LOSSES.names

"""Pure tensor functions: advantages, policy losses, KL, distillation, OPSD, ASFT.

Advantage estimators and policy losses are registered by name (see
:mod:`guirl.algorithms.registry`); everything returns ``(value, metrics)``
with namespaced metric keys, and everything reduces through one
:func:`aggregate_loss`.
"""

from guirl.algorithms.advantages import (
    broadcast_to_tokens,
    discounted_returns,
    grpo_advantage,
    informative_groups,
    rloo_advantage,
    semi_online_advantage,
    sngs_advantage,
)
from guirl.algorithms.aggregate import AGGREGATION_MODES, aggregate_loss, batch_normalisers, masked_mean
from guirl.algorithms.distill import (
    bucket_reverse_kl,
    bucket_reverse_kl_loss,
    reverse_kl_full_vocab,
    reverse_kl_sampled_token,
    reverse_kl_topk_tail,
    topk_tail_reverse_kl_per_token,
)
from guirl.algorithms.kl import KL_ESTIMATORS, kl_estimate
from guirl.algorithms.opsd import gated_bucket_kl_loss, gated_topk_kl_loss, value_gated_opsd_loss
from guirl.algorithms.policy_loss import clipped_surrogate_loss, importance_ratio
from guirl.algorithms.registry import (
    available_adv_ests,
    available_distill_losses,
    available_opsd_losses,
    available_policy_losses,
    available_sft_losses,
    get_adv_est,
    get_distill_loss,
    get_opsd_loss,
    get_policy_loss,
    get_sft_loss,
    register_adv_est,
    register_distill_loss,
    register_opsd_loss,
    register_policy_loss,
    register_sft_loss,
)
from guirl.algorithms.sft import asft_spans, asft_token_weights, weighted_cross_entropy

__all__ = [
    "gated_bucket_kl_loss",
    "register_sft_loss",
    "register_opsd_loss",
    "register_distill_loss",
    "get_sft_loss",
    "get_opsd_loss",
    "get_distill_loss",
    "available_sft_losses",
    "available_opsd_losses",
    "available_distill_losses",
    "bucket_reverse_kl_loss",
    "AGGREGATION_MODES",
    "KL_ESTIMATORS",
    "aggregate_loss",
    "asft_spans",
    "asft_token_weights",
    "available_adv_ests",
    "available_policy_losses",
    "batch_normalisers",
    "broadcast_to_tokens",
    "clipped_surrogate_loss",
    "discounted_returns",
    "gated_topk_kl_loss",
    "get_adv_est",
    "get_policy_loss",
    "grpo_advantage",
    "importance_ratio",
    "informative_groups",
    "kl_estimate",
    "masked_mean",
    "register_adv_est",
    "register_policy_loss",
    "reverse_kl_full_vocab",
    "reverse_kl_sampled_token",
    "reverse_kl_topk_tail",
    "rloo_advantage",
    "semi_online_advantage",
    "sngs_advantage",
    "bucket_reverse_kl",
    "topk_tail_reverse_kl_per_token",
    "value_gated_opsd_loss",
    "weighted_cross_entropy",
]

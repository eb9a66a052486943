"""KL-divergence estimators between the policy and a reference, per token.

Schulman's estimators of ``KL(pi_theta || pi_ref)`` from samples of
``pi_theta`` (http://joschu.net/blog/kl-approx.html), with
``log_ratio = log pi_theta(y) - log pi_ref(y)``:

- ``k1``: ``log_ratio`` (unbiased, high variance, can be negative);
- ``k2``: ``0.5 * log_ratio ** 2`` (biased, low variance);
- ``k3``: ``exp(-log_ratio) - 1 + log_ratio`` (unbiased, non-negative, low
  variance; the GRPO paper's and TRL's estimator; verl calls it ``low_var_kl``).
"""

from __future__ import annotations

import torch
from torch import Tensor

KL_ESTIMATORS = ("k1", "k2", "k3", "low_var_kl")
#: ``k3`` clamps the log-ratio to +-20 before ``exp`` (as verl), so extreme tokens give finite values and gradients.
_MAX_LOG_RATIO = 20.0


def kl_estimate(logprobs: Tensor, ref_logprobs: Tensor, estimator: str = "k3", clamp: float | None = None) -> Tensor:
    """Per-token KL estimate [B, T] from ``logprobs`` and ``ref_logprobs`` [B, T].

    ``low_var_kl`` is an alias of ``k3``. ``clamp`` (verl clamps ``low_var_kl``
    to +-10) bounds the estimate; ``None`` (default, as TRL) leaves it.
    """
    if estimator not in KL_ESTIMATORS:
        raise ValueError(f"unknown KL estimator {estimator!r}; valid estimators: {list(KL_ESTIMATORS)}")
    log_ratio = logprobs - ref_logprobs
    if estimator == "k1":
        kl = log_ratio
    elif estimator == "k2":
        kl = 0.5 * log_ratio.square()
    else:
        log_ratio = log_ratio.clamp(min=-_MAX_LOG_RATIO, max=_MAX_LOG_RATIO)  # exp() stays finite in fp16/fp32
        kl = torch.exp(-log_ratio) - 1.0 + log_ratio
    if clamp is not None:
        kl = kl.clamp(min=-clamp, max=clamp)
    return kl

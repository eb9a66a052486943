"""Clipped-surrogate policy losses (PPO / GRPO / DAPO / GSPO / Dr. GRPO).

Per token ``l`` of completion ``i``::

    ratio   = exp(log pi_theta - log pi_old)            token level   [B, T]
            = exp(mean_l (log pi_theta - log pi_old))   sequence level [B, 1] (GSPO)
    loss_il = -min(ratio * A_i, clip(ratio, 1 - eps_low, 1 + eps_high) * A_i)
              + kl_coef * KL_il                          (KL estimator, see kl.py)

then :func:`~guirl.algorithms.aggregate.aggregate_loss` reduces it. The
asymmetric clip ``(eps_low, eps_high)`` is DAPO's "clip-higher"; LiteGUI's
MD-GRPO uses ``eps_low=0.2, eps_high=0.28`` with the sequence-level ratio
(docs/methods.md section 1); its objective (LiteGUI A.6) averages over the ``G``
sequences, ``-1/G sum_i min(rho_i A_i, clip(rho_i) A_i)``, which is
``loss_agg_mode='seq-mean-token-mean'`` (the default ``token-mean`` weights a
sequence-level term by the sequence's length). ComputerSD uses token level,
``eps=0.2``, KL 0.01 with ``k3`` (its code's slime ``low_var_kl``; docs/methods.md section 2, eq. 4).
This is the code path of TRL's ``GRPOTrainer._compute_loss`` for
``loss_type`` grpo / bnpo / dr_grpo / dapo (a parity test checks it).
"""

from __future__ import annotations

import torch
from torch import Tensor

from guirl.algorithms.aggregate import aggregate_loss, masked_mean
from guirl.algorithms.kl import kl_estimate
from guirl.algorithms.registry import register_policy_loss


def importance_ratio(logprobs: Tensor, old_logprobs: Tensor, mask: Tensor, level: str = "token") -> Tensor:
    """``pi_theta / pi_old`` per token [B, T] or per sequence [B, 1] (geometric mean, GSPO).

    The log-ratio is 0 on padding and clamped to +-20 (verl's guard; a ratio
    of e^20 is clipped anyway), so the ratio and its gradient stay finite.
    """
    keep = mask.bool()
    # padding may hold any log-prob: zero it, and clamp to +-20 (as verl) so exp() and its gradient stay finite
    log_ratio = torch.where(keep, logprobs - old_logprobs, torch.zeros_like(logprobs)).clamp(-20.0, 20.0)
    if level == "token":
        return torch.exp(log_ratio)
    if level == "sequence":
        mask = mask.to(log_ratio.dtype)
        seq = (log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)
        return torch.exp(seq).unsqueeze(-1)
    raise ValueError(f"unknown importance-ratio level {level!r}; valid levels: ['token', 'sequence']")


@register_policy_loss("clipped")
def clipped_surrogate_loss(
    logprobs: Tensor,
    old_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip_eps_low: float = 0.2,
    clip_eps_high: float = 0.2,
    ratio_level: str = "token",
    loss_agg_mode: str = "token-mean",
    ref_logprobs: Tensor | None = None,
    kl_coef: float = 0.0,
    kl_estimator: str = "k3",
    kl_importance_weighted: bool = False,
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
    max_tokens: int | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """Clipped surrogate loss.

    Args:
        logprobs: ``log pi_theta`` of the sampled tokens [B, T] (with grad).
        old_logprobs: ``log pi_old`` of the same tokens [B, T] (behaviour policy).
        advantages: [B] (one per completion, broadcast over tokens) or [B, T].
        mask: completion-token mask [B, T].
        clip_eps_low / clip_eps_high: clip range ``[1 - eps_low, 1 + eps_high]``.
        ratio_level: ``token`` (PPO/GRPO) or ``sequence`` (GSPO; LiteGUI MD-GRPO).
        loss_agg_mode: see :func:`aggregate_loss`.
        ref_logprobs / kl_coef / kl_estimator: optional per-token KL penalty.
        kl_importance_weighted: multiply the KL term by the (differentiable) ratio, which
            makes its gradient the unbiased reverse-KL gradient off-policy (DeepSeek-V3.2;
            TRL's ``use_bias_correction_kl``, on by default there, off in the GRPO paper).
        num_tokens / num_sequences / max_tokens: global normalisers, see :func:`aggregate_loss`.

    Returns ``(loss, metrics)``; metrics under ``losses/``.
    """
    if logprobs.shape != old_logprobs.shape or logprobs.shape != mask.shape:
        raise ValueError(
            f"logprobs {tuple(logprobs.shape)}, old_logprobs {tuple(old_logprobs.shape)} and mask "
            f"{tuple(mask.shape)} must all be [B, T]"
        )
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(-1)  # [B, 1]
    ratio = importance_ratio(logprobs, old_logprobs, mask, ratio_level)  # [B, T] or [B, 1]
    clipped_ratio = torch.clamp(ratio, 1.0 - clip_eps_low, 1.0 + clip_eps_high)
    per_token = -torch.min(ratio * advantages, clipped_ratio * advantages)  # [B, T]
    metrics: dict[str, float] = {}
    if kl_coef != 0.0:
        if ref_logprobs is None:
            raise ValueError("kl_coef != 0 needs ref_logprobs (log-probs of the reference policy)")
        keep = mask.bool()
        kl = kl_estimate(logprobs, torch.where(keep, ref_logprobs, logprobs.detach()), kl_estimator)  # 0 on padding
        if kl_importance_weighted:
            kl = kl * ratio
        per_token = per_token + kl_coef * kl
        metrics["losses/kl"] = float(masked_mean(kl.detach(), mask))
    loss = aggregate_loss(
        per_token, mask, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences, max_tokens=max_tokens
    )
    with torch.no_grad():
        full_mask = mask.to(ratio.dtype) * torch.ones_like(ratio)  # [B, T]
        low = ((ratio < 1.0 - clip_eps_low) & (advantages < 0)).expand_as(full_mask).to(ratio.dtype)
        high = ((ratio > 1.0 + clip_eps_high) & (advantages > 0)).expand_as(full_mask).to(ratio.dtype)
        metrics["losses/policy_loss"] = float(loss.detach())
        metrics["losses/clipfrac_low"] = float(masked_mean(low, full_mask))
        metrics["losses/clipfrac_high"] = float(masked_mean(high, full_mask))
        metrics["losses/clipfrac"] = metrics["losses/clipfrac_low"] + metrics["losses/clipfrac_high"]
        metrics["losses/ratio_mean"] = float(masked_mean(ratio.expand_as(full_mask), full_mask))
        metrics["losses/approx_kl_old"] = float(masked_mean(0.5 * (logprobs - old_logprobs).square(), mask))
    return loss, metrics

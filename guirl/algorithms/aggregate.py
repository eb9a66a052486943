"""One ``aggregate_loss`` for every per-token loss in guirl.

A per-token loss ``[B, T]`` (or ``[B, 1]`` for sequence-level terms) and a
mask ``[B, T]`` become one scalar. The modes are the ones verl and TRL use:

- ``token-mean``: ``sum(loss * mask) / N_tokens`` (DAPO; TRL ``bnpo``/``dapo``);
- ``seq-mean-token-mean``: mean over sequences of each sequence's token mean
  (the GRPO paper; TRL ``grpo``);
- ``seq-mean-token-sum``: ``sum(loss * mask) / N_sequences``;
- ``seq-mean-token-sum-norm``: ``sum(loss * mask) / (N_sequences * max_tokens)``
  (Dr. GRPO; TRL ``dr_grpo`` with ``max_tokens = max_completion_length``).

**Micro-batch / accumulation invariance.** ``N_tokens`` and ``N_sequences``
default to the counts of the tensors passed in, which makes the result a
micro-batch-local mean. Pass the counts of the *whole* batch (all
micro-batches of one optimizer step, all ranks) as ``num_tokens`` /
``num_sequences`` and the per-micro-batch results simply *sum* to the
full-batch value, so ``loss.backward()`` on each micro-batch (no division
by the accumulation steps) gives exactly the full-batch gradient whatever the
micro-batch size. :func:`batch_normalisers` computes those counts. Under
DDP, which averages gradients over ranks, pass the global counts divided by
the world size (TRL's ``num_items_in_batch / num_processes``).
"""

from __future__ import annotations

import torch
from torch import Tensor

AGGREGATION_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm")


def _check_mode(mode: str) -> None:
    if mode not in AGGREGATION_MODES:
        raise ValueError(f"unknown loss aggregation mode {mode!r}; valid modes: {list(AGGREGATION_MODES)}")


def aggregate_loss(
    loss: Tensor,
    mask: Tensor,
    mode: str = "token-mean",
    *,
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
    max_tokens: int | None = None,
) -> Tensor:
    """Reduce a per-token ``loss`` [B, T] (or [B, 1]) under ``mask`` [B, T] to a scalar.

    Args:
        loss: per-token (or per-sequence ``[B, 1]``) loss.
        mask: 1 for tokens that count, 0 for padding / prompt.
        mode: one of :data:`AGGREGATION_MODES`.
        num_tokens: global token count for ``token-mean`` (default: ``mask.sum()``).
        num_sequences: global sequence count for the ``seq-mean-*`` modes (default: ``B``).
        max_tokens: the fixed per-sequence normaliser of ``seq-mean-token-sum-norm``.
    """
    _check_mode(mode)
    if loss.dim() != 2 or mask.dim() != 2 or loss.shape[0] != mask.shape[0]:
        raise ValueError(
            f"aggregate_loss needs loss [B, T] or [B, 1] and mask [B, T]; "
            f"got {tuple(loss.shape)} and {tuple(mask.shape)}"
        )
    mask = mask.to(loss.dtype)
    masked = loss * mask  # [B, T] (a [B, 1] loss broadcasts over the sequence's tokens)
    if mode == "token-mean":
        denom = mask.sum() if num_tokens is None else num_tokens
        return masked.sum() / torch.clamp(torch.as_tensor(denom, dtype=loss.dtype, device=loss.device), min=1.0)
    n_seq = torch.as_tensor(
        loss.shape[0] if num_sequences is None else num_sequences, dtype=loss.dtype, device=loss.device
    )
    n_seq = torch.clamp(n_seq, min=1.0)
    if mode == "seq-mean-token-mean":
        per_seq = masked.sum(-1) / mask.sum(-1).clamp(min=1.0)  # [B]
        return per_seq.sum() / n_seq
    if mode == "seq-mean-token-sum":
        return masked.sum() / n_seq
    if max_tokens is None or max_tokens <= 0:
        raise ValueError("seq-mean-token-sum-norm needs max_tokens > 0 (the maximum completion length)")
    return masked.sum() / (n_seq * max_tokens)


def batch_normalisers(masks: list[Tensor]) -> tuple[float, float]:
    """``(num_tokens, num_sequences)`` of a whole batch given its micro-batch masks [b_i, T_i]."""
    tokens = float(sum(float(m.sum()) for m in masks))
    sequences = float(sum(m.shape[0] for m in masks))
    return tokens, sequences


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``values`` over ``mask`` (0 when the mask is empty); a metrics helper."""
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)

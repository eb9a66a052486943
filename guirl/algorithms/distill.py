"""Reverse-KL distillation losses ``KL(p_theta || p_T)`` (on-policy distillation).

LiteGUI's Guided OPD (docs/methods.md section 1; GKD with lambda=1, beta_JSD=1) distils a
teacher scoring the student's own samples. Three forms:

- :func:`reverse_kl_sampled_token`: per sampled token
  ``log pi_theta(y_j) - log pi_T(y_j)`` (LiteGUI eq. 12). Its value is a
  one-sample estimate of the reverse KL; its gradient is the per-token
  score-function estimate ``d_j grad log pi_theta(y_j)`` with
  ``d_j = log pi_theta - log pi_T`` detached (the per-token "advantage"
  ``-d_j`` of on-policy distillation, discount 0: the effect of ``y_j`` on
  later tokens' terms is ignored). The exact gradient of the expected KL is
  ``E[(1 + d_j) grad log pi_theta]``; the ``+1`` term has expectation zero
  under on-policy samples and is dropped (less variance, and a teacher equal
  to the student gives a zero gradient). Departure from differentiating eq.
  12 literally: that gives only ``grad log pi_theta``, the zero-mean term. Eq. 12 sums over a sequence's tokens:
  ``loss_agg_mode='seq-mean-token-sum'`` gives that form; the default
  ``token-mean`` is the token average of LiteGUI A.5.
- :func:`reverse_kl_full_vocab`: exact ``sum_v p_theta(v) (log p_theta(v) - log p_T(v))``
  per position (the GKD objective of LiteGUI A.5).
- :func:`reverse_kl_topk_tail`: the same over the teacher's top-k tokens plus
  one "tail" bucket holding the remaining mass (ComputerSD's code,
  ``online-rl/reward/opd_topk_loss.py``, k=50, the teacher's top-k as served
  by the rollout engine); ``topk_from='student'`` takes the student's top-k
  instead (our option). Either way the teacher side needs O(k) memory per
  position instead of O(V).

The teacher is always detached. All return ``(loss, metrics)`` aggregated
with :func:`aggregate_loss` over the completion mask.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from guirl.algorithms.aggregate import aggregate_loss, masked_mean
from guirl.algorithms.registry import register_distill_loss


def _log1mexp(x: Tensor) -> Tensor:
    """``log(1 - exp(x))`` for ``x <= 0``, stable (Maechler 2012)."""
    x = x.clamp(max=-1e-30)
    near_zero = torch.log(-torch.expm1(x))  # accurate for x > -log 2
    far = torch.log1p(-torch.exp(x.clamp(max=-0.6931471805599453)))  # clamped so both branches stay finite
    return torch.where(x > -0.6931471805599453, near_zero, far)


@register_distill_loss("sampled_token")
def reverse_kl_sampled_token(
    student_logprobs: Tensor,
    teacher_logprobs: Tensor,
    mask: Tensor,
    *,
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """Sampled-token reverse KL; ``student_logprobs``/``teacher_logprobs`` [B, T] of the sampled tokens."""
    diff = student_logprobs - teacher_logprobs.detach()  # [B, T]
    per_token = diff.detach() * (1.0 + student_logprobs - student_logprobs.detach())  # value d, gradient d
    loss = aggregate_loss(per_token, mask, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences)
    return loss, {"distill/reverse_kl": float(masked_mean(diff.detach(), mask))}


@register_distill_loss("full_vocab")
def reverse_kl_full_vocab(
    student_logits: Tensor,
    teacher_logits: Tensor,
    mask: Tensor,
    *,
    temperature: float = 1.0,
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """Exact reverse KL per position from logits [B, T, V] (teacher detached)."""
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(
            f"student {tuple(student_logits.shape)} and teacher {tuple(teacher_logits.shape)} logits differ"
        )
    log_p = F.log_softmax(student_logits / temperature, dim=-1)  # [B, T, V]
    log_q = F.log_softmax(teacher_logits.detach() / temperature, dim=-1)
    per_token = (log_p.exp() * (log_p - log_q)).sum(-1)  # [B, T]
    loss = aggregate_loss(per_token, mask, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences)
    return loss, {"distill/reverse_kl": float(masked_mean(per_token.detach(), mask))}


TOPK_SOURCES = ("teacher", "student")


def topk_tail_reverse_kl_per_token(
    student_logits: Tensor, teacher_logits: Tensor, k: int = 50, topk_from: str = "teacher"
) -> Tensor:
    """Reverse KL [B, T] over the top-``k`` tokens plus one tail bucket.

    Buckets: the ``k`` most likely tokens of the teacher (``topk_from='teacher'``,
    ComputerSD's code) or of the student (``'student'``), and "everything else"
    with probability ``1 - sum(top-k)`` under each model. Equals the full KL
    when ``k >= V`` and lower-bounds it otherwise (the log-sum inequality).
    """
    if topk_from not in TOPK_SOURCES:
        raise ValueError(f"unknown topk_from {topk_from!r}; valid sources: {list(TOPK_SOURCES)}")
    vocab = student_logits.shape[-1]
    k = min(k, vocab)
    log_p = F.log_softmax(student_logits.float(), dim=-1)
    log_q = F.log_softmax(teacher_logits.detach().float(), dim=-1)
    idx = (log_q if topk_from == "teacher" else log_p.detach()).topk(k, dim=-1).indices  # [B, T, k]
    return bucket_reverse_kl(log_p.gather(-1, idx), log_q.gather(-1, idx), with_tail=k < vocab).to(student_logits.dtype)


def bucket_reverse_kl(top_log_p: Tensor, top_log_q: Tensor, with_tail: bool = True) -> Tensor:
    """Reverse KL [B, T] over ``k`` given token buckets plus (``with_tail``) one bucket for the rest.

    ``top_log_p`` / ``top_log_q`` [B, T, k]: the student's and the teacher's log-probs of the same k token
    ids per position (e.g. the teacher's top-k as the teacher scored them, and the student's log-probs
    gathered at those ids): the teacher side needs only O(k) numbers per position.
    """
    top_log_q = top_log_q.detach().float()
    top_log_p = top_log_p.float()
    head = (top_log_p.exp() * (top_log_p - top_log_q)).sum(-1)  # [B, T]
    if not with_tail:
        return head
    tail_log_p = _log1mexp(torch.logsumexp(top_log_p, dim=-1))
    tail_log_q = _log1mexp(torch.logsumexp(top_log_q, dim=-1))
    return head + tail_log_p.exp() * (tail_log_p - tail_log_q)


@register_distill_loss("topk")
def bucket_reverse_kl_loss(
    top_log_p: Tensor,
    top_log_q: Tensor,
    mask: Tensor,
    *,
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """Top-k-plus-tail reverse KL from the student's and the teacher's log-probs [B, T, k] at the same k ids
    (:func:`bucket_reverse_kl`; k >= V leaves an empty tail bucket: ~0 mass, ~0 term)."""
    per_token = bucket_reverse_kl(top_log_p, top_log_q)
    loss = aggregate_loss(per_token, mask, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences)
    return loss, {"distill/reverse_kl_topk": float(masked_mean(per_token.detach(), mask))}


def reverse_kl_topk_tail(
    student_logits: Tensor,
    teacher_logits: Tensor,
    mask: Tensor,
    *,
    k: int = 50,
    topk_from: str = "teacher",
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """Top-k-plus-tail reverse KL from logits [B, T, V]; see :func:`topk_tail_reverse_kl_per_token`."""
    per_token = topk_tail_reverse_kl_per_token(student_logits, teacher_logits, k, topk_from)
    loss = aggregate_loss(per_token, mask, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences)
    return loss, {"distill/reverse_kl_topk": float(masked_mean(per_token.detach(), mask))}

"""Value-gated on-policy self-distillation (ComputerSD, docs/methods.md section 2, eqs. 5-8).

Per token ``l`` of step ``t`` of trajectory ``i``::

    delta = log pi(y_l | h+, y_<l) - log pi(y_l | h, y_<l)      (eq. 5)
    ell   = s_{i,t} * delta,   gamma = sigmoid(beta_gate * ell)    (eq. 6)
    L     = E[gamma * ell]                                       (eq. 7)

``s_{i,t}`` in {+1, -1} is the analyzer's step value; 0 (a tie or a missing
verdict in the authors' code) masks the step out. Minimising ``L`` raises
``log pi(y_l | h)`` on steps judged good (``s = +1``) and lowers it on bad
ones, each token weighted by how much its guidance-induced shift agrees with
the step value. Total ComputerSD loss: ``L_GRPO + lambda_OPSD * L_OPSD``
(lambda_OPSD = 0.01).

Variants: ``variant='paper'`` evaluates eq. 7 as written: gradients flow
wherever the inputs carry them, through the gate too (pass privileged
log-probs computed under ``torch.no_grad()`` for a frozen teacher);
``variant='code'`` is the authors' code: ``gate = sigmoid(beta * s * (q+ - logp.detach()))``,
``loss = s * gate * (q+ - logp)`` with ``q+`` and the gate detached.
Gates for ablations: ``sigmoid`` (default), ``hard`` (``1[ell > 0]``),
``reverse`` (``sigmoid(-beta * ell)``), ``none`` (1), as the paper's Table 4
and the code's ``gui_opd_hard_gate`` / ``gui_opd_gate_reverse`` /
``gui_opd_gate`` switches. ``judge_direction=False`` is the code's
``GUI_OPD_JUDGE_GATE=false`` (SEED's loss: ``s`` replaced by +1 on every
step the analyzer scored; steps with ``s = 0`` stay masked).

Authors' code: ZJU-REAL/ComputerSD ``online-rl/reward/opd_topk_loss.py``
(sampled-token mode, the default there; beta 5, lambda 0.01 in
``scripts/gui_qwen3vl_16gpu_async_grpo_opd.sh``). It averages tokens within
each step and then over steps, i.e. ``loss_agg_mode='seq-mean-token-mean'``;
guirl's default ``token-mean`` is the paper's ``E_{i,t,l}``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from guirl.algorithms.aggregate import aggregate_loss, masked_mean
from guirl.algorithms.distill import topk_tail_reverse_kl_per_token
from guirl.algorithms.registry import register_opsd_loss

GATES = ("sigmoid", "hard", "reverse", "none")
VARIANTS = ("paper", "code")


def _gate(ell: Tensor, gate: str, beta_gate: float) -> Tensor:
    if gate == "sigmoid":
        return torch.sigmoid(beta_gate * ell)
    if gate == "hard":
        return (ell > 0).to(ell.dtype)
    if gate == "reverse":
        return torch.sigmoid(-beta_gate * ell)
    if gate == "none":
        return torch.ones_like(ell)
    raise ValueError(f"unknown OPSD gate {gate!r}; valid gates: {list(GATES)}")


@register_opsd_loss("sampled_token")
def value_gated_opsd_loss(
    student_logprobs: Tensor,
    privileged_logprobs: Tensor,
    step_values: Tensor,
    mask: Tensor,
    *,
    beta_gate: float = 5.0,
    gate: str = "sigmoid",
    variant: str = "paper",
    judge_direction: bool = True,
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """Value-gated OPSD loss.

    Args:
        student_logprobs: ``log pi(y_l | h)`` [B, T] (B = step samples), with grad.
        privileged_logprobs: ``log pi(y_l | h+)`` [B, T] under the guidance context.
        step_values: ``s`` per step [B] (or per token [B, T]) in {-1, 0, +1}.
        mask: completion-token mask [B, T]; steps with ``s == 0`` are masked out.
        judge_direction: False replaces ``s`` by +1 on scored steps (the code's SEED mode).
        num_tokens / num_sequences: global normalisers (see :func:`aggregate_loss`); count
            only tokens / steps with ``s != 0``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown OPSD variant {variant!r}; valid variants: {list(VARIANTS)}")
    if step_values.dim() == 1:
        step_values = step_values.unsqueeze(-1)  # [B, 1]
    s = step_values.to(student_logprobs.dtype)
    active = mask.to(student_logprobs.dtype) * (s != 0).to(student_logprobs.dtype)  # [B, T]
    if not judge_direction:
        s = (s != 0).to(s.dtype)  # SEED: every scored step pulls towards the privileged context
    if variant == "paper":
        ell = s * (privileged_logprobs - student_logprobs)
        g = _gate(ell, gate, beta_gate)
    else:
        q_plus = privileged_logprobs.detach()
        g = _gate(s * (q_plus - student_logprobs.detach()), gate, beta_gate).detach()
        ell = s * (q_plus - student_logprobs)
    per_token = g * ell  # [B, T]
    loss = aggregate_loss(per_token, active, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences)
    with torch.no_grad():
        ell_d = ell.detach()
        metrics = {
            "opsd/loss": float(loss.detach()),
            "opsd/gate_mean": float(masked_mean(g.detach().expand_as(active), active)),
            "opsd/delta_mean": float(masked_mean((privileged_logprobs - student_logprobs).detach(), active)),
            "opsd/conflict_frac": float(masked_mean((ell_d < 0).to(ell_d.dtype), active)),
        }
    return loss, metrics


def gated_topk_kl_loss(
    student_logits: Tensor,
    privileged_logits: Tensor,
    mask: Tensor,
    *,
    k: int = 50,
    beta: float = 5.0,
    gate: str = "sigmoid",
    topk_from: str = "teacher",
    step_values: Tensor | None = None,
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """ComputerSD code option (``gui_opd_loss_mode=topk``): top-k+tail reverse KL [B, T]
    weighted by a detached gate of the KL itself, ``sigmoid(beta * KL)`` by default.

    Logits [B, T, V]; the privileged (teacher) side is detached. As in the
    code: the buckets are the teacher's top-``k`` (``topk_from``, see
    :func:`topk_tail_reverse_kl_per_token`); ``gate`` takes the same ablations
    as :func:`value_gated_opsd_loss` applied to ``KL`` (``hard``: ``1[KL > 0]``,
    ``reverse``: ``sigmoid(-beta * KL)``, ``none``: 1); the step value does not
    enter the loss, but steps with ``s == 0`` (``step_values`` [B] or [B, T],
    optional) are masked out.
    """
    kl = topk_tail_reverse_kl_per_token(student_logits, privileged_logits, k, topk_from)  # [B, T]
    return _gated_kl(kl, mask, beta, gate, step_values, loss_agg_mode, num_tokens, num_sequences)


@register_opsd_loss("topk")
def gated_bucket_kl_loss(
    student_top_logprobs: Tensor,
    privileged_top_logprobs: Tensor,
    mask: Tensor,
    *,
    beta: float = 5.0,
    gate: str = "sigmoid",
    step_values: Tensor | None = None,
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
    num_sequences: float | Tensor | None = None,
    with_tail: bool = True,
) -> tuple[Tensor, dict[str, float]]:
    """:func:`gated_topk_kl_loss` from O(k) numbers per position: the privileged context's top-k log-probs
    ``[B, T, k]`` (as :func:`guirl.models.scoring.score_completions` returns them with ``top_k``) and the
    student's log-probs gathered at the same ids (``gather_ids``), so no ``[B, T, V]`` tensor is kept."""
    from guirl.algorithms.distill import bucket_reverse_kl

    kl = bucket_reverse_kl(student_top_logprobs, privileged_top_logprobs, with_tail=with_tail)
    return _gated_kl(kl, mask, beta, gate, step_values, loss_agg_mode, num_tokens, num_sequences)


def _gated_kl(kl, mask, beta, gate, step_values, loss_agg_mode, num_tokens, num_sequences):
    active = mask.to(kl.dtype)
    if step_values is not None:
        sv = step_values.unsqueeze(-1) if step_values.dim() == 1 else step_values
        active = active * (sv != 0).to(kl.dtype)
    weight = _gate(kl.detach(), gate, beta).detach()
    loss = aggregate_loss(weight * kl, active, loss_agg_mode, num_tokens=num_tokens, num_sequences=num_sequences)
    return loss, {
        "opsd/topk_kl": float(masked_mean(kl.detach(), active)),
        "opsd/topk_weight": float(masked_mean(weight, active)),
    }

"""Value-gated on-policy self-distillation (ComputerSD, METHODS.md 2, eqs. 5-8).

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
``reverse`` (``sigmoid(-beta * ell)``), ``none`` (1).
"""

from __future__ import annotations

import torch
from torch import Tensor

from guirl.algorithms.aggregate import aggregate_loss, masked_mean
from guirl.algorithms.distill import topk_tail_reverse_kl_per_token

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


def value_gated_opsd_loss(
    student_logprobs: Tensor,
    privileged_logprobs: Tensor,
    step_values: Tensor,
    mask: Tensor,
    *,
    beta_gate: float = 5.0,
    gate: str = "sigmoid",
    variant: str = "paper",
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
        num_tokens / num_sequences: global normalisers (see :func:`aggregate_loss`); count
            only tokens / steps with ``s != 0``.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown OPSD variant {variant!r}; valid variants: {list(VARIANTS)}")
    if step_values.dim() == 1:
        step_values = step_values.unsqueeze(-1)  # [B, 1]
    s = step_values.to(student_logprobs.dtype)
    active = mask.to(student_logprobs.dtype) * (s != 0).to(student_logprobs.dtype)  # [B, T]
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
    loss_agg_mode: str = "token-mean",
    num_tokens: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """ComputerSD code option: top-k+tail reverse KL [B, T] weighted by ``sigmoid(beta * KL)`` (detached).

    Logits [B, T, V]; the privileged (teacher) side is detached.
    """
    kl = topk_tail_reverse_kl_per_token(student_logits, privileged_logits, k)  # [B, T]
    weight = torch.sigmoid(beta * kl.detach())
    loss = aggregate_loss(weight * kl, mask, loss_agg_mode, num_tokens=num_tokens)
    return loss, {
        "opsd/topk_kl": float(masked_mean(kl.detach(), mask)),
        "opsd/topk_weight": float(masked_mean(weight, mask)),
    }

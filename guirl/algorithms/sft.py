"""Action-aware SFT (GUI-Libra ASFT, docs/methods.md section 4): weighted cross-entropy.

Target tokens split into reasoning ``c``, action ``a`` and grounding ``g``::

    L = -(log p(c) + alpha_a log p(a | c) + alpha_g log p(g | c, a))
        / (|c| + alpha_a |a| + alpha_g |g|)

which is ``sum(w * CE) / sum(w)`` with weight 1 on reasoning tokens,
``alpha_a`` on action tokens and ``alpha_g`` on grounding tokens
(``variant='paper'``). The authors' code (``variant='code'``) multiplies:
tokens inside ``<answer>`` get x``alpha_a`` (2) and tokens after
``"point_2d":`` get a further x``alpha_g`` (4), so coordinates weigh 8.
``alpha_a = alpha_g = 1`` is plain SFT.

Spans are found in the *text* (characters) and mapped onto tokens with a fast
tokenizer's ``offset_mapping``, so the rule does not depend on how a
tokenizer happens to split ``<answer>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from guirl.algorithms.aggregate import masked_mean
from guirl.algorithms.registry import register_sft_loss

Span = tuple[int, int]  # [start, end) character offsets

_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL)
_POINT = re.compile(r"[\"']?point_2d[\"']?\s*:\s*")


def asft_spans(text: str) -> dict[str, list[Span]]:
    """Character spans of ``action`` (inside ``<answer>``) and ``grounding``
    (from after ``"point_2d":`` to the end of its value) in a GUI-Libra target.

    Everything else is reasoning. A missing ``</answer>`` runs to the end.
    """
    action: list[Span] = []
    grounding: list[Span] = []
    for m in _ANSWER.finditer(text):
        start, end = m.span(1)
        action.append((start, end))
        p = _POINT.search(text, start, end)
        if p is not None:
            g_end = _value_end(text, p.end(), end)
            grounding.append((p.end(), g_end))
    return {"action": action, "grounding": grounding}


def _value_end(text: str, start: int, limit: int) -> int:
    """End of a JSON value starting at ``start``: a bracketed list or a bare token."""
    if start < limit and text[start] == "[":
        close = text.find("]", start, limit)
        return close + 1 if close != -1 else limit
    m = re.compile(r"[,}\n]").search(text, start, limit)
    return m.start() if m else limit


def _overlaps(token: Span, spans: Sequence[Span]) -> bool:
    s, e = token
    return e > s and any(s < b and e > a for a, b in spans)


def asft_token_weights(
    text: str,
    offset_mapping: Sequence[tuple[int, int]],
    *,
    alpha_action: float = 2.0,
    alpha_grounding: float = 4.0,
    variant: str = "paper",
    spans: dict[str, list[Span]] | None = None,
) -> Tensor:
    """Per-token weights [T] for ``text`` tokenised with ``offset_mapping`` [T, 2] (character offsets).

    ``spans`` (``{"action": [...], "grounding": [...]}``) defaults to
    :func:`asft_spans` of ``text`` (GUI-Libra's ``<answer>`` layout); pass
    your own for other output formats.

    A token overlapping a grounding span is grounding, else overlapping an
    action span is action, else reasoning. Special tokens (offset ``(0, 0)``)
    weigh 1. ``variant='code'`` weighs grounding ``alpha_action * alpha_grounding``.
    """
    if variant not in ("paper", "code"):
        raise ValueError(f"unknown ASFT variant {variant!r}; valid: ['paper', 'code']")
    spans = asft_spans(text) if spans is None else spans
    grounding_weight = alpha_grounding if variant == "paper" else alpha_action * alpha_grounding
    weights = []
    for start, end in offset_mapping:
        tok = (int(start), int(end))
        if _overlaps(tok, spans["grounding"]):
            weights.append(grounding_weight)
        elif _overlaps(tok, spans["action"]):
            weights.append(alpha_action)
        else:
            weights.append(1.0)
    return torch.tensor(weights, dtype=torch.float32)


@register_sft_loss("weighted_ce")
def weighted_cross_entropy(
    logits: Tensor,
    labels: Tensor,
    weights: Tensor,
    *,
    ignore_index: int = -100,
    normaliser: float | Tensor | None = None,
) -> tuple[Tensor, dict[str, float]]:
    """``sum(w * CE) / sum(w)`` over target tokens (ASFT).

    Args:
        logits: [B, T, V] predicting ``labels`` [B, T] at the same positions
            (shift them beforehand for causal LMs).
        weights: [B, T] token weights (:func:`asft_token_weights`).
        normaliser: the global ``sum(w)`` of the whole batch, for micro-batch
            invariance (see :mod:`guirl.algorithms.aggregate`); default: this batch's.
    """
    if logits.shape[:2] != labels.shape or labels.shape != weights.shape:
        raise ValueError(
            f"logits {tuple(logits.shape)}, labels {tuple(labels.shape)}, weights {tuple(weights.shape)} disagree"
        )
    valid = labels != ignore_index
    logits = logits if logits.dtype in (torch.float32, torch.float64) else logits.float()  # CE in >= fp32
    ce = F.cross_entropy(logits.flatten(0, 1), labels.masked_fill(~valid, 0).flatten(), reduction="none")
    ce = ce.view_as(weights) * valid
    w = weights.to(ce.dtype) * valid
    denom = w.sum() if normaliser is None else torch.as_tensor(normaliser, dtype=ce.dtype, device=ce.device)
    loss = (w * ce).sum() / denom.clamp(min=1e-8)
    return loss, {"sft/weighted_ce": float(loss.detach()), "sft/ce": float(masked_mean(ce.detach(), valid))}

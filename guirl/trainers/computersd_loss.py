"""ComputerSD's loss of one micro-batch: trajectory-level GRPO (clip, KL) plus ``opsd_coef`` times the value-gated
on-policy self-distillation term (sampled-token or top-k form, :mod:`guirl.algorithms.opsd`)."""

from __future__ import annotations

import torch

from guirl.trainers.computersd import ComputerSDConfig


def computersd_loss(model, processor, batch: list, step_batches: list[list], cfg: ComputerSDConfig):
    """``L_GRPO + opsd_coef * L_OPSD`` of one micro-batch, normalised by the whole optimiser step."""
    from guirl.algorithms import get_opsd_loss, get_policy_loss, masked_mean
    from guirl.rollout.sample import loss_mask, padded, token_advantages
    from guirl.trainers.rl_common import score_samples

    if not batch:
        return sum(p.sum() for p in model.parameters() if p.requires_grad) * 0.0, {}
    everything = [s for b in step_batches for s in b if s.trainable]
    num_tokens = float(sum(s.num_tokens for s in everything))
    topk = [s.extra.get("teacher_topk") for s in batch] if cfg.opsd_coef and cfg.opsd_loss == "topk" else None
    topk = topk if topk and any(t is not None for t in topk) else None  # None: no privileged top-k in this batch
    gather = _stack_topk([t[0] if t is not None else None for t in topk], batch, torch.long) if topk else None
    out = score_samples(model, processor, batch, cfg.temperature, entropy=True, gather_ids=gather)
    dev = out.logprobs.device
    mask = loss_mask(batch).to(dev) * out.mask
    old = padded([s.behaviour_logprobs for s in batch]).to(dev)
    ref = padded([s.ref_logprobs for s in batch]).to(dev) if cfg.kl_coef else None
    loss, metrics = get_policy_loss(cfg.policy_loss)(
        out.logprobs, old, token_advantages(batch).to(dev), mask, ref_logprobs=ref, num_tokens=max(num_tokens, 1.0),
        num_sequences=float(max(1, len(everything))), clip_eps_low=cfg.clip_eps_low, clip_eps_high=cfg.clip_eps_high,
        loss_agg_mode=cfg.loss_agg_mode, kl_coef=cfg.kl_coef, kl_estimator=cfg.kl_estimator,
        max_tokens=cfg.max_new_tokens)
    metrics["policy/entropy"] = float(masked_mean(out.entropy.detach(), mask))
    scored = [s for s in everything if s.extra.get("value")]
    if cfg.opsd_coef and scored and topk:
        values = torch.tensor([float(s.extra.get("value", 0)) for s in batch], device=dev)
        priv_top = _stack_topk([t[1] if t is not None else None for t in topk], batch, torch.float32).to(dev)
        vocab = getattr(getattr(processor, "tokenizer", None), "vocab_size", None) or 1 << 30
        opsd, opsd_metrics = get_opsd_loss(cfg.opsd_loss)(
            out.gathered_logprobs, priv_top, mask, beta=cfg.opsd_beta, gate=cfg.opsd_gate, step_values=values,
            loss_agg_mode=cfg.loss_agg_mode, num_tokens=float(sum(s.num_tokens for s in scored)),
            num_sequences=float(len(scored)), with_tail=cfg.opsd_top_k < vocab)
        loss = loss + cfg.opsd_coef * opsd
        metrics |= opsd_metrics
    elif cfg.opsd_coef and scored and cfg.opsd_loss == "sampled_token":
        priv = padded([s.teacher_logprobs or [0.0] * s.num_tokens for s in batch]).to(dev)
        values = torch.tensor([float(s.extra.get("value", 0)) for s in batch], device=dev)
        opsd, opsd_metrics = get_opsd_loss(cfg.opsd_loss)(
            out.logprobs, priv, values, mask, beta_gate=cfg.opsd_beta, gate=cfg.opsd_gate, variant=cfg.opsd_variant,
            judge_direction=cfg.opsd_judge_direction, loss_agg_mode=cfg.loss_agg_mode,
            num_tokens=float(sum(s.num_tokens for s in scored)), num_sequences=float(len(scored)))
        loss = loss + cfg.opsd_coef * opsd
        metrics |= opsd_metrics
    return loss, metrics


def _stack_topk(rows: list, batch: list, dtype) -> torch.Tensor:
    """``[N, T, k]`` of per-sample ``[T_i, k]`` tensors (zeros for a sample without, padded on T)."""
    k = next(r.shape[-1] for r in rows if r is not None)
    width = max(s.num_tokens for s in batch)
    out = torch.zeros(len(batch), width, k, dtype=dtype)
    for i, r in enumerate(rows):
        if r is not None:
            out[i, : r.shape[0]] = r.to(dtype)
    return out


__all__ = ["computersd_loss"]

"""Guided on-policy distillation on recorded steps (``guirl train opd``; LiteGUI stage 1, docs/methods.md section 1).

One optimiser step:

1. **sample**: the ``batch_size`` recorded states drawn by the trainer core
   become the student's ordinary prompts ``x_t``
   (:func:`guirl.rollout.history.recorded_prompt`, the student's
   :class:`~guirl.models.prompts.PromptSpec`); the generation engine draws
   ``samples_per_state`` completions ``y`` of each (temperature 1.0, top-p 0.98);
2. **guide**: each sample gets its reference under the guidance mode
   (:mod:`guirl.models.guidance`: ``none``, ``single``, ``multi``,
   ``most_matched`` against the student's parsed output) and the teacher's
   prompt ``x~_t``: the student's prompt plus the privileged block, nothing
   else changed. Samples whose teacher prompts are equal share one prompt
   object, so the teacher encodes it, and runs its vision tower, once;
3. **update**: per micro-batch the teacher (no gradient) scores exactly the
   student's tokens under ``x~_t`` (batched over the distinct teacher
   prompts), the student scores them under ``x_t``, and the reverse KL
   ``KL(pi_theta || pi_T)`` is minimised in the sampled-token form (LiteGUI
   eq. 12, gradient ``d_j grad log pi_theta``), the full-vocabulary form, or
   top-k plus one tail bucket (the teacher's or the student's top-k; the
   teacher side is gathered at k ids per position, never ``[B, T, V]``).

The teacher is another checkpoint sharing the student's tokenizer (a
mismatch is refused) or ``self``: the student's own current weights
(self-distillation). It is prompted with the student's prompt spec and
coordinate frame, so a reference action is written in the coordinates the
student writes. Logged per step: the KL per token, teacher-student agreement
on the sampled token (the teacher's argmax equals it), the teacher's mean
log-prob, which references were chosen (index in A*_t, share of first
references), the share of unparsable student outputs (Most-Matched's
fallback) and the samples that got no reference because no action of their
A*_t can be written in the format (``guidance/unguided``, ``_frac``; their
teacher sees the plain prompt; a warning, once, when a batch's share exceeds
``unguided_warn_frac``); ``output_dir/guidance.jsonl`` records every sample's choice.
Exact resume as in :mod:`guirl.trainers.grpo` (the sampling seed and the
Single-GT draw are functions of (seed, step, process)).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field

from guirl.models.guidance import GUIDANCE_MODES, UnguidedMonitor, choose_guidance
from guirl.models.scoring import encode_prompt, score_completions
from guirl.rollout.engine import SamplingParams
from guirl.rollout.sample import Sample, padded
from guirl.trainers.rl_common import RecordedState, RecordedStatesConfig, load_states, micro_batches, score_samples

OPD_LOSSES = ("sampled_token", "full_vocab", "topk")


class OPDConfig(RecordedStatesConfig):
    teacher: str = Field("self", description="teacher model directory sharing the student's tokenizer, or 'self'")
    guidance: Literal["none", "single", "multi", "most_matched"] = Field(
        "most_matched", description="reference given to the teacher: none (plain OPD), single, multi, most_matched")
    samples_per_state: int = Field(1, ge=1, description="student completions sampled per state")
    temperature: float = Field(1.0, gt=0, description="student sampling temperature")
    top_p: float = Field(0.98, gt=0, le=1, description="student nucleus sampling mass")
    max_new_tokens: int = Field(64, gt=0, description="completion length limit")
    loss: Literal["sampled_token", "full_vocab", "topk"] = Field("sampled_token", description="reverse-KL form")
    top_k: int = Field(50, gt=0, description="buckets of the top-k loss (plus one tail bucket)")
    topk_from: Literal["teacher", "student"] = Field("teacher", description="whose top-k tokens are the buckets")
    loss_agg_mode: str = Field("token-mean", description="aggregate_loss mode (seq-mean-token-sum: eq. 12's sum)")
    unguided_warn_frac: float = Field(
        0.1, ge=0, le=1, description="warn (once) when a batch's share of samples left without a reference (no "
        "action of A*_t in the format: plain OPD for them) exceeds this")


class Teacher:
    """The distillation teacher: a frozen checkpoint, or the student itself (``self``)."""

    def __init__(self, path: str, student_dir: str, student_processor):
        self.path = path
        self.model = None
        self.processor = student_processor
        if path == "self":
            return
        from guirl.models.load import load_policy

        teacher = load_policy(path)
        if teacher.processor.tokenizer.get_vocab() != student_processor.tokenizer.get_vocab():
            raise ValueError(
                f"teacher {path} and student {student_dir} have different tokenizers: the teacher scores the "
                "student's tokens, so both need the same vocabulary (pick a teacher of the student's model family)"
            )
        self.model = teacher.model.eval().requires_grad_(False)
        self.processor = teacher.processor

    def target(self, student: torch.nn.Module) -> torch.nn.Module:
        return student if self.model is None else self.model


def _plain(model: torch.nn.Module) -> torch.nn.Module:
    return getattr(model, "module", model)


class OPDSampler:
    """The ``prepare_step`` of the trainer core: sample the student, choose guidance, build teacher prompts."""

    def __init__(self, cfg: OPDConfig, policy, engine, teacher: Teacher, rank: int = 0, log_path: Path | None = None):
        self.cfg, self.policy, self.engine, self.teacher, self.rank = cfg, policy, engine, teacher, rank
        self.log_path = log_path
        self.num_micro = -(-cfg.batch_size * cfg.grad_accum * cfg.samples_per_state // cfg.micro_batch_size)
        self.unguided = UnguidedMonitor(cfg.unguided_warn_frac)

    def teacher_prompts(self, state: RecordedState, image, samples: list[Sample], rng: random.Random):
        """Guidance of each sample of one state and its teacher prompt (equal prompts share one object)."""
        from guirl.actions import Frame, parse_action
        from guirl.rollout.history import recorded_prompt

        spec, frame = self.policy.prompt, self.policy.frame_for(*image.size)
        screen = Frame.screen(*image.size)
        valid = state.step.valid_actions or ([state.step.action] if state.step.action is not None else [])
        shared: dict[str | None, Any] = {}
        rows = []
        for s in samples:
            pred = None
            if self.cfg.guidance == "most_matched":
                pred = parse_action(s.text, spec.fmt, frame)
                if pred:
                    try:
                        pred = pred.to_frame(screen)
                    except ValueError:
                        pred = parse_action("", spec.fmt, frame)  # unconvertible: treated as unparsable
            g = choose_guidance(self.cfg.guidance, valid, spec.fmt, rng, pred=pred, screen=screen)
            text = g.text(spec.fmt, frame)
            if text not in shared:
                prompt, _ = recorded_prompt(spec, self.policy.frame_for, state.episode, state.step, state.root,
                                            guidance=text, image=image)
                shared[text] = encode_prompt(self.teacher.processor, prompt)
            s.teacher_prompt = shared[text]
            s.extra["guidance"] = {"index": g.index, "references": len(g.actions), "fallback": g.fallback,
                                   "unguided": g.unguided, "candidates": len(valid)}
            rows.append(g)
        return rows, len(shared)

    def __call__(self, model, step: int, batches: list[list[RecordedState]]):
        from guirl.rollout.history import recorded_prompt

        cfg = self.cfg
        model = _plain(model)  # sampling on the plain module (under DDP every wrapper forward is a collective)
        states = [s for batch in batches for s in batch]
        opened = [recorded_prompt(self.policy.prompt, self.policy.frame_for, s.episode, s.step, s.root) for s in states]
        prompts = [encode_prompt(self.policy.processor, p) for p, _ in opened]
        params = SamplingParams(n=cfg.samples_per_state, temperature=cfg.temperature, top_p=cfg.top_p,
                                max_new_tokens=cfg.max_new_tokens, seed=cfg.seed * 1_000_003 + step * 1_009 + self.rank)
        self.engine.update_weights(model, step)
        t0 = time.perf_counter()
        outputs = self.engine.generate(prompts, params)
        generate_s = time.perf_counter() - t0
        rng = random.Random(cfg.seed * 7_919 + step * 31 + self.rank)
        samples, chosen, distinct = [], [], 0
        for state, prompt, (_, image), group in zip(states, prompts, opened, outputs, strict=True):
            rows = [Sample(prompt, c.token_ids, c.logprobs, c.policy_version, state.key, c.text, c.finish_reason)
                    for c in group]
            guidance, n = self.teacher_prompts(state, image, rows, rng)
            distinct += n
            samples += rows
            chosen += guidance
        with_ref = [g for g in chosen if len(g.actions) == 1]
        lengths = [s.num_tokens for s in samples]
        metrics = {
            "guidance/fallback_frac": sum(g.fallback for g in chosen) / max(1, len(chosen)),
            "guidance/first_reference_frac": sum(g.index == 0 for g in with_ref) / max(1, len(with_ref)),
            "guidance/reference_index_mean": sum(g.index for g in with_ref) / max(1, len(with_ref)),
            "guidance/references_per_sample": sum(len(g.actions) for g in chosen) / max(1, len(chosen)),
            "guidance/teacher_prompts_per_state": distinct / max(1, len(states)),
            **self.unguided.update(chosen, cfg.guidance),
            "completions/mean_length": sum(lengths) / max(1, len(lengths)),
            "completions/clipped_frac": sum(s.finish_reason == "length" for s in samples) / max(1, len(samples)),
            "time/generate_s": generate_s,
        }
        if self.log_path is not None:
            with open(self.log_path, "a") as fh:
                for i, s in enumerate(samples):
                    fh.write(json.dumps({"step": step, "state": s.group_id, "sample": i % cfg.samples_per_state,
                                         "mode": cfg.guidance, **s.extra["guidance"]}) + "\n")
        return micro_batches(samples, cfg.micro_batch_size, max(self.num_micro, 1)), metrics


def teacher_scores(teacher: Teacher, student: torch.nn.Module, batch: list[Sample], **kwargs):
    """The teacher's scores of ``batch``'s tokens under their teacher prompts, one call over the distinct prompts."""
    prompts, index, seen = [], [], {}
    for s in batch:
        if s.teacher_prompt is None:
            raise ValueError("a sample has no teacher_prompt; OPDSampler sets one for every sample")
        if id(s.teacher_prompt) not in seen:
            seen[id(s.teacher_prompt)] = len(prompts)
            prompts.append(s.teacher_prompt)
        index.append(seen[id(s.teacher_prompt)])
    model = _plain(teacher.target(student))
    with torch.no_grad():
        return score_completions(model, teacher.processor, prompts, [s.completion_ids for s in batch], index, **kwargs)


def opd_loss(model, processor, teacher: Teacher, batch: list[Sample], step_batches: list[list[Sample]], cfg: OPDConfig):
    """Reverse KL of one micro-batch, normalised by the whole step's tokens / sequences."""
    from guirl.algorithms import get_distill_loss, masked_mean

    if not batch:
        return sum(p.sum() for p in model.parameters() if p.requires_grad) * 0.0, {}
    everything = [s for b in step_batches for s in b]
    norm = {"num_tokens": float(max(1, sum(s.num_tokens for s in everything))),
            "num_sequences": float(max(1, len(everything))), "loss_agg_mode": cfg.loss_agg_mode}
    if cfg.loss == "topk" and cfg.topk_from == "teacher":  # the teacher first: its top-k ids are gathered
        t = teacher_scores(teacher, model, batch, top_k=cfg.top_k)  # from the student's one forward pass
        student = score_samples(model, processor, batch, 1.0, gather_ids=t.topk_ids)
        log_p, log_q = student.gathered_logprobs, t.topk_logprobs
    else:
        student = score_samples(model, processor, batch, 1.0, full_distribution=cfg.loss != "sampled_token")
        if cfg.loss == "topk":  # the student's top-k, scored by the teacher at those ids
            ids = student.full_logprobs.detach().topk(min(cfg.top_k, student.full_logprobs.shape[-1]), -1).indices
            t = teacher_scores(teacher, model, batch, gather_ids=ids, top_k=1)
            log_p, log_q = student.full_logprobs.gather(-1, ids), t.gathered_logprobs
        else:
            t = teacher_scores(teacher, model, batch, top_k=1, full_distribution=cfg.loss == "full_vocab")
    mask = student.mask
    inputs = {"sampled_token": lambda: (student.logprobs, t.logprobs),
              "full_vocab": lambda: (student.full_logprobs, t.full_logprobs),
              "topk": lambda: (log_p, log_q)}[cfg.loss]()  # what each registered loss reads
    loss, metrics = get_distill_loss(cfg.loss)(*inputs, mask, **norm)
    tokens = padded([s.completion_ids for s in batch], dtype=torch.long).to(mask.device)
    teacher_top = t.topk_ids[..., 0] if t.topk_ids is not None else None
    metrics["distill/sampled_token_kl"] = float(masked_mean((student.logprobs - t.logprobs).detach(), mask))
    metrics["distill/teacher_logprob"] = float(masked_mean(t.logprobs, mask))
    if teacher_top is not None:
        metrics["distill/teacher_agreement"] = float(masked_mean((teacher_top == tokens).float(), mask))
    return loss, metrics


def train_opd(cfg: OPDConfig) -> dict[str, Any]:
    """Run guided OPD as configured; the final student goes to ``output_dir/final``."""
    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.core import process_state, train
    from guirl.trainers.grpo import heldout_evaluator, load_rl_policy, save_final

    if not cfg.train_data:
        raise ValueError("train_data is empty: pass recorded episodes (train_data=[path.jsonl, ...])")
    if cfg.guidance not in GUIDANCE_MODES:
        raise ValueError(f"unknown guidance {cfg.guidance!r}; choose one of {list(GUIDANCE_MODES)}")
    policy = load_rl_policy(cfg)
    teacher = Teacher(cfg.teacher, cfg.model, policy.processor)
    states = load_states(cfg.train_data, cfg.data_format, cfg.image_root, cfg.step_labels)
    if cfg.guidance != "none" and not any(s.step.valid_actions for s in states):
        raise ValueError(f"guidance {cfg.guidance!r} needs recorded valid actions (A*_t) and {cfg.train_data} has none")
    engine = HFEngine.from_policy(policy, max_batch_rows=cfg.engine_max_rows)
    state = process_state()
    Path(cfg.output_dir).mkdir(parents=True, exist_ok=True)
    log_path = Path(cfg.output_dir) / "guidance.jsonl" if state.is_main_process else None
    sampler = OPDSampler(cfg, policy, engine, teacher, rank=state.process_index, log_path=log_path)
    evaluate, _ = heldout_evaluator(cfg, policy, engine)

    def compute_loss(model, batch, step_batches):
        return opd_loss(model, policy.processor, teacher, batch, step_batches, cfg)

    result = train(cfg, policy.model, states, list, compute_loss, evaluate=evaluate, prepare_step=sampler)
    result["final_dir"] = save_final(policy, result["model"], Path(cfg.output_dir))
    if evaluate is not None and state.is_main_process:
        result["final_eval"] = evaluate(result["model"], result["step"])
    return result

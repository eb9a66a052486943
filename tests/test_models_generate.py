"""Generation, parsing into screen pixels, teacher scoring of given tokens, LoRA."""

from __future__ import annotations

import pytest
import torch
from models_fixtures import ARCHS, tiny_model_dir, tiny_policy
from PIL import Image

from guirl.actions import ActionType, Frame
from guirl.models.generate import completion_logprobs, decode_generation, generate_actions, prepare_inputs
from guirl.models.load import default_lora_config, load_policy
from guirl.models.prompts import build_messages
from guirl.models.scoring import forbidden_token_ids, mask_forbidden

SCREEN = Image.new("RGB", (256, 256), (200, 200, 200))


@pytest.mark.parametrize("arch", ARCHS)
def test_generate_is_seeded_and_keeps_the_global_rng(arch):
    policy = tiny_policy(arch)
    state = torch.random.get_rng_state()
    first = generate_actions(policy, SCREEN, "Click OK", num_samples=2, temperature=1.0, max_new_tokens=12, seed=1)
    assert torch.equal(state, torch.random.get_rng_state())
    again = generate_actions(policy, SCREEN, "Click OK", num_samples=2, temperature=1.0, max_new_tokens=12, seed=1)
    other = generate_actions(policy, SCREEN, "Click OK", num_samples=2, temperature=1.0, max_new_tokens=12, seed=2)
    assert len(first) == 2 and all(isinstance(g.text, str) and g.token_ids for g in first)
    assert [g.token_ids for g in first] == [g.token_ids for g in again]
    assert [g.token_ids for g in first] != [g.token_ids for g in other]
    for generation in first:  # a random model writes garbage: a ParseFailure, never an exception
        assert generation.action or generation.action.reason


def _tool_call(x: int, y: int) -> str:
    return (
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
        f'"coordinate": [{x}, {y}]}}}}\n</tool_call>'
    )


@pytest.mark.parametrize(
    ("arch", "written", "screen", "expected"),
    [
        # Qwen3-VL writes relative 0-1000: (500, 250) on 256x256 -> (128, 64)
        ("qwen3_vl", (500, 250), (256, 256), (128.0, 64.0)),
        # Qwen2.5-VL writes pixels of the resized image: 1920x1080 -> 280x168 (max 64 tokens of 28 px);
        # (140, 42) -> (140 / 280 * 1920, 42 / 168 * 1080) = (960, 270)
        ("qwen2_5_vl", (140, 42), (1920, 1080), (960.0, 270.0)),
    ],
)
def test_decoded_action_is_in_screen_pixels(arch, written, screen, expected):
    policy = tiny_policy(arch)
    tokenizer = policy.tokenizer
    ids = tokenizer(_tool_call(*written))["input_ids"] + [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    ids += [tokenizer.pad_token_id] * 3  # padding after the stop token is dropped
    generation = decode_generation(policy, ids, "qwen_computer_use", *screen)
    assert generation.text == _tool_call(*written)
    assert generation.token_ids == ids[:-3]
    assert generation.action.type is ActionType.CLICK
    assert generation.action.frame == Frame.screen(*screen)
    assert generation.action.point == pytest.approx(expected)


@pytest.mark.parametrize("arch", ARCHS)
def test_completion_logprobs_match_the_generation_logits(arch):
    policy = tiny_policy(arch)
    messages, images = build_messages("Click OK", SCREEN, frame=policy.frame_for(256, 256))
    inputs = prepare_inputs(policy, messages, images)
    with torch.no_grad():
        output = policy.model.generate(
            **inputs, max_new_tokens=6, do_sample=False, output_logits=True, return_dict_in_generate=True
        )
    tokens = output.sequences[0, inputs["input_ids"].shape[1] :]  # [T]
    forbidden = forbidden_token_ids(policy.processor)
    # incremental (KV-cache) logits of step j give log p(y_j | prompt, y_<j)
    expected = torch.stack(
        [torch.log_softmax(mask_forbidden(step[0].float(), forbidden), -1)[token]  # vision tokens: never sampled
         for step, token in zip(output.logits, tokens, strict=True)]
    )
    with torch.no_grad():
        scored = completion_logprobs(policy, messages, images, tokens)
    assert scored.shape == (len(tokens),)
    torch.testing.assert_close(scored, expected, atol=1e-4, rtol=1e-4)
    # a privileged prompt (guidance appended) scores the same tokens differently
    guided, _ = build_messages("Click OK", SCREEN, frame=policy.frame_for(256, 256), guidance="click (10, 20)")
    with torch.no_grad():
        teacher = completion_logprobs(policy, guided, images, tokens)
    assert not torch.allclose(teacher, scored)


def test_completion_logprobs_is_a_manual_forward():
    policy = tiny_policy("qwen3_vl")
    messages, images = build_messages("Click OK", SCREEN)
    inputs = prepare_inputs(policy, messages, images)
    completion = torch.tensor([10, 400, 33, 2])
    full = torch.cat([inputs["input_ids"][0], completion]).unsqueeze(0)
    prompt_len = inputs["input_ids"].shape[1]
    with torch.no_grad():
        logits = policy.model(
            input_ids=full,
            pixel_values=inputs["pixel_values"],
            image_grid_thw=inputs["image_grid_thw"],
            attention_mask=torch.ones_like(full),
            mm_token_type_ids=(full == policy.model.config.image_token_id).int(),  # 1 marks image tokens
        ).logits[0]
        scored = completion_logprobs(policy, messages, images, completion.tolist())
    # token j of the completion sits at prompt_len + j and is predicted by position prompt_len + j - 1
    forbidden = forbidden_token_ids(policy.processor)  # vision placeholders are outside every distribution
    expected = torch.stack([torch.log_softmax(mask_forbidden(logits[prompt_len + j - 1], forbidden), -1)[completion[j]]
                            for j in range(4)])
    torch.testing.assert_close(scored, expected, atol=1e-5, rtol=1e-5)
    assert (scored <= 0).all()


def test_lora_trains_only_the_adapter_and_reloads(tmp_path):
    path = tiny_model_dir("qwen2_5_vl")
    policy = load_policy(path, lora=default_lora_config(rank=4))
    named = dict(policy.model.named_parameters())
    trainable = {name for name, p in named.items() if p.requires_grad}
    assert trainable and all("lora_" in name for name in trainable)
    assert all(not p.requires_grad for name, p in named.items() if "lora_" not in name)
    assert not any("visual" in name for name in trainable)  # the vision tower is not adapted
    # gradients of a teacher-forced score reach the adapter only
    messages, images = build_messages("Click OK", SCREEN)
    with torch.no_grad():  # LoRA B starts at zero: make the adapter non-trivial
        for name, p in named.items():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    completion_logprobs(policy, messages, images, [10, 11, 12]).sum().backward()
    assert all(named[name].grad is not None for name in trainable if "lora_B" in name)
    policy.model.save_pretrained(tmp_path / "adapter")
    reloaded = load_policy(path, lora=tmp_path / "adapter")
    base = load_policy(path)
    with torch.no_grad():
        adapted_scores = completion_logprobs(policy, messages, images, [10, 11, 12])
        torch.testing.assert_close(completion_logprobs(reloaded, messages, images, [10, 11, 12]), adapted_scores)
        assert not torch.allclose(completion_logprobs(base, messages, images, [10, 11, 12]), adapted_scores)
    assert not any(p.requires_grad for p in reloaded.model.parameters())  # loaded for inference


def test_load_policy_names_bad_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match="init-model"):
        load_policy(tmp_path)
    with pytest.raises(FileNotFoundError, match="adapter_config.json"):
        load_policy(tiny_model_dir("qwen3_vl"), lora=tmp_path)
    with pytest.raises(ValueError, match="bfloat16"):
        load_policy(tiny_model_dir("qwen3_vl"), dtype="float99")


@pytest.mark.parametrize("arch", ARCHS)
def test_batch_scoring_equals_one_by_one(arch):
    from guirl.models.generate import batch_completion_logprobs

    policy = tiny_policy(arch)
    messages, images = build_messages("Click OK", SCREEN)
    completions = [[10, 11, 12, 13], [40, 41], [7, 8, 9]]
    with torch.no_grad():
        logprobs, mask = batch_completion_logprobs(policy, messages, images, completions)
        singles = [completion_logprobs(policy, messages, images, c) for c in completions]
    assert logprobs.shape == mask.shape == (3, 4)
    assert mask.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]]
    for row, single in enumerate(singles):
        torch.testing.assert_close(logprobs[row, : len(single)], single, atol=1e-5, rtol=1e-5)
    assert (logprobs[mask == 0] == 0).all()

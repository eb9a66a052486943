"""The locally trained tiny tokenizer: digits, round trips, specials, chat template, determinism."""

from __future__ import annotations

import pytest
from models_fixtures import tiny_model_dir
from PIL import Image
from transformers import AutoProcessor, AutoTokenizer

from guirl.models.tokenizer import ADDED_TEXT_TOKENS, SPECIAL_TOKENS, train_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(tiny_model_dir("qwen3_vl"), local_files_only=True)


def _text_of(tokenizer, token: str) -> str:
    return tokenizer.convert_tokens_to_string([token])


def test_every_digit_is_its_own_token(tokenizer):
    # "[1024, 768]" -> "[", "1", "0", "2", "4", ",", " ", "7", "6", "8", "]": no token holds two digits
    pieces = [_text_of(tokenizer, t) for t in tokenizer.tokenize('{"coordinate": [1024, 768]}')]
    digits = [p for p in pieces if any(c.isdigit() for c in p)]
    assert digits == ["1", "0", "2", "4", "7", "6", "8"]
    # and no entry of the whole vocabulary mixes a digit with anything else
    for token in tokenizer.get_vocab():
        text = _text_of(tokenizer, token)
        if any(c.isdigit() for c in text):
            assert len(text) == 1, f"vocabulary token {token!r} = {text!r} merges a digit"


@pytest.mark.parametrize(
    "text",
    [
        "Click the OK button",
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [12, 34]}}'
        "\n</tool_call>",
        "<think>caf\u00e9 \u2192 \u65e5\u672c\u8a9e \U0001f600</think>  tabs\tand\nnewlines\r\n",
        "pyautogui.hotkey('ctrl', 'a')",
    ],
)
def test_round_trip(tokenizer, text):
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.decode(ids) == text


def test_special_and_added_tokens_are_single_ids(tokenizer):
    for token in SPECIAL_TOKENS + ADDED_TEXT_TOKENS:
        ids = tokenizer(token, add_special_tokens=False)["input_ids"]
        assert ids == [tokenizer.convert_tokens_to_ids(token)], token
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    assert 300 <= len(tokenizer) <= 2048


def test_same_seed_same_vocabulary_other_seed_differs():
    first, second = train_tokenizer(seed=3, num_samples=800), train_tokenizer(seed=3, num_samples=800)
    assert first.get_vocab() == second.get_vocab()
    assert train_tokenizer(seed=4, num_samples=800).get_vocab() != first.get_vocab()


@pytest.mark.parametrize("arch", ["qwen2_5_vl", "qwen3_vl"])
def test_chat_template_places_image_tokens(arch):
    processor = AutoProcessor.from_pretrained(tiny_model_dir(arch), local_files_only=True)
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "sys"}]},
        {"role": "user", "content": [{"type": "text", "text": "Task: go"}, {"type": "image"}]},
    ]
    text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text == (
        "<|im_start|>system\nsys<|im_end|>\n"
        "<|im_start|>user\nTask: go<|vision_start|><|image_pad|><|vision_end|><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    inputs = processor(text=[text], images=[Image.new("RGB", (256, 256))], return_tensors="pt")
    ids = inputs["input_ids"][0].tolist()
    pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
    start = ids.index(processor.tokenizer.convert_tokens_to_ids("<|vision_start|>"))
    # 256x256 -> Qwen2.5-VL: smart_resize to 224x224 (max_pixels 64*28^2), 16x16 patches of 14 px;
    # Qwen3-VL: stays 256x256, 16x16 patches of 16 px. Both: 256 patches / (2x2 merge) = 64 tokens.
    assert ids[start + 1 : start + 65] == [pad] * 64
    assert ids[start + 65] == processor.tokenizer.convert_tokens_to_ids("<|vision_end|>")
    assert ids.count(pad) == 64
    assert inputs["image_grid_thw"].tolist() == [[1, 16, 16]]

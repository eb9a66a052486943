"""Tiny Qwen2.5-VL / Qwen3-VL: built from config, reloaded by the Auto classes, generate on CPU."""

from __future__ import annotations

import pytest
import torch
from models_fixtures import ARCHS, tiny_model_dir
from PIL import Image
from transformers import AutoModelForImageTextToText, AutoProcessor

from guirl.actions import Frame, smart_resize
from guirl.models.build import build_model_dir, count_parameters, make_processor
from guirl.models.load import load_policy

EXPECTED_CLASSES = {
    "qwen2_5_vl": ("Qwen2_5_VLForConditionalGeneration", "Qwen2_5_VLProcessor"),
    "qwen3_vl": ("Qwen3VLForConditionalGeneration", "Qwen3VLProcessor"),
}


@pytest.mark.parametrize("arch", ARCHS)
def test_reload_with_auto_classes_and_generate_text(arch):
    path = tiny_model_dir(arch)
    processor = AutoProcessor.from_pretrained(path, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(path, local_files_only=True)
    assert (type(model).__name__, type(processor).__name__) == EXPECTED_CLASSES[arch]
    assert 1_000_000 < count_parameters(model) < 5_000_000  # "tiny": a few million parameters
    text_config = model.config.text_config
    head_dim = text_config.hidden_size // text_config.num_attention_heads
    assert sum(text_config.rope_parameters["mrope_section"]) == head_dim // 2
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Click OK"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[prompt], images=[Image.new("RGB", (256, 256), "grey")], return_tensors="pt")
    output = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    completion = processor.batch_decode(output[:, inputs["input_ids"].shape[1] :])[0]
    assert isinstance(completion, str) and output.shape[1] > inputs["input_ids"].shape[1]


def test_same_seed_same_weights(tmp_path):
    first = build_model_dir("qwen3_vl", tmp_path / "a", seed=7)
    second = build_model_dir("qwen3_vl", tmp_path / "b", seed=7)
    a = AutoModelForImageTextToText.from_pretrained(first, local_files_only=True).state_dict()
    b = AutoModelForImageTextToText.from_pretrained(second, local_files_only=True).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    reference = AutoModelForImageTextToText.from_pretrained(tiny_model_dir("qwen3_vl"), local_files_only=True)
    assert not torch.equal(reference.state_dict()["lm_head.weight"], a["lm_head.weight"])  # seed 0 != seed 7


def test_qwen3_has_absolute_position_embeddings_and_deepstack():
    config = AutoModelForImageTextToText.from_pretrained(tiny_model_dir("qwen3_vl"), local_files_only=True).config
    assert config.vision_config.patch_size == 16 and config.vision_config.num_position_embeddings == 256
    assert len(config.vision_config.deepstack_visual_indexes) == 1


@pytest.mark.parametrize("arch", ARCHS)
def test_frame_follows_the_processor(arch):
    policy = load_policy(tiny_model_dir(arch))
    if arch == "qwen3_vl":
        assert policy.frame_for(1920, 1080) == Frame.relative(1000)
        return
    # factor 28, max_pixels 64 * 28^2 = 50176: 1920x1080 -> 280x168 (10 x 6 merged tokens = 60 <= 64)
    assert smart_resize(1080, 1920, 28, 4 * 784, 64 * 784) == (168, 280)
    assert policy.frame_for(1920, 1080) == Frame(kind="resized", width=280, height=168)
    # and the processor really feeds the model that size: a 12 x 20 grid of 14 px patches = 168 x 280
    grid = policy.processor.image_processor(images=[Image.new("RGB", (1920, 1080))], return_tensors="pt")
    assert grid["image_grid_thw"].tolist() == [[1, 12, 20]]


@pytest.mark.parametrize("arch", ARCHS)
def test_max_visual_tokens_bounds_every_image(arch):
    processor = make_processor(arch, AutoProcessor.from_pretrained(tiny_model_dir(arch)).tokenizer, 16)
    for size in [(256, 256), (1920, 1080), (300, 900)]:
        grid = processor.image_processor(images=[Image.new("RGB", size)], return_tensors="pt")["image_grid_thw"]
        assert 4 <= int(grid.prod()) // 4 <= 16, (size, grid)


def test_size_overrides_change_the_built_shape(tmp_path):
    """A curriculum's ``size_overrides`` (the vision-tower lever) reach the built model; unknown fields are named."""
    out = build_model_dir("qwen3_vl", tmp_path / "m", size_overrides={"vision_depth": 5, "vision_hidden": 192},
                          max_visual_tokens=144)
    model = AutoModelForImageTextToText.from_pretrained(out, local_files_only=True)
    vision = model.config.vision_config
    assert (vision.depth, vision.hidden_size, vision.deepstack_visual_indexes) == (5, 192, [2])
    assert model.config.text_config.hidden_size == 192  # the text side stays the tiny preset's
    grid = AutoProcessor.from_pretrained(out).image_processor(images=[Image.new("RGB", (1920, 1920))],
                                                              return_tensors="pt")["image_grid_thw"]
    assert int(grid.prod()) // 4 == 144  # 12 x 12 merged tokens: the input side is 1.5x the default 8 x 8
    with pytest.raises(ValueError, match="vision_depht"):
        build_model_dir("qwen3_vl", tmp_path / "bad", size_overrides={"vision_depht": 5})


def test_unknown_arch_and_size_are_named():
    with pytest.raises(ValueError, match="qwen2_5_vl"):
        build_model_dir("llava", "/nonexistent")
    with pytest.raises(ValueError, match="tiny"):
        build_model_dir("qwen3_vl", "/nonexistent", size="huge")


def test_package_exports_resolve():
    import guirl.models

    assert all(callable(getattr(guirl.models, name)) for name in guirl.models.__all__)
    with pytest.raises(AttributeError, match="no_such_name"):
        guirl.models.no_such_name  # noqa: B018

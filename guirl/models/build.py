"""Build small Qwen2.5-VL / Qwen3-VL policies from config (no download).

``build_model_dir(arch, size, out)`` writes one directory that
``AutoProcessor`` and ``AutoModelForImageTextToText`` load: randomly
initialised weights (seeded), the locally trained tokenizer
(:mod:`guirl.models.tokenizer`), the image/video processors and the chat
template. Shapes are the ones measured to train on CPU (docs/models.md; ~2.5M
parameters: text hidden 192, 4 layers, 4 heads / 2 KV heads; vision depth 3,
hidden 128; Qwen2.5-VL patch 14, Qwen3-VL patch 16 with learned absolute
position embeddings and one deepstack layer; merge 2; M-RoPE sections summing
to head_dim / 2).

The image processor's ``max_pixels`` is ``max_visual_tokens * factor**2``
(factor = patch x merge: 28 or 32), so a 256x256 screenshot gives 64 visual
tokens by default (Qwen2.5-VL resizes it to 224x224, Qwen3-VL keeps 256x256).
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import torch
from transformers import (
    AutoModelForImageTextToText,
    GenerationConfig,
    PreTrainedConfig,
    Qwen2_5_VLConfig,
    Qwen2_5_VLProcessor,
    Qwen2VLImageProcessor,
    Qwen2VLVideoProcessor,
    Qwen3VLConfig,
    Qwen3VLProcessor,
    Qwen3VLVideoProcessor,
)

from guirl.models.sizes import ARCHS, SIZES, ModelSize
from guirl.models.tokenizer import train_tokenizer


def _mrope_section(head_dim: int) -> list[int]:
    """Temporal/height/width rotary sections summing to head_dim / 2 (Qwen uses 16/24/24 of 64)."""
    half = head_dim // 2
    height = width = (half * 3) // 8
    return [half - height - width, height, width]


def size_preset(size: str, overrides: dict[str, int] | None = None) -> ModelSize:
    """The preset ``size`` with ``overrides`` (fields of :class:`ModelSize`, e.g. ``{"vision_depth": 5}``)."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {sorted(SIZES)}")
    unknown = sorted(set(overrides or {}) - {f.name for f in fields(ModelSize)})
    if unknown:
        raise ValueError(f"unknown size field(s) {unknown}; choose from {[f.name for f in fields(ModelSize)]}")
    return replace(SIZES[size], **(overrides or {}))


def make_config(arch: str, size: str, vocab_size: int, special_ids: dict[str, int],
                overrides: dict[str, int] | None = None) -> PreTrainedConfig:
    """The transformers config of ``arch`` at ``size`` (with ``overrides`` of its fields) for a tokenizer of
    ``vocab_size``."""
    if arch not in ARCHS:
        raise ValueError(f"unknown arch {arch!r}; choose one of {list(ARCHS)}")
    s = size_preset(size, overrides)
    head_dim = s.text_hidden // s.text_heads
    text = {
        "vocab_size": vocab_size,
        "hidden_size": s.text_hidden,
        "intermediate_size": s.text_intermediate,
        "num_hidden_layers": s.text_layers,
        "num_attention_heads": s.text_heads,
        "num_key_value_heads": s.text_kv_heads,
        "max_position_embeddings": 8192,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": _mrope_section(head_dim)},
        "pad_token_id": special_ids["<|endoftext|>"],
        "eos_token_id": special_ids["<|im_end|>"],
        "bos_token_id": None,
    }
    vision = {
        "depth": s.vision_depth,
        "hidden_size": s.vision_hidden,
        "num_heads": s.vision_heads,
        "intermediate_size": s.vision_intermediate,
        "out_hidden_size": s.text_hidden,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    }
    ids = {
        "image_token_id": special_ids["<|image_pad|>"],
        "video_token_id": special_ids["<|video_pad|>"],
        "vision_start_token_id": special_ids["<|vision_start|>"],
        "vision_end_token_id": special_ids["<|vision_end|>"],
        "tie_word_embeddings": True,
    }
    if arch == "qwen2_5_vl":
        # Window attention over 112 px windows; the last block attends fully.
        vision |= {"patch_size": 14, "window_size": 112, "fullatt_block_indexes": [s.vision_depth - 1]}
        vision |= {"hidden_act": "silu"}
        return Qwen2_5_VLConfig(text_config=text, vision_config=vision, **ids)
    text["head_dim"] = head_dim
    text["rope_parameters"]["mrope_interleaved"] = True
    vision |= {
        "patch_size": 16,
        "num_position_embeddings": 256,  # a 16x16 patch grid: 256x256 px, interpolated for other sizes
        "deepstack_visual_indexes": [s.vision_depth // 2],
    }
    return Qwen3VLConfig(text_config=text, vision_config=vision, **ids)


def make_processor(arch: str, tokenizer, max_visual_tokens: int = 64, min_visual_tokens: int = 4):
    """Image + video processors and ``tokenizer`` bundled as the arch's processor.

    ``max_visual_tokens`` / ``min_visual_tokens`` bound the merged visual tokens
    per image (``max_pixels = max_visual_tokens * factor**2``).
    """
    if max_visual_tokens < min_visual_tokens or min_visual_tokens < 1:
        raise ValueError(
            f"need 1 <= min_visual_tokens <= max_visual_tokens, got {min_visual_tokens} and {max_visual_tokens}"
        )
    if arch == "qwen2_5_vl":
        patch, mean, std = 14, [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
        processor_cls, video_cls = Qwen2_5_VLProcessor, Qwen2VLVideoProcessor
    elif arch == "qwen3_vl":
        patch, mean, std = 16, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]
        processor_cls, video_cls = Qwen3VLProcessor, Qwen3VLVideoProcessor
    else:
        raise ValueError(f"unknown arch {arch!r}; choose one of {list(ARCHS)}")
    factor = patch * 2
    pixels = {"shortest_edge": min_visual_tokens * factor**2, "longest_edge": max_visual_tokens * factor**2}
    common = {"patch_size": patch, "merge_size": 2, "temporal_patch_size": 2, "image_mean": mean, "image_std": std}
    image_processor = Qwen2VLImageProcessor(size=pixels, **common)
    video_processor = video_cls(size=pixels, **common)
    return processor_cls(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=tokenizer.chat_template,
    )


def build_model_dir(
    arch: str,
    out: str | Path,
    size: str = "tiny",
    seed: int = 0,
    max_visual_tokens: int = 64,
    size_overrides: dict[str, int] | None = None,
) -> Path:
    """Build ``arch`` at ``size`` (``size_overrides``: fields of the preset changed) with seeded random weights and
    save everything to ``out``."""
    if arch not in ARCHS:
        raise ValueError(f"unknown arch {arch!r}; choose one of {list(ARCHS)}")
    preset = size_preset(size, size_overrides)
    tokenizer = train_tokenizer(vocab_size=preset.vocab_size, seed=seed)
    special_ids = {tok: tokenizer.convert_tokens_to_ids(tok) for tok in tokenizer.all_special_tokens}
    config = make_config(arch, size, len(tokenizer), special_ids, size_overrides)
    torch.manual_seed(seed)
    model = AutoModelForImageTextToText.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig(
        eos_token_id=[special_ids["<|im_end|>"], special_ids["<|endoftext|>"]],
        pad_token_id=special_ids["<|endoftext|>"],
        do_sample=False,
    )
    processor = make_processor(arch, tokenizer, max_visual_tokens=max_visual_tokens)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

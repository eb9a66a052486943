"""Architectures and size presets of the models guirl builds (light: no transformers import,
so the command line can list them quickly)."""

from __future__ import annotations

from dataclasses import dataclass

#: Architectures and the transformers model_type they build.
ARCHS = ("qwen2_5_vl", "qwen3_vl")


@dataclass(frozen=True)
class ModelSize:
    """Shape of one size preset (shared by both architectures)."""

    text_hidden: int
    """hidden size of the language model"""
    text_layers: int
    """decoder layers of the language model"""
    text_heads: int
    """attention heads (head_dim = text_hidden / text_heads; M-RoPE sections sum to head_dim / 2)"""
    text_kv_heads: int
    """key/value heads (grouped-query attention)"""
    text_intermediate: int
    """MLP width of the language model"""
    vision_hidden: int
    """hidden size of the vision tower"""
    vision_depth: int
    """blocks of the vision tower"""
    vision_heads: int
    """attention heads of the vision tower"""
    vision_intermediate: int
    """MLP width of the vision tower"""
    vocab_size: int
    """target vocabulary of the locally trained tokenizer (a small corpus may stop short of it)"""


#: Size presets; add larger ones here (every field is needed by both archs).
SIZES: dict[str, ModelSize] = {
    "tiny": ModelSize(
        text_hidden=192,
        text_layers=4,
        text_heads=4,
        text_kv_heads=2,
        text_intermediate=512,
        vision_hidden=128,
        vision_depth=3,
        vision_heads=4,
        vision_intermediate=256,
        vocab_size=1024,
    ),
    "small": ModelSize(
        text_hidden=256,
        text_layers=6,
        text_heads=4,
        text_kv_heads=2,
        text_intermediate=768,
        vision_hidden=192,
        vision_depth=4,
        vision_heads=4,
        vision_intermediate=512,
        vocab_size=1024,
    ),
}

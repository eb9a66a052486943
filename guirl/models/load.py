"""Load a policy (model + processor) from a local checkpoint directory.

Works for the tiny models of :mod:`guirl.models.build` and for real
Qwen2.5-VL / Qwen3-VL checkpoints, through ``AutoProcessor`` and
``AutoModelForImageTextToText``; nothing is downloaded (``local_files_only``).
A LoRA adapter (peft) can be loaded from a directory, or a fresh one attached
for training.

The :class:`LoadedPolicy` knows the coordinate frame its model writes in
(docs/methods.md, "Coordinate conventions"): Qwen2.5-VL answers in pixels of the
smart-resized image, so the frame depends on each screenshot's size and on
the processor's factor / min / max pixels; Qwen3-VL answers in relative
0-1000 coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForImageTextToText, AutoProcessor

from guirl.actions import Frame
from guirl.models.prompts import PromptSpec

#: Model families guirl knows the coordinate frame of (config.model_type).
FAMILIES = ("qwen2_5_vl", "qwen3_vl")

#: Linear layers of the language model (not the vision tower) that LoRA adapts by default.
DEFAULT_LORA_TARGETS = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"


@dataclass
class LoadedPolicy:
    """A loaded policy: model, processor, family and where it came from."""

    model: torch.nn.Module
    processor: Any
    family: str
    path: Path
    prompt: PromptSpec = field(default_factory=PromptSpec)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def tokenizer(self):
        return self.processor.tokenizer

    def frame_for(self, width: int, height: int) -> Frame:
        """The frame this model's coordinates are in, for a ``width`` x ``height`` screenshot."""
        if self.family == "qwen3_vl":
            return Frame.relative(1000)
        image_processor = self.processor.image_processor
        size = image_processor.size
        factor = image_processor.patch_size * image_processor.merge_size
        return Frame.resized(width, height, factor, size["shortest_edge"], size["longest_edge"])


def default_lora_config(rank: int = 8, alpha: int = 16, dropout: float = 0.0) -> LoraConfig:
    """LoRA on the language model's attention and MLP projections (vision tower frozen)."""
    return LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout, target_modules=DEFAULT_LORA_TARGETS)


def _dtype(dtype: str | torch.dtype) -> torch.dtype | str:
    if isinstance(dtype, torch.dtype) or dtype == "auto":
        return dtype
    resolved = getattr(torch, dtype, None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r}; use e.g. 'float32', 'bfloat16', 'float16' or 'auto'")
    return resolved


def load_policy(
    path: str | Path,
    lora: str | Path | LoraConfig | None = None,
    dtype: str | torch.dtype = "float32",
    device: str | torch.device = "cpu",
    trainable: bool = False,
) -> LoadedPolicy:
    """Load the checkpoint in directory ``path``.

    ``lora``: None (plain model), a directory holding a saved peft adapter, or
    a ``LoraConfig`` to attach a fresh adapter (use :func:`default_lora_config`).
    With an adapter only its parameters are trainable; a loaded adapter is
    trainable only when ``trainable`` is set. ``dtype`` is a torch dtype or its
    name; ``device`` where the model is put.
    """
    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"{path} is not a model directory (no config.json); build one with "
            "`guirl init-model --arch qwen3_vl --size tiny --out DIR` or point to a downloaded checkpoint"
        )
    processor = AutoProcessor.from_pretrained(path, local_files_only=True)
    model = AutoModelForImageTextToText.from_pretrained(path, dtype=_dtype(dtype), local_files_only=True)
    family = model.config.model_type
    if family not in FAMILIES:
        raise ValueError(f"{path} holds a {family!r} model; guirl supports {list(FAMILIES)}")
    if isinstance(lora, LoraConfig):
        model = get_peft_model(model, lora)
    elif lora is not None:
        adapter = Path(lora)
        if not (adapter / "adapter_config.json").is_file():
            raise FileNotFoundError(f"{adapter} is not a peft adapter directory (no adapter_config.json)")
        model = PeftModel.from_pretrained(model, adapter, is_trainable=trainable)
    model.to(device)
    model.eval()
    return LoadedPolicy(model=model, processor=processor, family=family, path=path, prompt=PromptSpec.load(path))


def load_rollout_policy(path: str | Path, lora_rank: int = 0, fmt: str | None = None,
                        history_window: int | None = None, history_images: int | None = None) -> LoadedPolicy:
    """A checkpoint set up for online rollouts: a fresh LoRA of ``lora_rank`` (0 = full fine-tuning, every
    parameter trainable), its prompt's format and history window / screenshots overridden where given (None =
    the checkpoint's own), screenshots capped at the window, CASC off."""
    from dataclasses import replace

    lora = default_lora_config(rank=lora_rank, alpha=2 * lora_rank) if lora_rank else None
    policy = load_policy(path, lora=lora)
    spec = policy.prompt
    window = spec.history_window if history_window is None else history_window
    images = getattr(spec, "history_images", 0) if history_images is None else history_images
    policy.prompt = replace(spec, fmt=fmt or spec.fmt, history_window=window, history_images=min(images, window),
                            casc="off")
    if lora is None:
        policy.model.requires_grad_(True)
    return policy

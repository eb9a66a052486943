"""``guirl init-model``: build a small Qwen-VL policy from config into a directory."""

from __future__ import annotations

import argparse
import os
import time

from guirl.commands import add_overwrite_flag, refuse_to_overwrite


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from guirl.models.sizes import ARCHS, SIZES

    parser = subparsers.add_parser(
        "init-model",
        help="build a randomly initialised (seeded) tiny Qwen-VL policy with a locally trained tokenizer",
        description="Build a Qwen2.5-VL or Qwen3-VL policy from config (no download) and save model, "
        "tokenizer, processor and chat template to one directory that AutoProcessor and "
        "AutoModelForImageTextToText load.",
    )
    parser.add_argument("--arch", choices=ARCHS, default="qwen3_vl", help="model architecture (default: qwen3_vl)")
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny", help="size preset (default: tiny)")
    parser.add_argument("--out", required=True, help="directory to write the checkpoint to (created if missing)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the weights and the tokenizer corpus")
    parser.add_argument(
        "--max-visual-tokens",
        type=int,
        default=64,
        help="most merged visual tokens per image (sets the processor's max_pixels; 64 = a 256x256 screenshot)",
    )
    add_overwrite_flag(parser, "model")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from guirl.models.build import build_model_dir

    refuse_to_overwrite(args.out, ("config.json", "model.safetensors"), "model", args.overwrite)
    start = time.perf_counter()
    out = build_model_dir(args.arch, args.out, size=args.size, seed=args.seed, max_visual_tokens=args.max_visual_tokens)
    print(f"built {args.size} {args.arch} (seed {args.seed}) in {out} in {time.perf_counter() - start:.1f}s")
    return 0

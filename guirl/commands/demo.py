"""``guirl demo``: one agent step end to end on CPU, no download.

Build (or reuse) a tiny policy, take the first screen of the built-in sim
world (or of another registered environment), generate one action, print
the raw output and the parsed action in screen pixels, and save the
screenshot with the predicted point drawn on it.
A freshly built model has random weights, so its output is usually not a
valid action: the demo then reports the parse failure (pass ``--model`` a
trained checkpoint to see it point).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

if TYPE_CHECKING:
    from guirl.actions import Action, ParseFailure


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from guirl.models.sizes import ARCHS

    parser = subparsers.add_parser(
        "demo",
        help="run one agent step with a tiny model on a built-in screen (CPU, offline)",
        description="Build or reuse a tiny policy, generate one action for a built-in screen, print it in "
        "screen pixels and save the screenshot with the point drawn on it.",
    )
    parser.add_argument("--out", default="guirl-demo", help="output directory (default: ./guirl-demo)")
    parser.add_argument(
        "--model", default=None, help="checkpoint directory to use (default: build a tiny one under --out/model-ARCH)"
    )
    parser.add_argument("--arch", choices=ARCHS, default="qwen3_vl", help="arch of the tiny model to build")
    parser.add_argument("--env", default="sim", help="environment whose first screen is used (default: sim)")
    parser.add_argument("--format", default="qwen_computer_use", help="output format name (default: qwen_computer_use)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the model, the screen and sampling")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0 = greedy)")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="most tokens to generate")
    parser.add_argument(
        "--threads", type=int, default=1, help="CPU threads for torch (tiny models run fastest on one; default 1)"
    )
    parser.set_defaults(func=run)


def mark_point(screenshot: Image.Image, action: Action | ParseFailure) -> Image.Image:
    """A copy of ``screenshot`` with a red ring at the action's target point (screen pixels), if any."""
    marked = screenshot.convert("RGB")
    point = action.target_point() if action else None
    if point is not None:
        x, y = point
        ImageDraw.Draw(marked).ellipse((x - 6, y - 6, x + 6, y + 6), outline=(230, 30, 30), width=3)
    return marked


def first_screen(env_name: str, seed: int) -> tuple[Image.Image, str]:
    """Screenshot and instruction of the first observation of environment ``env_name``."""
    from guirl.envs import make_env

    env = make_env(env_name)
    try:
        observation = env.reset(seed=seed)
    finally:
        env.close()
    return observation.screenshot, observation.instruction


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers.utils import logging as hf_logging

    from guirl.models.build import build_model_dir
    from guirl.models.generate import generate_actions
    from guirl.models.load import load_policy
    from guirl.models.prompts import describe_frame

    hf_logging.disable_progress_bar()
    start = time.perf_counter()
    torch.set_num_threads(max(1, args.threads))
    out = Path(args.out)
    model_dir = Path(args.model) if args.model else out / f"model-{args.arch}"
    if not (model_dir / "config.json").is_file():
        if args.model:
            message = f"--model {model_dir} has no config.json; build one with `guirl init-model --out DIR`"
            print(message, file=sys.stderr)
            return 2
        print(f"building a tiny {args.arch} model in {model_dir} ...")
        build_model_dir(args.arch, model_dir, seed=args.seed)
    policy = load_policy(model_dir)
    screenshot, instruction = first_screen(args.env, args.seed)
    print(f"screen: {args.env} {screenshot.size[0]}x{screenshot.size[1]}; instruction: {instruction}")
    generation = generate_actions(
        policy,
        screenshot,
        instruction,
        fmt=args.format,
        temperature=args.temperature,
        max_new_tokens=args.max_new_tokens,
        seed=args.seed,
    )[0]
    print(f"model: {policy.family} from {model_dir}. {describe_frame(policy.frame_for(*screenshot.size))}")
    shown = generation.text if len(generation.text) <= 300 else generation.text[:300] + "..."
    print(f"raw output: {shown!r}")
    if generation.action:
        print(f"action (screen pixels): {generation.action.model_dump_json(exclude_none=True)}")
    else:
        print(f"no valid action ({generation.action.reason}); an untrained model writes garbage")
    marked = mark_point(screenshot, generation.action)
    out.mkdir(parents=True, exist_ok=True)
    marked.save(out / "screenshot.png")
    print(f"saved {out / 'screenshot.png'}; done in {time.perf_counter() - start:.1f}s")
    return 0

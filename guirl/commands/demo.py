"""``guirl demo``: the agent end to end on CPU, no download.

Load the tiny base agent shipped in ``checkpoints/base-agent-tiny`` (or
build an untrained tiny policy when it is missing or ``--untrained`` is
given), take a few screens of the built-in sim world (or of another
registered environment), generate one action per screen, print the raw
output, the parsed action in screen pixels and, where the environment knows
the valid actions, whether it is right; save each screenshot with the
predicted point drawn on it. A freshly built model has random weights, so
its output is usually not a valid action: the demo then reports the parse
failure.
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

#: The tiny base agent kept in the repository (see docs/experiments.md, "The tiny base agent").
SHIPPED_AGENT = Path(__file__).resolve().parents[2] / "checkpoints" / "base-agent-tiny"


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
        "--model", default=None,
        help=f"checkpoint directory to use (default: the shipped base agent {SHIPPED_AGENT}, else a fresh tiny model)",
    )
    parser.add_argument("--untrained", action="store_true", help="build and use a fresh untrained tiny model")
    parser.add_argument("--arch", choices=ARCHS, default="qwen3_vl", help="arch of the tiny model to build")
    parser.add_argument("--env", default="sim", help="environment whose first screens are used (default: sim)")
    parser.add_argument("--task", default="ground", help="sim task family or kind (default: ground; e.g. multi)")
    parser.add_argument("--screens", type=int, default=6, help="how many screens (seeds) to run")
    parser.add_argument("--format", default=None, help="output format name (default: the model's own)")
    parser.add_argument(
        "--seed", type=int, default=9_000_000, help="first screen seed (default: seeds the shipped agent never trained on)"
    )
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0 = greedy)")
    parser.add_argument("--max-new-tokens", type=int, default=96, help="most tokens to generate")
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


def screens(env_name: str, task: str | None, seed: int, count: int):
    """``count`` first observations of environment ``env_name`` (seeds ``seed``, ``seed + 1``, ...);
    for the sim world they cycle through its desktop, web and mobile domains."""
    from guirl.envs import make_env

    observations = []
    for i in range(count):
        if env_name == "sim":
            env = make_env("sim", domain=("desktop", "web", "mobile")[i % 3], task=task)
        else:
            env = make_env(env_name)
        try:
            observations.append(env.reset(seed=seed + i))
        finally:
            env.close()
    return observations


def _model_dir(args: argparse.Namespace, out: Path) -> Path | None:
    if args.model:
        return Path(args.model)
    if not args.untrained and (SHIPPED_AGENT / "config.json").is_file():
        return SHIPPED_AGENT
    return None


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers.utils import logging as hf_logging

    from guirl.matching.step import match_action
    from guirl.models.build import build_model_dir
    from guirl.models.generate import generate_actions
    from guirl.models.load import load_policy
    from guirl.models.prompts import describe_frame

    hf_logging.disable_progress_bar()
    start = time.perf_counter()
    torch.set_num_threads(max(1, args.threads))
    out = Path(args.out)
    model_dir = _model_dir(args, out)
    if model_dir is None:
        model_dir = out / f"model-{args.arch}"
        if not (model_dir / "config.json").is_file():
            print(f"building an untrained tiny {args.arch} model in {model_dir} ...")
            build_model_dir(args.arch, model_dir, seed=args.seed)
    elif not (model_dir / "config.json").is_file():
        print(f"--model {model_dir} has no config.json; build one with `guirl init-model --out DIR`", file=sys.stderr)
        return 2
    policy = load_policy(model_dir)
    print(f"model: {policy.family} from {model_dir} (format {args.format or policy.prompt.fmt})")
    out.mkdir(parents=True, exist_ok=True)
    right = 0
    for i, obs in enumerate(screens(args.env, args.task, args.seed, args.screens)):
        screenshot = obs.screenshot
        print(f"\nscreen {i}: {args.env} {screenshot.size[0]}x{screenshot.size[1]}; instruction: {obs.instruction}")
        if i == 0:
            print(describe_frame(policy.frame_for(*screenshot.size)))
        generation = generate_actions(
            policy, screenshot, obs.instruction, fmt=args.format, temperature=args.temperature,
            max_new_tokens=args.max_new_tokens, seed=args.seed + i,
        )[0]
        shown = generation.text if len(generation.text) <= 300 else generation.text[:300] + "..."
        print(f"raw output: {shown!r}")
        if generation.action:
            print(f"action (screen pixels): {generation.action.model_dump_json(exclude_none=True, exclude={'frame'})}")
        else:
            print(f"no valid action ({generation.action.reason}); an untrained model writes garbage")
        if obs.valid_actions:
            ok = match_action(generation.action, obs.valid_actions, screen_size=screenshot.size, a11y=obs.a11y).success
            right += ok
            print(f"correct (one of the {len(obs.valid_actions)} valid actions): {ok}")
        mark_point(screenshot, generation.action).save(out / f"screen_{i}.png")
    print(f"\n{right}/{args.screens} right; screenshots with the predicted points in {out}/; "
          f"done in {time.perf_counter() - start:.1f}s")
    return 0

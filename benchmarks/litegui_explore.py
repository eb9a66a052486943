"""How many extra valid actions LiteGUI multi-solution exploration finds per step (docs/explore.md).

Runs :func:`guirl.datagen.explore.explore` (N samples at temperature 1.0 per
step, windows of 3, de-duplication) with a guirl model on built-in world
trajectories and scores the candidates against the oracle's A*_t:

- **extra A*_t**: the valid actions of a step that the recorded action does
  not match (``match_action(recorded, [a])`` fails), i.e. what exploration
  could add;
- **recall**: share of those extra A*_t elements that some sampled candidate
  matches (:func:`guirl.matching.step.match_action`);
- **precision**: share of de-duplicated sampled candidates (those distinct
  from the recorded action) that are valid (``oracle_label``); also by the
  world's judge (``is_advancing``: leads where a valid action leads);
- **new valid per step**: sampled candidates that match an extra A*_t element.

Usage (CPU, one thread)::

    .venv/bin/python benchmarks/litegui_explore.py --episodes runs/pilot/sim-seed3/trajectories/train.jsonl \
        --model checkpoints/base-agent-tiny --steps 100

Without ``--episodes`` it writes ``guirl gen-data --seed 3`` data to a temporary directory first.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

from guirl.data import read_episodes  # noqa: E402
from guirl.datagen.explore import ExploreConfig, explore  # noqa: E402
from guirl.matching.step import match_action  # noqa: E402
from guirl.models.load import load_policy  # noqa: E402
from guirl.rollout.hf_engine import HFEngine  # noqa: E402


def pick_episodes(episodes, steps: int, seed: int):
    """Whole episodes in a seeded random order (all tasks, not the first one's), until ``steps`` steps."""
    order = list(episodes)
    random.Random(seed).shuffle(order)
    picked, total = [], 0
    for episode in order:
        if total >= steps:
            break
        picked.append(episode)
        total += len(episode.steps)
    return picked


def score(explored) -> dict[str, float]:
    """Recall of the extra A*_t elements, precision of sampled candidates (module docstring)."""
    extra_total = extra_covered = sampled = valid = world_valid = new_valid = 0
    steps_with_extra = 0
    for item in explored:
        step = item.step
        size = (step.screenshot.width, step.screenshot.height)
        recorded = item.candidates[0].action if item.candidates and item.candidates[0].source == "recorded" else None
        extra = [a for a in step.valid_actions
                 if recorded is None or not match_action(recorded, [a], screen_size=size, a11y=step.a11y).success]
        samples = [c for c in item.candidates if c.source == "sample"]
        steps_with_extra += bool(extra)
        extra_total += len(extra)
        extra_covered += sum(any(match_action(c.action, [a], screen_size=size, a11y=step.a11y).success
                                 for c in samples) for a in extra)
        sampled += len(samples)
        valid += sum(c.oracle_label is True for c in samples)
        world_valid += sum(c.world_accepts is True for c in samples)
        new_valid += sum(bool(extra) and match_action(c.action, extra, screen_size=size, a11y=step.a11y).success
                         for c in samples)
    n = max(1, len(explored))
    return {"explore/steps": len(explored), "explore/steps_with_extra_valid": steps_with_extra,
            "explore/extra_valid_per_step": extra_total / n, "explore/candidates_per_step": sampled / n,
            "explore/recall_extra": extra_covered / max(1, extra_total),
            "explore/precision_oracle": valid / max(1, sampled),
            "explore/precision_world_judge": world_valid / max(1, sampled),
            "explore/new_valid_per_step": new_valid / n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", help="gen-data trajectories .jsonl (default: generate seed-3 data in a temp dir)")
    parser.add_argument("--model", default="checkpoints/base-agent-tiny", help="guirl model directory")
    parser.add_argument("--steps", type=int, default=100, help="steps to explore")
    parser.add_argument("--samples", type=int, default=5, help="N samples per step")
    parser.add_argument("--seed", type=int, default=0, help="episode order and sampling seed")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.episodes is None:
        from guirl.envs.sim import generate_dataset

        tmp = tempfile.mkdtemp(prefix="guirl-explore-")
        generate_dataset(out_dir=tmp, seed=3)
        args.episodes = str(Path(tmp) / "trajectories" / "train.jsonl")
    if not Path(args.episodes).is_file():
        parser.error(f"--episodes: {args.episodes} does not exist; write one with `guirl gen-data`")
    episodes = pick_episodes(read_episodes(args.episodes), args.steps, args.seed)
    start = time.perf_counter()
    policy = load_policy(args.model)
    engine = HFEngine.from_policy(policy)
    config = ExploreConfig(samples=args.samples, max_steps=args.steps, seed=args.seed)
    explored, counts = explore(engine, policy.prompt, policy.frame_for, episodes, Path(args.episodes).parent, config)
    wall = time.perf_counter() - start
    for key, value in counts.items():
        print(f"counts/{key}: {value}")
    for key, value in score(explored).items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    print(f"wall: {wall:.1f}s ({args.steps} steps x {args.samples} samples, {args.model}, 1 CPU thread)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Held-out accuracy of the tiny base agent, against chance, with time and memory.

    python benchmarks/base_agent.py [--model checkpoints/base-agent-tiny] [--samples 120]

Generates fresh built-in-world data with a seed the agent never trained on
(held-out screens of trained task families, and task families kept out of
training), runs the agent greedily on every sampled step and prints type match,
grounding (point inside a valid target box, over steps that need a point),
full step success and parse rate, next to a random-click policy (chance) on
the same steps. The training record (wall time, peak memory, command) saved
with the checkpoint is printed too.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from pathlib import Path

from guirl.actions import Action, ActionType, Frame
from guirl.data import read_episodes
from guirl.envs.sim import generate_dataset
from guirl.eval.offline import match_action
from guirl.trainers.curriculum import evaluate_base_agent


def chance(data: Path, samples: int, seed: int) -> dict[str, dict[str, float]]:
    """A uniformly random click on the screen for every step (what 'chance' means here)."""
    rng = random.Random(seed)
    out = {}
    for name, rel in (("grounding_unseen_screens", "grounding/test_seed.jsonl"),
                      ("steps_unseen_seeds", "trajectories/test_seed.jsonl"),
                      ("steps_unseen_tasks", "trajectories/test_task.jsonl")):
        steps = [st for ep in read_episodes(data / rel) for st in ep.steps if st.valid_actions]
        steps = random.Random(seed).sample(steps, min(samples, len(steps)))
        hits = {"type_match": 0, "grounding": 0, "pointed": 0, "step_success": 0}
        for st in steps:
            w, h = st.screenshot.width, st.screenshot.height
            guess = Action(type=ActionType.CLICK, point=(rng.uniform(0, w), rng.uniform(0, h)), frame=Frame.screen(w, h))
            m = match_action(guess, st.valid_actions, screen_size=(w, h), a11y=st.a11y)
            hits["type_match"] += m.type_match
            hits["pointed"] += m.needs_point
            hits["grounding"] += m.grounded
            hits["step_success"] += m.success
        n = max(1, len(steps))
        out[name] = {"type_match": hits["type_match"] / n, "grounding": hits["grounding"] / max(1, hits["pointed"]),
                     "step_success": hits["step_success"] / n}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="checkpoints/base-agent-tiny", help="checkpoint directory")
    parser.add_argument("--samples", type=int, default=120, help="held-out steps per split")
    parser.add_argument("--seed", type=int, default=7, help="data seed (the agent trained on seed 0)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        generate_dataset(out_dir=str(data), seed=args.seed, grounding_train=1, grounding_test=60, train_per_task=1,
                         test_per_task=6, recovery_prob=0.0)
        start = time.perf_counter()
        agent = evaluate_base_agent(args.model, data, samples=args.samples, seed=args.seed)
        eval_s = time.perf_counter() - start
        base = chance(data, args.samples, args.seed)
    print(f"{'split':26s} {'metric':13s} {'agent':>7s} {'chance':>7s}")
    for split, scores in agent.items():
        for metric in ("type_match", "grounding", "step_success"):
            print(f"{split:26s} {metric:13s} {scores[metric]:7.3f} {base[split][metric]:7.3f}")
        print(f"{split:26s} {'parse_rate':13s} {scores['parse_rate']:7.3f} {'':>7s}  (n={scores['n']})")
    print(f"evaluation: {eval_s:.1f} s wall, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    record = Path(args.model) / "training_record.json"
    if record.is_file():
        info = json.loads(record.read_text())
        print(f"training: {info['wall_time_s'] / 60:.1f} min wall, peak RSS {info['peak_rss_mb']:.0f} MB, "
              f"{info['steps']} steps; command: {info['command']}")


if __name__ == "__main__":
    main()

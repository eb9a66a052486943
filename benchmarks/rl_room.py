"""How much a GRPO group can learn from, by sampling temperature: on the RL recipes' training states.

    python benchmarks/rl_room.py [--model checkpoints/base-agent-history-tiny] [--k 8] [--states 200]
                                 [--temperatures 0.7 1.0 1.3 1.6] [--out results/rl_room.json]

For ``--states`` training states of data seed 3 (where the tiny RL recipes draw their states), the model's greedy
step success, then at each temperature ``k`` samples per state (one batched engine call): pass@k, the share of
states whose samples are neither all right nor all wrong (``informative``: under a 0/1 step reward only such a
group has a non-zero advantage; with a graded reward, a group of all-right or all-wrong samples still differs
only in format and partial credit), and the mean success of a sample. What it is for: the RL diagnosis
(docs/base_agent.md) says few groups carry signal at temperature 1; this measures how many, and what a higher
temperature trades (more informative groups against worse samples).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv: list[str] | None = None) -> dict:
    import random

    import torch
    from base_agent import commit, load_steps, room_for_rl, write_result
    from rl_recipes import ensure_data

    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="checkpoints/base-agent-history-tiny")
    parser.add_argument("--k", type=int, default=8, help="samples per state (the recipes' group size)")
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 1.0, 1.3, 1.6])
    parser.add_argument("--max-new-tokens", type=int, default=80, help="the recipes' length limit")
    parser.add_argument("--data", default="runs/bench-rl-room", help="where the training data is generated")
    parser.add_argument("--out", default="results/rl_room.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    train = ensure_data(Path(args.data), 3)
    steps = load_steps(train / "trajectories" / "train.jsonl")
    steps = random.Random(0).sample(steps, min(args.states, len(steps)))
    policy = load_policy(args.model)
    engine = HFEngine.from_policy(policy)
    start = time.perf_counter()
    greedy = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, args.max_new_tokens)["eval/step_success"]
    rows = []
    for temperature in args.temperatures:
        t0 = time.perf_counter()
        row = room_for_rl(policy, engine, steps, args.k, args.max_new_tokens, states=len(steps),
                          temperature=temperature, greedy=greedy)
        rows.append(row | {"seconds": round(time.perf_counter() - t0, 1)})
        print(json.dumps(rows[-1]), flush=True)
    result = {"model": args.model, "train_data_seed": 3, "states": len(steps), "k": args.k,
              "max_new_tokens": args.max_new_tokens, "rows": rows, "seconds": round(time.perf_counter() - start, 1),
              "command": " ".join(["python", "benchmarks/rl_room.py", *(argv if argv is not None else sys.argv[1:])]),
              "commit": commit()}
    print(f"{'temperature':>11} {'greedy':>6} {'pass@k':>6} {'room':>6} {'informative':>11} {'sample':>6}")
    for r in rows:
        print(f"{r['temperature']:>11.1f} {r['greedy']:>6.3f} {r['pass_at_k']:>6.3f} {r['room']:>6.3f} "
              f"{r['informative']:>11.3f} {r['sample_success']:>6.3f}")
    if args.out:
        write_result(args.out, result)
    return result


if __name__ == "__main__":
    main()

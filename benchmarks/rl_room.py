"""How much a GRPO group can learn from, by sampling temperature: on the RL recipes' training states.

    python benchmarks/rl_room.py [--model checkpoints/base-agent-history-tiny] [--k 8] [--states 200]
                                 [--temperatures 0.7 1.0 1.3 1.6] [--out results/rl_room.json]
    python benchmarks/rl_room.py --models start=<model> after=<trained model> ... [--temperatures 1.0]

With ``--models``, every model is measured on the same states and each one after the first is paired with the
first, state by state: its greedy success and its sample success minus the first model's, with 95% intervals.
That tells whether an RL run raised what it optimises (the success of a sample on its own training states) and
how its greedy answers moved there, apart from any held-out split.

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
    from rl_recipes import _portable, ensure_data

    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="checkpoints/base-agent-history-tiny")
    parser.add_argument("--models", nargs="+", metavar="NAME=PATH",
                        help="several models on the same states, each paired with the first (replaces --model)")
    parser.add_argument("--k", type=int, default=8, help="samples per state (the recipes' group size)")
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 1.0, 1.3, 1.6])
    parser.add_argument("--max-new-tokens", type=int, default=80, help="the recipes' length limit")
    parser.add_argument("--data", default="runs/bench-rl-room", help="where the training data is generated")
    parser.add_argument("--split", type=Path, default=None,
                        help="the states of this trajectories file (e.g. the episodes an RL run trained on) instead "
                             "of data seed 3's training steps; all of them when --states is at least their number")
    parser.add_argument("--out", default="results/rl_room.json")
    args = parser.parse_args(argv)
    models = dict(named(m) for m in args.models) if args.models else {"model": args.model}
    torch.set_num_threads(2)
    if args.split is not None and not args.split.is_file():
        parser.error(f"--split {args.split}: no such file; give a trajectories .jsonl (e.g. a run's train_data)")
    split = args.split or ensure_data(Path(args.data), 3) / "trajectories" / "train.jsonl"
    steps = load_steps(split)
    steps = random.Random(0).sample(steps, min(args.states, len(steps)))
    start = time.perf_counter()
    measured = {}
    for name, path in models.items():
        policy = load_policy(path)
        engine = HFEngine.from_policy(policy)
        predictions: list = []
        greedy = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, args.max_new_tokens,
                                predictions=predictions)["eval/step_success"]
        rows = []
        for temperature in args.temperatures:
            t0 = time.perf_counter()
            row = room_for_rl(policy, engine, steps, args.k, args.max_new_tokens, states=len(steps),
                              temperature=temperature, greedy=greedy, per_state=bool(args.models))
            rows.append(row | {"seconds": round(time.perf_counter() - t0, 1)})
            print(name, json.dumps({k: v for k, v in rows[-1].items() if k != "per_state"}), flush=True)
        measured[name] = {"model": path, "rows": rows, "greedy_per_state": [int(m.success) for _, m, _ in predictions]}
    command = " ".join(["python", "benchmarks/rl_room.py", *(argv if argv is not None else sys.argv[1:])])
    common = {"train_data_seed": 3, "states": len(steps), "k": args.k, "max_new_tokens": args.max_new_tokens}
    if args.split is not None:
        common["split"] = _portable(str(args.split))
    if args.models:
        result = {"models": {n: {"model": _portable(m["model"])} | versus_first(measured, n) for n, m in measured.items()},
                  **common, "seconds": round(time.perf_counter() - start, 1), "command": command, "commit": commit()}
    else:
        result = {"model": args.model, **common, "rows": measured["model"]["rows"],
                  "seconds": round(time.perf_counter() - start, 1), "command": command, "commit": commit()}
    print(f"{'model':>12} {'temperature':>11} {'greedy':>6} {'pass@k':>6} {'room':>6} {'informative':>11} {'sample':>6}")
    for name, m in measured.items():
        for r in m["rows"]:
            print(f"{name:>12} {r['temperature']:>11.1f} {r['greedy']:>6.3f} {r['pass_at_k']:>6.3f} {r['room']:>6.3f} "
                  f"{r['informative']:>11.3f} {r['sample_success']:>6.3f}")
    if args.out:
        write_result(args.out, result)
    return result


def named(item: str) -> tuple[str, str]:
    """``NAME=PATH`` of ``--models``; anything else is refused in one line (exit 2)."""
    name, sep, path = item.partition("=")
    if not sep or not name or not path:
        print(f"--models {item!r}: give NAME=PATH (e.g. start=checkpoints/base-agent-history-tiny)", file=sys.stderr)
        raise SystemExit(2)
    if not Path(path).is_dir():
        print(f"--models {item!r}: {path} is not a model directory; give a saved model (a run's final/)", file=sys.stderr)
        raise SystemExit(2)
    return name, path


def versus_first(measured: dict, name: str) -> dict:
    """One model's rows (per-state lists dropped) and, for every model after the first, its greedy success and each
    temperature's sample success minus the first model's, paired state by state (the same states for all).

    >>> m = {"a": {"rows": [{"temperature": 1.0, "sample_success": 0.5, "per_state": [0.5, 0.5]}],
    ...            "greedy_per_state": [1, 0]},
    ...      "b": {"rows": [{"temperature": 1.0, "sample_success": 0.75, "per_state": [1.0, 0.5]}],
    ...            "greedy_per_state": [1, 1]}}
    >>> versus_first(m, "b")["versus_first"]
    {'against': 'a', 'greedy': {'diff': 0.5, 'low': -0.48, 'high': 1.48, 'n': 2}, 'sample_success': {'1.0': {'diff': 0.25, 'low': -0.24, 'high': 0.74, 'n': 2}}}
    """
    from base_agent import paired

    first = next(iter(measured))
    this = measured[name]
    out: dict = {"rows": [{k: v for k, v in r.items() if k != "per_state"} for r in this["rows"]]}
    if name != first:
        base = measured[first]
        out["versus_first"] = {
            "against": first, "greedy": paired(base["greedy_per_state"], this["greedy_per_state"]),
            "sample_success": {str(r["temperature"]): paired(b["per_state"], r["per_state"])
                               for b, r in zip(base["rows"], this["rows"], strict=True)}}
    return out


if __name__ == "__main__":
    main()

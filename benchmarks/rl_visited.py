"""Does an RL run learn the task, or the states it trained on? Greedy success on visited and unvisited training states.

    python benchmarks/rl_visited.py --run RUN_DIR [--run RUN_DIR ...] --data TRAIN.jsonl \
        [--base checkpoints/base-agent-history-tiny] [--results results/rl_visited.json]

For each run (a ``guirl train grpo`` output directory: the config saved with its checkpoints gives the seed,
``max_steps`` and ``batch_size``), the training states the trainer drew (its seeded per-epoch permutation, the same order
``benchmarks/grpo_bench_runs.state_order`` gives) are split from the training states it never drew (as many,
sampled with seed 0). The start and the run's final model are evaluated greedily on both sets, paired step by
step. A run that learned the task gains on both; one that learned its states gains on the visited ones only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def outcomes(model: str, states: list) -> list[int]:
    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    policy = load_policy(model)
    predictions: list = []
    held = [(s.episode, s.step, s.root) for s in states]
    evaluate_steps(HFEngine.from_policy(policy), policy.prompt, policy.frame_for, held, 96, predictions)
    return [int(m.success) for _, m, _ in predictions]


def measure(run: Path, data: str, base: str) -> dict:
    from base_agent import paired
    from grpo_bench_runs import state_order

    from guirl.trainers.rl_common import load_states

    last = sorted((run / "checkpoints").glob("step_*/trainer_state.json"))[-1]
    cfg = json.loads(last.read_text())["config"]  # the config the trainer ran with, saved with every checkpoint
    states = load_states([data])  # the trainer's list: state_order indexes it
    drawn = sorted(set(state_order(len(states), cfg["seed"], cfg["max_steps"] * cfg["batch_size"])))
    others = [i for i in range(len(states)) if i not in set(drawn)]
    others = random.Random(0).sample(others, min(len(drawn), len(others)))
    row: dict = {"run": f"{run.parent.name}/{run.name.rsplit('-', 1)[-1]}", "seed": cfg["seed"],
                 "max_steps": cfg["max_steps"], "batch_size": cfg["batch_size"], "lr": cfg["optim"]["lr"],
                 "states": len(states)}
    for name, idx in (("visited", drawn), ("unvisited", others)):
        subset = [states[i] for i in idx if states[i].step.valid_actions]
        before, after = outcomes(base, subset), outcomes(str(run / "final"), subset)
        row[name] = {"n": len(subset), "before": round(sum(before) / len(subset), 4),
                     "after": round(sum(after) / len(subset), 4),
                     "paired": paired(before, after)}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", action="append", required=True, help="a guirl train grpo output directory")
    parser.add_argument("--data", required=True, help="the training states' trajectory JSONL the runs trained on")
    parser.add_argument("--base", default=str(ROOT / "checkpoints" / "base-agent-history-tiny"), help="the start")
    parser.add_argument("--results", default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    rows = []
    for run in args.run:
        rows.append(measure(Path(run), args.data, args.base))
        r = rows[-1]
        print(f"{r['run']}: B {r['batch_size']} x {r['max_steps']} steps, lr {r['lr']}: " + "; ".join(
            f"{k} {r[k]['before']:.3f} -> {r[k]['after']:.3f} ({r[k]['paired']['diff']:+.3f} "
            f"[{r[k]['paired']['low']:+.3f}, {r[k]['paired']['high']:+.3f}], n {r[k]['n']})"
            for k in ("visited", "unvisited")), flush=True)
    if args.results:
        from base_agent import commit

        Path(args.results).write_text(json.dumps({
            "command": " ".join(["python", "benchmarks/rl_visited.py", *sys.argv[1:]]), "commit": commit(),
            "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

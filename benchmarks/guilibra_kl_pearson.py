"""GUI-Libra's ablations on the tiny recipe: with and without KL, with and without SNGS, and the paper's claim
that with KL the offline step accuracy of checkpoints predicts their online success better.

    python benchmarks/guilibra_kl_pearson.py [--conditions kl no_kl no_sngs] [--seeds 0] [--eval-every 50]
                                             [--out runs/bench-guilibra-pearson] [key=value ...]

Every run is ``guirl train grpo --config recipes/guilibra_kl_grpo_sngs_tiny.yaml`` (``kl``: as written, KL 0.001
and SNGS; ``no_kl``: ``kl_coef=0``; ``no_sngs``: plain GRPO advantages) on built-in-world states of data seed 3.
At the start and every ``--eval-every`` steps the trainer evaluates the current weights greedily on the same
held-out material of data seed 7 (``eval_every`` with ``eval_data`` and ``eval_online_tasks``):

- offline: step success on recorded held-out steps (multi-step steps of the trained families and grounding
  screens, ``--samples`` in all);
- online: whole-episode success when the policy plays the trained multi-step families and the three one-step
  grounding families live (``--episodes`` each, seeds from 70,000, at most 12 steps).

It prints, per condition, the final offline / online scores (mean and spread over seeds) and Pearson's r
between offline and online success over all its evaluation points (every checkpoint of every seed, the start
included), with the number of points. Resumable: finished runs are read back from ``--out/results.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rl_recipes import ROOT, _data_overrides, ensure_data

RECIPE = "guilibra_kl_grpo_sngs_tiny"
CONDITIONS = {"kl": [], "no_kl": ["kl_coef=0"], "no_sngs": ["advantage=grpo", "advantage_kwargs={}", "success_signal=null"]}
GROUNDING_FAMILIES = ["desktop.ground", "web.ground", "mobile.ground"]


def pearson(xs: list[float], ys: list[float]) -> float:
    """Pearson's r (nan when either side is constant or there are fewer than 3 points)."""
    if len(xs) < 3:
        return math.nan
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # a constant side
        return math.nan


def eval_overrides(data: Path, samples: int, episodes: int) -> list[str]:
    manifest = json.loads((data / "manifest.json").read_text())
    tasks = [*manifest["splits"]["train"], *GROUNDING_FAMILIES]
    held = [data / "trajectories" / "test_seed.jsonl", data / "grounding" / "test_seed.jsonl"]
    return [f"eval_data=[{','.join(map(str, held))}]", f"eval_samples={samples}",
            f"eval_online_tasks=[{','.join(tasks)}]", f"eval_online_episodes={episodes}",
            f"eval_online_env_kwargs={{preset: {manifest['config']['preset']}}}"]


def evaluate_start(out: Path, overrides: list[str]) -> dict:
    """The shipped base agent under the same evaluator (the step-0 point of every run)."""
    path = out / "start.json"
    if not path.is_file():
        from guirl.config import load_config
        from guirl.rollout.hf_engine import HFEngine
        from guirl.trainers.grpo import GRPOConfig, heldout_evaluator, load_rl_policy

        cfg = load_config(GRPOConfig, ROOT / "recipes" / f"{RECIPE}.yaml", overrides)
        policy = load_rl_policy(cfg)
        evaluate, _ = heldout_evaluator(cfg, policy, HFEngine.from_policy(policy))
        path.write_text(json.dumps(evaluate(policy.model, 0), indent=1))
    return json.loads(path.read_text())


def train(out: Path, name: str, seed: int, overrides: list[str]) -> dict:
    run = out / f"{name}-seed{seed}"
    cmd = [sys.executable, "-m", "guirl", "train", "grpo", "--config", str(ROOT / "recipes" / f"{RECIPE}.yaml"),
           f"output_dir={run}", f"seed={seed}", "report_to=[]", *overrides, *CONDITIONS[name]]
    print("$", " ".join(cmd[1:]), flush=True)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    points = [{"step": r["step"], "offline": r["eval/step_success"], "online": r["eval/online_success"]}
              for r in rows if "eval/online_success" in r]
    return {"run": str(run), "wall_s": time.perf_counter() - t0, "points": points}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--out", default="runs/bench-guilibra-pearson")
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--samples", type=int, default=240, help="held-out recorded steps (multi-step + grounding)")
    parser.add_argument("--episodes", type=int, default=2, help="live episodes per task family")
    parser.add_argument("overrides", nargs="*", help="key=value applied to every run")
    args = parser.parse_args()
    out = ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    train_data, eval_data = ensure_data(out, 3), ensure_data(out, 7)
    common = [*_data_overrides(RECIPE, train_data), *eval_overrides(eval_data, args.samples, args.episodes),
              f"eval_every={args.eval_every}", *args.overrides]
    start = evaluate_start(out, common)
    start_point = {"step": 0, "offline": start["eval/step_success"], "online": start["eval/online_success"]}
    for seed in args.seeds:
        for name in args.conditions:
            key = f"{name}/seed{seed}"
            if key not in results:
                results[key] = train(out, name, seed, common)
                results_path.write_text(json.dumps(results, indent=1))
    print(f"\nstart (base agent): offline {start_point['offline']:.3f}, online {start_point['online']:.3f}")
    print(f"{'condition':<10} {'seeds':>5} {'offline (final)':>16} {'online (final)':>16} {'pearson r':>9} "
          f"{'points':>6} {'wall min':>8}")
    for name in args.conditions:
        runs = [v for k, v in results.items() if k.split("/")[0] == name]
        if not runs:
            continue
        points = [start_point] + [p for r in runs for p in r["points"]]
        r = pearson([p["offline"] for p in points], [p["online"] for p in points])
        cells = []
        for side in ("offline", "online"):
            finals = [run["points"][-1][side] for run in runs]
            spread = statistics.stdev(finals) if len(finals) > 1 else 0.0
            cells.append(f"{statistics.fmean(finals):.3f} +- {spread:.3f}")
        wall = statistics.fmean(run["wall_s"] for run in runs) / 60
        print(f"{name:<10} {len(runs):>5} {cells[0]:>16} {cells[1]:>16} {r:>9.3f} {len(points):>6} {wall:>8.1f}")


if __name__ == "__main__":
    main()

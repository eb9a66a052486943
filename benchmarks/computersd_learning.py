"""ComputerSD's learning benchmark: held-out whole-episode success before and after training.

    python benchmarks/computersd_learning.py                                    # every run, 3 seeds
    python benchmarks/computersd_learning.py --runs computersd grpo --seeds 0 --out runs/bench-computersd-learn
    python benchmarks/computersd_learning.py --report                           # only print finished runs
    python benchmarks/computersd_learning.py --reeval 50                        # finished runs on 50 episodes per task
    python benchmarks/computersd_learning.py --recipe computersd_sim_miniwob_tiny --out runs/bench-computersd-miniwob
                                                                                # built-in world + MiniWoB++ tasks

Every run is ``guirl train computersd --config recipes/<--recipe>.yaml`` (default ``computersd_tiny``) plus the run's overrides and
``seed=S``; the held-out episodes (``eval_episodes`` per task, seeds from ``eval_seed_start``, greedy,
``eval_max_steps``) are the same for every run and never trained on. ``start`` is the starting policy as it
is; ``prompt_only`` is the starting policy with the fixed pre-written guidance in every evaluation prompt.
Finished runs (``final_eval.json``) are reused, so the script resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
RECIPE = RECIPES / "computersd_tiny.yaml"  # --recipe replaces it
RUNS = {
    "computersd": [],
    "grpo": ["opsd_coef=0"],
    "grpo_prm": ["opsd_coef=0", "prm_weight=0.1"],
    "fixed_guidance": ["guidance=fixed"],
    "no_gate": ["opsd_gate=none"],
}


def evaluate_start(out: Path, overrides: list[str], name: str, episodes: int | None = None) -> dict:
    path = out / (f"{name}.json" if episodes is None else f"{name}-eval{episodes}.json")
    if episodes is not None:
        overrides = [*overrides, f"eval_episodes={episodes}"]
    if not path.exists():
        from guirl.config import load_config
        from guirl.trainers.computersd import FIXED_GUIDANCE, ComputerSDConfig
        from guirl.trainers.online_rl import evaluate_checkpoint, write_json

        cfg = load_config(ComputerSDConfig, RECIPE, overrides)
        if name == "prompt_only":
            cfg = cfg.model_copy(update={"eval_guidance": FIXED_GUIDANCE})
        t0 = time.perf_counter()
        scores = evaluate_checkpoint(cfg)
        out.mkdir(parents=True, exist_ok=True)
        write_json(path, {**scores, "wall_s": time.perf_counter() - t0})
    return json.loads(path.read_text())


def reevaluate(out: Path, name: str, seed: int, overrides: list[str], episodes: int) -> dict | None:
    """A finished run's final model on ``episodes`` held-out episodes per task (a larger evaluation than the
    one at the end of training; the same seeds for every run)."""
    run_dir = out / f"{name}-s{seed}"
    path = run_dir / f"final_eval{episodes}.json"
    if not path.exists():
        if not (run_dir / "final_eval.json").exists():
            return None
        from guirl.config import load_config
        from guirl.trainers.computersd import ComputerSDConfig
        from guirl.trainers.online_rl import evaluate_checkpoint, write_json

        cfg = load_config(ComputerSDConfig, RECIPE, [*overrides, f"model={run_dir / 'final'}",
                                                     f"eval_episodes={episodes}"])
        scores = evaluate_checkpoint(cfg)
        trained = json.loads((run_dir / "final_eval.json").read_text())
        write_json(path, {**scores, "wall_s": trained.get("wall_s", 0.0)})
    return json.loads(path.read_text())


def train(out: Path, name: str, seed: int, overrides: list[str], extra: list[str]) -> dict | None:
    run_dir = out / f"{name}-s{seed}"
    done = run_dir / "final_eval.json"
    if not done.exists():
        cmd = [sys.executable, "-m", "guirl", "train", "computersd", "--config", str(RECIPE), f"output_dir={run_dir}",
               f"seed={seed}", "report_to=[]", *RUNS[name], *overrides, *extra]
        print("$", " ".join(cmd[1:]), flush=True)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        result = json.loads(done.read_text())
        result["wall_s"] = result.get("wall_s", 0.0) + wall  # a resumed run adds its parts
        done.write_text(json.dumps(result, indent=1))
    return json.loads(done.read_text())


def cell(results: list[dict], key: str) -> str:
    values = [r[key] for r in results if key in r]
    if not values:
        return "-"
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.3f} +- {spread:.3f}" if len(values) > 1 else f"{values[0]:.3f}"


def table(results: dict[str, list[dict]]) -> str:
    """Markdown: one row per condition, held-out success overall and per task (mean +- sd over seeds)."""
    keys = sorted({k for rs in results.values() for r in rs for k in r if k.startswith("eval/success/")})
    keys = ["eval/success/all"] + [k for k in keys if k != "eval/success/all"]
    head = ["condition", "seeds"] + [k.removeprefix("eval/success/") for k in keys] + ["wall min / run"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, rs in results.items():
        if not rs:
            continue
        wall = statistics.mean(r.get("wall_s", 0.0) for r in rs) / 60
        lines.append("| " + " | ".join([name, str(len(rs))] + [cell(rs, k) for k in keys] + [f"{wall:.1f}"]) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--out", default="runs/bench-computersd-learn")
    parser.add_argument("--report", action="store_true", help="only print what has finished")
    parser.add_argument("--reeval", type=int, default=None, metavar="N",
                        help="only evaluate the starting policy and every finished run on N episodes per task")
    parser.add_argument("overrides", nargs="*", help="recipe overrides for every run (e.g. max_steps=30)")
    parser.add_argument("--recipe", default="computersd_tiny", help="recipe name under recipes/ (without .yaml)")
    args = parser.parse_args()
    global RECIPE
    RECIPE = RECIPES / f"{args.recipe}.yaml"
    if not RECIPE.is_file():
        parser.error(f"--recipe {args.recipe}: no {RECIPE}; choose one of "
                     f"{sorted(p.stem for p in RECIPES.glob('computersd*.yaml'))}")
    out = ROOT / args.out
    if args.reeval:
        results = {"start": [evaluate_start(out, args.overrides, "start", args.reeval)],
                   "prompt_only": [evaluate_start(out, args.overrides, "prompt_only", args.reeval)]}
        for name in args.runs:
            results[name] = [r for seed in args.seeds if (r := reevaluate(out, name, seed, args.overrides, args.reeval))]
        print(f"held-out whole-episode success (greedy, {args.reeval} episodes per task), mean +- sd over seeds")
        print(table(results))
        return
    results: dict[str, list[dict]] = {}
    results["start"] = [evaluate_start(out, args.overrides, "start")] if not args.report or (out / "start.json").exists() else []
    results["prompt_only"] = [evaluate_start(out, args.overrides, "prompt_only")] \
        if not args.report or (out / "prompt_only.json").exists() else []
    for name in args.runs:
        results[name] = []
    for seed in args.seeds:  # seed-major: a partial run has every condition of the first seeds
        for name in args.runs:
            done = out / f"{name}-s{seed}" / "final_eval.json"
            if args.report and not done.exists():
                continue
            results[name].append(train(out, name, seed, args.overrides, []))
    print("held-out whole-episode success (greedy), mean +- sd over seeds")
    print(table(results))


if __name__ == "__main__":
    main()

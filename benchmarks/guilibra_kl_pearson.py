"""GUI-Libra's ablations on the tiny recipe: with and without KL, with and without SNGS, and the paper's claim
that with KL the offline step accuracy of checkpoints predicts their online success better.

    python benchmarks/guilibra_kl_pearson.py [--conditions kl no_kl no_sngs sngs_total] [--seeds 0] [--eval-every 50]
                                             [--episodes 15] [--out runs/bench-guilibra-pearson]
                                             [--results results/guilibra_kl_pearson.json] [key=value ...]

Every run is ``guirl train grpo --config recipes/guilibra_kl_grpo_sngs_tiny.yaml`` (``kl``: as written, KL 0.001
and SNGS with p_g from the reward's accuracy part; ``no_kl``: ``kl_coef=0``; ``no_sngs``: plain GRPO advantages;
``sngs_total``: SNGS with p_g from the total reward, format included) on built-in-world states of data seed 3.
At the start and every ``--eval-every`` steps the trainer evaluates the current weights greedily on the same
held-out material of data seed 7 (``eval_every`` with ``eval_data`` and ``eval_online_tasks``):

- offline: step success on recorded held-out steps (multi-step steps of the trained families and grounding
  screens, ``--samples`` in all);
- online: whole-episode success when the policy plays the trained multi-step families and the three one-step
  grounding families live (``--episodes`` each, seeds from 70,000, at most 12 steps): success, and progress (the
  share of its task's milestones each episode reached, 1.0 on success), an online score fine enough to correlate
  where success moves by whole episodes.

It prints, per condition, the final offline / online scores (mean and spread over seeds) and Pearson's r
between offline step success and each online score over all its evaluation points (every checkpoint of every
seed, the start included), with the number of points; ``--results`` writes them as JSON for docs/results.md. Resumable: finished runs are read back from ``--out/results.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from rl_recipes import ROOT, _data_overrides, ensure_data, run_measured

RECIPE = "guilibra_kl_grpo_sngs_tiny"
CONDITIONS = {"kl": [], "no_kl": ["kl_coef=0"], "no_sngs": ["advantage=grpo", "advantage_kwargs={}", "success_signal=null"],
              "sngs_total": ["success_signal=null"]}
ONLINE = ("online", "progress")  # the online scores each point carries
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
    resumed = (run / "checkpoints").is_dir()  # an interrupted run resumes: the wall time is this part's only
    wall, peak_mb, _ = run_measured(cmd)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    points = [point(r) for r in rows if "eval/online_success" in r]  # summarise keeps one per step
    return {"run": str(run), "wall_s": wall, "peak_rss_mb": peak_mb, "points": points} | ({"resumed": True} if resumed else {})


def pearson_within_step(runs: list[dict], side: str) -> tuple[float, int, int]:
    """Pearson's r between offline step success and ``side`` across seeds at the same training step: each point
    minus the mean of the points at its step (steps with fewer than 2 seeds left out), so the trend every seed
    shares over training (a common decline, say) carries none of it. Returns r, the number of points pooled and
    the number of steps they came from (the centring spends one degree of freedom per step).

    >>> runs = [{"points": [{"step": 60, "offline": 0.6, "online": 0.2}, {"step": 120, "offline": 0.5, "online": 0.1}]},
    ...         {"points": [{"step": 60, "offline": 0.7, "online": 0.3}, {"step": 120, "offline": 0.4, "online": 0.0}]},
    ...         {"points": [{"step": 60, "offline": 0.5, "online": 0.2}]}]
    >>> r, n, steps = pearson_within_step(runs, "online"); round(r, 3), n, steps
    (0.878, 5, 2)
    """
    by_step: dict[int, list[dict]] = {}
    for run in runs:
        for p in run["points"]:
            if p.get(side) is not None:
                by_step.setdefault(p["step"], []).append(p)
    xs, ys, steps = [], [], 0
    for ps in by_step.values():
        if len(ps) < 2:
            continue
        steps += 1
        mx, my = statistics.fmean(p["offline"] for p in ps), statistics.fmean(p[side] for p in ps)
        xs += [p["offline"] - mx for p in ps]
        ys += [p[side] - my for p in ps]
    return pearson(xs, ys), len(xs), steps


def unique_steps(points: list[dict]) -> list[dict]:
    """One point per step, the last logged: a resumed run logs again the evaluations it made after its last
    checkpoint before it stopped.

    >>> unique_steps([{"step": 60, "offline": 0.1}, {"step": 120, "offline": 0.2}, {"step": 120, "offline": 0.3}])
    [{'step': 60, 'offline': 0.1}, {'step': 120, 'offline': 0.3}]
    """
    return list({p["step"]: p for p in points}.values())


def point(scores: dict) -> dict:
    """One evaluation point (the trainer's metrics row, or the start's scores)."""
    return {"step": scores.get("step", 0), "offline": scores["eval/step_success"],
            "online": scores["eval/online_success"], "progress": scores.get("eval/online_progress")}


def summarise(start: dict, results: dict, conditions: list[str]) -> dict:
    """Per condition: final offline and online scores (mean, spread over seeds) and Pearson's r between offline
    step success and each online score over every evaluation point of every seed, the start included.

    >>> runs = {"kl/seed0": {"wall_s": 60, "points": [{"step": 50, "offline": 0.6, "online": 0.1, "progress": 0.3},
    ...                                              {"step": 100, "offline": 0.7, "online": 0.2, "progress": 0.5}]}}
    >>> row = summarise({"step": 0, "offline": 0.5, "online": 0.0, "progress": 0.1}, runs, ["kl"])["kl"]
    >>> row["pearson"]["online"], row["pearson"]["progress"], row["points"], row["final"]["offline"]["mean"]
    (1.0, 1.0, 3, 0.7)
    """
    table = {}
    for name in conditions:
        mine = {k.split("/")[1]: v | {"points": unique_steps(v["points"])} for k, v in results.items()
                if k.split("/")[0] == name}
        runs = list(mine.values())
        if not runs:
            continue
        points = [start] + [p for r in runs for p in r["points"]]
        final = {}
        for side in ("offline", *ONLINE):
            finals = [run["points"][-1][side] for run in runs if run["points"][-1].get(side) is not None]
            if finals:
                final[side] = {"mean": round(statistics.fmean(finals), 4),
                               "spread": round(statistics.stdev(finals), 4) if len(finals) > 1 else 0.0}
        pearsons, within = {}, {}
        for side in ONLINE:
            pts = [p for p in points if p.get(side) is not None]
            r = pearson([p["offline"] for p in pts], [p[side] for p in pts])
            pearsons[side] = None if math.isnan(r) else round(r, 3)
            r, n, steps = pearson_within_step(runs, side)
            within[side] = {"r": None if math.isnan(r) else round(r, 3), "points": n, "steps": steps}
        table[name] = {"seeds": len(runs), "points": len(points), "final": final, "pearson": pearsons, "pearson_within_step": within,
                       "wall_min": round(statistics.fmean(run["wall_s"] for run in runs) / 60, 2),
                       "peak_rss_gb": round(max(rss) / 1024, 2) if (rss := [r["peak_rss_mb"] for r in runs
                                                                            if "peak_rss_mb" in r]) else None,
                       "curves": {seed: v["points"] for seed, v in mine.items()}}
        resumed = sorted(seed for seed, v in mine.items() if v.get("resumed"))
        if resumed:
            table[name]["resumed"] = resumed
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--out", default="runs/bench-guilibra-pearson")
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--samples", type=int, default=240, help="held-out recorded steps (multi-step + grounding)")
    parser.add_argument("--episodes", type=int, default=15, help="live episodes per task family (15: 105 multi-step "
                        "and 45 grounding episodes per point)")
    parser.add_argument("--results", default=None, help="write the table as JSON here (results/guilibra_kl_pearson.json)")
    parser.add_argument("overrides", nargs="*", help="key=value applied to every run")
    args = parser.parse_args()
    out = ROOT / args.out
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    train_data, eval_data = ensure_data(out, 3), ensure_data(out, 7)
    common = [*_data_overrides(RECIPE, train_data), *eval_overrides(eval_data, args.samples, args.episodes),
              f"eval_every={args.eval_every}", *args.overrides]
    start = point(evaluate_start(out, common))
    for seed in args.seeds:
        for name in args.conditions:
            key = f"{name}/seed{seed}"
            if key not in results:
                results[key] = train(out, name, seed, common)
                results_path.write_text(json.dumps(results, indent=1))
    table = summarise(start, results, args.conditions)
    print(f"\nstart (base agent): offline {start['offline']:.3f}, online success {start['online']:.3f}, "
          f"progress {start['progress'] if start['progress'] is None else round(start['progress'], 3)}")
    print(f"{'condition':<10} {'seeds':>5} {'offline (final)':>16} {'success (final)':>16} {'progress (final)':>16} "
          f"{'r success':>9} {'r progress':>10} {'points':>6} {'wall min':>8} {'RSS GB':>6}")
    for name, row in table.items():
        cells = [f"{row['final'][s]['mean']:.3f} +- {row['final'][s]['spread']:.3f}" if s in row["final"] else "-"
                 for s in ("offline", *ONLINE)]
        rs = [f"{row['pearson'][s]:.3f}" if row["pearson"][s] is not None else "nan" for s in ONLINE]
        print(f"{name:<10} {row['seeds']:>5} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} {rs[0]:>9} {rs[1]:>10} "
              f"{row['points']:>6} {row['wall_min']:>8.1f} {row['peak_rss_gb'] or '-':>6}")
    if args.results:
        from base_agent import commit

        summary = {"command": " ".join(["python", "benchmarks/guilibra_kl_pearson.py", *sys.argv[1:]]),
                   "commit": commit(), "train_data_seed": 3, "eval_seed": 7, "samples": args.samples,
                   "episodes": args.episodes, "eval_every": args.eval_every, "start": start, "conditions": table}
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

"""Where a ComputerSD run's update comes from, read from its training log (``metrics.jsonl``): the measured
diagnosis beside its held-out result.

    python benchmarks/computersd_signal.py --runs computersd/seed0=runs/csd-heldout/computersd_history_tiny-seed0 \\
        grpo/seed0=runs/csd-heldout/computersd_history_tiny-opsd_coef0-seed0 --results results/computersd_signal.json

Per run (``LABEL=DIR`` names it LABEL; a bare directory is named by its folder):

- ``outcome_steps``: the share of optimiser steps with at least one group whose episodes' outcomes differ: only
  there does the trajectory-level GRPO term have a non-zero advantage (``sampling/groups_equal_reward_frac`` < 1);
- ``grad_norm_outcome`` / ``grad_norm_silent``: the median gradient norm on those steps and on the others, where
  only OPSD (times ``opsd_coef``) and the KL term move the policy;
- ``opsd_loss``: the mean OPSD term before ``opsd_coef``; ``good_steps``: the share of executed steps the analyzer
  judged consistent and effective (the rest pull away from what was sampled); ``gate``: the mean value gate;
- ``rollout_success``: training episodes' success in the first and the last half of the steps (every run of a
  recipe draws the same tasks in the same order, so compare runs at the same half, not one half with the other).

``--analyzer-mix MODEL``: how the ground-truth analyzer judges MODEL's own live steps on the recipe's seven
multi-step families (``--episodes`` per family on world seeds 500+, 16 steps at most, at each of
``--temperatures``): the share of steps consistent / effective, both (a +1 step value) or neither.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def signal(rows: list[dict]) -> dict:
    """The diagnosis of one run's logged steps.

    >>> rows = [{"step": 1, "sampling/groups_equal_reward_frac": 1.0, "train/grad_norm": 0.003, "opsd/loss": 0.01,
    ...          "opsd/rescored_steps": 5,
    ...          "analyzer/good_frac": 0.2, "opsd/gate_mean": 0.5, "rollout/success": 0.0},
    ...         {"step": 2, "sampling/groups_equal_reward_frac": 0.5, "train/grad_norm": 0.2, "opsd/loss": 0.02,
    ...          "analyzer/good_frac": 0.4, "opsd/gate_mean": 0.5, "rollout/success": 0.25}]
    >>> s = signal(rows)
    >>> s["outcome_steps"], s["grad_norm_outcome"], s["grad_norm_silent"], s["rollout_success"], s["good_steps"]
    (0.5, 0.2, 0.003, {'first_half': 0.0, 'last_half': 0.25}, 0.3)
    >>> signal([{**r, "opsd/rescored_steps": 0} for r in rows])["good_steps"] is None  # no analyzer ran
    True
    """
    rows = list({r["step"]: r for r in rows if "train/grad_norm" in r}.values())  # a resumed run logs steps again
    if not rows:
        raise ValueError("no logged optimiser step")
    loud = [r for r in rows if r.get("sampling/groups_equal_reward_frac", 1.0) < 1.0]
    silent = [r for r in rows if r.get("sampling/groups_equal_reward_frac", 1.0) >= 1.0]
    half = len(rows) // 2 or 1

    def mean(key: str, part: list[dict]) -> float | None:
        values = [r[key] for r in part if key in r]
        return round(statistics.fmean(values), 4) if values else None

    def median_norm(part: list[dict]) -> float | None:
        return round(statistics.median(r["train/grad_norm"] for r in part), 4) if part else None

    analysed = any(r.get("opsd/rescored_steps") for r in rows)  # outcome-only GRPO runs no analyzer
    return {"steps": len(rows), "outcome_steps": round(len(loud) / len(rows), 4),
            "grad_norm_outcome": median_norm(loud), "grad_norm_silent": median_norm(silent),
            "opsd_loss": mean("opsd/loss", rows) if analysed else None,
            "good_steps": mean("analyzer/good_frac", rows) if analysed else None,
            "gate": mean("opsd/gate_mean", rows) if analysed else None,
            "rollout_success": {"first_half": mean("rollout/success", rows[:half]),
                                "last_half": mean("rollout/success", rows[half:])}}


def analyzer_mix(model: str, temperature: float, episodes: int, families: tuple[str, ...] | None = None) -> dict:
    """The ground-truth analyzer's verdicts on ``model``'s live steps, as shares of every step played
    (``families``: default, the tasks of recipes/computersd_history_tiny.yaml)."""
    from collections import Counter

    import yaml

    from guirl.envs.base import make_env
    from guirl.judges.analyzer import GroundTruthAnalyzer, trajectory_requests
    from guirl.models.load import load_rollout_policy
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.hf_engine import HFEngine
    from guirl.rollout.online import EnvSlots, run_online
    from guirl.rollout.runner import EpisodeSpec

    policy = load_rollout_policy(model, 0, None, None, None)
    engine = HFEngine(policy.model, policy.processor)
    families = families or yaml.safe_load((ROOT / "recipes" / "computersd_history_tiny.yaml").read_text())["tasks"]
    specs = [EpisodeSpec(task=f, seed=500 + k) for f in families for k in range(episodes)]
    envs = EnvSlots(lambda: make_env("sim", preset="coarse"))
    try:
        trajs, _ = run_online(engine, policy, envs, specs, SamplingParams(n=1, temperature=temperature,
                              max_new_tokens=96, seed=0), 16)
    finally:
        envs.close()
    judge, counts = GroundTruthAnalyzer(), Counter()
    for tr in trajs:
        for request in trajectory_requests(tr, policy.prompt.fmt):
            v = judge(request).verdict
            counts[(v["consistency"], v["effectiveness"])] += 1
    n = max(1, sum(counts.values()))
    return {"model": model, "temperature": temperature, "steps": sum(counts.values()),
            "episodes": len(specs), "success": round(sum(bool(t.success) for t in trajs) / len(specs), 4),
            "consistent": round((counts[(1, 0)] + counts[(1, 1)]) / n, 4),
            "effective": round((counts[(0, 1)] + counts[(1, 1)]) / n, 4),
            "good": round(counts[(1, 1)] / n, 4), "neither": round(counts[(0, 0)] / n, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", nargs="+", default=[], metavar="[LABEL=]DIR",
                        help="ComputerSD run directories (with metrics.jsonl)")
    parser.add_argument("--analyzer-mix", nargs="*", default=[], metavar="MODEL",
                        help="judge these models' own live steps with the ground-truth analyzer")
    parser.add_argument("--temperatures", nargs="+", type=float, default=[0.0, 1.0])
    parser.add_argument("--episodes", type=int, default=4, help="live episodes per family for --analyzer-mix")
    parser.add_argument("--results", default=None, help="write the rows as JSON here (results/computersd_signal.json)")
    args = parser.parse_args()
    if not args.runs and not args.analyzer_mix:
        parser.error("give --runs and / or --analyzer-mix")
    for model in args.analyzer_mix:
        if not (Path(model) / "config.json").is_file():
            parser.error(f"--analyzer-mix {model}: not a model directory (no config.json)")
    rows = {}
    for item in args.runs:
        label, _, path = item.rpartition("=")
        log = Path(path) / "metrics.jsonl"
        if not log.is_file():
            parser.error(f"--runs {item}: no metrics.jsonl in {path}; give a ComputerSD run directory")
        rows[label or Path(path).name] = signal([json.loads(x) for x in log.read_text().splitlines()])
    print(f"{'run':<40} {'outcome':>7} {'|g| out':>8} {'|g| silent':>10} {'OPSD':>7} {'good':>5} "
          f"{'success 1st/2nd half':>20}")
    for name, r in rows.items():
        rs = r["rollout_success"]
        print(f"{name:<40} {r['outcome_steps']:>7.2f} "
              f"{r['grad_norm_outcome'] or 0:>8.4f} {r['grad_norm_silent'] or 0:>10.4f} {r['opsd_loss'] or 0:>7.4f} "
              f"{r['good_steps'] or 0:>5.2f} {rs['first_half']:>9.3f} / {rs['last_half']:.3f}")
    mix = [analyzer_mix(m, t, args.episodes) for m in args.analyzer_mix for t in args.temperatures]
    for m in mix:
        print(f"{m['model']} at T={m['temperature']}: {m['steps']} live steps; consistent {m['consistent']:.2f}, "
              f"effective {m['effective']:.2f}, both {m['good']:.2f}, neither {m['neither']:.2f}; "
              f"episode success {m['success']:.2f}")
    if args.results:
        from base_agent import commit

        out = {"command": " ".join(["python", "benchmarks/computersd_signal.py", *sys.argv[1:]]), "commit": commit(),
               "runs": rows, **({"analyzer_mix": mix} if mix else {})}
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

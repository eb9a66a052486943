"""ComputerSD's pipeline speed: synchronous vs asynchronous ComputerSD vs asynchronous outcome-only GRPO.

    python benchmarks/computersd_async.py                 # 12 optimiser steps per run, the tiny recipe
    python benchmarks/computersd_async.py --steps 20 --out runs/bench-computersd
    python benchmarks/computersd_async.py --hint-only      # how much the starting policy follows analyzer guidance

Each run is ``guirl train computersd --config recipes/computersd_tiny.yaml`` with the same policy, tasks,
seeds and environments, one after the other on this machine. Per run it prints trajectories per hour
(trajectories trained on / trainer-loop seconds, the first step left out as warm-up), and the mean
seconds per batch of every stage: rollout (environment + generation), analysis, privileged rescoring,
update (reference scoring + forward/backward). The **pipeline bound** is the throughput if the slowest
stage of the synchronous run were the only cost; the asynchronous run is reported as a share of it.

``--hint-only`` greedy-decodes held-out recorded steps of the built-in world with and without the
analyzer's privileged block (``Guide: <description>. Reference action: <action>`` for the last valid
action, so following it means reading it) and prints how often the output is that action.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = {
    "sync ComputerSD": ["mode=sync"],
    "async ComputerSD": ["mode=async"],
    "async GRPO (outcome only)": ["mode=async", "opsd_coef=0"],
}


def run(name: str, overrides: list[str], out: Path, steps: int) -> list[dict]:
    run_dir = out / name.split(" (")[0].replace(" ", "_")
    metrics = run_dir / "metrics.jsonl"
    if not metrics.exists() or len(metrics.read_text().splitlines()) < steps:
        cmd = [sys.executable, "-m", "guirl", "train", "computersd", "--config", str(ROOT / "recipes/computersd_tiny.yaml"),
               f"output_dir={run_dir}", f"max_steps={steps}", "save_every=0", "log_every=1", "eval_episodes=0",
               "report_to=[]", "resume=false", *overrides]
        if run_dir.exists():
            import shutil

            shutil.rmtree(run_dir)
        print("$", " ".join(cmd[1:]), flush=True)
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return [json.loads(line) for line in metrics.read_text().splitlines()]


def summarise(rows: list[dict]) -> dict[str, float]:
    steady = rows[1:] or rows
    loop_s = sum(r.get("time/wait_for_batch_s", 0) + r.get("time/reference_s", 0) + r.get("time/update_s", 0)
                 for r in steady)
    trajs = sum(r["rollout/trajectories"] for r in steady)

    def mean(key):
        return sum(r.get(key, 0.0) for r in steady) / len(steady)

    return {"traj_per_hour": 3600 * trajs / max(loop_s, 1e-9), "trajectories": trajs,
            "rollout_s": mean("time/rollout_s"), "analysis_s": mean("time/analysis_s"),
            "rescore_s": mean("time/rescore_s"),
            "update_s": mean("time/update_s") + mean("time/reference_s"), "wait_s": mean("time/wait_for_batch_s"),
            "staleness_mean": mean("async/staleness_mean"), "dropped": steady[-1].get("async/dropped_total", 0.0),
            "per_batch": trajs / len(steady)}


def hint_following(samples: int) -> None:
    import random

    from guirl.eval.steps import evaluate_steps
    from guirl.judges.analyzer import analyzer_guidance
    from guirl.models.guidance import references
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.rl_common import load_states

    data = ROOT / "runs/rl-data/seed3/trajectories/test_seed.jsonl"
    if not data.exists():
        subprocess.run([sys.executable, "-m", "guirl", "gen-data", "--out", str(data.parents[1]), "--seed", "3"],
                       check=True, cwd=ROOT)
    steps = [(s.episode, s.step, s.root) for s in load_states([str(data)], labels=["correct"]) if s.step.valid_actions]
    steps = random.Random(0).sample(steps, min(samples, len(steps)))
    print(f"analyzer guidance following on {len(steps)} held-out steps (reference: the last valid action)")
    for label in ("base-agent-tiny", "litegui-teacher-tiny", "computersd-start-tiny"):
        if not (ROOT / "checkpoints" / label).is_dir():
            print(f"  {label}: missing (guirl train sft --config recipes/computersd_start_tiny.yaml)")
            continue
        policy = load_policy(ROOT / "checkpoints" / label)
        engine = HFEngine.from_policy(policy)
        refs = [references(st.valid_actions, policy.prompt.fmt)[-1:] for _, st, _ in steps]
        plain = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=80,
                               guidance=[None] * len(steps))
        # the same references without a block: how often the output is the reference anyway
        base = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=80,
                              guidance=refs, block=lambda r, fmt, frame: "")
        guided = evaluate_steps(engine, policy.prompt, policy.frame_for, steps, max_new_tokens=80, guidance=refs,
                                block=analyzer_guidance)
        print(f"  {label:22s} step success {plain['eval/step_success']:.3f} | writes the reference: "
              f"without block {base['eval/followed']:.3f}, with the analyzer block {guided['eval/followed']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=12, help="optimiser steps per run")
    parser.add_argument("--out", default="runs/bench-computersd", help="run directories (finished runs are reused)")
    parser.add_argument("--hint-only", action="store_true", help="only measure guidance following")
    parser.add_argument("--hint-samples", type=int, default=120, help="held-out steps for --hint-only")
    args = parser.parse_args()
    if args.hint_only:
        hint_following(args.hint_samples)
        return
    out = ROOT / args.out
    results = {name: summarise(run(name, overrides, out, args.steps)) for name, overrides in RUNS.items()}
    sync = results["sync ComputerSD"]
    slowest = max(sync["rollout_s"], sync["analysis_s"], sync["rescore_s"], sync["update_s"])
    bound = 3600 * sync["per_batch"] / max(slowest, 1e-9)
    print(f"\n{args.steps} optimiser steps per run (first left out), {sync['per_batch']:.0f} trajectories per batch")
    print(f"{'run':28s} {'traj/h':>8s} {'rollout':>8s} {'analysis':>9s} {'rescore':>8s} {'update':>7s} "
          f"{'wait':>6s} {'stale':>6s} {'dropped':>7s}")
    for name, r in results.items():
        print(f"{name:28s} {r['traj_per_hour']:8.0f} {r['rollout_s']:8.2f} {r['analysis_s']:9.3f} {r['rescore_s']:8.2f} "
              f"{r['update_s']:7.2f} {r['wait_s']:6.2f} {r['staleness_mean']:6.2f} {r['dropped']:7.0f}")
    asy = results["async ComputerSD"]["traj_per_hour"]
    print(f"\npipeline bound (slowest synchronous stage alone): {bound:.0f} trajectories/h")
    print(f"async / sync ComputerSD: {asy / max(sync['traj_per_hour'], 1e-9):.2f}x; "
          f"async reaches {asy / max(bound, 1e-9):.0%} of the bound")
    (out / "summary.json").write_text(json.dumps({"results": results, "bound": bound}, indent=1))


if __name__ == "__main__":
    main()

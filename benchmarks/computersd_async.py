"""ComputerSD's pipeline speed: synchronous vs asynchronous ComputerSD vs asynchronous outcome-only GRPO.

    python benchmarks/computersd_async.py                 # 12 optimiser steps per run, the tiny recipe
    python benchmarks/computersd_async.py --steps 20 --out runs/bench-computersd
    python benchmarks/computersd_async.py --hint-only      # how much the starting policy follows analyzer guidance

Each run is ``guirl train computersd --config recipes/computersd_tiny.yaml`` with the same policy, tasks,
seeds and environments, one after the other on this machine. Per run it prints trajectories per hour
(trajectories trained on / trainer-loop seconds, the first ``--warmup`` steps left out, default 1), and the mean
seconds per batch of every stage: rollout (environment + generation), analysis, privileged rescoring,
update (reference scoring + forward/backward). The **pipeline bound** is the throughput if the slowest
stage of the synchronous run were the only cost; the asynchronous run is reported as a share of it.

``--pinned`` measures on two separated cores A and B (``--cpus A B``; default: the first two this process
may use, on distinct physical cores where the topology says so), each run a fresh process:

- **sync, one core (stages alone)**: ``mode=sync trainer_cpus=[A]``: one core, one torch thread, the stages
  one after the other, so each runs alone; per batch the rollout side (rollout + analysis + rescoring: the
  trainer's wait for its batch) and the trainer (reference scoring + forward/backward + optimiser step) are
  timed. Their throughputs, ``3600 x trajectories per batch / seconds per batch``, give the **pipeline
  bound**: the smaller of the two (what async could reach if overlapping them cost nothing);
- **sync, two cores**: ``mode=sync trainer_cpus=[A,B]``: the same two cores async gets, two torch threads,
  every stage in turn using both. The **sync baseline** is the faster of the two sync runs: synchronous
  ComputerSD's best use of the same hardware, without overlap (a tiny model often runs slower on two
  threads than on one, and async should not be credited with that);
- **async pinned**: ``mode=async rollout_cpus=[A] trainer_cpus=[B]``: the rollout side in a process of
  its own on A, the trainer on B, one torch thread each (guirl.trainers.async_process.ProcessPipeline);
- **async threads**: ``mode=async trainer_cpus=[A,B]``: the rollout side as threads of the trainer's
  process on both cores, two torch threads (the unseparated pipeline, for comparison).

Throughput of a run: trajectories trained on / trainer-loop seconds (wait for the batch + reference + update)
over the steps after ``--warmup`` (the first ones hold the process start-up and the pipeline's fill). It
prints sync and async trajectories/hour, async / sync and async as a share of the bound, and writes
``--result`` (default results/computersd_async.json, rendered by scripts/render_results.py). Run it on idle
cores: anything else on A or B is counted against the run on it.

    python benchmarks/computersd_async.py --pinned              # 15 steps per run, the first 3 left out
    python benchmarks/computersd_async.py --pinned --cpus 2 3 --steps 20

``--hint-only`` greedy-decodes held-out recorded steps of the built-in world with and without the
analyzer's privileged block (``Guide: <description>. Reference action: <action>`` for the last valid
action, so following it means reading it) and prints how often the output is that action.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from base_agent import commit, write_result  # noqa: E402

TARGET_SHARE = 0.80  # of the pipeline bound, on separated cores (the bar)
SYNC_DEFINITION = ("the sync baseline is the faster of sync on one core (one torch thread) and sync on the same two "
                   "cores as async (two torch threads), the stages in turn; the bound is the slower of the rollout "
                   "side and the trainer, each timed alone on one core with one thread")
RUNS = {
    "sync ComputerSD": ["mode=sync"],
    "async ComputerSD": ["mode=async"],
    "async GRPO (outcome only)": ["mode=async", "opsd_coef=0"],
}


def run(name: str, overrides: list[str], out: Path, steps: int) -> list[dict]:
    run_dir = out / name.split(" (")[0].replace(", ", "_").replace(" ", "_")
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


def pinned_runs(a: int, b: int) -> dict[str, list[str]]:
    return {"sync, one core (stages alone)": ["mode=sync", f"trainer_cpus=[{a}]"],
            "sync, two cores": ["mode=sync", f"trainer_cpus=[{a},{b}]"],
            "async pinned (separated cores)": ["mode=async", f"rollout_cpus=[{a}]", f"trainer_cpus=[{b}]"],
            "async threads (two cores)": ["mode=async", f"trainer_cpus=[{a},{b}]"]}


def physical_core(cpu: int) -> str:
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
    try:
        return (base / "physical_package_id").read_text().strip() + ":" + (base / "core_id").read_text().strip()
    except OSError:
        return str(cpu)


def pick_cpus() -> tuple[int, int]:
    """Two CPUs this process may use, on distinct physical cores where the topology tells."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print(f"computersd_async: error: --pinned needs two CPU cores; this process may use {cpus}", file=sys.stderr)
        raise SystemExit(2)
    first = cpus[0]
    other = next((c for c in cpus[1:] if physical_core(c) != physical_core(first)), cpus[1])
    return first, other


def summarise(rows: list[dict], warmup: int = 1) -> dict[str, float]:
    steady = rows[warmup:] or rows
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
            "per_batch": trajs / len(steady), "steps": len(steady),
            # per batch: the rollout side (what the trainer waits for in sync) and the trainer's own work
            "rollout_side_s": mean("time/wait_for_batch_s"),
            "trainer_s": mean("time/reference_s") + mean("time/update_s")}


def pinned(args) -> None:
    a, b = args.cpus or pick_cpus()
    if a == b:
        raise SystemExit("--cpus: two different cores")
    siblings = physical_core(a) == physical_core(b)
    if siblings:
        print(f"warning: CPUs {a} and {b} are threads of one physical core: the sides are not separated", flush=True)
    out = ROOT / args.out / f"pinned-{a}-{b}"
    results = {name: summarise(run(name, overrides, out, args.steps), args.warmup)
               for name, overrides in pinned_runs(a, b).items()}
    alone, two = results["sync, one core (stages alone)"], results["sync, two cores"]
    sync_name, sync = max(((name, results[name]) for name in ("sync, one core (stages alone)", "sync, two cores")),
                          key=lambda kv: kv[1]["traj_per_hour"])
    asy, threads = results["async pinned (separated cores)"], results["async threads (two cores)"]
    per_batch = alone["per_batch"]
    rollout_side = 3600 * per_batch / max(alone["rollout_side_s"], 1e-9)
    trainer = 3600 * per_batch / max(alone["trainer_s"], 1e-9)
    bound = min(rollout_side, trainer)
    ratio = asy["traj_per_hour"] / max(sync["traj_per_hour"], 1e-9)
    share = asy["traj_per_hour"] / max(bound, 1e-9)
    print(f"\n{args.steps} optimiser steps per run ({args.warmup} left out), {per_batch:.0f} trajectories per batch, "
          f"CPUs {a} and {b}")
    print(f"{'run':32s} {'traj/h':>8s} {'rollout':>8s} {'analysis':>9s} {'rescore':>8s} {'update':>7s} "
          f"{'wait':>6s} {'stale':>6s} {'dropped':>7s}")
    for name, r in results.items():
        print(f"{name:32s} {r['traj_per_hour']:8.0f} {r['rollout_s']:8.2f} {r['analysis_s']:9.3f} {r['rescore_s']:8.2f} "
              f"{r['update_s']:7.2f} {r['wait_s']:6.2f} {r['staleness_mean']:6.2f} {r['dropped']:7.0f}")
    print(f"\nalone on one core, one thread: rollout side {alone['rollout_side_s']:.2f} s/batch = {rollout_side:.0f} "
          f"traj/h, trainer {alone['trainer_s']:.2f} s/batch = {trainer:.0f} traj/h")
    print(f"pipeline bound (the slower side alone): {bound:.0f} trajectories/h")
    print(f"sync: {alone['traj_per_hour']:.0f} traj/h on one core, {two['traj_per_hour']:.0f} on two (baseline: "
          f"{sync_name}); async pinned: {asy['traj_per_hour']:.0f} traj/h; async / sync = {ratio:.2f}x")
    print(f"async pinned reaches {share:.0%} of the bound (target >= {TARGET_SHARE:.0%}: "
          f"{'met' if share >= TARGET_SHARE else 'NOT met'}); async threads (two cores, not separated): "
          f"{threads['traj_per_hour'] / max(bound, 1e-9):.0%}")
    result = {"command": " ".join(["python", "benchmarks/computersd_async.py", *sys.argv[1:]]), "commit": commit(),
              "recipe": "recipes/computersd_tiny.yaml", "steps": args.steps, "warmup": args.warmup, "cpus": [a, b],
              "smt_siblings": siblings, "trajectories_per_batch": per_batch, "definition": SYNC_DEFINITION,
              "alone": {"rollout_side_s": alone["rollout_side_s"], "trainer_s": alone["trainer_s"],
                        "rollout_side_traj_per_hour": rollout_side, "trainer_traj_per_hour": trainer},
              "bound_traj_per_hour": bound, "sync_baseline": sync_name, "sync_traj_per_hour": sync["traj_per_hour"],
              "async_traj_per_hour": asy["traj_per_hour"], "async_over_sync": ratio, "async_share_of_bound": share,
              "threads_share_of_bound": threads["traj_per_hour"] / max(bound, 1e-9), "target_share": TARGET_SHARE,
              "runs": {name: {"overrides": pinned_runs(a, b)[name], **r} for name, r in results.items()}}
    write_result(ROOT / args.result, result)
    print(f"wrote {args.result}")


def hint_model_path(label: str) -> Path:
    """A ``--hint-models`` entry: a name under checkpoints/, or a model directory."""
    return ROOT / "checkpoints" / label if "/" not in label else Path(label)


def hint_following(samples: int, models: list[str] | None = None) -> None:
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
    for label in models or ["base-agent-tiny", "litegui-teacher-tiny", "computersd-start-tiny"]:
        path = hint_model_path(label)
        if not path.is_dir():
            print(f"  {label}: missing (guirl train sft --config recipes/computersd_start_tiny.yaml)")
            continue
        policy = load_policy(path)
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
    parser.add_argument("--steps", type=int, default=None, help="optimiser steps per run (default: 12; 15 with "
                        "--pinned)")
    parser.add_argument("--out", default="runs/bench-computersd", help="run directories (finished runs are reused)")
    parser.add_argument("--hint-only", action="store_true", help="only measure guidance following")
    parser.add_argument("--hint-samples", type=int, default=120, help="held-out steps for --hint-only")
    parser.add_argument("--hint-models", nargs="+", default=None,
                        help="with --hint-only: checkpoint names under checkpoints/ or model directories "
                             "(default: the first agent, its LiteGUI teacher and ComputerSD's start)")
    parser.add_argument("--pinned", action="store_true", help="separated cores: stages alone, sync, async pinned")
    parser.add_argument("--cpus", type=int, nargs=2, metavar=("A", "B"), help="--pinned: the two cores")
    parser.add_argument("--warmup", type=int, default=None, help="first steps left out (default: 3 with --pinned, "
                        "else 1)")
    parser.add_argument("--result", default="results/computersd_async.json", help="--pinned: the JSON table")
    args = parser.parse_args()
    if args.hint_only:
        for label in args.hint_models or []:  # a given model that cannot load: said before anything runs
            if not (hint_model_path(label) / "config.json").is_file():
                print(f"computersd_async: error: --hint-models {label}: not a model directory (no config.json); give "
                      "a name under checkpoints/ or a trained run's final/ directory", file=sys.stderr)
                raise SystemExit(2)
        hint_following(args.hint_samples, args.hint_models)
        return
    if args.pinned:
        args.steps = args.steps or 15
        args.warmup = 3 if args.warmup is None else args.warmup
        if args.steps <= args.warmup:
            parser.error(f"--steps {args.steps} must exceed --warmup {args.warmup}")
        pinned(args)
        return
    args.warmup = 1 if args.warmup is None else args.warmup
    args.steps = args.steps or 12
    out = ROOT / args.out
    results = {name: summarise(run(name, overrides, out, args.steps), args.warmup) for name, overrides in RUNS.items()}
    sync = results["sync ComputerSD"]
    slowest = max(sync["rollout_s"], sync["analysis_s"], sync["rescore_s"], sync["update_s"])
    bound = 3600 * sync["per_batch"] / max(slowest, 1e-9)
    print(f"\n{args.steps} optimiser steps per run ({args.warmup} left out), {sync['per_batch']:.0f} trajectories "
          "per batch")
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

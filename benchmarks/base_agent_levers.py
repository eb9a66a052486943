"""What each lever of the base agent's multi-step stage buys, on validation data (seeds 5 and 6, never 7).

    python benchmarks/base_agent_levers.py --start runs/base-agent-history/stage2_grounding/final
                                           [--data runs/base-agent-history/data/sim] [--steps 200]
                                           [--levers k3_thought k0_thought k3_direct k1_thought]
                                           [--parallel 2] [--out results/base_agent_levers.json]

Each lever setting is a short SFT run (``guirl train sft``, the multi-step stage of
``recipes/base_agent_history_tiny.yaml`` cut to ``--steps`` optimiser steps, the same data: expert steps,
error-recovery steps and grounding screens of the curriculum's data seed) from the same start (the
curriculum's grounding stage), then the greedy evaluation of ``benchmarks/base_agent.py`` on validation
seeds (multi-step steps of trained and unseen families, TYPE steps, unchanged outputs; no live episodes).
``--parallel N`` trains N settings at once, one thread each (tiny models use two threads poorly).
``k3_thought_data3x`` is the data-volume lever: the same run on three times the expert trajectories per
family (the same seed's episodes extended); ``k3_thought_noaux`` the auxiliary-task lever: expert steps only,
without the error-recovery steps and grounding screens. From the shipped agent (``--start checkpoints/base-agent-history-tiny``)
the levers measure what more steps buy on the same data, on more data, or without the auxiliary steps
(``--with-start`` adds the start's own row). ``--recovery N`` also scores the error-recovery steps (error-escape
and back-on-track steps, InfiGUI-R1's scenarios, built from N training-split episodes per family of each
validation seed: what the auxiliary mix trains) with the start's paired difference on them.
Resumable: a setting whose run has a final model is only evaluated; finished evaluations are read back.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from base_agent import commit, evaluate, heldout_data, write_result  # noqa: E402

#: setting -> SFT overrides (history window, how a past step reads, the sub-goal thought)
LEVERS = {
    "k3_thought": {"history_window": 3, "thought": "sub_goal"},
    "k1_thought": {"history_window": 1, "thought": "sub_goal"},
    "k5_thought": {"history_window": 5, "thought": "sub_goal"},
    "k0_thought": {"history_window": 0, "thought": "sub_goal"},
    "k3_direct": {"history_window": 3, "thought": "none"},
    "k0_direct": {"history_window": 0, "thought": "none"},
    # data volume: three times the recipe's expert trajectories per family (900, a superset of its 300)
    "k3_thought_data3x": {"history_window": 3, "thought": "sub_goal", "train_per_task": 900},
    # auxiliary tasks: without the error-recovery steps and grounding screens mixed into the multi-step stage
    "k3_thought_noaux": {"history_window": 3, "thought": "sub_goal", "auxiliary": False},
}


def sft_command(start: str, data: Path, run: Path, lever: dict, steps: int, threads: int, seed: int) -> list[str]:
    thinks = lever["thought"] != "none"
    train = [data / "trajectories" / "train.jsonl"] + ([data / "trajectories" / "recovery.jsonl",
                                                        data / "grounding" / "train.jsonl"]
                                                       if lever.get("auxiliary", True) else [])
    return [sys.executable, "-m", "guirl", "train", "sft", f"model={start}", f"train_data=[{','.join(map(str, train))}]",
            f"output_dir={run}", f"seed={seed}", f"max_steps={steps}", "batch_size=16", f"num_threads={threads}",
            "format=qwen_computer_use", "prompt_style=compact", f"history_window={lever['history_window']}",
            "history_text=action", f"with_reasoning={str(thinks).lower()}",
            f"thought={'sub_goal' if thinks else 'recorded'}", f"reasoning_switch={str(thinks).lower()}",
            "direct_fraction=0.0", "save_every=50", "log_every=10", "report_to=[]", "optim.lr=5e-4",
            "optim.warmup_ratio=0.05", "optim.schedule=cosine"]


def train_side_by_side(commands: dict[str, list[str]], runs: Path, parallel: int, cwd: Path | None = None) -> None:
    """Run every setting's training command, ``parallel`` at a time, each from a small launcher that writes its
    wall time and peak RSS to ``<runs>/<setting>.cost.json`` (``rl_recipes.run_measured``)."""
    names = list(commands)
    for i in range(0, len(names), parallel):
        launch = [subprocess.Popen([sys.executable, "-c", "import sys, json; sys.path.insert(0, sys.argv[1]); "
                                    "from rl_recipes import run_measured; w, p, _ = run_measured(sys.argv[3:]); "
                                    "open(sys.argv[2], 'w').write(json.dumps({'wall_s': w, 'peak_rss_mb': p}))",
                                    str(Path(__file__).resolve().parent), str(runs / f"{name}.cost.json"),
                                    *commands[name]], cwd=cwd)
                  for name in names[i:i + parallel]]
        for proc in launch:
            if proc.wait():
                raise SystemExit(f"{Path(sys.argv[0]).stem}: a training run failed (exit {proc.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", required=True, help="model every setting starts from (the grounding stage's)")
    parser.add_argument("--data", default=None,
                        help="the curriculum's sim data directory (default: generated under --runs, seed 0)")
    parser.add_argument("--levers", nargs="+", default=["k3_thought", "k0_thought", "k3_direct", "k1_thought"],
                        choices=sorted(LEVERS))
    parser.add_argument("--steps", type=int, default=200, help="optimiser steps per setting")
    parser.add_argument("--seeds", type=int, nargs="+", default=[5, 6], help="validation data seeds")
    parser.add_argument("--per-task", type=int, default=6, help="validation episodes per family and split")
    parser.add_argument("--with-start", action="store_true",
                        help="also evaluate the start itself (the row 'start', 0 steps): what the settings add to it")
    parser.add_argument("--recovery", type=int, default=0, metavar="N",
                        help="also score error-recovery steps built from N episodes per family of each validation seed")
    parser.add_argument("--note", default=None, help="how the runs were made (machine load, start), shown with the table")
    parser.add_argument("--parallel", type=int, default=2, help="settings trained at once (one thread each)")
    parser.add_argument("--runs", default="runs/base-agent-levers", help="where the runs go")
    parser.add_argument("--out", default="results/base_agent_levers.json")
    args = parser.parse_args()
    runs, out = Path(args.runs), Path(args.out)
    result = json.loads(out.read_text()) if out.is_file() else {}
    result.update({"command": " ".join(["python", "benchmarks/base_agent_levers.py", *sys.argv[1:]]),
                   "commit": commit(), "start": args.start, "steps": args.steps, "seeds": args.seeds,
                   "settings": result.get("settings", {})} | ({"note": args.note} if args.note else {}))

    def data_of(lever: dict) -> Path:  # the recipe's data (seed 0, 3,000 samples), or more of the same episodes
        from guirl.trainers.curriculum import sim_sets

        if "train_per_task" in lever:
            return sim_sets(runs / f"data-train{lever['train_per_task']}", 0, 3000, train_per_task=lever["train_per_task"])
        return Path(args.data) if args.data else sim_sets(runs / "data-sim", 0, 3000)

    todo = [name for name in args.levers if not (runs / name / "final" / "guirl_prompt.json").is_file()]
    threads = 1 if args.parallel > 1 else 2
    train_side_by_side({name: sft_command(args.start, data_of(LEVERS[name]), runs / name, LEVERS[name], args.steps,
                                          threads, 0) for name in todo}, runs, args.parallel)
    if args.with_start:
        spec = json.loads((Path(args.start) / "guirl_prompt.json").read_text())
        result["settings"].setdefault("start", {"lever": {"history_window": spec.get("history_window", 0),
                                                          "thought": "sub_goal" if spec.get("reasoning") else "none",
                                                          "steps": 0}})
    for name in (["start"] if args.with_start else []) + args.levers:
        entry = result["settings"].setdefault(name, {"lever": LEVERS.get(name)})
        model = args.start if name == "start" else str(runs / name / "final")
        cost = runs / f"{name}.cost.json"
        if cost.is_file():
            entry["training"] = json.loads(cost.read_text())
        for seed in args.seeds:
            if str(seed) in entry.get("validation", {}):
                continue
            data = heldout_data(runs / "data", seed, args.per_task, 20)
            scores = evaluate(model, data, None, episodes=0, pass_at=0)
            scores.pop("per_step")
            entry.setdefault("validation", {})[str(seed)] = scores
            write_result(out, result)
    if args.recovery:  # error-recovery steps, paired against the start when its row is there
        from rl_recipes import ensure_data, evaluate_model

        from guirl.eval.stats import paired_difference

        names = (["start"] if args.with_start else []) + args.levers
        for seed in args.seeds:
            data = ensure_data(runs / "data-recovery", seed, args.recovery)
            for name in names:
                scores = result["settings"][name]["validation"][str(seed)]
                if "recovery" not in scores:
                    model = Path(args.start if name == "start" else runs / name / "final")
                    got = evaluate_model(model, data, 0, 0, splits=["recovery"])
                    scores["recovery"] = {"step_success": round(got["recovery"], 4), "n": len(got["per_step"]["recovery"]),
                                          "per_step": got["per_step"]["recovery"]}
                    write_result(out, result)
            start = result["settings"].get("start", {}).get("validation", {}).get(str(seed), {}).get("recovery")
            for name in names:
                own = result["settings"][name]["validation"][str(seed)]["recovery"]
                if start and name != "start" and "paired_vs_start" not in own:
                    own["paired_vs_start"] = {k: round(v, 4) if isinstance(v, float) else v
                                              for k, v in paired_difference(start["per_step"], own["per_step"]).items()}
        write_result(out, result)  # the per-step vectors stay: a setting added later pairs against the start's
    print(f"{'setting':12s} {'seed':>4s} {'trained fam.':>12s} {'unseen fam.':>11s} {'grounding':>9s} {'TYPE':>6s} "
          f"{'same out':>8s} {'recovery':>8s}")
    for name in (["start"] if args.with_start else []) + args.levers:
        for seed, s in sorted(result["settings"][name].get("validation", {}).items()):
            print(f"{name:12s} {seed:>4s} {s['trained_families']['step_success']:12.3f} "
                  f"{s['unseen_families']['step_success']:11.3f} {s['grounding']['step_success']:9.3f} "
                  f"{s['type_steps']['step_success']:6.3f} {s['unchanged_output']['same_output']:8.3f} "
                  f"{s['recovery']['step_success'] if 'recovery' in s else float('nan'):8.3f}")
    write_result(out, result)


if __name__ == "__main__":
    main()

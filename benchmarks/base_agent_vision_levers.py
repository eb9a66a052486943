"""What the vision side of the base agent buys: the vision tower's shape, the input resolution, the size preset.

    python benchmarks/base_agent_vision_levers.py [--levers tiny vision_wide_deep] [--locate-steps 800]
                                                  [--grounding-steps 500] [--parallel 2]
                                                  [--data runs/base-agent-history/data/sim]
                                                  [--out results/base_agent_vision_levers.json]

These levers change the model from its first step, so each setting is the grounding half of
``recipes/base_agent_history_tiny.yaml`` from scratch (``guirl train curriculum``: stage 1, one labelled button;
stage 2, sim grounding screens), cut to ``--locate-steps`` and ``--grounding-steps`` optimiser steps, on the
recipe's data (seed 0). Each final model is scored greedily on the grounding screens of validation seeds 5 and 6
(never 7): finding the element a task names is what the vision side is for. The multi-step stage is left out: the
levers of that stage are measured from one grounding model (``benchmarks/base_agent_levers.py``).

``--parallel N`` trains N settings at once, one thread each. Resumable: a setting whose run has a final model
is only evaluated; an interrupted run resumes from its last checkpoint (the curriculum's own resume).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from base_agent import commit, heldout_data, write_result  # noqa: E402
from base_agent_levers import train_side_by_side  # noqa: E402

#: setting -> curriculum fields changed from the recipe (guirl.trainers.curriculum.CurriculumConfig)
LEVERS = {
    "tiny": {},  # the recipe: vision tower 3 blocks x 128, 64 visual tokens per screen
    "vision_wide_deep": {"size_overrides": {"vision_depth": 5, "vision_hidden": 192, "vision_intermediate": 384}},
    "res144": {"max_visual_tokens": 144},  # 1.5x the input side (144 visual tokens for a square screen)
    "small": {"size": "small"},  # text 256 x 6 layers, vision 192 x 4 blocks
}


def config_of(name: str, lever: dict, runs: Path, locate_steps: int, grounding_steps: int, threads: int) -> Path:
    """The recipe's grounding stages with the lever's fields, as a config file under ``runs``."""
    cfg = yaml.safe_load((ROOT / "recipes" / "base_agent_history_tiny.yaml").read_text())
    stages = [s for s in cfg["stages"] if s["data"] in ("locate", "grounding")]
    for stage in stages:
        stage["max_steps"] = locate_steps if stage["data"] == "locate" else grounding_steps
    cfg |= {"output_dir": str(runs / name), "num_threads": threads, "eval_every": 0, "stages": stages} | lever
    path = runs / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levers", nargs="+", default=["tiny", "vision_wide_deep"], choices=sorted(LEVERS))
    parser.add_argument("--locate-steps", type=int, default=800, help="optimiser steps of stage 1 (the recipe: 1600)")
    parser.add_argument("--grounding-steps", type=int, default=500, help="optimiser steps of stage 2 (the recipe: 1000)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[5, 6], help="validation data seeds")
    parser.add_argument("--screens", type=int, default=60, help="validation grounding screens per domain and seed")
    parser.add_argument("--data", default=None, help="the recipe's sim data directory, reused (default: generated)")
    parser.add_argument("--parallel", type=int, default=2, help="settings trained at once (one thread each)")
    parser.add_argument("--runs", default="runs/base-agent-vision-levers", help="where the runs go")
    parser.add_argument("--out", default="results/base_agent_vision_levers.json")
    args = parser.parse_args()
    runs, out = Path(args.runs).resolve(), Path(args.out)
    result = json.loads(out.read_text()) if out.is_file() else {}
    result.update({"command": " ".join(["python", "benchmarks/base_agent_vision_levers.py", *sys.argv[1:]]),
                   "commit": commit(), "locate_steps": args.locate_steps, "grounding_steps": args.grounding_steps,
                   "seeds": args.seeds, "settings": result.get("settings", {})})
    if args.data:  # every setting reads the same generated data (the curriculum generates it under <run>/data)
        for name in args.levers:
            link = runs / name / "data" / "sim"
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(Path(args.data).resolve())
    from rl_recipes import evaluate_model

    from guirl.models.build import size_preset

    todo = [name for name in args.levers if not (runs / name / "final" / "guirl_prompt.json").is_file()]
    threads = 1 if args.parallel > 1 else 2
    train_side_by_side({name: [sys.executable, "-m", "guirl", "train", "curriculum", "--config",
                               str(config_of(name, LEVERS[name], runs, args.locate_steps, args.grounding_steps, threads))]
                        for name in todo}, runs, args.parallel, cwd=ROOT)
    for name in args.levers:
        lever = LEVERS[name]
        shape = size_preset(lever.get("size", "tiny"), lever.get("size_overrides"))
        entry = result["settings"].setdefault(name, {})
        entry["lever"] = lever | {"vision": f"{shape.vision_depth} x {shape.vision_hidden}",
                                  "text": f"{shape.text_layers} x {shape.text_hidden}",
                                  "max_visual_tokens": lever.get("max_visual_tokens", 64)}
        cost = runs / f"{name}.cost.json"
        if cost.is_file():
            entry["training"] = json.loads(cost.read_text())
        for seed in args.seeds:
            if str(seed) in entry.get("validation", {}):
                continue
            entry["command"], entry["commit"] = result["command"], result["commit"]  # this setting's own
            data = heldout_data(runs / "data-val", seed, 1, args.screens)
            scores = evaluate_model(runs / name / "final", data, 0, 0, splits=["grounding"])
            entry.setdefault("validation", {})[str(seed)] = {"grounding": {
                "step_success": round(scores["grounding"], 4), "n": len(scores["per_step"]["grounding"])}}
            write_result(out, result)
    print(f"{'setting':18s} {'vision':>8s} {'tokens':>6s} {'seed':>4s} {'grounding':>9s} {'train min':>9s}")
    for name in args.levers:
        entry = result["settings"][name]
        wall = entry.get("training", {}).get("wall_s")
        for seed, s in sorted(entry["validation"].items()):
            print(f"{name:18s} {entry['lever']['vision']:>8s} {entry['lever']['max_visual_tokens']:6d} {seed:>4s} "
                  f"{s['grounding']['step_success']:9.3f} {wall / 60 if wall else float('nan'):9.1f}")
    write_result(out, result)


if __name__ == "__main__":
    main()

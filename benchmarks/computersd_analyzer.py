"""ComputerSD's GUI analyzer, the paper's pipeline: collect expert-annotated steps, SFT a judge, measure agreement.

    python benchmarks/computersd_analyzer.py                        # K=8 per task, 300 SFT steps, 64 held-out steps
    python benchmarks/computersd_analyzer.py --steps 500 --out runs/bench-analyzer
    python benchmarks/computersd_analyzer.py --tasks desktop.open_file --k 2 --steps 3 --heldout-steps 4   # smoke

1. **data**: ``K`` episodes per task of ``recipes/computersd_tiny.yaml`` played at temperature 1.0 by the
   starting policy (``checkpoints/computersd-start-tiny``), every executed step annotated by the ground-truth
   analyzer (:mod:`guirl.datagen.analyzer_data`); the held-out split (``--heldout-k`` episodes per task on
   seeds 100000+, never a training seed) is cut to a seeded sample of ``--heldout-steps`` steps;
2. **SFT**: ``guirl train judge_sft`` with ``recipes/computersd_analyzer_tiny.yaml`` from
   ``checkpoints/base-agent-tiny`` for ``--steps`` optimiser steps (:mod:`guirl.trainers.judge_sft`);
3. **agreement** on the held-out steps (:mod:`guirl.eval.analyzer_agreement`): valid-output rate and agreement
   with the expert on the step value (vote +1/-1; an invalid answer is a disagreement) and per field, for
   the starting model as an analyzer (before SFT) and the fine-tuned one (after SFT); two reference rows: the
   expert itself (1.0 by construction: checks the records) and a constant judge that always gives the
   training split's most common verdict (what a model that ignores its input can reach).

Resumable: the collected splits (same policy, tasks, K, steps), a finished model (same steps) and each row's
scores are reused (wall times are those of the run that produced them); ``--fresh`` redoes everything.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guirl.datagen.analyzer_data import HELDOUT_SEEDS, TRAIN_SEEDS, collect_analyzer_data, read_records  # noqa: E402
from guirl.eval.analyzer_agreement import analyzer_agreement  # noqa: E402
from guirl.judges.base import JudgeResult  # noqa: E402

RL_RECIPE, SFT_RECIPE = ROOT / "recipes/computersd_tiny.yaml", ROOT / "recipes/computersd_analyzer_tiny.yaml"
COLUMNS = ("valid_rate", "vote_agreement", "vote_balanced", "consistency_agreement", "effectiveness_agreement")


def parse_args(argv=None):
    rl = yaml.safe_load(RL_RECIPE.read_text())
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="runs/computersd-analyzer", help="run directory (data/, sft/, eval/)")
    p.add_argument("--policy", default=rl["model"], help="policy that plays the episodes")
    p.add_argument("--start-model", default="checkpoints/base-agent-tiny", help="model the analyzer is tuned from")
    p.add_argument("--tasks", nargs="+", default=rl["tasks"], help="training tasks (default: the ComputerSD recipe's)")
    p.add_argument("--k", type=int, default=8, help="training episodes per task")
    p.add_argument("--heldout-k", type=int, default=4, help="held-out episodes per task")
    p.add_argument("--heldout-steps", type=int, default=64, help="held-out steps judged (a seeded sample)")
    p.add_argument("--max-episode-steps", type=int, default=rl["max_episode_steps"])
    p.add_argument("--steps", type=int, default=300, help="SFT optimiser steps")
    p.add_argument("--batch-size", type=int, default=None, help="SFT batch (default: the recipe's)")
    p.add_argument("--lr", type=float, default=None, help="SFT learning rate (default: the recipe's)")
    p.add_argument("--max-new-tokens", type=int, default=256, help="answer cap of the model analyzers")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    p.add_argument("--fresh", action="store_true", help="ignore everything already in --out")
    args = p.parse_args(argv)
    args.env_kwargs = rl.get("env_kwargs", {"preset": "coarse"})
    return args


def collect(args, out: Path) -> tuple[dict, bool]:
    """The two splits' meta; True when they were collected now (so an older model is stale)."""
    wanted = {"policy": args.policy, "tasks": args.tasks, "max_episode_steps": args.max_episode_steps,
              "train": args.k, "heldout": args.heldout_k, "heldout_steps": args.heldout_steps}
    data = out / "data"
    stamp = data / "request.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted and all(
            (data / f"{s}.jsonl").is_file() for s in ("train", "heldout")):
        return {s: json.loads((data / f"{s}.meta.json").read_text()) for s in ("train", "heldout")}, False
    stamp.unlink(missing_ok=True)
    common = {"env_kwargs": args.env_kwargs, "max_episode_steps": args.max_episode_steps}
    collect_analyzer_data(args.policy, args.tasks, data, args.k, TRAIN_SEEDS, "train", **common)
    collect_analyzer_data(args.policy, args.tasks, data, args.heldout_k, HELDOUT_SEEDS, "heldout",
                          max_steps=args.heldout_steps, sample_seed=1, **common)
    stamp.write_text(json.dumps(wanted))
    return {s: json.loads((data / f"{s}.meta.json").read_text()) for s in ("train", "heldout")}, True


def sft(args, out: Path, stale: bool) -> tuple[Path, float, bool]:
    from guirl.config import load_config
    from guirl.trainers.judge_sft import JudgeSFTConfig, train_judge_sft

    run = out / "sft"
    final, times = run / "final", run / "bench_time.json"
    if stale and run.exists():
        shutil.rmtree(run)  # checkpoints of a model trained on other data
    if (final / "judge.json").is_file() and json.loads((final / "judge.json").read_text())["steps"] == args.steps \
            and times.is_file():
        return final, json.loads(times.read_text())["wall_s"], True
    overrides = [f"model={args.start_model}", f"train_data=[{out / 'data/train.jsonl'}]", f"output_dir={run}",
                 f"max_steps={args.steps}", "eval_every=0", "report_to=[]", "log_every=1", f"num_threads={args.threads}",
                 f"max_new_tokens={args.max_new_tokens}", f"save_every={max(1, min(100, args.steps))}"]
    overrides += [f"batch_size={args.batch_size}"] if args.batch_size else []
    overrides += [f"optim.lr={args.lr}"] if args.lr else []
    cfg = load_config(JudgeSFTConfig, SFT_RECIPE, overrides)
    t0 = time.perf_counter()
    train_judge_sft(cfg)
    wall = time.perf_counter() - t0
    times.write_text(json.dumps({"wall_s": wall}))
    return final, wall, False


class ConstantJudge:
    """Always the same answer: the training split's most common (consistency, effectiveness) verdict."""

    def __init__(self, train_records):
        (self.c, self.e), _ = Counter((r["verdict"]["consistency"], r["verdict"]["effectiveness"])
                                     for r in train_records).most_common(1)[0]

    def __call__(self, request):
        verdict = {"consistency": self.c, "effectiveness": self.e, "guide": "", "avoid": ""}
        return JudgeResult(verdict, raw=json.dumps(verdict))


def score(name: str, make, held, out: Path, key: dict) -> tuple[dict, bool]:
    path = out / "eval" / f"{name}.json"
    if path.is_file() and (cached := json.loads(path.read_text())).get("key") == key and set(COLUMNS) <= set(cached):
        return cached, True
    judge = make()
    scores = analyzer_agreement(judge, held, keep_answers=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, **scores}, indent=1))
    return scores, False


def main(argv=None) -> int:
    import torch

    from guirl.judges import make_judge

    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    out = ROOT / args.out if not Path(args.out).is_absolute() else Path(args.out)
    if args.fresh and out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    meta, collected = collect(args, out)
    print(f"data ({'collected' if collected else 'reused'}): train {meta['train']['records']} steps from "
          f"{len(args.tasks)} tasks x K={args.k} (+1 votes {meta['train']['positive_votes']}), held-out "
          f"{meta['heldout']['records']} steps; collection {meta['train']['wall_s'] + meta['heldout']['wall_s']:.1f} s"
          + ("" if collected else " (when collected)"), flush=True)
    final, sft_s, reused = sft(args, out, collected)
    print(f"SFT ({'reused' if reused else 'trained'}): {args.steps} steps in {sft_s:.1f} s -> {final}", flush=True)
    train, held = read_records(out / "data/train.jsonl"), read_records(out / "data/heldout.jsonl")
    stamp = json.loads((out / "data/request.json").read_text())
    rows = [
        ("expert (ground_truth_analyzer)", "expert", lambda: make_judge("ground_truth_analyzer"), {}),
        ("constant (train majority)", "constant", lambda: ConstantJudge(train), {}),
        (f"before SFT ({Path(args.start_model).name})", "before",
         lambda: make_judge("checkpoint", model_dir=args.start_model, max_new_tokens=args.max_new_tokens),
         {"model": args.start_model}),
        (f"after SFT ({args.steps} steps)", "after",
         lambda: make_judge("checkpoint", model_dir=final, max_new_tokens=args.max_new_tokens),
         {"model": str(final), "steps": args.steps, "sft_s": sft_s}),
    ]
    table = []
    for label, name, make, extra in rows:
        key = {"data": stamp, "max_new_tokens": args.max_new_tokens, **extra}
        scores, cached = score(name, make, held, out, key)
        table.append((label, scores, cached))
        print(f"  scored {label}: {scores['wall_s']:.1f} s{' (cached)' if cached else ''}", flush=True)
    print(f"\nGUI analyzer on {len(held)} held-out steps (expert +1 share {table[0][1]['expert_positive_rate']:.3f})")
    head = f"| {'analyzer':<34} | valid-output | vote agree | vote balanced | consistency | effectiveness | wall s |"
    print(head + "\n|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    for label, s, _ in table:
        print(f"| {label:<34} | {s['valid_rate']:>12.3f} | {s['vote_agreement']:>10.3f} | {s['vote_balanced']:>13.3f} | "
              f"{s['consistency_agreement']:>11.3f} | {s['effectiveness_agreement']:>13.3f} | {s['wall_s']:>6.1f} |")
    metrics = out / "sft" / "metrics.jsonl"
    if metrics.is_file():
        rows = [json.loads(line) for line in metrics.read_text().splitlines()]
        losses = [r["train/loss"] for r in rows if "train/loss" in r]  # evaluation lines hold eval/* only
        print(f"\nSFT train loss: first logged {losses[0]:.4f}, last {losses[-1]:.4f}")
    print(f"wall: collection {meta['train']['wall_s'] + meta['heldout']['wall_s']:.1f} s, SFT {sft_s:.1f} s, "
          f"this run {time.perf_counter() - t0:.1f} s")
    (out / "table.json").write_text(json.dumps({label: {k: s[k] for k in (*COLUMNS, "wall_s")}
                                                for label, s, _ in table}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

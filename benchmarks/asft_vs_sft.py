"""ASFT vs plain SFT on the same data and budget (GUI-Libra, docs/methods.md section 4).

Both runs start from the same model (default: the shipped tiny base agent),
train on the same sim data with oracle reasoning (reasoning-then-action
samples mixed with direct-action copies, with the prompt's thinking switch)
for the same number of steps, and are evaluated on held-out grounding
screens and held-out multi-step steps, with reasoning on and off.

    python benchmarks/asft_vs_sft.py --model checkpoints/base-agent-tiny --steps 300

Prints one table and writes it to OUT/results.json.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from guirl.data import read_episodes
from guirl.datagen.reasoning import build_reasoning_data
from guirl.datagen.teachers import OracleTeacher
from guirl.envs.sim import generate_dataset
from guirl.models.load import load_policy
from guirl.trainers.core import OptimConfig
from guirl.trainers.sft import SFTConfig, heldout_step_metrics, train_sft


def prepare(out: Path, seed: int, fmt: str) -> list[str]:
    sim = out / "sim"
    if not (sim / "manifest.json").is_file():
        generate_dataset(out_dir=str(sim), seed=seed, grounding_train=300, grounding_test=60, train_per_task=12,
                         test_per_task=4, recovery_prob=0.0)
    paths = []
    for name in ("grounding", "trajectories"):
        target = out / f"reasoning_{name}" / "episodes.jsonl"
        if not target.is_file():
            episodes = read_episodes(sim / name / "train.jsonl")
            build_reasoning_data(episodes, sim / name, target, OracleTeacher(seed=seed, fmt=fmt))
        paths.append(str(target))
    return paths


def evaluate(model_dir: Path, data: Path, samples: int, seed: int) -> dict[str, float]:
    policy = load_policy(model_dir)
    cfg = SFTConfig(model=str(model_dir), format=policy.prompt.fmt, max_new_tokens=160)
    row = {}
    for split, rel in (("grounding", "grounding/test_seed.jsonl"), ("steps", "trajectories/test_seed.jsonl")):
        path = data / rel
        held = [(ep, st, path.parent) for ep in read_episodes(path) for st in ep.steps if st.valid_actions]
        held = random.Random(seed).sample(held, min(samples, len(held)))
        for on in (False, True):
            policy.prompt = type(policy.prompt)(**{**policy.prompt.__dict__, "reasoning": on})
            scores = heldout_step_metrics(policy, held, cfg)
            row[f"{split}/reasoning_{'on' if on else 'off'}/grounding"] = scores["eval/grounding"]
            row[f"{split}/reasoning_{'on' if on else 'off'}/step_success"] = scores["eval/step_success"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="checkpoints/base-agent-tiny", help="starting checkpoint")
    parser.add_argument("--steps", type=int, default=300, help="optimiser steps per run")
    parser.add_argument("--batch-size", type=int, default=16, help="samples per step")
    parser.add_argument("--lr", type=float, default=5e-4, help="peak learning rate")
    parser.add_argument("--samples", type=int, default=60, help="held-out steps per evaluation")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--seed", type=int, default=1, help="data and training seed")
    parser.add_argument("--out", default="runs/asft_vs_sft", help="work directory")
    args = parser.parse_args()
    out = Path(args.out)
    base = load_policy(args.model).prompt
    train_data = prepare(out, args.seed, base.fmt)
    results = {}
    for name, (alpha_a, alpha_g) in {"sft": (1.0, 1.0), "asft": (2.0, 4.0)}.items():
        start = time.perf_counter()
        cfg = SFTConfig(
            model=args.model, train_data=train_data, output_dir=str(out / name), seed=args.seed, max_steps=args.steps,
            batch_size=args.batch_size, format=base.fmt, prompt_style=base.style, reasoning_switch=True,
            direct_fraction=0.5, alpha_action=alpha_a, alpha_grounding=alpha_g, save_every=100, report_to=[],
            num_threads=args.threads, optim=OptimConfig(lr=args.lr, warmup_ratio=0.05, schedule="cosine"),
        )
        final = out / name / "final"
        if not (final / "guirl_prompt.json").is_file():
            train_sft(cfg)
        results[name] = {"train_s": round(time.perf_counter() - start, 1),
                         **evaluate(final, out / "sim", args.samples, args.seed)}
    results["start_model"] = evaluate(Path(args.model), out / "sim", args.samples, args.seed)
    keys = [k for k in results["sft"] if k != "train_s"]
    print(f"{'metric':44s} {'start':>7s} {'SFT':>7s} {'ASFT':>7s}")
    for key in keys:
        print(f"{key:44s} {results['start_model'][key]:7.3f} {results['sft'][key]:7.3f} {results['asft'][key]:7.3f}")
    (out / "results.json").write_text(json.dumps(vars(args) | {"results": results}, indent=1))


if __name__ == "__main__":
    main()

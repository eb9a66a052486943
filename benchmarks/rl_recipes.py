"""Held-out success of the single-step RL recipes against their starting point (the shipped base agent).

    python benchmarks/rl_recipes.py [--recipes litegui_mdgrpo_tiny guilibra_kl_grpo_sngs_tiny infigui_rloo_tiny]
                                    [--seeds 0 1 2] [--out runs/bench-rl] [--samples 120] [key=value ...]

For every recipe and training seed it runs ``guirl train <method> --config recipes/<recipe>.yaml`` (the method
its first line names: ``grpo``, ``semi_online``; as a
subprocess: its wall time and peak RSS are its own) on built-in-world states of data seed 3, then
evaluates the final model greedily (batched engine) on held-out data of seed 7 (the base agent
trained on seed 0): multi-step steps of trained task families (``steps_unseen_seeds``), of unseen
families (``steps_unseen_tasks``), grounding screens, and whole-episode success when the agent plays
sim tasks of the trained families. Prints, per recipe and split, the base agent's score, the mean
and standard deviation over seeds after training, the difference, and the mean wall time.
Resumable: finished (recipe, seed) runs are read back from ``--out/results.json``; an interrupted
training run resumes from its last checkpoint. Extra ``key=value`` arguments override every recipe
(e.g. ``max_steps=100``), for ablations: ``--tag`` names such a variant in the results.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPLITS = {"steps_unseen_seeds": "trajectories/test_seed.jsonl", "steps_unseen_tasks": "trajectories/test_task.jsonl",
          "grounding": "grounding/test_seed.jsonl",
          # error-escape and back-on-track steps built from data seed 7's episodes (InfiGUI-R1's scenarios)
          "recovery": "trajectories/recovery.jsonl"}


def ensure_data(out: Path, seed: int) -> Path:
    from guirl.envs.sim import generate_dataset

    path = out / f"sim-seed{seed}"
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=seed)
    return path


def evaluate_model(model_dir: Path, data: Path, samples: int, episodes: int, seed: int = 0,
                   splits: list[str] | None = None) -> dict[str, float]:
    """Greedy held-out step success per split (batched), and sim episode success (``splits``: only those)."""
    from guirl.eval.online import evaluate_online
    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine
    from guirl.rollout.policy import ModelPolicy
    from guirl.trainers.rl_common import load_states

    policy = load_policy(model_dir)
    engine = HFEngine.from_policy(policy)
    scores = {}
    for name, rel in SPLITS.items():
        if splits is not None and name not in splits:
            continue
        held = [(s.episode, s.step, s.root) for s in load_states([str(data / rel)]) if s.step.valid_actions]
        held = random.Random(seed).sample(held, min(samples, len(held)))
        scores[name] = evaluate_steps(engine, policy.prompt, policy.frame_for, held, max_new_tokens=80)["eval/step_success"]
    manifest = json.loads((data / "manifest.json").read_text())
    families = manifest["splits"]["train"]
    if episodes and (splits is None or "episode_success" in splits):
        rows, _ = evaluate_online("sim", families, episodes, ModelPolicy(policy, temperature=0.0, max_new_tokens=80),
                                  max_steps=12, env_kwargs={"preset": manifest["config"]["preset"]}, seed=70_000)
        scores["episode_success"] = sum(r.successes for r in rows) / max(1, sum(r.episodes for r in rows))
    return scores


def train(recipe: str, seed: int, out: Path, data: Path, overrides: list[str]) -> dict:
    run = out / f"{recipe}{'-' + overrides_tag(overrides) if overrides else ''}-seed{seed}"
    cmd = [sys.executable, "-m", "guirl", "train", recipe_method(recipe), "--config", str(ROOT / "recipes" / f"{recipe}.yaml"),
           f"output_dir={run}", f"seed={seed}", "report_to=[]", *_data_overrides(recipe, data), *overrides]
    wall, peak_mb = run_measured(cmd)
    return {"run": str(run), "wall_s": wall, "peak_rss_mb": peak_mb}


# Starts the command from a small process: on Linux a child's peak RSS (ru_maxrss) starts at the peak of the
# process it was forked from, so a run started straight from this benchmark (after it generated data and
# evaluated the base agent in-process, about 2 GB) would report at least that much.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run_measured(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd`` (from the repository root) to its end: its wall seconds and its own peak RSS in MiB.

    The peak is the run's own: not the largest of every child this process has waited for
    (``RUSAGE_CHILDREN``), and not this process's own peak, which a child forked from it inherits.

    >>> wall, peak = run_measured([sys.executable, "-c", "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"])
    >>> peak > 300, run_measured([sys.executable, "-c", "pass"])[1] < 200
    (True, True)
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        usage = Path(tmp) / "maxrss"
        start = time.perf_counter()
        code = subprocess.run([sys.executable, "-c", _LAUNCHER, str(usage), *cmd], cwd=ROOT).returncode
        wall = time.perf_counter() - start
        if code:
            raise subprocess.CalledProcessError(code, cmd)
        return wall, int(usage.read_text()) / 1024


def recipe_method(recipe: str) -> str:
    """The trainer a recipe names in its first line (``# guirl train <method> --config ...``)."""
    import re

    found = re.search(r"guirl train (\w+)", (ROOT / "recipes" / f"{recipe}.yaml").read_text())
    return found.group(1) if found else "grpo"


def overrides_tag(overrides: list[str]) -> str:
    """A directory-name-safe tag of the overrides (a YAML value such as ``rewards=[{...}]`` loses its punctuation);
    an override cut to 24 characters gets a hash of its whole text, so two that differ only further on (two
    ``train_data`` lists) name different runs.

    >>> overrides_tag(["max_steps=800", "train_data=[a/b.jsonl,c.jsonl]"]) != overrides_tag(["max_steps=800", "train_data=[a/b.jsonl]"])
    True
    """
    import hashlib

    parts = []
    for o in overrides:
        safe = re.sub(r"[^A-Za-z0-9_-]", "", o.replace("=", "").replace(".", "").replace("/", ""))
        parts.append(safe if len(safe) <= 24 else f"{safe[:24]}-{hashlib.sha1(o.encode()).hexdigest()[:8]}")
    return "_".join(parts)


def _data_overrides(recipe: str, data: Path) -> list[str]:
    import yaml

    cfg = yaml.safe_load((ROOT / "recipes" / f"{recipe}.yaml").read_text())
    paths = [str(data / Path(p).relative_to(Path(p).parents[1])) for p in cfg.get("train_data", [])]
    return [f"train_data=[{','.join(paths)}]"]


def _portable(path: str) -> str:
    """A checkout-independent name of a model directory: relative to the repository when it lies in one
    (``checkpoints/base-agent-tiny``, whichever copy of the tree ran), else the path as given."""
    p = Path(path).resolve()
    for root in (ROOT, *ROOT.parents):
        if (root / "checkpoints").is_dir() and p.is_relative_to(root / "checkpoints"):
            return str(p.relative_to(root))
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recipes", nargs="+", default=["litegui_mdgrpo_tiny", "guilibra_kl_grpo_sngs_tiny", "infigui_rloo_tiny"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--out", default="runs/bench-rl")
    parser.add_argument("--samples", type=int, default=120, help="held-out steps per split")
    parser.add_argument("--episodes", type=int, default=4, help="sim episodes per trained task family")
    parser.add_argument("--tag", default="", help="name of this variant in the results (with overrides)")
    parser.add_argument("--base", default=str(ROOT / "checkpoints" / "base-agent-tiny"),
                        help="starting model the recipes train from (model=...) and the reference row")
    parser.add_argument("overrides", nargs="*", help="key=value applied to every recipe")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {}
    train_data, eval_data = ensure_data(out, 3), ensure_data(out, 7)
    if "base" not in results:
        results["base"] = evaluate_model(Path(args.base), eval_data, args.samples, args.episodes)
        results["base_model"] = _portable(args.base)
        results_path.write_text(json.dumps(results, indent=1))
    elif _portable(results.get("base_model", str(ROOT / "checkpoints" / "base-agent-tiny"))) != _portable(args.base):
        raise SystemExit(f"{results_path} holds results from base model {results.get('base_model')}; "
                         f"use another --out for --base {args.base}")
    elif missing := [s for s in SPLITS if s not in results["base"]]:  # a split added since the base row was measured
        results["base"] |= evaluate_model(Path(args.base), eval_data, args.samples, args.episodes, splits=missing)
        results_path.write_text(json.dumps(results, indent=1))
    for recipe in args.recipes:
        name = recipe + (f"[{args.tag}]" if args.tag else "")
        for seed in args.seeds:
            key = f"{name}/seed{seed}"
            if key in results:
                continue
            overrides = args.overrides + ([f"model={args.base}"] if args.base != parser.get_default("base") else [])
            info = train(recipe, seed, out, train_data, overrides)
            info["scores"] = evaluate_model(Path(info["run"]) / "final", eval_data, args.samples, args.episodes)
            results[key] = info
            results_path.write_text(json.dumps(results, indent=1))
            print(key, json.dumps(info), flush=True)
    print_table(results, args.samples)


def print_table(results: dict, samples: int) -> None:
    base = results["base"]
    print(f"\nheld-out step success, n = {samples} steps per split (episode success: sim episodes); "
          "mean +- std over seeds")
    print(f"{'recipe':<44} {'split':<20} {'base':>6} {'after':>15} {'delta':>7} {'seeds':>5} {'wall min':>8} "
          f"{'RSS GB':>6}  per seed")
    names = sorted({k.split('/')[0] for k in results if k not in ("base", "base_model")})
    for name in names:
        runs = [v for k, v in results.items() if k.split("/")[0] == name]
        wall = statistics.mean(r["wall_s"] for r in runs) / 60
        rss = max(r["peak_rss_mb"] for r in runs) / 1024
        for split in base:
            values = [r["scores"][split] for r in runs if split in r["scores"]]
            if not values:  # measured before this split was added
                continue
            mean = statistics.mean(values)
            std = statistics.stdev(values) if len(values) > 1 else 0.0
            print(f"{name:<44} {split:<20} {base[split]:>6.3f} {mean:>8.3f} +-{std:.3f} {mean - base[split]:>+7.3f} "
                  f"{len(values):>5} {wall:>8.1f} {rss:>6.2f}  " + " ".join(f"{v:.3f}" for v in values))


if __name__ == "__main__":
    main()

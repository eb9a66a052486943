"""What CASC does to semi-online RL's prompts and steps: 1AO..4AO x CASC off / MAX / MIN on the same data.

    python benchmarks/ccpo_casc.py [--n 1 2 3 4] [--casc off max min] [--steps 4] [--out runs/bench-casc]

Every configuration runs ``guirl train semi_online`` (``recipes/ccpo_semi_online_tiny.yaml``, the shipped base
agent, built-in-world trajectories of data seed 3) for ``--steps`` optimiser steps in a subprocess of its own (so
its peak RSS is its own), with the same seed, hence the same drawn trajectories. Reported per configuration:
prompt tokens per step sample (image tokens separately, from the processor's token types), history images per
sample, the compression rate against CASC off at the same n, the mean training-step time (rollout + scoring +
update, the first step left out as warm-up) and the peak RSS. The token growth from 1AO to 3AO is printed for
each CASC mode (CCPO: +4% with CASC, +41% without). Resumable: finished configurations are read back from
``--out/results.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ensure_data(out: Path, seed: int = 3) -> Path:
    from guirl.envs.sim import generate_dataset

    path = out / f"sim-seed{seed}"
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=seed)
    return path / "trajectories" / "train.jsonl"


def run_one(n: int, casc: str, steps: int, data: Path, out: Path) -> dict:
    """One configuration, in this process: train ``steps`` steps; tokens, step time, peak RSS."""
    import time

    from guirl.config import load_config
    from guirl.trainers.semi_online import SemiOnlineConfig, train_semi_online

    run = out / f"n{n}-{casc}"
    cfg = load_config(SemiOnlineConfig, ROOT / "recipes" / "ccpo_semi_online_tiny.yaml", [
        f"history_window={n}", f"history_images={n}", f"casc={casc}", f"max_steps={steps}", "save_every=0",
        "log_every=1", "report_to=[]", f"output_dir={run}", f"train_data=[{data}]", "overwrite=true"])
    t0 = time.perf_counter()
    train_semi_online(cfg)
    wall = time.perf_counter() - t0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if "prompts/tokens_mean" in r]
    timed = rows[1:] or rows
    step_s = [r["time/generate_s"] + r["time/score_s"] + r["time/update_s"] for r in timed]
    weights = [r["sampling/step_samples"] for r in rows]
    def mean(key: str) -> float:
        return sum(r[key] * w for r, w in zip(rows, weights, strict=True)) / sum(weights)
    return {
        "n": n, "casc": casc, "steps": len(rows), "wall_s": wall,
        "tokens": mean("prompts/tokens_mean"), "image_tokens": mean("prompts/image_tokens_mean"),
        "images": mean("prompts/images_mean"), "samples_per_step": statistics.mean(weights),
        "step_s": statistics.mean(step_s), "match_rate": mean("rollout/match_rate"),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[1, 2, 3, 4], help="n of nAO")
    ap.add_argument("--casc", nargs="+", default=["off", "max", "min"], choices=["off", "max", "min"])
    ap.add_argument("--steps", type=int, default=4, help="optimiser steps per configuration")
    ap.add_argument("--out", default="runs/bench-casc")
    ap.add_argument("--one", nargs=2, metavar=("N", "CASC"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = ensure_data(out)
    if args.one:
        print("RESULT " + json.dumps(run_one(int(args.one[0]), args.one[1], args.steps, data, out)))
        return 0
    path = out / "results.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for n in args.n:
        for casc in args.casc:
            key = f"n{n}-{casc}-steps{args.steps}"
            if key in results:
                continue
            proc = subprocess.run([sys.executable, __file__, "--one", str(n), casc, "--steps", str(args.steps),
                                   "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
            line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
            if proc.returncode or not line:
                print(proc.stderr[-2000:], file=sys.stderr)
                return proc.returncode or 1
            results[key] = json.loads(line[-1][len("RESULT "):])
            path.write_text(json.dumps(results, indent=1))
            r = results[key]
            print(f"{key}: {r['tokens']:.0f} tokens ({r['image_tokens']:.0f} image), {r['step_s']:.1f} s/step",
                  flush=True)
    print(f"\n{'config':>8} {'tokens':>8} {'image':>7} {'imgs':>5} {'vs off':>7} {'step s':>7} {'vs off':>7} "
          f"{'RSS MB':>7} {'match':>6}")
    for n in args.n:
        off = results.get(f"n{n}-off-steps{args.steps}")
        for casc in args.casc:
            r = results[f"n{n}-{casc}-steps{args.steps}"]
            comp = f"{r['tokens'] / off['tokens'] - 1:+.0%}" if off and casc != "off" else ""
            speed = f"{off['step_s'] / r['step_s']:.2f}x" if off and casc != "off" else ""
            print(f"{n}AO-{casc:>3} {r['tokens']:8.0f} {r['image_tokens']:7.0f} {r['images']:5.2f} {comp:>7} "
                  f"{r['step_s']:7.2f} {speed:>7} {r['peak_rss_mb']:7.0f} {r['match_rate']:6.3f}")
    for casc in args.casc:
        a, b = results.get(f"n1-{casc}-steps{args.steps}"), results.get(f"n3-{casc}-steps{args.steps}")
        if a and b:
            print(f"token growth 1AO -> 3AO, CASC {casc}: {b['tokens'] / a['tokens'] - 1:+.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

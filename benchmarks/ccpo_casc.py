"""What CASC does to semi-online RL's prompts and steps: 1AO..4AO x CASC off / MAX / MIN on the same data.

    python benchmarks/ccpo_casc.py [--n 1 2 3 4] [--casc off max min] [--preset coarse hd] [--steps 4]
                                   [--episodes 40] [--out runs/bench-casc]

Two measurements per screen preset (``coarse``: the base agent's 512-pixel screens; ``hd``: 1080x2400 phones and
1920x1200 desktops):

- **recorded prompts**: every step of the first ``--episodes`` recorded trajectories (data seed 3) with its expert
  history, the prompt SFT and evaluation build for each history scheme (no model in the loop; CASC's ROI from the
  annotated points): tokens per prompt, image tokens, images, and the image tokens Qwen2.5-VL's default pixel
  budget spends on the same images (the tiny processor resizes every image to at most 256 x 256 pixels, so its
  own counts show what a dropped image saves, not what a crop saves);
- **training**: ``guirl train semi_online`` (``recipes/ccpo_semi_online_tiny.yaml``, the shipped base agent) for
  ``--steps`` optimiser steps per configuration, each in a subprocess of its own (its peak RSS is its own), with
  the same seed and so the same drawn trajectories: tokens per step sample, the mean step time (rollout + scoring
  + update, the first step left out as warm-up), speed against CASC off, peak RSS and the match rate.

The token growth from 1AO to 3AO is printed per CASC mode (CCPO: +4% with CASC, +41% without). Resumable:
finished configurations are read back from ``--out/results.json``.

``--starts runs/ccpo_start_{casc}/final`` measures instead CCPO's claim that CASC keeps accuracy while it
compresses, at 3AO: for each CASC mode, semi-online RL (``recipes/ccpo_semi_online_tiny.yaml``, 3AO, that mode)
from the start that was SFT'd with the same history scheme (``recipes/ccpo_start_tiny.yaml casc=<mode>``), over
``--seeds``, as ``benchmarks/rl_recipes.py`` runs (greedy held-out step success of data seed ``--eval-seed``, paired
against the mode's own start; wall time and peak RSS). Printed per mode: the start's and the trained model's
accuracy and their difference from CASC off (paired step by step for the starts, over seeds after training), the
prompt tokens per step sample and the step time of the training runs against CASC off::

    python benchmarks/ccpo_casc.py --starts runs/ccpo_start_{casc}/final --seeds 0 1 2 --rl-steps 40 \
        --results results/ccpo_casc.json
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ensure_data(out: Path, preset: str, seed: int = 3) -> Path:
    from guirl.envs.sim import generate_dataset

    path = out / f"sim-{preset}-seed{seed}"
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=seed, preset=preset)
    return path / "trajectories" / "train.jsonl"


def run_one(n: int, casc: str, steps: int, data: Path, out: Path, preset: str) -> dict:
    """One configuration, in this process: train ``steps`` steps; tokens, step time, peak RSS."""
    import time

    from guirl.config import load_config
    from guirl.trainers.semi_online import SemiOnlineConfig, train_semi_online

    run = out / f"{preset}-n{n}-{casc}"
    cfg = load_config(SemiOnlineConfig, ROOT / "recipes" / "ccpo_semi_online_tiny.yaml", [
        f"history_window={n}", f"history_images={n}", f"casc={casc}", f"max_steps={steps}", "save_every=0",
        "log_every=1", "report_to=[]", f"output_dir={run}", f"train_data=[{data}]"])
    shutil.rmtree(run, ignore_errors=True)  # a configuration counts only when it finished (results.json)
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
        "qwen25vl_image_tokens": mean("prompts/qwen25vl_image_tokens_mean"),
        "text_tokens": mean("prompts/tokens_mean") - mean("prompts/image_tokens_mean"),
        "images": mean("prompts/images_mean"), "samples_per_step": statistics.mean(weights),
        "step_s": statistics.mean(step_s), "match_rate": mean("rollout/match_rate"),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def recorded_tokens(preset: str, n: int, casc: str, data: Path, episodes: int) -> dict:
    """Prompt tokens of every step of the first ``episodes`` recorded trajectories with their expert history
    (no model: the prompts SFT and evaluation build; CASC's ROI from the annotated points only)."""
    from guirl.data.io import read_episodes
    from guirl.models.prompts import PromptSpec
    from guirl.models.scoring import encode_prompt
    from guirl.rollout.casc import image_tokens
    from guirl.rollout.history import recorded_prompt

    policy = _policy()
    spec = PromptSpec(fmt=policy.prompt.fmt, style=policy.prompt.style, history_window=n, history_images=n, casc=casc)
    tokens = image = qwen = images = steps = 0
    for ep in read_episodes(data)[:episodes]:
        for step in ep.steps:
            prompt, _ = recorded_prompt(spec, policy.frame_for, ep, step, data.parent)
            enc = encode_prompt(policy.processor, prompt)
            tokens += len(enc.input_ids)
            image += sum(enc.mm_token_type_ids)
            qwen += sum(image_tokens(im.size) for im in prompt.images)
            images += len(prompt.images)
            steps += 1
    return {"tokens": tokens / steps, "image_tokens": image / steps, "qwen25vl_image_tokens": qwen / steps,
            "images": images / steps, "steps": steps}


@functools.cache
def _policy():
    from guirl.models.load import load_policy

    return load_policy(ROOT / "checkpoints" / "base-agent-tiny")


RL_RECIPE = "ccpo_semi_online_tiny"


def from_starts(args: argparse.Namespace, out: Path) -> int:
    """3AO semi-online RL from each CASC mode's own start: accuracy, tokens and step time against CASC off."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from base_agent import commit, paired
    from rl_recipes import summarise

    runs: dict[str, dict] = {}
    for casc in args.casc:
        start = args.starts.replace("{casc}", casc)
        if not (Path(start) / "config.json").is_file():
            print(f"ccpo_casc: error: --starts: no model at {start} (train it: guirl train sft --config "
                  f"recipes/ccpo_start_tiny.yaml casc={casc} output_dir=...)", file=sys.stderr)
            return 2
        tag = " ".join([f"3AO-{casc}", f"{args.rl_steps} steps", *args.overrides])
        cmd = [sys.executable, str(ROOT / "benchmarks" / "rl_recipes.py"), "history_window=3", "history_images=3",
               f"casc={casc}", f"max_steps={args.rl_steps}", *args.overrides, "--recipes", RL_RECIPE,
               "--base", start, "--seeds", *map(str, args.seeds), "--eval-seed", str(args.eval_seed), "--per-task", str(args.per_task),
               "--episodes", str(args.rl_episodes), "--splits", "steps_unseen_seeds", "multi_solution",
               "single_solution", "--tag", tag, "--out", str(out / f"starts-{casc}")]
        print("+", " ".join(cmd), flush=True)
        if subprocess.run(cmd, cwd=ROOT).returncode:
            return 1
        results = json.loads((out / f"starts-{casc}" / "results.json").read_text())
        runs[casc] = {k: v for k, v in results.items() if k in ("base", "setting") or k.startswith(f"{RL_RECIPE}[{tag}]/")}
    table = casc_table(runs, summarise)
    off = runs.get("off")
    for casc, row in table.items():  # the starts meet the same held-out steps: paired against CASC off's start
        if off is not None and casc != "off":
            row["start_vs_off"] = paired(off["base"]["per_step"]["steps_unseen_seeds"],
                                         runs[casc]["base"]["per_step"]["steps_unseen_seeds"])
    print_starts(table)
    if args.results:
        summary = {"command": " ".join(["python", "benchmarks/ccpo_casc.py", *sys.argv[1:]]), "commit": commit(),
                   "history": "3AO", "rl_steps": args.rl_steps, "seeds": args.seeds, "eval_seed": args.eval_seed,
                   "per_task": args.per_task, "overrides": args.overrides,
                   "starts": args.starts, "train_data_seed": 3, "rows": table}
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(summary, indent=1))
    return 0


def run_costs(run: Path) -> dict:
    """Prompt tokens per step sample and mean step time (rollout + scoring + update) of one training run."""
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if "prompts/tokens_mean" in r]
    weights = [r["sampling/step_samples"] for r in rows]
    def mean(key: str) -> float:
        return sum(r[key] * w for r, w in zip(rows, weights, strict=True)) / sum(weights)
    step_s = [r["time/generate_s"] + r["time/score_s"] + r["time/update_s"] for r in rows[1:] or rows]
    quarter = max(1, len(rows) // 4)
    return {"tokens": mean("prompts/tokens_mean"), "qwen25vl_image_tokens": mean("prompts/qwen25vl_image_tokens_mean"),
            "images": mean("prompts/images_mean"), "samples_per_step": statistics.mean(weights),
            "step_s": statistics.mean(step_s), "sample_s": sum(step_s) / sum(weights[1:] or weights),
            "match_rate": mean("rollout/match_rate"),
            # did training move its own reward? the first and the last quarter of the logged steps
            "reward_first": statistics.mean(r["rewards/total_mean"] for r in rows[:quarter]),
            "reward_last": statistics.mean(r["rewards/total_mean"] for r in rows[-quarter:])}


def flips(before: list[int], after: list[int]) -> tuple[int, int]:
    """The held-out steps a run won (failed before, right after) and lost (the reverse), on the same steps."""
    return (sum(a > b for b, a in zip(before, after, strict=True)),
            sum(a < b for b, a in zip(before, after, strict=True)))


def casc_table(runs: dict[str, dict], summarise) -> dict:
    """Per CASC mode: start and trained accuracy (rl_recipes' summary against the mode's own start), the
    training runs' mean costs, and every figure's change against CASC off."""
    table = {}
    for casc, results in runs.items():
        (name, row), = summarise(results)["recipes"].items()
        seed_runs = [r for k, r in results.items() if k.startswith(name + "/")]
        costs = [run_costs(Path(r["run"])) for r in seed_runs]
        for split, r in row["splits"].items():  # how far the greedy policy moved: steps it won and lost
            moved = [flips(results["base"]["per_step"][split], s["scores"]["per_step"][split]) for s in seed_runs]
            r["won"], r["lost"] = (round(statistics.mean(m[i] for m in moved), 2) for i in (0, 1))
        table[casc] = {"splits": row["splits"], "wall_min": row["wall_min"], "peak_rss_gb": row["peak_rss_gb"],
                       "seeds": row["seeds"],
                       **{k: round(statistics.mean(c[k] for c in costs), 4) for k in costs[0]}}
    off = table.get("off")
    for casc, row in table.items():
        if off is None or casc == "off":
            continue
        row["vs_off"] = {"tokens": round(row["tokens"] / off["tokens"] - 1, 4),
                         "qwen25vl_image_tokens": round(row["qwen25vl_image_tokens"] / off["qwen25vl_image_tokens"] - 1, 4),
                         "speed": round(off["step_s"] / row["step_s"], 4),
                         "sample_speed": round(off["sample_s"] / row["sample_s"], 4),
                         **{split: {"start": round(r["base"] - off["splits"][split]["base"], 4),
                                    "after": round(r["mean"] - off["splits"][split]["mean"], 4),
                                    "spreads": round(r["spread"] + off["splits"][split]["spread"], 4)}
                            for split, r in row["splits"].items() if split in off["splits"]}}
    return table


def print_starts(table: dict) -> None:
    print("\n3AO semi-online RL from each CASC mode's own start (held-out step success; after: mean +- spread)")
    print(f"{'CASC':>4} {'split':<19} {'start':>6} {'after':>15} {'gain':>7} {'start-off':>9} {'after-off':>9} "
          f"{'tokens':>7} {'vs off':>7} {'step s':>7} {'speed':>6} {'match':>6}")
    for casc, row in table.items():
        vs = row.get("vs_off", {})
        for split, r in row["splits"].items():
            d = vs.get(split, {})
            print(f"{casc:>4} {split:<19} {r['base']:6.3f} {r['mean']:7.3f} +- {r['spread']:.3f} {r['gain']:+7.3f} "
                  f"{d.get('start', 0):+9.3f} {d.get('after', 0):+9.3f} {row['tokens']:7.0f} "
                  f"{vs.get('tokens', 0):+7.1%} {row['step_s']:7.2f} {vs.get('speed', 1):5.2f}x {row['match_rate']:6.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[1, 2, 3, 4], help="n of nAO")
    ap.add_argument("--casc", nargs="+", default=["off", "max", "min"], choices=["off", "max", "min"])
    ap.add_argument("--preset", nargs="+", default=["coarse", "hd"], choices=["coarse", "realistic", "hd"],
                    help="built-in-world screen sizes (coarse: 512 px, the base agent's; hd: 1080x2400 phones)")
    ap.add_argument("--steps", type=int, default=4, help="optimiser steps per configuration")
    ap.add_argument("--out", default="runs/bench-casc")
    ap.add_argument("--episodes", type=int, default=40, help="recorded trajectories of the token count")
    ap.add_argument("--starts", default=None,
                    help="3AO accuracy mode: each CASC mode's SFT start ('{casc}' becomes off / max / min)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds (--starts)")
    ap.add_argument("--rl-steps", type=int, default=40, help="semi-online optimiser steps per run (--starts)")
    ap.add_argument("--eval-seed", type=int, default=7, help="held-out data seed (7; 5 or 6 to choose settings)")
    ap.add_argument("--per-task", type=int, default=24, help="held-out episodes per trained family (--starts)")
    ap.add_argument("--rl-episodes", type=int, default=0, help="live sim episodes per family (--starts; 0: none)")
    ap.add_argument("--results", default=None, help="write the --starts table as JSON here (results/ccpo_casc.json)")
    ap.add_argument("overrides", nargs="*", help="key=value for every semi-online run (--starts)")
    ap.add_argument("--one", nargs=3, metavar=("PRESET", "N", "CASC"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.starts:
        return from_starts(args, out)
    if args.one:
        preset, n, casc = args.one[0], int(args.one[1]), args.one[2]
        result = run_one(n, casc, args.steps, ensure_data(out, preset), out, preset)
        print("RESULT " + json.dumps(result))
        return 0
    path = out / "results.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for preset in args.preset:
        for n in args.n:
            for casc in args.casc:
                key = f"{preset}-n{n}-{casc}-steps{args.steps}"
                if key in results:
                    continue
                proc = subprocess.run([sys.executable, __file__, "--one", preset, str(n), casc, "--steps",
                                       str(args.steps), "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
                line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
                if proc.returncode or not line:
                    print(proc.stderr[-2000:], file=sys.stderr)
                    return proc.returncode or 1
                results[key] = json.loads(line[-1][len("RESULT "):])
                path.write_text(json.dumps(results, indent=1))
                r = results[key]
                print(f"{key}: {r['tokens']:.0f} tokens ({r['image_tokens']:.0f} image; Qwen2.5-VL budget "
                      f"{r['qwen25vl_image_tokens']:.0f}), {r['step_s']:.1f} s/step", flush=True)
    for preset in args.preset:
        for n in args.n:
            for casc in args.casc:
                key = f"recorded-{preset}-n{n}-{casc}-ep{args.episodes}"
                if key not in results:
                    results[key] = recorded_tokens(preset, n, casc, ensure_data(out, preset), args.episodes)
                    path.write_text(json.dumps(results, indent=1))
        print(f"\n{preset} screens, every step of {args.episodes} recorded trajectories with their expert history "
              f"(tokens per prompt)")
        print(f"{'config':>8} {'tokens':>7} {'image':>6} {'imgs':>5} {'vs off':>7} {'Qwen2.5':>8} {'vs off':>7}")
        for n in args.n:
            off = results[f"recorded-{preset}-n{n}-off-ep{args.episodes}"]
            for casc in args.casc:
                r = results[f"recorded-{preset}-n{n}-{casc}-ep{args.episodes}"]
                rel = casc != "off"
                comp = f"{r['tokens'] / off['tokens'] - 1:+.0%}" if rel else ""
                qcomp = f"{r['qwen25vl_image_tokens'] / off['qwen25vl_image_tokens'] - 1:+.0%}" if rel else ""
                print(f"{n}AO-{casc:>3} {r['tokens']:7.0f} {r['image_tokens']:6.0f} {r['images']:5.2f} {comp:>7} "
                      f"{r['qwen25vl_image_tokens']:8.0f} {qcomp:>7}")
        for casc in args.casc:
            a = results.get(f"recorded-{preset}-n1-{casc}-ep{args.episodes}")
            b = results.get(f"recorded-{preset}-n3-{casc}-ep{args.episodes}")
            if a and b:
                print(f"token growth 1AO -> 3AO, CASC {casc}: {b['tokens'] / a['tokens'] - 1:+.0%} "
                      f"(Qwen2.5-VL image budget: {b['qwen25vl_image_tokens'] / a['qwen25vl_image_tokens'] - 1:+.0%})")
    for preset in args.preset:
        print(f"\n{preset} screens, semi-online training, {args.steps} steps per configuration; tokens per step sample")
        print(f"{'config':>8} {'tokens':>7} {'text':>6} {'image':>6} {'imgs':>5} {'vs off':>7} {'Qwen2.5':>8} "
              f"{'vs off':>7} {'step s':>7} {'speed':>6} {'RSS MB':>7} {'match':>6}")
        for n in args.n:
            off = results.get(f"{preset}-n{n}-off-steps{args.steps}")
            for casc in args.casc:
                r = results.get(f"{preset}-n{n}-{casc}-steps{args.steps}")
                if r is None:
                    continue
                rel = off is not None and casc != "off"
                comp = f"{r['tokens'] / off['tokens'] - 1:+.0%}" if rel else ""
                qcomp = f"{r['qwen25vl_image_tokens'] / off['qwen25vl_image_tokens'] - 1:+.0%}" if rel else ""
                speed = f"{off['step_s'] / r['step_s']:.2f}x" if rel else ""
                print(f"{n}AO-{casc:>3} {r['tokens']:7.0f} {r['text_tokens']:6.0f} {r['image_tokens']:6.0f} "
                      f"{r['images']:5.2f} {comp:>7} {r['qwen25vl_image_tokens']:8.0f} {qcomp:>7} {r['step_s']:7.2f} "
                      f"{speed:>6} {r['peak_rss_mb']:7.0f} {r['match_rate']:6.3f}")
        for casc in args.casc:
            a = results.get(f"{preset}-n1-{casc}-steps{args.steps}")
            b = results.get(f"{preset}-n3-{casc}-steps{args.steps}")
            if a and b:
                print(f"token growth 1AO -> 3AO, CASC {casc}: {b['tokens'] / a['tokens'] - 1:+.0%} "
                      f"(Qwen2.5-VL image budget: {b['qwen25vl_image_tokens'] / a['qwen25vl_image_tokens'] - 1:+.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

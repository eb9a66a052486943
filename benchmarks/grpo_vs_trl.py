"""guirl's GRPO against TRL 1.16's GRPOTrainer, and the RL layer's parts against their naive versions.

    .venv/bin/python benchmarks/grpo_vs_trl.py --out /tmp/grpo_vs_trl

One run (~6-8 minutes on 2 shared cores) measures, on ``checkpoints/base-agent-tiny``
and recorded states of ``guirl gen-data --seed 3`` (made under OUT/data if absent):

1. **optimiser-step time**, guirl ``train_grpo`` vs TRL ``GRPOTrainer``: same
   model, same prompts in the same order (chat messages + screenshot; TRL's
   prompt ids are checked equal to guirl's), guirl's ``litegui_ms`` reward
   (columns from ``reward_columns`` / ``columns_for``), B prompts x G samples
   per step in micro-batches of ``--micro-batch``, the same length limit and
   learning rate, beta 0, temperature 1, one process, the same torch threads,
   TRL with ``processor.tokenizer.padding_side = "left"``, ``bf16=False`` and
   ``gradient_checkpointing=False`` (guirl does neither). Each framework runs
   in its own fresh process, ``--rounds`` times in ABBA order so that load
   from other jobs falls on both alike; the first ``--warmup`` steps of each
   run are dropped; a step is timed from the end of the previous optimiser
   step to the end of this one (checkpoint saving comes after the last one).
   Wall-clock and process CPU seconds are both reported: on a shared machine
   CPU seconds are the steadier measure of work done.
2. **generation**: ``HFEngine`` (B prompts x n samples in one batched decode)
   vs ``SequentialEngine`` (one prompt, one sample at a time through
   ``generate``, plus its scoring pass), same prompts, n, length limit.
3. **scoring**: ``score_completions`` over B prompts x G rows with the vision
   tower once per prompt vs once per row (each row its own prompt object);
   the number of images the vision tower encoded is counted by a hook.
4. **memory**: peak RSS (``getrusage``) of short GRPO runs: full fine-tuning
   and LoRA (rank 8), each without and with a KL reference (``kl_coef``
   0.001: adapter-disabled policy for LoRA, a frozen copy otherwise), and the
   parameter bytes the reference holds.

``--threads`` defaults to 1: with 2 cores shared with other jobs, 2 OpenMP
threads spend most of their time waiting for each other (a 64x192 @ 192x192
matmul took ~1 ms with 2 threads vs ~0.12 ms with 1 under load), which
measures the machine's load rather than the trainers. Prints one table and
writes everything to OUT/results.json.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grpo_bench_runs import run_child, state_order  # noqa: E402


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def child(kind: str, spec: dict, out: Path, tag: str) -> dict:
    """Run ``grpo_bench_runs.RUNS[kind](spec)`` in a fresh Python process; its result dict."""
    result = out / f"{tag}.json"
    spec = spec | {"out": str(out / "runs" / tag)}
    log = out / f"{tag}.log"
    with open(log, "w") as fh:
        done = subprocess.run(
            [sys.executable, __file__, "--child", kind, "--spec", json.dumps(spec), "--result", str(result)],
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    if done.returncode:
        raise RuntimeError(f"{tag} ({kind}) failed with exit code {done.returncode}; see {log}")
    return json.loads(result.read_text())


def step_times(args, spec: dict, out: Path) -> dict:
    """Item 1: ABBA rounds of guirl and TRL runs; steps after the warm-up pooled per framework."""
    pooled = {
        k: {"wall_s": [], "cpu_s": [], "generate_s": [], "mean_length": [], "peak_rss_mb": []} for k in ("guirl", "trl")
    }
    order = ["guirl", "trl"]
    for round_index in range(args.rounds):
        for kind in order if round_index % 2 == 0 else order[::-1]:
            r = child(kind, spec | {"steps": args.warmup + args.steps}, out, f"{kind}_round{round_index}")
            skip = args.warmup - 1  # the child's intervals start at step 2
            for key in ("wall_s", "cpu_s", "generate_s", "mean_length"):
                pooled[kind][key] += r[key][skip:]
            pooled[kind]["peak_rss_mb"].append(r["peak_rss_mb"])
    return pooled


def load_bench_policy(args):
    from guirl.models.load import load_policy
    from guirl.trainers.rl_common import load_states

    policy = load_policy(args.model)
    states = load_states([args.train_data])
    return policy, states


def bench_prompts(policy, states, count: int, seed: int):
    """The first ``count`` states guirl's GRPO run draws, as prompts."""
    from guirl.rollout.history import recorded_prompt

    picked = [states[i] for i in state_order(len(states), seed, count)]
    return [recorded_prompt(policy.prompt, policy.frame_for, s.episode, s.step, s.root)[0] for s in picked]


def timed(fn, *args, **kwargs):
    """``(fn(*args, **kwargs), wall seconds, process CPU seconds)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def generation(policy, prompts, args) -> tuple[dict, list]:
    """Item 2: batched engine vs one prompt / one sample at a time."""
    from guirl.rollout.engine import SamplingParams
    from guirl.rollout.hf_engine import HFEngine, SequentialEngine

    params = SamplingParams(n=args.group_size, temperature=1.0, max_new_tokens=args.max_new_tokens, seed=0)
    engines = {
        "batched": HFEngine(policy.model, policy.processor),
        "sequential": SequentialEngine(policy.model, policy.processor),
    }
    for engine in engines.values():  # warm-up
        engine.generate(prompts[:1], SamplingParams(n=1, max_new_tokens=4))
    rows, groups = {}, None
    for name, engine in engines.items():
        reps = []
        for _ in range(args.gen_reps if name == "batched" else 1):
            out, wall, cpu = timed(engine.generate, prompts, params)
            reps.append((sum(len(c.token_ids) for g in out for c in g), wall, cpu))
            groups = groups or out
        tokens, wall, cpu = sorted(reps, key=lambda r: r[1])[len(reps) // 2]
        rows[name] = {
            "tokens": tokens,
            "wall_s": wall,
            "cpu_s": cpu,
            "tokens_per_s": tokens / wall,
            "tokens_per_cpu_s": tokens / cpu,
        }
    return rows, groups


class VisionCounter:
    """Counts the images the vision tower encodes (forward pre-hook on ``model.visual``)."""

    def __init__(self, model):
        from guirl.models.scoring import base_model

        self.images = 0
        base_model(model).model.visual.register_forward_pre_hook(self._hook, with_kwargs=True)

    def _hook(self, module, args, kwargs):
        grid = kwargs.get("grid_thw", args[1] if len(args) > 1 else None)
        self.images += 0 if grid is None else int(grid.shape[0])


def score_once(policy, prompts, completions, index, backward: bool):
    """One scoring pass (and its backward pass when ``backward``)."""
    from guirl.models.scoring import score_completions

    with torch.set_grad_enabled(backward):
        out = score_completions(policy.model, policy.processor, prompts, completions, index)
        if backward:
            out.logprobs.sum().backward()
    return out


def scoring(policy, prompts, groups, args) -> dict:
    """Item 3: vision tower once per prompt (rows share the prompt) vs once per row (each its own copy)."""
    counter = VisionCounter(policy.model)
    completions = [c.token_ids for g in groups for c in g]
    shared_index = [c.prompt_index for g in groups for c in g]
    own_copies = [dataclasses.replace(copy.copy(prompts[i]), key=None) for i in shared_index]
    layouts = {"shared": (prompts, shared_index), "per_row": (own_copies, list(range(len(own_copies))))}
    rows, logprobs = {}, {}
    for mode in ("no_grad", "backward"):
        for name, (prompt_list, index) in layouts.items():
            walls, cpus = [], []
            for _ in range(args.score_reps):
                counter.images = 0
                policy.model.zero_grad(set_to_none=True)
                out, wall, cpu = timed(score_once, policy, prompt_list, completions, index, mode == "backward")
                walls.append(wall)
                cpus.append(cpu)
            logprobs[name] = out.logprobs.detach()
            rows[f"{mode}/{name}"] = {
                "wall_s": statistics.median(walls),
                "cpu_s": statistics.median(cpus),
                "vision_images": counter.images,
                "rows": len(completions),
            }
    rows["max_abs_logprob_diff"] = float((logprobs["shared"] - logprobs["per_row"]).abs().max())
    policy.model.zero_grad(set_to_none=True)
    return rows


def reference_bytes(args) -> dict:
    """Parameter bytes the KL reference holds beyond the policy: frozen copy vs adapter-disabled LoRA."""
    from guirl.trainers.grpo import GRPOConfig, load_rl_policy
    from guirl.trainers.rl_common import ReferencePolicy

    out = {}
    for rank in (0, 8):
        policy = load_rl_policy(GRPOConfig(model=args.model, lora_rank=rank, kl_coef=0.001))
        ref = ReferencePolicy(policy.model, policy.processor)
        held = [] if ref.frozen is None else [*ref.frozen.parameters(), *ref.frozen.buffers()]
        trainable = [p for p in policy.model.parameters() if p.requires_grad]
        out[f"lora{rank}"] = {
            "reference_bytes": sum(t.numel() * t.element_size() for t in held),
            "trainable_bytes": sum(p.numel() * p.element_size() for p in trainable),
        }
    return out


def memory(args, spec: dict, out: Path) -> dict:
    """Item 4: peak RSS of short runs, full vs LoRA, without and with the KL reference."""
    rows = {}
    for rank in (0, 8):
        for kl in (0.0, 0.001):
            r = child(
                "guirl",
                spec | {"steps": args.memory_steps, "lora_rank": rank, "kl_coef": kl},
                out,
                f"memory_lora{rank}_kl{kl}",
            )
            rows[f"lora{rank}/kl{kl}"] = {
                "peak_rss_mb": r["peak_rss_mb"],
                "step_wall_s": statistics.median(r["wall_s"]),
            }
    return rows


def prepare_data(out: Path, seed: int) -> str:
    path = out / "data" / "trajectories" / "train.jsonl"
    if not path.is_file():
        subprocess.run(
            [str(Path(sys.executable).parent / "guirl"), "gen-data", "--out", str(out / "data"), "--seed", str(seed)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return str(path)


def print_table(res: dict, args) -> None:
    g, t = res["steps"]["guirl"], res["steps"]["trl"]
    print(
        f"\nB={args.batch_size} prompts x G={args.group_size}, micro-batch {args.micro_batch}, max {args.max_new_tokens} "
        f"new tokens, {args.threads} thread(s); load average {res['load_before']} -> {res['load_after']}"
    )
    print(f"\n1. optimiser step ({len(g['wall_s'])} steps each after warm-up)      guirl      TRL  TRL/guirl")
    for key, name in (("wall_s", "wall s"), ("cpu_s", "CPU s")):
        for q, label in ((0.5, "median"), (0.9, "p90")):
            a, b = quantile(g[key], q), quantile(t[key], q)
            print(f"   {name:6s} {label:6s}                                  {a:7.3f}  {b:7.3f}  {b / a:8.2f}x")
    a, b = statistics.median(g["generate_s"]), statistics.median(t["generate_s"])
    print(f"   generation wall s per step, median                  {a:7.3f}  {b:7.3f}  {b / a:8.2f}x")
    a, b = statistics.mean(g["mean_length"]), statistics.mean(t["mean_length"])
    print(f"   mean completion length (tokens)                     {a:7.1f}  {b:7.1f}")
    a, b = max(g["peak_rss_mb"]), max(t["peak_rss_mb"])
    print(f"   peak RSS MiB (largest run)                          {a:7.0f}  {b:7.0f}  {b / a:8.2f}x")
    gen = res["generation"]
    print(
        f"\n2. generation, {args.gen_prompts} prompts x n={args.group_size}     tokens   wall s  tokens/s  tokens/CPU s"
    )
    for name in ("batched", "sequential"):
        r = gen[name]
        print(
            f"   {name:29s} {r['tokens']:8d} {r['wall_s']:8.2f} {r['tokens_per_s']:9.1f} {r['tokens_per_cpu_s']:12.1f}"
        )
    print(
        f"   batched / sequential tokens/s: {gen['batched']['tokens_per_s'] / gen['sequential']['tokens_per_s']:.2f}x "
        f"(per CPU s: {gen['batched']['tokens_per_cpu_s'] / gen['sequential']['tokens_per_cpu_s']:.2f}x)"
    )
    sc = res["scoring"]
    print(
        f"\n3. scoring {sc['no_grad/shared']['rows']} rows ({args.gen_prompts} prompts)      vision images   wall s    CPU s  per-row/shared"
    )
    for mode in ("no_grad", "backward"):
        for name in ("shared", "per_row"):
            r = sc[f"{mode}/{name}"]
            ratio = r["wall_s"] / sc[f"{mode}/shared"]["wall_s"]
            print(
                f"   {mode + ' ' + name:29s} {r['vision_images']:13d} {r['wall_s']:8.3f} {r['cpu_s']:8.3f} {ratio:14.2f}x"
            )
    print(f"   max |log-prob difference| shared vs per-row: {sc['max_abs_logprob_diff']:.2e}")
    print(
        f"\n4. memory ({args.memory_steps}-step runs)          peak RSS MiB  step wall s  reference bytes  trainable bytes"
    )
    for rank in (0, 8):
        for kl in (0.0, 0.001):
            r = res["memory"][f"lora{rank}/kl{kl}"]
            ref = res["reference"][f"lora{rank}"]
            name = f"{'LoRA r8' if rank else 'full'}, kl_coef {kl}"
            print(
                f"   {name:30s} {r['peak_rss_mb']:12.0f} {r['step_wall_s']:12.2f} "
                f"{ref['reference_bytes'] if kl else 0:16,d} {ref['trainable_bytes']:16,d}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="checkpoints/base-agent-tiny", help="starting policy")
    parser.add_argument("--out", default="runs/grpo_vs_trl", help="work directory (data, runs, results.json)")
    parser.add_argument("--batch-size", type=int, default=2, help="B: prompts per optimiser step")
    parser.add_argument("--group-size", type=int, default=8, help="G: samples per prompt (also n of item 2)")
    parser.add_argument("--micro-batch", type=int, default=8, help="samples per forward/backward pass")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="completion length limit")
    parser.add_argument("--lr", type=float, default=1e-5, help="learning rate (constant)")
    parser.add_argument("--steps", type=int, default=8, help="measured steps per run")
    parser.add_argument("--warmup", type=int, default=1, help="steps dropped at the start of each run (>= 1)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per framework, in ABBA order")
    parser.add_argument("--gen-prompts", type=int, default=4, help="B of items 2 and 3")
    parser.add_argument("--gen-reps", type=int, default=3, help="repetitions of the batched generation (median)")
    parser.add_argument("--score-reps", type=int, default=3, help="repetitions of each scoring pass (median)")
    parser.add_argument("--memory-steps", type=int, default=3, help="steps of each memory run")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of every run (see the docstring)")
    parser.add_argument("--seed", type=int, default=0, help="training and sampling seed")
    parser.add_argument("--data-seed", type=int, default=3, help="seed of the built-in-world data")
    parser.add_argument("--child", choices=["guirl", "trl"], help=argparse.SUPPRESS)
    parser.add_argument("--spec", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, json.loads(args.spec), Path(args.result))
        return
    if args.warmup < 1:
        parser.error("--warmup must be >= 1 (the first step has no start mark)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    args.train_data = prepare_data(out, args.data_seed)
    spec = {
        "model": args.model,
        "train_data": args.train_data,
        "batch_size": args.batch_size,
        "group_size": args.group_size,
        "micro_batch_size": args.micro_batch,
        "max_new_tokens": args.max_new_tokens,
        "lr": args.lr,
        "threads": args.threads,
        "seed": args.seed,
    }
    start = time.perf_counter()
    res = {"args": vars(args), "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg())}
    res["steps"] = step_times(args, spec, out)
    res["memory"] = memory(args, spec, out)
    res["reference"] = reference_bytes(args)
    policy, states = load_bench_policy(args)
    prompts = bench_prompts(policy, states, args.gen_prompts, args.seed)
    res["generation"], groups = generation(policy, prompts, args)
    res["scoring"] = scoring(policy, prompts, groups, args)
    res["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    res["total_s"] = time.perf_counter() - start
    (out / "results.json").write_text(json.dumps(res, indent=1))
    print_table(res, args)
    print(f"\ntotal {res['total_s']:.0f} s; details in {out / 'results.json'}")


if __name__ == "__main__":
    main()

"""Lite-Bench judge agreement on live episodes of the built-in world (LiteGUI, docs/methods.md section 1).

    python benchmarks/litegui_live.py [--model checkpoints/base-agent-tiny] [--episodes 3] \\
        [--judge-model checkpoints/base-agent-tiny]

Runs the tiny base agent live in the built-in world (capped at 18 steps; one output directory per
domain, as ``guirl eval live`` writes it), then judges the same episodes with three judges and
prints, for each, success by the judge and by the environment, compliance, masked calls, and the
agreement with the environment's own success flag with its 2x2 table:

- ``ground_truth``: the environment's flag itself (agreement 1 by construction: the check of the
  plumbing);
- ``rule_outcome``: the deterministic log audit (success iff the run ends with ``terminate`` /
  ``answer``; a grounding episode that ends on a click is a failure to it);
- ``model``: a tiny checkpoint behind guirl's judge server on loopback, asked through the
  ``openai`` client - near chance or fully masked for a tiny model that never learnt to judge.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from guirl.eval.live import LiveReport, judge_live, run_live_episodes
from guirl.judges import make_judge
from guirl.judges.checkpoint import CheckpointJudge
from guirl.judges.serve import serve_judge
from guirl.rollout.policy import ModelPolicy

TASKS = ["mobile.ground", "mobile.toggle_setting", "web.ground", "web.search_open", "desktop.open_file"]


def merged(reports: list[LiveReport]) -> dict[str, float]:
    """Counts summed over the per-domain reports, and the rates recomputed from them."""
    cells = {f"{row}/{col}": sum(r.confusion[row][col] for r in reports)
             for row in ("env_success", "env_failure") for col in ("judge_success", "judge_failure", "masked")}
    readable = sum(v for k, v in cells.items() if not k.endswith("masked"))
    agree = cells["env_success/judge_success"] + cells["env_failure/judge_failure"]
    episodes = sum(r.metrics["live/episodes"] for r in reports)
    compliant = sum(v["compliant"] is True for r in reports for v in r.verdicts)
    return {
        **cells, "episodes": episodes, "readable": readable, "masked": episodes - readable,
        "env_success": (cells["env_success/judge_success"] + cells["env_success/judge_failure"]
                        + cells["env_success/masked"]) / episodes,
        "judge_success": (cells["env_success/judge_success"] + cells["env_failure/judge_success"]) / readable
        if readable else float("nan"),
        "compliance": compliant / readable if readable else float("nan"),
        "agreement": agree / readable if readable else float("nan"),
        "errors": sum(r.metrics["live/judge_errors"] for r in reports),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="checkpoints/base-agent-tiny", help="policy checkpoint")
    parser.add_argument("--judge-model", default="checkpoints/base-agent-tiny", help="checkpoint served as the judge")
    parser.add_argument("--tasks", nargs="+", default=TASKS, help="built-in world tasks (grouped by domain)")
    parser.add_argument("--episodes", type=int, default=3, help="episodes per task")
    parser.add_argument("--max-steps", type=int, default=18, help="step cap (Lite-Bench: 18)")
    parser.add_argument("--seed", type=int, default=0, help="first episode seed")
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    policy = ModelPolicy.load(args.model, temperature=0.0, max_new_tokens=128, seed=args.seed)
    domains: dict[str, list[str]] = {}
    for task in args.tasks:
        domains.setdefault(task.split(".")[0], []).append(task)
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for domain, tasks in domains.items():
            out = Path(tmp) / domain
            env_kwargs = {"domain": domain, "max_steps": args.max_steps}
            _, episodes, _ = run_live_episodes("sim", tasks, args.episodes, policy, out, args.max_steps,
                                               env_kwargs=env_kwargs, seed=args.seed)
            runs.append((episodes, out))
        run_s = time.perf_counter() - start
        server = serve_judge(CheckpointJudge(model_dir=args.judge_model))
        host, port = server.server_address
        judges = {
            "ground_truth": make_judge("ground_truth"),
            "rule_outcome": make_judge("rule_outcome"),
            "model": make_judge("openai", base_url=f"http://{host}:{port}/v1", model=Path(args.judge_model).name,
                                timeout_s=120, max_retries=0),
        }
        rows, times, why_masked = {}, {}, {}
        try:
            for name, judge in judges.items():
                t0 = time.perf_counter()
                reports = [judge_live(episodes, judge, out, args.max_steps) for episodes, out in runs]
                times[name] = time.perf_counter() - t0
                rows[name] = merged(reports)
                why_masked[name] = next((v["reason"] for r in reports for v in r.verdicts if v["masked"]), "")
        finally:
            server.shutdown()
            server.server_close()
    n = int(rows["ground_truth"]["episodes"])
    print(f"episodes: {n} ({args.episodes} per task of {', '.join(args.tasks)}), cap {args.max_steps} steps, "
          f"policy {args.model}; model judge {args.judge_model} served on loopback")
    head = (f"{'judge':<13} {'env':>5} {'judge':>6} {'compl.':>6} {'readable':>8} {'masked':>6} {'agree':>6} "
            f"{'S/S':>4} {'S/F':>4} {'S/M':>4} {'F/S':>4} {'F/F':>4} {'F/M':>4} {'judge s':>7}")
    print(head)
    print("-" * len(head))
    for name, r in rows.items():
        cells = " ".join(f"{int(r[f'{row}/{col}']):>4}" for row in ("env_success", "env_failure")
                         for col in ("judge_success", "judge_failure", "masked"))
        print(f"{name:<13} {r['env_success']:>5.2f} {r['judge_success']:>6.2f} {r['compliance']:>6.2f} "
              f"{int(r['readable']):>8} {int(r['masked']):>6} {r['agreement']:>6.2f} {cells} {times[name]:>7.1f}")
    print("columns: env success / judge success (over readable) / compliance (over readable); S/F = env success, "
          "judge failure; M = masked")
    for name, reason in why_masked.items():
        if reason:
            print(f"{name}: first masked verdict: {reason[:160]}")
    print(f"wall: episodes {run_s:.1f} s, total {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

"""``guirl rl-demo``: post-train the shipped base agent with RL on the built-in world, before vs after.

The main job of the README's set-up (``make demo``). It starts from ``checkpoints/base-agent-history-tiny``, generates
built-in-world data (training states of data seed 3; held-out multi-step steps of seed 7, which
neither the base agent nor this run trained on), measures held-out step success greedily, runs a
GRPO-family recipe (``recipes/guilibra_kl_grpo_sngs_tiny.yaml`` by default, ``--config`` any other;
``--steps`` optimiser steps, by default the recipe's ``max_steps``), measures
again, and prints both with 95% Wilson intervals and the paired difference. It writes an HTML report
(``report.html``: the reward and loss curves, held-out scores, and the same held-out screens before
and after with the predicted actions drawn). Everything runs on the CPU, offline; rerunning resumes
the training from its last checkpoint.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

SHIPPED_AGENT = Path(__file__).resolve().parents[2] / "checkpoints" / "base-agent-history-tiny"
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "guilibra_kl_grpo_sngs_tiny.yaml"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rl-demo", help="post-train the shipped base agent with GRPO on the built-in world; held-out success before/after",
        description=__doc__.split("\n\n")[1],
    )
    parser.add_argument("--out", default="guirl-demo/rl", help="output directory (default: ./guirl-demo/rl)")
    parser.add_argument("--model", default=str(SHIPPED_AGENT), help="starting checkpoint (default: the shipped base agent)")
    parser.add_argument("--config", default=str(RECIPE), help="GRPO recipe (default: recipes/guilibra_kl_grpo_sngs_tiny.yaml)")
    parser.add_argument("--steps", type=int, default=None,
                        help="optimiser steps (default: the recipe's max_steps; 0: no training, the start evaluated twice)")
    parser.add_argument("--heldout", type=int, default=0,
                        help="held-out multi-step steps evaluated (default 0: every step of the held-out episodes)")
    parser.add_argument("--heldout-episodes", type=int, default=24,
                        help="held-out episodes per trained task family (default 24: about 1,300 steps, enough for a "
                             "paired interval of about +-0.02)")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("overrides", nargs="*", help="dotted overrides of the recipe, e.g. optim.lr=1e-5")
    parser.set_defaults(func=run)


def _data(out: Path, seed: int, **kwargs) -> Path:
    from guirl.envs.sim import generate_dataset

    path = out / f"sim-seed{seed}-t{kwargs.get('test_per_task', 0)}"  # another volume, another directory
    if not (path / "manifest.json").is_file():
        generate_dataset(out_dir=str(path), seed=seed, **kwargs)
    return path


def _evaluate(model_dir: Path, held):
    from guirl.eval.steps import evaluate_steps
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    policy = load_policy(model_dir)
    predictions: list = []
    scores = evaluate_steps(HFEngine.from_policy(policy), policy.prompt, policy.frame_for, held, 80, predictions)
    return scores, predictions


def run(args: argparse.Namespace) -> int:
    import torch

    from guirl.config import load_config
    from guirl.eval.stats import paired_difference, wilson_interval
    from guirl.trainers.grpo import GRPOConfig, train_grpo
    from guirl.trainers.rl_common import load_states

    torch.set_num_threads(2)
    start = time.perf_counter()
    out = Path(args.out)
    model = Path(args.model)
    if not (model / "config.json").is_file():
        raise FileNotFoundError(f"{model} is not a model directory (no config.json); pass --model DIR")
    train_dir = _data(out, 3, grounding_train=10, grounding_test=2, test_per_task=1)
    held_dir = _data(out, 7, train_per_task=1, grounding_train=2, grounding_test=2, test_per_task=args.heldout_episodes)
    held = [(s.episode, s.step, s.root) for s in load_states([str(held_dir / "trajectories" / "test_seed.jsonl")])
            if s.step.valid_actions]
    held = random.Random(0).sample(held, min(args.heldout or len(held), len(held)))
    print(f"data: {len(load_states([str(train_dir / 'trajectories' / 'train.jsonl')]))} training states (seed 3), "
          f"{len(held)} held-out multi-step steps (seed 7)")
    before, before_pred = _evaluate(model, held)
    print(f"before: held-out step success {before['eval/step_success']:.3f}  ({time.perf_counter() - start:.0f} s)")
    steps = [f"max_steps={args.steps}"] if args.steps else []
    overrides = [f"model={model}", f"output_dir={out / 'run'}", *steps, f"seed={args.seed}",
                 f"train_data=[{train_dir / 'trajectories' / 'train.jsonl'}]", "report_to=[]", *args.overrides]
    cfg = load_config(GRPOConfig, args.config, overrides)
    # --steps 0 trains nothing and evaluates the start twice: the difference is exactly 0 (a check of the pairing)
    final = model if args.steps == 0 else train_grpo(cfg)["final_dir"]
    after, after_pred = _evaluate(final, held)
    n = len(held)
    rows = []
    for name, scores in (("base agent", before), ("after GRPO", after)):
        k = round(scores["eval/step_success"] * n)
        low, high = wilson_interval(k, n)
        rows.append({"model": name, "step success": f"{k / n:.3f}", "95% CI": f"[{low:.3f}, {high:.3f}]",
                     "type match": f"{scores['eval/type_match']:.3f}", "parse rate": f"{scores['eval/parse_rate']:.3f}"})
    pair = paired_difference([int(a[1].success) for a in before_pred], [int(b[1].success) for b in after_pred])
    mean, half = pair["diff"], pair["high"] - pair["diff"]
    print(f"\nheld-out multi-step steps of trained task families, unseen seeds (n = {n}):")
    for row in rows:
        print(f"  {row['model']:<11} step success {row['step success']}  95% CI {row['95% CI']}  "
              f"type match {row['type match']}  parse rate {row['parse rate']}")
    print(f"  difference  {mean:+.3f}  paired 95% CI [{mean - half:+.3f}, {mean + half:+.3f}]")
    curves = Path(cfg.output_dir) / "metrics.jsonl"
    report = _report(out, held, before_pred, after_pred, rows, mean, half, curves if curves.is_file() else None)
    print(f"\nreport: {report}\nwall time {time.perf_counter() - start:.0f} s")
    return 0


def _report(out, held, before_pred, after_pred, rows, mean, half, curves) -> Path:
    from PIL import Image

    from guirl.eval.report import ReportData, StepView, render_report

    views: dict[str, list[StepView]] = {}
    changed = [i for i, (a, b) in enumerate(zip(before_pred, after_pred, strict=True)) if a[1].success != b[1].success]
    for i in (changed + [i for i in range(len(held)) if i not in changed])[:6]:
        episode, step, root = held[i]
        image = Image.open(root / step.screenshot.path).convert("RGB")
        title = f"{episode.task or episode.id}, step {step.index}: {step.instruction or episode.instruction}"
        views[title] = [StepView(f"{label}", image, list(step.valid_actions), pred[i][0], pred[i][1].success,
                                 pred[i][2][:300]) for label, pred in (("before", before_pred), ("after", after_pred))]
    data = ReportData(
        title="guirl rl-demo: GRPO on the built-in world from the shipped base agent",
        metrics={"heldout/step_success_before": float(rows[0]["step success"]),
                 "heldout/step_success_after": float(rows[1]["step success"]), "heldout/difference": mean},
        tables={"held-out multi-step steps (seed 7)": rows},
        trajectories=views, curves_file=curves,
        notes=[f"paired difference {mean:+.3f} (95% CI +-{half:.3f}) over {len(held)} held-out steps",
               "screens: held-out steps whose outcome changed first; green = valid actions, red = prediction"],
    )
    return render_report(data, Path(out) / "report.html")

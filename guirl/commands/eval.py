"""``guirl eval``: grounding, offline step metrics, judged outcomes (and online).

Examples::

    guirl eval grounding --dataset-format screenspot_pro --data ScreenSpot-Pro/annotations/vscode_macos.json \\
        --model runs/sft --out runs/eval-sspro
    guirl eval offline --episodes data/androidcontrol/episodes.jsonl --policy mypkg.agent:act \\
        --format qwen_mobile_use --samples 4 --out runs/eval-ac
    guirl eval judge --episodes runs/eval-miniwob/episodes.jsonl --judge openai \\
        --judge-arg base_url=http://127.0.0.1:8000/v1 --judge-arg model=Qwen2.5-VL-7B --out runs/judged

Each writes ``results.json`` (machine-readable) and ``report.html``
(self-contained) under ``--out``, and prints the headline metrics.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from typing import Any

from guirl.commands import (
    UsageError,
    add_option,
    add_pairs_option,
    check_out_dir,
    judge_from_options,
    parse_pairs,
)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a model or policy: grounding, offline step metrics, judged outcomes, online",
        description="Evaluate a guirl model or any Python policy and write results.json and an HTML report.",
    )
    sub = parser.add_subparsers(dest="eval_command", metavar="<kind>")
    sub.required = True
    _grounding(sub)
    _offline(sub)
    _judge(sub)
    if importlib.util.find_spec("guirl.commands.eval_online") is not None:
        from guirl.commands.eval_online import add_online_parser

        add_online_parser(sub)
    from guirl.commands.eval_live import add_live_parser

    add_live_parser(sub)
    return parser


def add_dataset_args(p: argparse.ArgumentParser, data_help: str | None = None) -> None:
    """``--dataset-format``, ``--data``, ``--images``, ``--split``, ``--adapter-arg``: a public dataset."""
    from guirl.data.adapters import ADAPTERS

    p.add_argument("--dataset-format", metavar="NAME",
                   help=f"public layout read by an adapter: {', '.join(ADAPTERS)} (docs/eval.md, 'Public datasets')")
    p.add_argument("--data", help=data_help or "the dataset in --dataset-format: its annotation file or release "
                   "directory, a parquet / arrow file or directory, a saved HF dataset, or a Hub name")
    p.add_argument("--images", help="screenshot directory (default: the release's usual place; for Hugging Face "
                   "layouts, where embedded images are written, default ~/.cache/guirl/hf)")
    p.add_argument("--split", help="split of a Hugging Face layout (default: all)")
    add_pairs_option(p, "--adapter-arg", "an option of the dataset format (YAML value), e.g. missing_target=skip, "
                     "screenshot_pattern='{annotation_id}-{action_uid}.jpg', flip_scroll=true")


def dataset_options(args: argparse.Namespace) -> dict[str, Any]:
    return parse_pairs(getattr(args, "adapter_arg", []) or [], "--adapter-arg")


def load_cli_data(args: argparse.Namespace):
    """``(episodes, image root)`` from the data flags of :func:`add_dataset_args`."""
    from guirl.eval.pipeline import load_data

    if args.adapter_arg and not args.dataset_format:
        raise UsageError("--adapter-arg applies to --dataset-format data; give --dataset-format NAME")
    return load_data(getattr(args, "episodes", None), args.dataset_format, args.data, args.images,
                     split=args.split, options=dataset_options(args))


def _data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--episodes", help="guirl episodes .jsonl (or its directory) with screenshots beside it")
    add_dataset_args(p)
    p.add_argument("--limit", type=int, default=None, help="evaluate only the first N samples / episodes")
    p.add_argument("--out", required=True, help="output directory for results.json and report.html")
    p.add_argument("--curves", help="metrics JSONL of a training run: its curves go into the report")
    p.add_argument("--viewer-limit", type=int, default=20, help="episodes shown in the report's trajectory viewer")


def _policy_args(p: argparse.ArgumentParser) -> None:
    from guirl.matching.rules import MATCH_RULES

    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--policy", help="'package.module:callable' taking a PolicyInput, returning text or an Action")
    who.add_argument("--model", help="guirl model checkpoint directory")
    p.add_argument("--format", default=None, help="action format of text outputs (e.g. qwen_computer_use)")
    p.add_argument("--rule", default="auto", help="point matching rule: auto (the dataset's) or one of "
                   f"{', '.join(sorted(MATCH_RULES))} (docs/eval.md)")
    p.add_argument("--max-new-tokens", type=int, default=128, help="most tokens a model generates per step")
    p.add_argument("--seed", type=int, default=0, help="sampling seed")


def _grounding(sub) -> None:
    p = sub.add_parser("grounding", help="grounding accuracy (point in box) by platform and element type")
    _data_args(p)
    _policy_args(p)
    p.set_defaults(func=run_grounding_cmd)


def _offline(sub) -> None:
    from guirl.matching.step import DIRECTION_RULES, VALUE_RULES

    p = sub.add_parser("offline", help="offline step metrics: TM, GR, SR, Pass@1 / Pass@k, Mind2Web metrics")
    _data_args(p)
    _policy_args(p)
    p.add_argument("--value-rule", default="auto", choices=["auto", *VALUE_RULES],
                   help="text value match: auto (the dataset's), exact, f1 (GUI-Libra), anls (GUI-Odyssey), "
                   "substring (UI-S1), none (AITW: text not compared)")
    p.add_argument("--direction-rule", default="auto", choices=["auto", *DIRECTION_RULES],
                   help="scroll/swipe direction match: auto (the dataset's), exact, axis (AITW: up~down), "
                   "any (UI-S1: any swipe)")
    p.add_argument("--samples", type=int, default=0, help="sampled predictions per step for Pass@k (0: greedy only)")
    p.add_argument("--k", type=int, default=None, help="k of Pass@k (default: --samples)")
    p.add_argument("--temperature", type=float, default=1.0, help="model temperature of the Pass@k samples")
    p.add_argument("--mind2web", action="store_true", default=None, help="also report Mind2Web Ele.Acc/Op.F1/Step SR")
    p.add_argument("--history-steps", type=int, default=None,
                   help="recorded previous steps shown to the policy (default: the history window it was trained "
                   "with, from its guirl_prompt.json)")
    p.set_defaults(func=run_offline_cmd)


def _judge(sub) -> None:
    p = sub.add_parser("judge", help="LLM-as-judge outcome and compliance of recorded episodes (Lite-Bench)")
    _data_args(p)
    p.add_argument("--judge", default="openai", help="registered judge: openai, rule_outcome, ground_truth")
    add_pairs_option(p, "--judge-arg", "judge argument (YAML value), e.g. base_url=http://127.0.0.1:8000/v1, "
                     "model=NAME")
    add_option(p, "--judge-steps", type=int, default=18, help="steps of each episode shown to the judge (default 18)",
               deprecated=["--max-steps"])
    p.set_defaults(func=run_judge_cmd)


def build_policies(args: argparse.Namespace, temperature: float = 0.0):
    """``(greedy_policy, sampling_policy)`` from ``--policy`` or ``--model``."""
    from guirl.rollout.policy import ModelPolicy, as_policy

    if args.policy:
        policy = as_policy(args.policy)
        return policy, policy
    greedy = ModelPolicy.load(args.model, fmt=args.format, temperature=0.0, max_new_tokens=args.max_new_tokens,
                              seed=args.seed)
    sampler = ModelPolicy(greedy.model, fmt=args.format, temperature=temperature, max_new_tokens=args.max_new_tokens,
                          seed=args.seed)
    return greedy, sampler


def _finish(args, results: dict, report) -> int:
    from guirl.eval.pipeline import write_outputs

    paths = write_outputs(args.out, results, report)
    print(json.dumps(results["metrics"], indent=1))
    print(f"wrote {paths['results']}" + (f" and {paths['report']}" if "report" in paths else ""))
    return 0


def run_grounding_cmd(args: argparse.Namespace) -> int:
    from guirl.eval.pipeline import run_grounding

    check_out_dir(args.out)
    episodes, root = load_cli_data(args)
    policy, _ = build_policies(args)
    results, report = run_grounding(episodes, root, policy, args.format, args.rule, args.viewer_limit, args.limit,
                                    args.curves)
    return _finish(args, results, report)


def run_offline_cmd(args: argparse.Namespace) -> int:
    from guirl.eval.pipeline import run_offline

    check_out_dir(args.out)
    episodes, root = load_cli_data(args)
    policy, sampler = build_policies(args, args.temperature)
    if args.history_steps is None:  # a model is prompted as it was trained; other policies see 3 steps
        spec = getattr(getattr(policy, "model", None), "prompt", None)
        args.history_steps = spec.history_window if spec is not None else 3
    results, report = run_offline(
        episodes, root, policy, args.format, args.rule, args.value_rule, sampler, args.samples, args.k, args.seed,
        args.viewer_limit, args.limit, args.curves, args.mind2web, args.history_steps, args.direction_rule,
    )
    return _finish(args, results, report)


def run_judge_cmd(args: argparse.Namespace) -> int:
    from guirl.eval.pipeline import run_judge

    check_out_dir(args.out)
    judge = judge_from_options(args.judge, args.judge_arg)
    episodes, root = load_cli_data(args)
    results, report = run_judge(episodes, root, judge, args.judge_steps, args.viewer_limit, args.limit, args.curves)
    return _finish(args, results, report)

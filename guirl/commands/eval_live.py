"""``guirl eval live``: Lite-Bench on live episodes (run, export JSON logs, judge outcome and compliance).

Example::

    guirl eval live --env sim --tasks desktop.ground web.search_open --episodes-per-task 4 \\
        --model checkpoints/base-agent-tiny --judge ground_truth --out runs/live-sim

runs the episodes (capped at ``--max-episode-steps``, default 18), writes ``episodes.jsonl``,
``images/<id>/`` (step screenshots, ``final.png``, ``log.json``), ``verdicts.jsonl`` and
``summary.json`` under ``--out``, and prints success by the judge and by the environment,
compliance, masked judge calls, and the judge's agreement with the environment (2x2 table).
See docs/live_eval.md.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from guirl.commands import (
    UsageError,
    add_option,
    add_overwrite_flag,
    add_pairs_option,
    judge_from_options,
    parse_pairs,
    refuse_to_overwrite,
)


def add_live_parser(eval_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``live`` sub-command to the ``guirl eval`` parser."""
    parser = eval_subparsers.add_parser(
        "live",
        help="Lite-Bench: run live episodes, export JSON logs, judge outcome and compliance",
        description="Run --episodes-per-task episodes of every task (capped at --max-episode-steps), export each as "
        "a JSON log with PNG screenshots, judge outcome and compliance with --judge, and report success by the judge and by the "
        "environment, compliance, masked judge calls and the judge's agreement with the environment.",
    )
    parser.add_argument("--env", default="sim", help="registered environment name (default: sim)")
    parser.add_argument("--tasks", nargs="+", default=None, help="task names, space or comma separated")
    add_option(parser, "--episodes-per-task", type=int, default=4, help="episodes per task (seeds SEED, SEED+1, ...)",
               deprecated=["--episodes"])
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--model", default=None, help="guirl model checkpoint directory to evaluate")
    who.add_argument("--policy", default=None,
                     help="'scripted' (the environment's reference policy) or 'package.module:callable'")
    parser.add_argument("--judge", required=True, help="registered judge: ground_truth, rule_outcome, openai, ...")
    add_pairs_option(parser, "--judge-arg", "judge argument (YAML value), e.g. base_url=http://127.0.0.1:8000/v1, "
                     "model=NAME", deprecated_json=["--judge-params"])
    parser.add_argument("--format", default=None, help="action format of text outputs (default: the model's)")
    parser.add_argument("--temperature", type=float, default=0.0, help="model sampling temperature (0 = greedy)")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="most tokens a model generates per step")
    add_option(parser, "--max-episode-steps", type=int, default=18, help="step cap per episode (Lite-Bench: 18)",
               deprecated=["--max-steps"])
    parser.add_argument("--workers", type=int, default=1, help="environments in parallel worker processes")
    parser.add_argument("--history-steps", type=int, default=None,
                        help="previous steps shown to the policy (default: a model's own prompt spec, else 3)")
    parser.add_argument("--history-images", type=int, default=None,
                        help="how many of them keep their screenshot (default: the model's spec, else 0)")
    parser.add_argument("--seed", type=int, default=0, help="first episode seed")
    add_pairs_option(parser, "--env-arg", "environment argument (YAML value), e.g. preset=coarse")
    parser.add_argument("--out", required=True, help="directory for episodes, logs, verdicts.jsonl, summary.json")
    add_overwrite_flag(parser, "live evaluation")
    parser.set_defaults(func=run_live)
    return parser


def env_arguments(args: argparse.Namespace, tasks: list[str | None]) -> dict[str, Any]:
    """``--env-arg`` pairs; on ``sim`` the step cap is also the world's own limit, and the domain is the
    tasks' domain when they share one."""
    kwargs = parse_pairs(args.env_arg, "--env-arg")
    if args.env == "sim":
        kwargs.setdefault("max_steps", args.max_episode_steps)
        domains = {t.split(".")[0] for t in tasks if t and "." in t}
        if len(domains) == 1:
            kwargs.setdefault("domain", domains.pop())
    return kwargs


def build_policy(args: argparse.Namespace):
    from guirl.eval.online import scripted_policy_for
    from guirl.rollout.policy import ModelPolicy, as_policy

    if args.model is not None:
        if not (Path(args.model) / "config.json").is_file():
            raise UsageError(f"--model {args.model}: not a checkpoint directory (no config.json there); "
                             "pass a guirl checkpoint, e.g. checkpoints/base-agent-tiny")
        return ModelPolicy.load(args.model, fmt=args.format, temperature=args.temperature,
                                max_new_tokens=args.max_new_tokens, seed=args.seed)
    if args.policy == "scripted":
        try:
            return scripted_policy_for(args.env)
        except ValueError as err:
            raise UsageError(f"--policy scripted: {err}") from None
    return as_policy(args.policy)


def run_live(args: argparse.Namespace) -> int:
    from guirl.commands.eval_online import history_from_args
    from guirl.envs.base import ENVS, available_envs
    from guirl.eval.live import evaluate_live, format_live
    from guirl.judges import available_judges

    try:
        ENVS.get(args.env)  # an environment an optional extra provides names the extra
    except KeyError:
        raise UsageError(f"--env {args.env!r} is not a registered environment; "
                         f"choose one of {available_envs()}") from None
    if args.judge not in available_judges():
        raise UsageError(f"--judge {args.judge!r} is not a registered judge; choose one of {available_judges()}")
    if args.episodes_per_task < 1 or args.max_episode_steps < 1:
        raise UsageError(f"--episodes-per-task and --max-episode-steps must be >= 1, got {args.episodes_per_task} "
                         f"and {args.max_episode_steps}")
    tasks = [t for item in (args.tasks or []) for t in item.split(",") if t] or [None]
    env_kwargs = env_arguments(args, tasks)
    out = Path(args.out)
    refuse_to_overwrite(out, ("episodes.jsonl", "summary.json"), "live evaluation", args.overwrite)
    judge = judge_from_options(args.judge, args.judge_arg)
    policy = build_policy(args)
    if args.overwrite:
        for name in ("episodes.jsonl", "summary.json", "verdicts.jsonl"):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "images", ignore_errors=True)
    report, _, episodes = evaluate_live(
        args.env, tasks, args.episodes_per_task, policy, judge, out, judge_name=args.judge,
        max_steps=args.max_episode_steps,
        workers=args.workers, env_kwargs=env_kwargs, seed=args.seed,
        history=history_from_args(args, policy), action_format=args.format,
    )
    if all(not ep.steps and ep.extra.get("crashed") for ep in episodes):
        raise UsageError(f"every episode failed to start ({episodes[0].failure_reason}); "
                         "fix --tasks or --env-arg")
    print(format_live(report, args.judge))
    print(f"logs: {out}/images/<id>/log.json; summary: {out}/summary.json")
    return 0

"""``guirl eval online``: success rate of a policy in a live environment.

Example::

    guirl eval online --env miniwob --tasks click-button enter-text --episodes 20 \\
        --policy scripted --out runs/eval-miniwob

prints, per task, the success rate with its 95% Wilson interval and the mean
number of steps, and writes the trajectories (episodes.jsonl + screenshots)
and summary.json under ``--out``.
"""

from __future__ import annotations

import argparse
from typing import Any

import yaml


def add_online_parser(eval_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``online`` sub-command to the ``guirl eval`` parser."""
    parser = eval_subparsers.add_parser(
        "online",
        help="run a policy in a live environment (MiniWoB++, sim) and report success per task",
        description="Run EPISODES episodes of every task with a policy (scripted reference, a Python callable, "
        "or a guirl model), print success rate with a confidence interval and mean steps per task, and "
        "write the trajectories.",
    )
    parser.add_argument("--env", default="miniwob", help="registered environment name (default: miniwob)")
    parser.add_argument(
        "--tasks", nargs="+", default=None, help="task names, space or comma separated (MiniWoB: click-button ...)"
    )
    parser.add_argument("--episodes", type=int, default=10, help="episodes per task (seeds SEED, SEED+1, ...)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument(
        "--policy",
        default=None,
        help="'scripted' (the environment's reference policy) or 'package.module:callable' taking a PolicyInput",
    )
    who.add_argument("--model", default=None, help="guirl model checkpoint directory to evaluate")
    parser.add_argument("--format", default=None, help="action format of text outputs (default: the model's)")
    parser.add_argument("--temperature", type=float, default=0.0, help="model sampling temperature (0 = greedy)")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="most tokens a model generates per step")
    parser.add_argument("--max-steps", type=int, default=10, help="step limit per episode")
    parser.add_argument("--workers", type=int, default=1, help="environments in parallel worker processes")
    parser.add_argument("--history-steps", type=int, default=None,
                        help="previous steps shown to the policy (default: a model's own prompt spec, else 3)")
    parser.add_argument("--history-images", type=int, default=None,
                        help="how many of them keep their screenshot (default: the model's spec, else 0)")
    parser.add_argument("--seed", type=int, default=0, help="first episode seed")
    parser.add_argument(
        "--episode-time-limit",
        type=float,
        default=600.0,
        help="MiniWoB: raise each task's wall-clock limit to this many seconds (<= 0 keeps the task's own)",
    )
    parser.add_argument(
        "--env-arg", action="append", default=[], metavar="KEY=VALUE", help="extra environment argument (YAML value)"
    )
    parser.add_argument("--out", default=None, help="directory for episodes.jsonl, screenshots and summary.json")
    parser.set_defaults(func=run_online)
    return parser


def parse_env_args(pairs: list[str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--env-arg {pair!r} must look like KEY=VALUE")
        kwargs[key.strip()] = yaml.safe_load(value)
    return kwargs


def history_from_args(args: argparse.Namespace, policy):
    """The history the flags ask for; without flags a model gets the one it was trained with."""
    from guirl.rollout.history import WindowHistory
    from guirl.rollout.runner import default_history

    if args.history_steps is None and args.history_images is None:
        return default_history(policy) if args.model else WindowHistory()
    steps = 3 if args.history_steps is None else args.history_steps
    return WindowHistory(steps, args.history_images or 0)


def run_online(args: argparse.Namespace) -> int:
    from guirl.eval.online import evaluate_online, format_table, scripted_policy_for
    from guirl.rollout.policy import ModelPolicy, as_policy

    env_kwargs = parse_env_args(args.env_arg)
    if args.env == "miniwob":
        env_kwargs.setdefault("episode_time_limit_s", args.episode_time_limit if args.episode_time_limit > 0 else None)
    tasks = [t for item in (args.tasks or []) for t in item.split(",") if t] or [None]
    if args.model:
        policy = ModelPolicy.load(
            args.model, fmt=args.format, temperature=args.temperature, max_new_tokens=args.max_new_tokens, seed=args.seed
        )
    elif args.policy in (None, "scripted"):
        policy = scripted_policy_for(args.env)
    else:
        policy = as_policy(args.policy)
    rows, _ = evaluate_online(
        args.env,
        tasks,
        args.episodes,
        policy,
        max_steps=args.max_steps,
        workers=args.workers,
        out_dir=args.out,
        env_kwargs=env_kwargs,
        seed=args.seed,
        history=history_from_args(args, policy),
        action_format=args.format,
    )
    print(format_table(rows))
    if args.out:
        print(f"trajectories: {args.out}/episodes.jsonl")
    return 0

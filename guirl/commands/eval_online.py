"""``guirl eval online``: success rate of a policy in a live environment.

Example::

    guirl eval online --env miniwob --tasks click-button enter-text --episodes-per-task 20 \\
        --policy scripted --out runs/eval-miniwob

prints, per task, the success rate with its 95% Wilson interval and the mean
number of steps, and writes the trajectories (episodes.jsonl + screenshots)
and summary.json under ``--out``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from guirl.commands import UsageError, add_option, add_pairs_option, check_out_dir, parse_pairs


def add_online_parser(eval_subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``online`` sub-command to the ``guirl eval`` parser."""
    parser = eval_subparsers.add_parser(
        "online",
        help="run a policy in a live environment (MiniWoB++, sim) and report success per task",
        description="Run --episodes-per-task episodes of every task with a policy (scripted reference, a Python callable, "
        "or a guirl model), print success rate with a confidence interval and mean steps per task, and "
        "write the trajectories.",
    )
    parser.add_argument("--env", default="miniwob", help="registered environment name (default: miniwob)")
    parser.add_argument(
        "--tasks", nargs="+", default=None, help="task names, space or comma separated (MiniWoB: click-button ...)"
    )
    add_option(parser, "--episodes-per-task", type=int, default=10, help="episodes per task (seeds SEED, SEED+1, ...)",
               deprecated=["--episodes"])
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
    add_option(parser, "--max-episode-steps", type=int, default=10, help="step cap per episode (default 10)",
               deprecated=["--max-steps"])
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
    add_pairs_option(parser, "--env-arg", "environment argument (YAML value), e.g. domain=web")
    parser.add_argument("--out", default=None, help="directory for episodes.jsonl, screenshots and summary.json")
    parser.set_defaults(func=run_online)
    return parser


def parse_env_args(pairs: list[str]) -> dict[str, Any]:
    """``--env-arg`` pairs as keyword arguments (a malformed pair is a ``UsageError``, a ``ValueError``)."""
    return parse_pairs(pairs, "--env-arg")


def history_from_args(args: argparse.Namespace, policy):
    """The history the flags ask for; without flags a model gets the one it was trained with."""
    from guirl.rollout.runner import default_history
    from guirl.rollout.window import WindowHistory

    if args.history_steps is None and args.history_images is None:
        return default_history(policy) if args.model else WindowHistory()
    steps = 3 if args.history_steps is None else args.history_steps
    return WindowHistory(steps, args.history_images or 0)


def run_online(args: argparse.Namespace) -> int:
    from guirl.envs.base import ENVS, available_envs
    from guirl.eval.online import evaluate_online, format_table, scripted_policy_for
    from guirl.rollout.policy import ModelPolicy, as_policy

    env_kwargs = parse_env_args(args.env_arg)
    try:
        ENVS.get(args.env)  # an environment an optional extra provides names the extra
    except KeyError:
        raise UsageError(f"--env {args.env!r} is not a registered environment; "
                         f"choose one of {available_envs()}") from None
    if args.episodes_per_task < 1 or args.max_episode_steps < 1:
        raise UsageError(f"--episodes-per-task and --max-episode-steps must be >= 1, got {args.episodes_per_task} "
                         f"and {args.max_episode_steps}")
    if args.model and not (Path(args.model) / "config.json").is_file():
        raise UsageError(f"--model {args.model}: not a checkpoint directory (no config.json there); "
                         "pass a guirl checkpoint, e.g. checkpoints/base-agent-tiny")
    if args.out:
        check_out_dir(args.out)
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
        args.episodes_per_task,
        policy,
        max_steps=args.max_episode_steps,
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

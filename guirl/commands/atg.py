"""``guirl datagen atg``: LiteGUI's generate-verify-correct trajectory generation in a live environment.

A guirl model proposes each step's action, a verifier judge votes on it
(``--votes``), a rejected proposal is retried with the verifier's reasons as
negative constraints (``--retries``); successful episodes go to
``OUT/episodes.jsonl``, failed ones to ``OUT/failed.jsonl`` (PNGs under
``OUT/images/``, every proposal and vote in ``Step.extra["atg"]``, counts in
``OUT/atg_manifest.json``). See :mod:`guirl.datagen.atg` and docs/atg.md.

:func:`add_parser` adds the ``atg`` verb to the ``datagen`` group's sub-parsers.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from guirl.commands import (
    UsageError,
    add_option,
    add_overwrite_flag,
    add_pairs_option,
    judge_from_options,
    parse_pairs,
    refuse_to_overwrite,
)

OUTPUT_MARKERS = ("episodes.jsonl", "failed.jsonl", "atg_manifest.json")


def add_parser(verbs: argparse._SubParsersAction) -> None:
    """Add ``atg`` to the ``datagen`` group's sub-parsers ``verbs``."""
    parser = verbs.add_parser(
        "atg",
        help="LiteGUI ATG: propose, verify 3 times, correct with the verifier's reasons, keep successful episodes",
        description="Run a guirl model in a live environment; a verifier judges every proposed action --votes times "
        "and the step is committed when at least --yes-needed votes are Yes; otherwise the proposer retries with the "
        "rejected actions and reasons in its prompt, up to --retries times, and then the iteration with the most Yes "
        "votes is executed. Successful episodes go to OUT/episodes.jsonl, failed ones to OUT/failed.jsonl.",
    )
    parser.add_argument("--env", default="sim", help="registered environment (default sim, the built-in world)")
    add_pairs_option(parser, "--env-arg", "environment argument (YAML value), e.g. preset=coarse",
                     deprecated_json=["--env-params"])
    parser.add_argument("--tasks", required=True,
                        help="comma-separated task names, e.g. desktop.open_file,web.shopping")
    add_option(parser, "--episodes-per-task", type=int, default=5, help="episodes per task (default 5)",
               deprecated=["--episodes"])
    parser.add_argument("--model", required=True, help="guirl model directory of the proposer (GUI model)")
    parser.add_argument("--verifier", default="ground_truth_verify",
                        help="judge name of the verifier (ground_truth_verify, openai, checkpoint, ...)")
    add_pairs_option(parser, "--verifier-arg", "verifier judge argument (YAML value), e.g. "
                     "base_url=http://127.0.0.1:8000/v1, model=judge", deprecated_json=["--verifier-params"])
    parser.add_argument("--votes", type=int, default=3, help="verifier votes per proposal (default 3)")
    parser.add_argument("--yes-needed", type=int, default=2, help="Yes votes that commit a proposal (default 2)")
    parser.add_argument("--retries", type=int, default=3, help="N: proposals after a rejected first one (default 3)")
    parser.add_argument("--tie-break", choices=("earliest", "latest"), default="earliest",
                        help="fallback among the iterations with the most Yes votes (paper: latest)")
    parser.add_argument("--temperature", type=float, default=0.7, help="temperature of the retries (default 0.7)")
    parser.add_argument("--no-feedback", action="store_true",
                        help="retry without showing the rejected proposals and reasons (plain resampling)")
    add_option(parser, "--max-episode-steps", type=int, default=18,
               help="step cap per episode (default 18, Lite-Bench)", deprecated=["--max-steps"])
    parser.add_argument("--history-steps", type=int, default=None,
                        help="previous outputs in the prompt (default: the proposer's own prompt spec; LiteGUI: 3)")
    parser.add_argument("--history-images", type=int, default=None,
                        help="of those, shown with screenshots (default: the proposer's spec; LiteGUI: 2; capped at "
                             "--history-steps)")
    parser.add_argument("--max-new-tokens", type=int, default=80, help="proposal length cap (default 80)")
    parser.add_argument("--world-seed", type=int, default=9_000_000,
                        help="world seed of each task's first episode (then +1); default 9000000, outside gen-data's")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled retries")
    parser.add_argument("--device", default="cpu", help="device for the model (cpu, cuda)")
    parser.add_argument("--out", required=True, help="output directory")
    add_overwrite_flag(parser, "dataset of ATG trajectories")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not (Path(args.model) / "config.json").is_file():
        raise UsageError(f"--model: {args.model} is not a model directory (no config.json); "
                         "build one with `guirl init-model` or train one")
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    if not tasks:
        raise UsageError("--tasks: give at least one task name, e.g. --tasks desktop.open_file")
    if args.episodes_per_task < 1:
        raise UsageError(f"--episodes-per-task must be >= 1, got {args.episodes_per_task}")
    env_params = parse_pairs(args.env_arg, "--env-arg")
    refuse_to_overwrite(args.out, OUTPUT_MARKERS, "dataset of ATG trajectories", args.overwrite)
    verifier = judge_from_options(args.verifier, args.verifier_arg, "--verifier", "--verifier-arg")
    from guirl.datagen.atg import ATGConfig, Proposer, generate_atg
    from guirl.envs.base import make_env
    from guirl.models.load import load_policy

    if args.history_steps is None or args.history_images is None:  # a model gets the history it was trained with
        from guirl.models.prompts import PromptSpec

        spec = PromptSpec.load(args.model)
        if args.history_steps is None:
            args.history_steps = spec.history_window
        if args.history_images is None:
            args.history_images = spec.history_images
    try:
        config = ATGConfig(votes=args.votes, yes_needed=args.yes_needed, retries=args.retries,
                           tie_break=args.tie_break, temperature=args.temperature, feedback=not args.no_feedback,
                           max_new_tokens=args.max_new_tokens, max_steps=args.max_episode_steps,
                           history_steps=args.history_steps,
                           history_images=min(args.history_images, args.history_steps), seed=args.seed)
        for task in tasks:  # fail before loading the model: a bad task name or env parameter
            make_env(args.env, task=task, **env_params).close()
    except (ValueError, KeyError, TypeError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        raise UsageError(str(message)) from None
    start = time.perf_counter()
    proposer = Proposer.from_policy(load_policy(args.model, device=args.device))
    metrics = generate_atg(args.env, tasks, args.episodes_per_task, proposer, verifier, args.out, config,
                           world_seed=args.world_seed, env_kwargs=env_params)
    for key, value in metrics.items():
        print(f"{key}: {value:g}")
    print(f"wrote {Path(args.out) / 'episodes.jsonl'} in {time.perf_counter() - start:.1f}s")
    return 0

"""``guirl datagen error-recovery``: InfiGUI-R1 error-recovery scenarios from a policy's sampled mistakes.

Samples N actions per recorded step of ``gen-data`` trajectories from a guirl
model (one batched ``HFEngine.generate`` call per chunk of steps), finds the
error-prone steps (0 < success rate < 1), executes one wrong sample in the
built-in world and writes error-escape / back-on-track samples to
``OUT/episodes.jsonl`` (+ PNGs, ``error_recovery_manifest.json``). See
:mod:`guirl.datagen.error_recovery` and docs/error_recovery.md.

``guirl datagen explore``: LiteGUI multi-solution exploration. Re-infers the
last step of every window of at most 3 recorded steps N times, de-duplicates
the parsed samples and writes ``OUT/candidates.jsonl`` + ``OUT/manifest.json``
for human verification (oracle pre-labels on built-in world trajectories). See
:mod:`guirl.datagen.explore` and docs/explore.md.

This module owns the ``datagen`` verb group: :data:`DATAGEN_VERBS` lists the
functions that each add one verb's sub-parser (a verb in another module adds
its ``add_parser``-style function to the list).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from guirl.commands import UsageError, add_option, add_overwrite_flag, check_episodes_and_model, refuse_to_overwrite


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("datagen", help="generate training data by running a policy (in the built-in world)",
                                  description="Data generation that runs a policy on recorded or live screens.")
    verbs = group.add_subparsers(dest="datagen_verb", metavar="<datagen verb>")
    verbs.required = True
    for add_verb in DATAGEN_VERBS:
        add_verb(verbs)


def add_error_recovery_parser(verbs: argparse._SubParsersAction) -> None:
    parser = verbs.add_parser(
        "error-recovery",
        help="InfiGUI-R1 error-escape / back-on-track samples from a policy's sampled mistakes",
        description="Sample N actions per recorded step, find error-prone steps (some samples right, some wrong), "
        "execute one wrong sample in the built-in world, and write error-escape (screen after the mistake, target = "
        "the oracle's valid actions there) and back-on-track (original screen after the escape, target = A*_t) samples.",
    )
    parser.add_argument("--episodes", required=True, help="gen-data trajectories .jsonl (e.g. trajectories/train.jsonl)")
    parser.add_argument("--model", required=True, help="guirl model directory of the policy that makes the mistakes")
    parser.add_argument("--out", required=True, help="output directory (episodes.jsonl, PNGs, manifest)")
    parser.add_argument("--samples", type=int, default=8, help="actions sampled per step (N, default 8)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default 1 = off)")
    parser.add_argument("--max-new-tokens", type=int, default=80, help="generation length per sample (default 80)")
    parser.add_argument("--scorer", choices=("match", "oracle"), default="match",
                        help="'match': step success against A*_t (match_action); 'oracle': the world's judge")
    parser.add_argument("--noop", choices=("skip", "keep"), default="skip",
                        help="wrong actions with no visible effect: skip them, or keep (escape sample only)")
    parser.add_argument("--steps-per-call", type=int, default=64, help="steps whose prompts share one generate call")
    parser.add_argument("--max-batch-rows", type=int, default=64, help="HFEngine rows (steps x samples) per forward pass")
    add_option(parser, "--limit-steps", type=int, default=None, help="sample at most this many recorded steps",
               deprecated=["--max-steps"])
    parser.add_argument("--device", default="cpu", help="device for the model (cpu, cuda)")
    parser.add_argument("--seed", type=int, default=0, help="seed of sampling and of the wrong / escape choices")
    add_overwrite_flag(parser, "error-recovery dataset")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    check_episodes_and_model(args.episodes, args.model)
    refuse_to_overwrite(args.out, ("episodes.jsonl", "error_recovery_manifest.json"), "error-recovery dataset",
                        args.overwrite)
    from guirl.data.io import DataError, read_episodes
    from guirl.datagen.error_recovery import ErrorRecoveryConfig, build_error_recovery_data
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    try:
        config = ErrorRecoveryConfig(samples=args.samples, temperature=args.temperature, top_p=args.top_p,
                                     max_new_tokens=args.max_new_tokens, scorer=args.scorer, noop=args.noop,
                                     steps_per_call=args.steps_per_call, max_steps=args.limit_steps, seed=args.seed)
        episodes = read_episodes(args.episodes)
    except (ValueError, DataError) as err:
        raise UsageError(str(err)) from None
    start = time.perf_counter()
    policy = load_policy(args.model, device=args.device)
    engine = HFEngine.from_policy(policy, max_batch_rows=args.max_batch_rows)
    counts = build_error_recovery_data(engine, policy.prompt, policy.frame_for, episodes, Path(args.episodes).parent,
                                       args.out, config)
    for key, value in counts.items():
        print(f"{key}: {value}")
    print(f"wrote {Path(args.out) / 'episodes.jsonl'} in {time.perf_counter() - start:.1f}s")
    return 0


def add_explore_parser(verbs: argparse._SubParsersAction) -> None:
    parser = verbs.add_parser(
        "explore",
        help="LiteGUI multi-solution exploration: sampled candidate actions per step for human verification",
        description="Cut recorded trajectories into windows of at most --window steps, re-infer the last step of each "
        "--samples times, de-duplicate the parsed actions (same type and value; same a11y element or points within "
        "--tolerance x max(W, H)) and write OUT/candidates.jsonl + OUT/manifest.json. On built-in world trajectories "
        "the oracle pre-labels each candidate (oracle_label); the rest await human verification.",
    )
    parser.add_argument("--episodes", required=True, help="recorded trajectories .jsonl (e.g. gen-data's trajectories/train.jsonl)")
    parser.add_argument("--model", required=True, help="guirl model directory that re-infers the steps")
    parser.add_argument("--out", required=True, help="output directory (candidates.jsonl, manifest.json)")
    parser.add_argument("--samples", type=int, default=5, help="completions per step (N, default 5)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default 1 = off)")
    parser.add_argument("--max-new-tokens", type=int, default=80, help="generation length per sample (default 80)")
    parser.add_argument("--window", type=int, default=3, help="steps per window, the re-inferred one included (default 3)")
    parser.add_argument("--tolerance", type=float, default=0.04,
                        help="points closer than this x max(W, H) are one candidate when the a11y tree does not decide")
    parser.add_argument("--no-oracle", action="store_true", help="leave every oracle_label null (all for people)")
    parser.add_argument("--steps-per-call", type=int, default=64, help="steps whose prompts share one generate call")
    parser.add_argument("--max-batch-rows", type=int, default=64, help="HFEngine rows (steps x samples) per forward pass")
    add_option(parser, "--limit-steps", type=int, default=None, help="explore at most this many recorded steps",
               deprecated=["--max-steps"])
    parser.add_argument("--device", default="cpu", help="device for the model (cpu, cuda)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    add_overwrite_flag(parser, "exploration")
    parser.set_defaults(func=run_explore)


def run_explore(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    check_episodes_and_model(args.episodes, args.model)
    refuse_to_overwrite(args.out, ("candidates.jsonl", "manifest.json"), "exploration", args.overwrite)
    from guirl.data.io import DataError, read_episodes
    from guirl.datagen.explore import ExploreConfig, explore, write_exploration
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine

    try:
        config = ExploreConfig(samples=args.samples, temperature=args.temperature, top_p=args.top_p,
                               max_new_tokens=args.max_new_tokens, window=args.window, tolerance=args.tolerance,
                               oracle=not args.no_oracle, steps_per_call=args.steps_per_call,
                               max_steps=args.limit_steps, seed=args.seed)
        episodes = read_episodes(args.episodes)
    except (ValueError, DataError) as err:
        raise UsageError(str(err)) from None
    start = time.perf_counter()
    policy = load_policy(args.model, device=args.device)
    engine = HFEngine.from_policy(policy, max_batch_rows=args.max_batch_rows)
    explored, counts = explore(engine, policy.prompt, policy.frame_for, episodes, Path(args.episodes).parent, config)
    path = write_exploration(args.out, args.episodes, args.model, explored, counts, config)
    for key, value in counts.items():
        print(f"explore/{key}: {value}")
    print(f"wrote {path} in {time.perf_counter() - start:.1f}s")
    return 0


#: each adds one ``guirl datagen <verb>`` sub-parser; a verb defined elsewhere appends its function here
def add_atg_parser(verbs: argparse._SubParsersAction) -> None:
    from guirl.commands.atg import add_parser

    add_parser(verbs)


def add_verify_parser(verbs: argparse._SubParsersAction) -> None:
    from guirl.commands.verify import add_parser

    add_parser(verbs)


def add_own_prefix_parser(verbs: argparse._SubParsersAction) -> None:
    from guirl.commands.own_prefix import add_parser

    add_parser(verbs)


DATAGEN_VERBS = [add_error_recovery_parser, add_explore_parser, add_atg_parser, add_verify_parser,
                 add_own_prefix_parser]

"""``guirl gen-data``: write datasets from the built-in GUI world's oracle expert.

Writes, under ``--out``: ``grounding/{train,test_seed}.jsonl``,
``trajectories/{train,test_seed,test_task,recovery}.jsonl`` (guirl Episode
JSONL, read back with ``guirl.data.read_episodes``), their PNG screenshots,
and ``manifest.json`` (config, splits, counts). Seeded: the same command
writes the same files.
"""

from __future__ import annotations

import argparse

from guirl.commands import UsageError, add_overwrite_flag, refuse_to_overwrite


def _names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gen-data",
        help="generate grounding / trajectory / error-recovery datasets from the built-in sim world",
        description="Roll the sim world's oracle expert out on seeded tasks and write guirl Episode JSONL + PNGs, "
        "with every valid action (A*_t), sub-goals, subtask plans, and held-out splits by task and by seed.",
    )
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--domains", default="desktop,web,mobile", help="comma-separated domains (desktop,web,mobile)")
    parser.add_argument("--preset", default="coarse", help="UI scale preset: coarse (default), realistic, hd")
    parser.add_argument("--tasks", default=None, help="comma-separated multi-step task families (default: all)")
    parser.add_argument("--heldout-tasks", default="desktop.export_document,web.fill_form,mobile.find_contact",
                        help="families kept out of training, written to test_task.jsonl ('' for none)")
    parser.add_argument("--train-per-task", type=int, default=20, help="training trajectories per family")
    parser.add_argument("--test-per-task", type=int, default=5, help="test trajectories per family and test split")
    parser.add_argument("--grounding-train", type=int, default=100, help="grounding samples per domain (train)")
    parser.add_argument("--grounding-test", type=int, default=20, help="grounding samples per domain (test_seed)")
    parser.add_argument("--recovery-prob", type=float, default=0.3,
                        help="chance that a training step also yields an error-escape / back-on-track pair")
    parser.add_argument("--seed", type=int, default=0, help="base seed (splits use disjoint seed ranges)")
    add_overwrite_flag(parser, "dataset")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from guirl.envs.sim.generation import DatasetConfig, generate_dataset
    from guirl.envs.sim.presets import DOMAINS, PRESET_NAMES

    domains = _names(args.domains)
    bad = [d for d in domains if d not in DOMAINS]
    if bad or not domains:
        raise UsageError(f"--domains: unknown {bad or domains}; choose from {list(DOMAINS)}")
    if args.preset not in PRESET_NAMES:
        raise UsageError(f"--preset: unknown {args.preset!r}; choose from {list(PRESET_NAMES)}")
    for name in ("train_per_task", "test_per_task", "grounding_train", "grounding_test"):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 0")
    refuse_to_overwrite(args.out, ("manifest.json", "grounding", "trajectories"), "dataset", args.overwrite)
    config = DatasetConfig(out_dir=args.out, domains=domains, preset=args.preset,
                           tasks=_names(args.tasks) if args.tasks else None,
                           heldout_tasks=_names(args.heldout_tasks), train_per_task=args.train_per_task,
                           test_per_task=args.test_per_task, grounding_train=args.grounding_train,
                           grounding_test=args.grounding_test, recovery_prob=args.recovery_prob, seed=args.seed)
    try:
        manifest = generate_dataset(config)
    except ValueError as err:
        raise UsageError(str(err)) from None
    for key, count in manifest["counts"].items():
        print(f"{key}: {count} episodes")
    print(f"{manifest['steps']} steps in {manifest['seconds']:.1f} s -> {args.out}")
    return 0

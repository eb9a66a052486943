"""``guirl reasoning-data``: InfiGUI-R1 stage 1 reasoning-injection data (docs/methods.md section 3).

Optionally finds the reasoning-bottleneck steps with a base model
(``--bottleneck-model``), then has a teacher (the built-in world's oracle or
a guirl model) write reasoning + action from each step's spatial
description, keeps only correct pairs (rejection sampling) and writes
``OUT/episodes.jsonl`` (+ screenshots, ``reasoning_manifest.json``) for
``guirl train sft --config recipes/reasoning_injection_tiny.yaml``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from guirl.commands import UsageError, add_option, add_overwrite_flag, refuse_to_overwrite


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reasoning-data",
        help="build InfiGUI-R1 reasoning-injection SFT data (bottleneck steps, teacher reasoning, rejection sampling)",
        description="Find reasoning-bottleneck steps (the base model fails with the goal but succeeds when also "
        "given the sub-goal), have a teacher write reasoning + action from the a11y tree's spatial description, "
        "keep the pairs whose action is correct, and write episodes JSONL that `guirl train sft` reads.",
    )
    parser.add_argument("--episodes", required=True, help="input episodes .jsonl (with valid_actions, a11y, sub-goals)")
    parser.add_argument("--out", required=True, help="output directory (episodes.jsonl, images, manifest)")
    parser.add_argument("--teacher", default="oracle",
                        help="'oracle' (templated reasoning from a11y tree + sub-goal), a guirl model directory, or "
                        "the http(s) URL of an OpenAI-compatible server (text-only LLM teacher, as in the paper)")
    parser.add_argument("--teacher-model", default="teacher",
                        help="model name sent to the --teacher server (e.g. Qwen/QwQ-32B)")
    parser.add_argument("--compress-url", default=None,
                        help="OpenAI-compatible server that compresses the spatial description (default: rules only)")
    parser.add_argument("--compress-model", default="compressor", help="model name sent to --compress-url")
    parser.add_argument("--bottleneck-model", default=None,
                        help="base model directory for bottleneck detection (default: no detection, every step)")
    parser.add_argument("--samples", type=int, default=1, help="bottleneck samples per condition (k)")
    parser.add_argument("--rule", choices=("majority", "any", "all"), default="majority",
                        help="when k samples make a condition correct (default: majority)")
    parser.add_argument("--temperature", type=float, default=None,
                        help="bottleneck sampling temperature (default: 0 = greedy for k=1, else 1.0)")
    parser.add_argument("--attempts", type=int, default=3, help="teacher tries per step (rejection sampling)")
    parser.add_argument("--teacher-temperature", type=float, default=0.7, help="model teacher sampling temperature")
    parser.add_argument("--no-teacher-subgoal", action="store_true", help="do not give the teacher the sub-goal")
    parser.add_argument("--format", default=None,
                        help="output format the teacher / bottleneck models write (default: each model's prompt spec)")
    parser.add_argument("--student-format", default="qwen_computer_use",
                        help="output format of the SFT student (the recipe's `format`): kept actions must be writable "
                        "in it and the oracle only targets such actions ('none' = no check)")
    parser.add_argument("--max-new-tokens", type=int, default=256, help="generation length for model teachers")
    parser.add_argument("--spatial-coords", choices=("box", "center"), default="box",
                        help="coordinates in the spatial description: element boxes or centres")
    parser.add_argument("--spatial-frame", choices=("screen", "relative"), default="screen",
                        help="coordinate frame of the spatial description: screen pixels or relative 0-1000")
    parser.add_argument("--max-elements", type=int, default=60, help="most elements in a spatial description")
    parser.add_argument("--reasoning-coords", choices=("none", "screen", "relative"), default="none",
                        help="oracle teacher: also write the target's coordinates in the reasoning (default: none)")
    parser.add_argument("--reasoning-style", choices=("full", "compact"), default="full",
                        help="oracle teacher: the full reasoning (observation, goal, sub-goal, element, action) or its "
                             "compact spatial part (sub-goal, element and place, action) for a small student")
    parser.add_argument("--images", choices=("copy", "relative"), default="copy",
                        help="copy screenshots into --out, or reference the originals by relative path")
    parser.add_argument("--keep-spatial", action="store_true", help="store each step's spatial description in extra")
    add_option(parser, "--limit-steps", type=int, default=None,
               help="stop after this many checked steps (bottleneck detection) and teacher steps",
               deprecated=["--max-steps"])
    parser.add_argument("--device", default="cpu", help="device for models (cpu, cuda)")
    parser.add_argument("--seed", type=int, default=0, help="seed for sampling and oracle phrasing")
    add_overwrite_flag(parser, "reasoning dataset")
    parser.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    for name in ("samples", "attempts", "max_new_tokens", "max_elements"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.limit_steps is not None and args.limit_steps < 1:
        raise UsageError(f"--limit-steps must be >= 1, got {args.limit_steps}")
    if not Path(args.episodes).is_file():
        raise UsageError(f"--episodes: {args.episodes} does not exist; write one with `guirl gen-data`")
    for flag, path in (("--teacher", args.teacher), ("--bottleneck-model", args.bottleneck_model)):
        if path is None or path == "oracle" or path.startswith(("http://", "https://")):
            continue
        if not (Path(path) / "config.json").is_file():
            raise UsageError(f"{flag}: {path} is not a model directory (no config.json); use 'oracle' for --teacher "
                             "or build one with `guirl init-model`")
    from guirl.actions import available_formats

    for flag, name in (("--format", args.format), ("--student-format", args.student_format)):
        if name not in (None, "none") and name not in available_formats():
            raise UsageError(f"{flag}: unknown {name!r}; choose from {available_formats()}")


def _teacher(args: argparse.Namespace, student_format: str | None, cache: Path):
    """The teacher --teacher names: oracle, an OpenAI-compatible server URL, or a model directory."""
    from guirl.datagen.teachers import JudgeTeacher, ModelTeacher, OracleTeacher
    from guirl.judges import make_judge

    if args.teacher == "oracle":
        return OracleTeacher(seed=args.seed, coords=args.reasoning_coords, fmt=student_format, style=args.reasoning_style)
    if args.teacher.startswith(("http://", "https://")):
        judge = make_judge("openai", base_url=args.teacher, model=args.teacher_model, cache_dir=cache,
                           temperature=args.teacher_temperature, max_tokens=args.max_new_tokens)
        return JudgeTeacher(judge, fmt=args.format or student_format or "qwen_computer_use")
    from guirl.models.load import load_policy

    return ModelTeacher(load_policy(args.teacher, device=args.device), fmt=args.format,
                        temperature=args.teacher_temperature, max_new_tokens=args.max_new_tokens, seed=args.seed)


def run(args: argparse.Namespace) -> int:
    _check(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from guirl.data.io import DataError, read_episodes
    from guirl.datagen.bottleneck import SamplingModelPolicy, find_bottlenecks
    from guirl.datagen.reasoning import ReasoningDataConfig, build_reasoning_data, write_manifest
    from guirl.datagen.spatial import SpatialOptions
    from guirl.judges import make_judge

    start = time.perf_counter()
    try:
        episodes = read_episodes(args.episodes)
    except DataError as err:
        raise UsageError(f"--episodes: {err}") from None
    root, out = Path(args.episodes).parent, Path(args.out)
    refuse_to_overwrite(out, ("episodes.jsonl", "reasoning_manifest.json"), "reasoning dataset", args.overwrite)
    metrics: dict[str, float] = {}
    only = None
    if args.bottleneck_model:
        from guirl.models.load import load_policy

        temperature = args.temperature if args.temperature is not None else (0.0 if args.samples == 1 else 1.0)
        base = SamplingModelPolicy(load_policy(args.bottleneck_model, device=args.device), fmt=args.format,
                           temperature=temperature, seed=args.seed)
        report = find_bottlenecks(base, episodes, root, samples=args.samples, rule=args.rule,
                                  max_steps=args.limit_steps)
        metrics.update(report.counts)
        only = report.keys()
    student_format = None if args.student_format == "none" else args.student_format
    cache = out / "judge_cache"
    teacher = _teacher(args, student_format, cache)
    spatial = SpatialOptions(coords=args.spatial_coords, frame=args.spatial_frame, max_elements=args.max_elements)
    config = ReasoningDataConfig(attempts=args.attempts, teacher_subgoal=not args.no_teacher_subgoal, spatial=spatial,
                                 images=args.images, keep_spatial=args.keep_spatial, max_steps=args.limit_steps,
                                 student_format=student_format)
    compressor = None
    if args.compress_url:
        compressor = make_judge("openai", base_url=args.compress_url, model=args.compress_model, cache_dir=cache)
    metrics.update(build_reasoning_data(episodes, root, out / "episodes.jsonl", teacher, config=config, only=only,
                                        judge=compressor, teacher_name=args.teacher))
    write_manifest(out / "reasoning_manifest.json", metrics,
                   {k: v for k, v in vars(args).items() if k not in ("func", "guirl_prog")})
    for key, value in metrics.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    print(f"wrote {out / 'episodes.jsonl'} in {time.perf_counter() - start:.1f}s")
    return 0

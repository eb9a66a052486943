"""``guirl datagen own-prefix``: the OPD student's own samples on recorded steps, for a teacher that must stay
right after the student has left the reference (LiteGUI guided OPD; :mod:`guirl.trainers.own_prefix`).

Samples ``--samples`` completions of the student per recorded step, as OPD draws them (temperature 1.0, top-p
0.98), and writes ``OUT/samples.jsonl`` (one row per step: episode id, step index, the sample texts) and
``OUT/manifest.json``. SFT's ``own_prefix_samples=[OUT/samples.jsonl]`` (with the same episodes as
``train_data``) turns every sample that leaves its reference into a teacher example: the student's tokens up
to the first differing one as context, the reference's continuation as the target.

:func:`add_parser` adds the verb to the ``datagen`` group's sub-parsers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from guirl.commands import UsageError, add_overwrite_flag, check_episodes_and_model, refuse_to_overwrite

OUTPUT_MARKERS = ("samples.jsonl", "manifest.json")


def add_parser(verbs: argparse._SubParsersAction) -> None:
    """Add ``own-prefix`` to the ``datagen`` group's sub-parsers ``verbs``."""
    parser = verbs.add_parser(
        "own-prefix",
        help="LiteGUI OPD: the student's own samples per recorded step, for teacher SFT on its own prefixes",
        description="Sample the OPD student --samples times on every recorded step (temperature 1.0, top-p 0.98 as "
        "OPD) and write OUT/samples.jsonl; `guirl train sft ... own_prefix_samples=[OUT/samples.jsonl]` on the same "
        "episodes adds, per sample that leaves its reference, a guided example whose answer is the sample up to "
        "its first differing token (context, not in the loss) and then the reference's continuation.",
    )
    parser.add_argument("--episodes", required=True, help="recorded trajectories .jsonl (the teacher's train_data)")
    parser.add_argument("--model", required=True, help="guirl model directory of the OPD student")
    parser.add_argument("--out", required=True, help="output directory (samples.jsonl, manifest.json)")
    parser.add_argument("--samples", type=int, default=4, help="completions per step (default 4)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default 1.0, OPD's)")
    parser.add_argument("--top-p", type=float, default=0.98, help="nucleus sampling mass (default 0.98, OPD's)")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="generation length per sample (default 64)")
    parser.add_argument("--steps-per-call", type=int, default=16, help="steps whose prompts share one generate call")
    parser.add_argument("--max-batch-rows", type=int, default=64, help="HFEngine rows (steps x samples) per forward pass")
    parser.add_argument("--limit-steps", type=int, default=None, help="sample at most this many recorded steps")
    parser.add_argument("--device", default="cpu", help="device for the model (cpu, cuda)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    add_overwrite_flag(parser, "set of student samples")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    check_episodes_and_model(args.episodes, args.model)
    if args.samples < 1:
        raise UsageError(f"--samples must be >= 1, got {args.samples}")
    refuse_to_overwrite(args.out, OUTPUT_MARKERS, "set of student samples", args.overwrite)
    from guirl.models.load import load_policy
    from guirl.rollout.hf_engine import HFEngine
    from guirl.trainers.own_prefix import SAMPLES_FILE, own_prefix_data, sample_students
    from guirl.trainers.rl_common import load_states
    from guirl.trainers.sft import SFTConfig

    states = load_states([args.episodes])[: args.limit_steps]
    start = time.perf_counter()
    policy = load_policy(args.model, device=args.device)
    engine = HFEngine.from_policy(policy, max_batch_rows=args.max_batch_rows)
    rows = sample_students(engine, policy.prompt, policy.frame_for, states, args.samples, args.temperature,
                           args.top_p, args.max_new_tokens, args.seed, args.steps_per_call)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / SAMPLES_FILE
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # how many teacher examples SFT (its default thought settings, the student's format) will make of them
    cfg = SFTConfig(model=args.model, format=policy.prompt.fmt, train_data=[args.episodes],
                    own_prefix_samples=[str(path)])
    examples = own_prefix_data(cfg, policy.processor.tokenizer, policy.frame_for)
    counts = {"steps": len(rows), "samples": sum(len(r["samples"]) for r in rows), "leave_reference": len(examples)}
    manifest = {"episodes": str(Path(args.episodes).resolve()), "model": str(args.model), "samples": args.samples,
                "temperature": args.temperature, "top_p": args.top_p, "max_new_tokens": args.max_new_tokens,
                "seed": args.seed, "counts": counts}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for key, value in counts.items():
        print(f"own-prefix/{key}: {value}")
    print(f"wrote {path} in {time.perf_counter() - start:.1f}s; train the teacher on it with "
          f"`guirl train sft --config recipes/litegui_teacher_own_prefix_tiny.yaml own_prefix_samples=[{path}]`")
    return 0

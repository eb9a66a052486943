"""``guirl data convert|inspect``: public datasets as guirl trajectories, and a look before training.

Examples::

    guirl data inspect --dataset-format gui_odyssey --data GUI-Odyssey/annotations --out runs/inspect-odyssey
    guirl data convert --dataset-format multimodal_mind2web --data osunlp/Multimodal-Mind2Web --split test_task \\
        --out data/mm2w-test-task
    guirl data convert --episodes data/mm2w-test-task --to hf --out data/mm2w-test-task-hf

``convert`` writes ``OUT/episodes.jsonl`` + ``OUT/images/`` (``--to guirl``, the default) or
``OUT/data/train-00000-of-00001.parquet`` with the screenshots embedded (``--to hf``; read it back with
``--dataset-format guirl_hf``). ``inspect`` prints counts by action type, image sizes and the range of
every target as a fraction of its image, and draws ``--draw`` steps with their targets to
``OUT/inspect.png`` (``OUT/summary.json`` holds the numbers).
"""

from __future__ import annotations

import argparse
import json

from guirl.commands import UsageError, check_out_dir
from guirl.commands.eval import add_dataset_args, load_cli_data


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "data",
        help="convert public datasets to guirl trajectories (or a Hugging Face dataset); inspect them",
        description="Read any supported dataset layout; write it as guirl trajectories or look at it.",
    )
    sub = parser.add_subparsers(dest="data_command", metavar="<action>")
    sub.required = True
    for name, func, help_ in (
        ("convert", run_convert, "write a dataset as guirl episodes.jsonl + images, or as a parquet HF dataset"),
        ("inspect", run_inspect, "counts, image sizes, coordinate ranges, and a drawing of a few steps"),
    ):
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("--episodes", help="guirl episodes .jsonl (or its directory) instead of a public dataset")
        add_dataset_args(p)
        p.add_argument("--limit", type=int, default=None, help="only the first N episodes")
        p.add_argument("--out", required=True, help="output directory")
        if name == "convert":
            p.add_argument("--to", choices=["guirl", "hf"], default="guirl",
                           help="guirl: episodes.jsonl + images/; hf: parquet with embedded screenshots")
            p.add_argument("--hf-split", default="train", help="split name of the --to hf parquet file")
        else:
            p.add_argument("--draw", type=int, default=6, help="steps drawn with their targets (0: none)")
        p.set_defaults(func=func)
    return parser


def _load(args: argparse.Namespace):
    if not args.episodes and not (args.dataset_format and args.data):
        raise UsageError("give --episodes FILE, or --dataset-format NAME with --data PATH")
    check_out_dir(args.out)
    episodes, root = load_cli_data(args)
    if args.limit:
        episodes = episodes[: args.limit]
    if not episodes:
        raise UsageError(f"{args.data or args.episodes}: holds no episodes (every record skipped?)")
    return episodes, root


def run_convert(args: argparse.Namespace) -> int:
    from guirl.data.convert import export_dataset, export_hub

    episodes, root = _load(args)
    if args.to == "hf":
        path = export_hub(episodes, root, args.out, split=args.hf_split)
    else:
        path = export_dataset(episodes, root, args.out)
    steps = sum(len(ep.steps) for ep in episodes)
    print(f"wrote {len(episodes)} episodes, {steps} steps to {path}")
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    from pathlib import Path

    from guirl.eval.inspect import contact_sheet, summarize

    episodes, root = _load(args)
    summary = summarize(episodes, root)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(summary, indent=1))
    if args.draw:
        contact_sheet(episodes, root, n=args.draw).save(out / "inspect.png")
        print(f"drew {min(args.draw, summary['steps'])} steps to {out / 'inspect.png'}")
    if summary["coordinates"]["outside_image"]:
        print(f"warning: {summary['coordinates']['outside_image']} target coordinates lie outside their image "
              "(wrong layout, swapped x/y, or page coordinates?): see coordinates.outside_examples")
    return 0

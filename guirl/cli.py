"""``guirl <verb>``: the command line. Each verb lives in guirl/commands/.

A verb module defines ``add_parser(subparsers)`` which registers its parser
and sets ``func`` (called with the parsed arguments; returns an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: verb modules under guirl.commands, in the order ``--help`` lists them.
VERB_MODULES = ["demo", "init_model", "gen_data", "reasoning_data", "train", "eval"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="guirl",
        description="guirl: post-training GUI agents (LiteGUI, ComputerSD, InfiGUI-R1, GUI-Libra, CCPO).",
    )
    sub = parser.add_subparsers(dest="verb", metavar="<verb>")
    sub.required = True
    for name in VERB_MODULES:
        importlib.import_module(f"guirl.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())

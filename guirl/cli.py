"""``guirl <verb>``: the command line. Each verb lives in guirl/commands/.

A verb module defines ``add_parser(subparsers)`` which registers its parser
and sets ``func`` (called with the parsed arguments; returns an exit code).
Bad input is one line on stderr, ``guirl <verb>: error: ...``, and exit
status 2 (see :mod:`guirl.commands`); docs/cli.md lists the vocabulary.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from guirl.commands import GuirlArgumentParser, call_verb, label_verbs

#: verb modules under guirl.commands, in the order ``--help`` lists them.
VERB_MODULES = ["rl_demo", "demo", "init_model", "gen_data", "reasoning_data", "error_recovery", "data", "train", "eval"]


def build_parser() -> argparse.ArgumentParser:
    parser = GuirlArgumentParser(
        prog="guirl",
        description="guirl: post-training GUI agents (LiteGUI, ComputerSD, InfiGUI-R1, GUI-Libra, CCPO).",
    )
    sub = parser.add_subparsers(dest="verb", metavar="<verb>")
    sub.required = True
    for name in VERB_MODULES:
        importlib.import_module(f"guirl.commands.{name}").add_parser(sub)
    label_verbs(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a verb; bad input (a missing file, an invalid config or value, an optional extra not installed)
    is one line on stderr and exit code 2, not a traceback (``GUIRL_DEBUG=1`` shows the traceback)."""
    args = build_parser().parse_args(argv)
    return call_verb(args.func, args, args.guirl_prog)


if __name__ == "__main__":
    sys.exit(main())

"""``guirl <verb>``: the command line. Each verb lives in guirl/commands/.

A verb module defines ``add_parser(subparsers)`` which registers its parser
and sets ``func`` (called with the parsed arguments; returns an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: verb modules under guirl.commands, in the order ``--help`` lists them.
VERB_MODULES = ["rl_demo", "demo", "init_model", "gen_data", "reasoning_data", "error_recovery", "data", "train", "eval"]


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
    """Run a verb; bad input (a missing file, an invalid config or value) is one line on stderr and exit
    code 2, not a traceback (``GUIRL_DEBUG=1`` shows the traceback)."""
    import os

    from pydantic import ValidationError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, KeyError, ValidationError) as err:
        if os.environ.get("GUIRL_DEBUG"):
            raise
        message = str(err) if not isinstance(err, KeyError) else str(err.args[0] if err.args else err)
        print(f"guirl {args.verb}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

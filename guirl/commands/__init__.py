"""One module per ``guirl`` verb (see :mod:`guirl.cli`), plus the guard the
verbs that create a model or a dataset share."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_overwrite_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--overwrite", action="store_true", help=f"replace the {what} already in --out")


def refuse_to_overwrite(out: str | Path, markers: tuple[str, ...], what: str, overwrite: bool) -> None:
    """Stop (with the fix in the message) when ``out`` already holds a ``what``,
    recognised by any of ``markers``, and ``--overwrite`` was not given."""
    found = [m for m in markers if (Path(out) / m).exists()]
    if found and not overwrite:
        raise SystemExit(
            f"--out {out} already holds a {what} ({found[0]}); choose another directory, "
            "or pass --overwrite to replace it"
        )

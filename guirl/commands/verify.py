"""``guirl datagen verify``: the human verification web app for explored candidate actions.

Serves ``--data DIR`` (``manifest.json`` + ``candidates.jsonl`` from
``guirl datagen explore``) on ``--host``/``--port``; annotators mark each
candidate True / False, marks go to ``--db`` (SQLite, default
``DIR/verify.sqlite``). ``--export OUT.jsonl`` writes the trajectories with
the verified positives added to A*_t and exits. See docs/verify_app.md.
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from pathlib import Path

from guirl.commands import GuirlArgumentParser, UsageError, call_verb, check_out_dir


def add_parser(verbs: argparse._SubParsersAction) -> None:
    """Add ``verify`` to the ``datagen`` group's sub-parsers."""
    parser = verbs.add_parser(
        "verify", help="web app to mark explored candidate actions True / False (verified positives -> A*_t)",
        description="Serve a page where annotators mark each explored candidate action True or False; marks are "
        "saved in SQLite as they are made. --export writes the trajectories with the verified positives as A*_t.")
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="`guirl datagen explore` output (manifest.json, candidates.jsonl)")
    parser.add_argument("--db", default=None, help="SQLite file of the marks (default DIR/verify.sqlite)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default 0: any free port; the URL is printed)")
    parser.add_argument("--export", default=None, metavar="OUT.jsonl",
                        help="write the trajectories with verified positives added to valid_actions, then exit")
    parser.add_argument("--overwrite", action="store_true", help="with --export: replace OUT.jsonl if it exists")


def run(args: argparse.Namespace) -> int:
    from guirl.data.io import DataError
    from guirl.datagen.verify_app.loader import load_project

    try:
        project = load_project(args.data)
    except DataError as err:
        raise UsageError(str(err)) from None
    db_path = Path(args.db) if args.db else Path(args.data) / "verify.sqlite"
    if args.export:
        return _export(project, db_path, args.export, args.overwrite)
    return serve(project, db_path, args.host, args.port)


def _export(project, db_path: Path, out: str, overwrite: bool) -> int:
    from guirl.data.io import DataError
    from guirl.datagen.verify_app.export import export_verified

    if not db_path.is_file():
        raise UsageError(f"--db {db_path} does not exist; mark candidates with `guirl datagen verify --data "
                         f"{project.directory}` first, or pass the --db it used")
    check_out_dir(Path(out).parent, "--export")
    store = open_store(db_path)
    try:
        result = export_verified(project, store.labels(), out, overwrite=overwrite)
    except FileExistsError as err:
        raise UsageError(f"--export: {err} (pass --overwrite)") from None
    except (ValueError, DataError) as err:
        raise UsageError(f"--export: {err}") from None
    finally:
        store.close()
    print(f"wrote {result['episodes']} episodes with {result['positives']} verified positives "
          f"({result['negatives']} marked false) to {result['path']} (merge: {result['merged_by']})")
    return 0


def open_store(db_path: Path):
    """The mark store of ``--db``; SQLite's refusals (WAL mode, a file that is not a database, no permission)
    are a :class:`UsageError` naming ``--db``."""
    from guirl.datagen.verify_app.store import MarkStore, StoreError

    try:
        return MarkStore(db_path)
    except (OSError, sqlite3.Error, StoreError) as err:
        message = str(err).removeprefix(f"{db_path}: ")
        raise UsageError(f"--db {db_path}: {message}") from None


def serve(project, db_path: Path, host: str, port: int) -> int:
    from guirl.datagen.verify_app.server import PortInUse, check_port, make_verify_server, url_of

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    try:
        check_port(host, port)  # before the database is created
    except PortInUse as err:
        raise UsageError(f"--port {port}: {err.strerror}; pass another --port, or --port 0 for any free one") from None
    except OSError as err:
        raise UsageError(f"--host {host} --port {port}: cannot serve there ({err.strerror or err})") from None
    store = open_store(db_path)
    try:
        server, store = make_verify_server(project, store, host, port)
    except OSError as err:  # e.g. the port was taken since the check
        store.close()
        raise UsageError(f"--host {host} --port {port}: cannot serve there ({err.strerror or err})") from None
    print(f"guirl datagen verify: {len(project.steps)} steps, {project.n_candidates()} candidates; marks in {db_path}")
    print(f"serving {url_of(server)} (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        store.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run without the ``guirl`` CLI: ``python -m guirl.commands.verify --data DIR``."""
    parser = GuirlArgumentParser(prog="guirl datagen verify", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return call_verb(run, parser.parse_args(argv), parser.prog)


if __name__ == "__main__":
    sys.exit(main())

"""One module per ``guirl`` verb (see :mod:`guirl.cli`), plus what the verbs share: the one error path,
deprecated option spellings, ``KEY=VALUE`` options, and the guards on ``--out``.

The error path: a verb raises :class:`UsageError` (or a ``ValueError``, ``FileNotFoundError``, ``KeyError``,
a path ``OSError`` or a missing optional extra, :class:`guirl.extras.MissingExtra`) for bad input, and
:func:`call_verb` prints it as one line on stderr, ``guirl <verb>: error: ...``, and returns exit status 2;
argparse's own errors (:class:`GuirlArgumentParser`) are one line and exit 2 too. ``GUIRL_DEBUG=1`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


class UsageError(ValueError):
    """Bad input on the command line; the message names the option and, where there is one, the fix."""


class GuirlArgumentParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (``guirl <verb>: error: ...``, exit 2), not usage + error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):
        # argparse reports unknown arguments from the top-level parser; name the verb they were given to
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            prog = getattr(namespace, "guirl_prog", self.prog)
            self.exit(2, f"{prog}: error: unrecognized arguments: {' '.join(extras)} (see {prog} --help)\n")
        return namespace


def label_verbs(parser: argparse.ArgumentParser) -> None:
    """Set ``guirl_prog`` (e.g. ``"guirl eval live"``) as a default of every (sub-)parser under ``parser``:
    argparse copies the innermost parser's defaults last, so the parsed namespace names the verb run."""
    parser.set_defaults(guirl_prog=parser.prog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(p): p for p in action.choices.values()}.values():  # aliases share one parser
                label_verbs(sub)


#: errors that are the user's input, not guirl's bug (the message says what to fix)
USER_ERRORS = (ValueError, FileNotFoundError, KeyError, PermissionError, NotADirectoryError, IsADirectoryError,
               FileExistsError)


def error_message(err: BaseException) -> str | None:
    """One line for a user error, None for anything else (which keeps its traceback)."""
    from guirl.extras import missing_extra_message

    if isinstance(err, ImportError):
        message = missing_extra_message(err)
    elif not isinstance(err, USER_ERRORS):
        return None
    elif isinstance(err, KeyError):
        message = str(err.args[0] if err.args else err)
    elif isinstance(err, OSError) and err.strerror and err.filename:
        message = f"{err.filename}: {err.strerror}"
    else:
        message = str(err)
    if message is None:
        return None
    return "; ".join(line.strip() for line in message.splitlines() if line.strip()) or type(err).__name__


def call_verb(func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace, prog: str) -> int:
    """Run a verb's function; a user error is one line on stderr, ``{prog}: error: ...``, and exit status 2."""
    try:
        return int(func(args) or 0)
    except Exception as err:  # a user error becomes one line; anything else is re-raised with its traceback
        message = error_message(err)
        if message is None or os.environ.get("GUIRL_DEBUG"):
            raise
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 2


# -- deprecated spellings ---------------------------------------------------------------------------------------
def warn_deprecated(prog: str, old: str, new: str) -> None:
    print(f"{prog}: warning: {old} is deprecated and will be removed in the next release; use {new}", file=sys.stderr)


class _DeprecatedAlias(argparse.Action):
    """An old spelling of ``target``: hidden from --help, warns once per use, then acts as ``target``
    (``convert`` first turns its value into the values ``target`` takes, e.g. a JSON object into KEY=VALUE)."""

    def __init__(self, option_strings, dest, target: argparse.Action, new: str,
                 convert: Callable[[str], list[Any]] | None = None, **kwargs):
        kwargs.update(nargs=target.nargs, metavar=target.metavar)
        if convert is None:
            kwargs.update(type=target.type, choices=target.choices)
        super().__init__(option_strings, dest, **kwargs)
        self.target, self.new, self.convert = target, new, convert

    def __call__(self, parser, namespace, values, option_string=None):
        warn_deprecated(parser.prog, option_string or self.option_strings[0], self.new)
        if self.convert is None:
            self.target(parser, namespace, values, option_string)
            return
        try:
            converted = self.convert(values)
        except ValueError as err:
            raise argparse.ArgumentError(self, str(err)) from None
        for value in converted:
            self.target(parser, namespace, value, option_string)


def add_option(parser: argparse.ArgumentParser, *flags: str, deprecated: Iterable[str] = (),
               convert: Callable[[str], list[Any]] | None = None, new: str | None = None,
               **kwargs) -> argparse.Action:
    """``parser.add_argument(*flags, **kwargs)``, and each ``deprecated`` spelling as a hidden alias that warns
    (``convert``: the alias takes another syntax, e.g. JSON, turned into the values of ``flags[0]``; ``new``: how
    the warning writes the new spelling, default ``flags[0]``)."""
    action = parser.add_argument(*flags, **kwargs)
    for old in deprecated:
        parser.add_argument(old, dest=action.dest, help=argparse.SUPPRESS, action=_DeprecatedAlias, target=action,
                            new=new or flags[0], convert=convert, default=argparse.SUPPRESS)
    return action


def json_to_pairs(text: str) -> list[str]:
    """A JSON object (the old ``--*-params`` syntax) as ``KEY=VALUE`` strings (the values written as JSON,
    which :func:`parse_pairs` reads back as YAML)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"not valid JSON ({err.msg} at char {err.pos}): {text!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object like '{{\"key\": 1}}', got {text!r}")
    return [f"{key}={json.dumps(item)}" for key, item in value.items()]


# -- KEY=VALUE options ------------------------------------------------------------------------------------------
def add_pairs_option(parser: argparse.ArgumentParser, flag: str, help: str,
                     deprecated_json: Iterable[str] = ()) -> argparse.Action:
    """A repeatable ``flag KEY=VALUE`` option (YAML values) collected into a list; each ``deprecated_json``
    spelling takes the old JSON-object syntax (``--judge-params '{"k": 1}'``), warns, and adds the same pairs."""
    return add_option(parser, flag, action="append", default=[], metavar="KEY=VALUE", help=f"{help} (repeatable)",
                      deprecated=deprecated_json, convert=json_to_pairs, new=f"{flag} KEY=VALUE (repeatable)")


def parse_pairs(pairs: Iterable[str], flag: str) -> dict[str, Any]:
    """``["k=1", "name=x"]`` -> ``{"k": 1, "name": "x"}`` (values read as YAML); a malformed pair is a
    :class:`UsageError` naming ``flag``."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} {pair!r} must look like KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as err:
            problem = str(getattr(err, "problem", None) or err).splitlines()[0]
            raise UsageError(f"{flag} {pair!r}: the value is not valid YAML ({problem})") from None
    return out


# -- --out --------------------------------------------------------------------------------------------------------
def check_episodes_and_model(episodes: str, model: str) -> None:
    """One line for a datagen verb's two usual inputs: a recorded episodes file and a model directory."""
    if not Path(episodes).is_file():
        raise UsageError(f"--episodes: {episodes} does not exist; write one with `guirl gen-data`")
    if not (Path(model) / "config.json").is_file():
        raise UsageError(f"--model: {model} is not a model directory (no config.json); "
                         "build one with `guirl init-model` or train one")


def add_overwrite_flag(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--overwrite", action="store_true", help=f"replace the {what} already in --out")


def check_out_dir(out: str | Path, flag: str = "--out") -> None:
    """Stop before any work when directory ``out`` cannot be created or written (a file in the way, no
    permission); nothing is created here."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {out}: is a file, not a directory; choose a directory")
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(f"{flag} {out}: cannot create it, {probe} is a file, not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {out}: cannot write in {probe} (permission denied); choose another directory")


def refuse_to_overwrite(out: str | Path, markers: tuple[str, ...], what: str, overwrite: bool) -> None:
    """Stop (with the fix in the message) when ``out`` cannot be written, or already holds a ``what``,
    recognised by any of ``markers``, and ``--overwrite`` was not given."""
    check_out_dir(out)
    found = [m for m in markers if (Path(out) / m).exists()]
    if found and not overwrite:
        raise UsageError(
            f"--out {out} already holds a {what} ({found[0]}); choose another directory, "
            "or pass --overwrite to replace it"
        )


def judge_from_options(name: str, pairs: Iterable[str], name_flag: str = "--judge", arg_flag: str = "--judge-arg"):
    """``make_judge(name, **KEY=VALUE pairs)``; an unknown judge or a wrong argument is a :class:`UsageError`
    naming the options."""
    from guirl.judges import make_judge

    kwargs = parse_pairs(pairs, arg_flag)
    try:
        return make_judge(name, **kwargs)
    except KeyError as err:
        raise UsageError(f"{name_flag} {name}: {err.args[0] if err.args else err}") from None
    except (TypeError, ValueError) as err:
        given = " ".join(f"{arg_flag} {pair}" for pair in pairs)
        raise UsageError(f"{name_flag} {name}{' ' + given if given else ''}: {err}") from None

"""``guirl train <method> --config FILE [key.sub=value ...]``.

Methods are spelled with hyphens (``semi-online``, ``judge-sft``) like every other verb; the underscore
spellings the recipes' first lines use (``semi_online``, ``judge_sft``) are accepted too. ``--help`` of a
method lists the recipes that run it, read from each recipe's own invocation line
(``# guirl train <method> --config recipes/<itself>.yaml``). A run resumes from the newest checkpoint in its
``output_dir``; a checkpoint trained with a different config is refused (the message names the changed
fields) unless ``--allow-config-change`` is given.
"""

from __future__ import annotations

import argparse
import os
import re
from functools import lru_cache
from pathlib import Path

from guirl.commands import check_out_dir
from guirl.trainers.methods import METHODS, canonical_method, resolve_method

#: the checkout's recipes/ (absent from an installed wheel: then no recipe is listed)
ROOT = Path(__file__).resolve().parents[2]
#: a recipe's invocation line, ``# guirl train <method> --config recipes/<file>.yaml``
INVOCATION = re.compile(r"^#\s*guirl train ([A-Za-z_-]+) --config (\S+\.yaml)")


@lru_cache(maxsize=4)
def recipes_by_method(root: Path = ROOT) -> dict[str, list[str]]:
    """method -> the recipes (paths relative to ``root``) whose header comment runs them: the first
    ``# guirl train <method> --config <this recipe>`` line of the leading comment block (the recipe's first line,
    or a later header line in recipes whose first line describes them). A line that runs another file (e.g. an
    accelerate config's example) does not count."""
    found: dict[str, list[str]] = {}
    for path in sorted((root / "recipes").rglob("*.yaml")):
        relative = path.relative_to(root).as_posix()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            if not line.startswith("#"):
                break
            match = INVOCATION.match(line.strip())
            if match and match.group(2) == relative:
                found.setdefault(canonical_method(match.group(1)), []).append(relative)
                break
    return found


def add_parser(sub) -> None:
    parser = sub.add_parser("train", help="train a policy with one of guirl's methods")
    methods = parser.add_subparsers(dest="method", metavar="<method>")
    methods.required = True
    recipes = recipes_by_method()
    for name in METHODS:
        verb = name.replace("_", "-")
        listed = recipes.get(name, [])
        example = f"e.g. --config {listed[0]}" if listed else "see recipes/"
        epilog = ("recipes whose header runs this method:\n" + "\n".join(
            f"  guirl train {verb} --config {r}" for r in listed)) if listed else None
        p = methods.add_parser(verb, aliases=[name] if verb != name else [], help=f"{verb} training ({example})",
                               epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--config", help=f"YAML config file ({example})")
        p.add_argument("--help-config", action="store_true", help="list every config field with its help and exit")
        p.add_argument("--allow-config-change", action="store_true",
                       help="resume from output_dir's checkpoint even though it was trained with a different config "
                       "(without it such a resume is refused and the changed fields are named)")
        p.add_argument("overrides", nargs="*", help="dotted overrides, e.g. optim.lr=1e-4 max_steps=10")
        p.set_defaults(func=_run, method=name)


def _check_output_dir(cfg, allow_config_change: bool) -> None:
    """Before loading anything: ``output_dir`` must be writable, and its checkpoint (if any) must come from this
    config unless ``allow_config_change`` (the trainer checks again on the checkpoint it loads)."""
    if not (hasattr(cfg, "output_dir") and hasattr(cfg, "model_dump")):
        return
    check_out_dir(cfg.output_dir, "output_dir")
    if getattr(cfg, "resume", False) and not allow_config_change:
        from guirl.trainers.checkpoint import check_run_dir

        check_run_dir(cfg.model_dump(mode="json"), cfg.output_dir, log=lambda _: None)  # the trainer warns


def _run(args: argparse.Namespace) -> int:
    from guirl.config import config_help, load_config
    from guirl.trainers.checkpoint import ALLOW_CONFIG_CHANGE_ENV

    config_cls, entry = (resolve_method(s) for s in METHODS[args.method])
    if args.help_config:
        print("\n".join(config_help(config_cls)))
        return 0
    cfg = load_config(config_cls, args.config, args.overrides)
    if args.allow_config_change:
        os.environ[ALLOW_CONFIG_CHANGE_ENV] = "1"  # read where the trainer loads its checkpoint (every stage)
    _check_output_dir(cfg, args.allow_config_change)
    result = entry(cfg)
    from guirl.trainers.core import process_state

    state = process_state()
    state.wait_for_everyone()
    state.destroy_process_group()  # a no-op when run as one process
    if not state.is_main_process:
        return 0
    print(f"trained {result['step']} steps; final model in {result['final_dir']}")
    for key, value in result.get("final_eval", {}).items():
        print(f"{key}: {value:.4f}")
    return 0

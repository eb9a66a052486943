"""``guirl train <method> --config FILE [key.sub=value ...]``."""

from __future__ import annotations

import argparse

#: method -> (config class path, entry point path); both imported lazily.
METHODS = {
    "sft": ("guirl.trainers.sft:SFTConfig", "guirl.trainers.sft:train_sft"),
    "curriculum": ("guirl.trainers.curriculum:CurriculumConfig", "guirl.trainers.curriculum:train_curriculum"),
    "grpo": ("guirl.trainers.grpo:GRPOConfig", "guirl.trainers.grpo:train_grpo"),
    "opd": ("guirl.trainers.opd:OPDConfig", "guirl.trainers.opd:train_opd"),
    "semi_online": ("guirl.trainers.semi_online:SemiOnlineConfig", "guirl.trainers.semi_online:train_semi_online"),
    "computersd": ("guirl.trainers.computersd:ComputerSDConfig", "guirl.trainers.online_rl:train_computersd"),
    "judge_sft": ("guirl.trainers.judge_sft:JudgeSFTConfig", "guirl.trainers.judge_sft:train_judge_sft"),
    "pipeline": ("guirl.trainers.pipeline:PipelineConfig", "guirl.trainers.pipeline:train_pipeline"),
}


def resolve_method(spec: str):
    import importlib

    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def add_parser(sub) -> None:
    parser = sub.add_parser("train", help="train a policy with one of guirl's methods")
    methods = parser.add_subparsers(dest="method", metavar="<method>")
    methods.required = True
    for name in METHODS:
        p = methods.add_parser(name, help=f"{name} training (config: recipes/*{name}*.yaml)")
        p.add_argument("--config", help="YAML config file (see recipes/)")
        p.add_argument("--help-config", action="store_true", help="list every config field with its help and exit")
        p.add_argument("overrides", nargs="*", help="dotted overrides, e.g. optim.lr=1e-4 max_steps=10")
        p.set_defaults(func=_run, method=name)


def _run(args: argparse.Namespace) -> int:
    from guirl.config import config_help, load_config

    config_cls, entry = (resolve_method(s) for s in METHODS[args.method])
    if args.help_config:
        print("\n".join(config_help(config_cls)))
        return 0
    cfg = load_config(config_cls, args.config, args.overrides)
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

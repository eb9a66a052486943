"""The trainers by method name: what ``guirl train <method>`` and ``guirl train pipeline`` stages run.

Lives with the trainers (not the CLI) so the pipeline trainer can read it without importing the command line.
"""

from __future__ import annotations

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


def canonical_method(name: str) -> str:
    """``semi-online`` / ``semi_online`` -> ``semi_online`` (the key of :data:`METHODS`)."""
    return name.replace("-", "_")


def resolve_method(spec: str):
    import importlib

    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)

"""benchmarks/base_agent_levers.py: each lever's training run trains on what the lever names."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import base_agent_levers  # noqa: E402


def _train_data(name: str) -> str:
    cmd = base_agent_levers.sft_command("START", Path("D"), Path("R"), base_agent_levers.LEVERS[name], 10, 1, 0)
    return next(a for a in cmd if a.startswith("train_data="))


def test_auxiliary_lever_drops_recovery_and_grounding_and_the_others_keep_them():
    assert _train_data("k3_thought") == "train_data=[D/trajectories/train.jsonl,D/trajectories/recovery.jsonl," \
                                        "D/grounding/train.jsonl]"
    assert _train_data("k3_thought_data3x") == _train_data("k3_thought")  # the volume comes from the data directory
    assert _train_data("k3_thought_noaux") == "train_data=[D/trajectories/train.jsonl]"


def test_history_and_thought_reach_the_sft_overrides():
    cmd = base_agent_levers.sft_command("START", Path("D"), Path("R"), base_agent_levers.LEVERS["k0_direct"], 10, 1, 0)
    assert {"history_window=0", "with_reasoning=false", "thought=recorded", "model=START", "max_steps=10"} <= set(cmd)

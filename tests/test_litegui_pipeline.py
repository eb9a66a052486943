"""The end-to-end LiteGUI pipeline script (benchmarks/litegui_pipeline.py) on a tiny budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guirl.data import read_episodes

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_pipeline_runs_every_stage_and_resumes(tmp_path):
    root = tmp_path / "pipe"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "litegui_pipeline.py"), "--root", str(root), "--tasks",
           "web.ground", "desktop.open_file", "--atg-episodes", "1", "--atg-max-steps", "3", "--pool-per-task", "2",
           "--opd-steps", "1", "--grpo-steps", "1", "--eval-episodes", "1", "--seeds", "0"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    pool = json.loads((root / "pool" / "pool.json").read_text())
    assert all(sum(counts.values()) == 2 for counts in pool["per_task"].values())
    assert pool["per_task"]["desktop.open_file"]["oracle_seed"] >= 1  # the tiny proposer cannot fill it
    # the data handed to exploration keeps only the executed action; the oracle's sets are kept aside
    pooled = read_episodes(root / "pool" / "episodes.jsonl", check_images=False)
    assert all(s.valid_actions == [s.action] for e in pooled for s in e.steps)
    hidden = (root / "pool" / "oracle_valid_actions.jsonl").read_text().splitlines()
    assert len(hidden) == pool["steps"] and any(len(json.loads(h)["valid_actions"]) > 1 for h in hidden)
    summary = json.loads((root / "explore" / "verify_summary.json").read_text())
    assert summary["marks"] == summary["positives"] + summary["negatives"] > 0
    verified = read_episodes(root / "explore" / "verified.jsonl")  # images resolve from the export's directory
    assert all(s.action in s.valid_actions for e in verified for s in e.steps)
    for name in ("base", "sft-seed0", "opd-seed0", "opd_mdgrpo-seed0"):
        assert (root / "eval" / name / "summary.json").is_file()
    assert "| opd_mdgrpo | 1 |" in out
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "$ guirl" not in again and "| opd_mdgrpo | 1 |" in again  # every stage finished: nothing reruns

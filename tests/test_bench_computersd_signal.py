"""benchmarks/computersd_signal.py: a ComputerSD run's training log read into where its update came from."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import computersd_signal  # noqa: E402


def test_doctests():
    assert doctest.testmod(computersd_signal).failed == 0


def test_a_resumed_log_counts_each_step_once_and_the_cli_writes_the_rows(tmp_path):
    row = {"sampling/groups_equal_reward_frac": 1.0, "train/grad_norm": 0.004, "opsd/loss": 0.01,
           "analyzer/good_frac": 0.1, "opsd/gate_mean": 0.5, "rollout/success": 0.0}
    steps = [{"step": 1, **row}, {"step": 2, **row, "sampling/groups_equal_reward_frac": 0.5, "train/grad_norm": 0.3},
             {"step": 2, **row, "sampling/groups_equal_reward_frac": 0.5, "train/grad_norm": 0.2}]  # resumed at 2
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    out = tmp_path / "signal.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "computersd_signal.py"), "--runs",
                    f"cs/seed0={tmp_path / 'run'}", "--results", str(out)], check=True, capture_output=True)
    got = json.loads(out.read_text())["runs"]["cs/seed0"]
    assert got["steps"] == 2 and got["outcome_steps"] == 0.5 and got["grad_norm_outcome"] == 0.2


def test_a_directory_without_a_log_is_one_line_and_exit_2(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "computersd_signal.py"), "--runs", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "no metrics.jsonl" in run.stderr and "Traceback" not in run.stderr


def test_the_analyzer_mix_of_a_real_agent_partitions_its_live_steps():
    mix = computersd_signal.analyzer_mix(str(ROOT / "checkpoints" / "computersd-start-history-tiny"), 0.0, 1,
                                         ("mobile.toggle_setting", "web.search_open"))
    assert mix["episodes"] == 2 and mix["steps"] >= 2
    both_or_one = mix["consistent"] + mix["effective"] - mix["good"]
    assert abs(both_or_one + mix["neither"] - 1.0) < 1e-3  # every step is consistent, effective, both or neither

"""``benchmarks/rl_recipes.py``'s helpers: run-directory tags and per-run peak RSS (each run's own, not the
largest of every run the benchmark process started before it)."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import rl_recipes  # noqa: E402


def test_doctests():
    assert doctest.testmod(rl_recipes).failed == 0


def test_a_small_run_after_a_large_one_reports_its_own_peak():
    big = [sys.executable, "-c", "b = bytearray(400 * 2**20); b[::4096] = b'x' * len(b[::4096])"]
    _, first = rl_recipes.run_measured(big)
    _, second = rl_recipes.run_measured([sys.executable, "-c", "pass"])
    assert first > 400 and second < first / 2


def test_a_failed_run_raises_with_its_exit_code():
    with pytest.raises(subprocess.CalledProcessError) as err:
        rl_recipes.run_measured([sys.executable, "-c", "raise SystemExit(3)"])
    assert err.value.returncode == 3


def test_a_run_does_not_inherit_the_benchmark_process_peak():
    held = bytearray(500 * 2**20)  # the benchmark process after generating data and evaluating in-process
    held[::4096] = b"x" * len(held[::4096])
    _, peak = rl_recipes.run_measured([sys.executable, "-c", "pass"])
    assert peak < 200
    del held


def test_summary_pairs_every_seed_with_the_base_steps():
    base = {"steps_unseen_seeds": 0.5, "per_step": {"steps_unseen_seeds": [0, 1] * 50}}

    def run(flips: int) -> dict:  # ``flips`` failed base steps turned into successes
        after = [0, 1] * 50
        for i in range(0, 2 * flips, 2):
            after[i] = 1
        return {"wall_s": 600.0, "peak_rss_mb": 2048.0,
                "scores": {"steps_unseen_seeds": sum(after) / 100, "per_step": {"steps_unseen_seeds": after}}}

    results = {"base": base, "setting": {"base_model": "checkpoints/x"},
               "r/seed0": run(20), "r/seed1": run(22), "r/seed2": run(21)}
    row = rl_recipes.summarise(results)["recipes"]["r"]["splits"]["steps_unseen_seeds"]
    assert row["gain"] == 0.21 and row["n"] == 100 and row["passes"] is True
    assert row["paired"]["seed0"]["diff"] == 0.2 and row["paired"]["seed0"]["low"] > 0
    results["r/seed2"] = run(0)  # one seed without a gain: its interval holds 0 and the spread grows
    assert rl_recipes.summarise(results)["recipes"]["r"]["splits"]["steps_unseen_seeds"]["passes"] is False

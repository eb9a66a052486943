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

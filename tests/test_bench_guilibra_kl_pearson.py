"""``benchmarks/guilibra_kl_pearson.py``: its summary (finals over seeds, Pearson's r over every evaluation point)."""

from __future__ import annotations

import doctest
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import guilibra_kl_pearson as bench  # noqa: E402


def test_doctests():
    assert doctest.testmod(bench).failed == 0


def test_pearson_pools_the_start_and_every_seed_and_reports_a_constant_side_as_missing():
    start = {"step": 0, "offline": 0.5, "online": 0.0, "progress": 0.2}
    runs = {f"no_kl/seed{s}": {"wall_s": 120.0, "points": [
        {"step": 50, "offline": 0.5 + 0.1 * s, "online": 0.0, "progress": 0.2 + 0.05 * s},
        {"step": 100, "offline": 0.6 - 0.1 * s, "online": 0.0, "progress": 0.3 - 0.05 * s}]} for s in (0, 1)}
    row = bench.summarise(start, runs, ["no_kl", "kl"])["no_kl"]
    assert row["points"] == 5 and row["seeds"] == 2 and row["wall_min"] == 2.0
    assert row["peak_rss_gb"] is None  # runs recorded before the benchmark measured their RSS
    runs["no_kl/seed1"]["peak_rss_mb"] = 1536.0
    assert bench.summarise(start, runs, ["no_kl"])["no_kl"]["peak_rss_gb"] == 1.5
    xs = [0.5, 0.5, 0.6, 0.6, 0.5]
    ys = [0.2, 0.2, 0.3, 0.25, 0.25]
    assert row["pearson"]["progress"] == round(bench.pearson(xs, ys), 3)
    assert row["pearson"]["online"] is None  # success never moved: no correlation to report
    assert row["final"]["offline"] == {"mean": 0.55, "spread": round(math.sqrt(0.005), 4)}
    assert set(row["curves"]) == {"seed0", "seed1"}

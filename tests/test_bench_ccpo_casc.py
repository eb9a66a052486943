"""``benchmarks/ccpo_casc.py --starts``: each CASC mode's row against CASC off (accuracy, tokens, step time) from
the rl_recipes results and the training runs' metrics."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import ccpo_casc  # noqa: E402
import rl_recipes  # noqa: E402


def _run(tmp_path: Path, name: str, tokens: float, step_s: float) -> str:
    """A training run's metrics.jsonl: 3 logged steps of 4 samples (the first is left out of the step time)."""
    run = tmp_path / name
    run.mkdir()
    row = {"prompts/tokens_mean": tokens, "prompts/qwen25vl_image_tokens_mean": tokens * 2, "prompts/images_mean": 3.0,
           "sampling/step_samples": 4, "time/generate_s": step_s, "time/score_s": 0.0, "time/update_s": 1.0,
           "rollout/match_rate": 0.5, "rewards/total_mean": 0.5}
    first = row | {"time/generate_s": 100.0, "rewards/total_mean": 0.1}
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in (first, row, row, {"eval/x": 1})) + "\n")
    return str(run)


def _results(tmp_path: Path, casc: str, base: list[int], after: dict[int, list[int]], tokens: float, step_s: float):
    name = f"ccpo_semi_online_tiny[3AO-{casc}]"
    out = {"base": {"steps_unseen_seeds": sum(base) / len(base), "per_step": {"steps_unseen_seeds": base}},
           "setting": {"base_model": casc}}
    for seed, vec in after.items():
        out[f"{name}/seed{seed}"] = {"run": _run(tmp_path, f"{casc}{seed}", tokens, step_s), "wall_s": 60.0,
                                     "peak_rss_mb": 1024.0,
                                     "scores": {"steps_unseen_seeds": sum(vec) / len(vec),
                                                "per_step": {"steps_unseen_seeds": vec}}}
    return out


def test_each_mode_is_compared_with_casc_off(tmp_path):
    runs = {"off": _results(tmp_path, "off", [1, 1, 0, 0], {0: [1, 1, 1, 0], 1: [1, 1, 0, 0]}, 400.0, 4.0),
            "max": _results(tmp_path, "max", [1, 0, 0, 0], {0: [1, 0, 0, 0], 1: [0, 0, 0, 0]}, 300.0, 1.0)}
    table = ccpo_casc.casc_table(runs, rl_recipes.summarise)
    off, mx = table["off"], table["max"]
    assert "vs_off" not in off
    assert off["tokens"] == 400.0 and off["step_s"] == 5.0  # 4 s rollout + 1 s update, the first step left out
    assert off["sample_s"] == pytest.approx(10.0 / 8) and off["match_rate"] == 0.5
    assert off["reward_first"] == pytest.approx(0.1) and off["reward_last"] == pytest.approx(0.5)
    assert off["splits"]["steps_unseen_seeds"]["mean"] == pytest.approx(0.625)
    # seed 0 of off wins step 3, seed 1 moves nothing; seed 1 of max loses step 1: steps moved, mean per seed
    assert (off["splits"]["steps_unseen_seeds"]["won"], off["splits"]["steps_unseen_seeds"]["lost"]) == (0.5, 0.0)
    assert (mx["splits"]["steps_unseen_seeds"]["won"], mx["splits"]["steps_unseen_seeds"]["lost"]) == (0.0, 0.5)
    vs = mx["vs_off"]
    assert vs["tokens"] == pytest.approx(-0.25) and vs["qwen25vl_image_tokens"] == pytest.approx(-0.25)
    assert vs["speed"] == pytest.approx(5.0 / 2.0)
    split = vs["steps_unseen_seeds"]
    assert split["start"] == pytest.approx(0.25 - 0.5) and split["after"] == pytest.approx(0.125 - 0.625)
    assert split["spreads"] == pytest.approx(round(0.1768 + 0.1768, 4), abs=1e-3)  # stdev of (0.75, 0.5), (0.25, 0)

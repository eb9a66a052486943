"""The end-to-end LiteGUI pipeline script (benchmarks/litegui_pipeline.py): its results on hand-made evaluations,
its refusals, and every stage on a tiny budget (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guirl.data import read_episodes

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import litegui_pipeline  # noqa: E402


def _played(folder: Path, outcomes: dict[tuple[str, int], int], progress: dict | None = None) -> None:
    """An evaluation directory as ``guirl eval live`` leaves it, its episodes in the order of ``outcomes``."""
    folder.mkdir(parents=True)
    lines = []
    for (task, seed), success in outcomes.items():
        steps = [{"extra": {"progress": p, "milestones": 4}} for p in (progress or {}).get((task, seed), [1])]
        lines.append(json.dumps({"task": task, "success": bool(success), "extra": {"seed": seed}, "steps": steps}))
    (folder / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text("{}")


def test_results_pair_base_and_runs_by_task_and_seed(tmp_path):
    shop, contact, s0, s1 = "web.shopping", "mobile.add_contact", 9_500_000, 9_500_001
    _played(tmp_path / "eval" / "base", {(shop, s0): 0, (shop, s1): 1, (contact, s0): 0, (contact, s1): 0},
            progress={(shop, s0): [1, 3, 2], (contact, s0): [0], (contact, s1): [2]})
    # written in another order than the base's: paired by (task, seed) the run's vector is [1, 1, 0, 1]
    _played(tmp_path / "eval" / "sft-seed0", {(contact, s1): 1, (contact, s0): 0, (shop, s1): 1, (shop, s0): 1})
    _played(tmp_path / "eval" / "sft-seed1", {(shop, s0): 0, (shop, s1): 1, (contact, s0): 0, (contact, s1): 1})
    _played(tmp_path / "eval" / "opd_mdgrpo-seed0", {(shop, s0): 0, (shop, s1): 1, (contact, s0): 0, (contact, s1): 0})
    (tmp_path / "timings.json").write_text(json.dumps({"train-sft-seed0": 60, "train-sft-seed1": 120,
                                                       "train-opd-seed0": 60, "train-opd_mdgrpo-seed0": 120}))
    (tmp_path / "peak_rss.json").write_text(json.dumps({"train-sft-seed0": 1024, "train-sft-seed1": 512,
                                                        "train-opd-seed0": 1024, "train-opd_mdgrpo-seed0": 2048}))
    (tmp_path / "pool").mkdir()
    (tmp_path / "pool" / "pool.json").write_text(json.dumps({"episodes": 8, "steps": 60, "per_task": {
        shop: {"atg": 1, "oracle_seed": 3}, contact: {"atg": 0, "oracle_seed": 4}}}))
    (tmp_path / "explore").mkdir()
    (tmp_path / "explore" / "verify_summary.json").write_text(json.dumps({
        "path": "/somewhere/verified.jsonl", "multi_solution_steps": 10, "hidden_other_solutions": 20,
        "recovered_other_solutions": 5, "recall_other_solutions": 0.25}))

    result = litegui_pipeline.results_summary(tmp_path, [shop, contact], 2, "checkpoints/base-agent-history-tiny")
    sft = result["recipes"]["sft"]["splits"]["episode_success"]
    # base [0, 1, 0, 0] = 0.25; seed 0 [1, 1, 0, 1] = 0.75, differences [1, 0, 0, 1]: mean 0.5, sd sqrt(1/3),
    # half-width 1.96 * 0.577 / 2 = 0.566 (paired in file order instead: [1, -1, 1, 1], half-width 0.98)
    assert sft["base"] == 0.25 and sft["n"] == 4
    assert sft["paired"]["seed0"] == {"diff": 0.5, "low": -0.066, "high": 1.066, "n": 4}
    # seed 1 [0, 1, 0, 1] = 0.5, differences [0, 0, 0, 1]: mean 0.25, sd 0.5, half-width 1.96 * 0.5 / 2 = 0.49
    assert sft["paired"]["seed1"] == {"diff": 0.25, "low": -0.24, "high": 0.74, "n": 4}
    # mean 0.625 over seeds, spread stdev(0.75, 0.5) = 0.1768, gain 0.375 > 2 * spread, but an interval reaches 0
    assert (sft["mean"], sft["spread"], sft["gain"], sft["passes"]) == (0.625, 0.1768, 0.375, False)
    # progress: base failures reach 3/4, 0 and 2/4 of their milestones, the success counts 1: mean 0.5625
    assert result["recipes"]["sft"]["splits"]["episode_progress"]["base"] == 0.5625
    assert result["recipes"]["sft"]["wall_min"] == 1.5 and result["recipes"]["sft"]["peak_rss_gb"] == 1.0
    # opd_mdgrpo's wall is its OPD stage plus its MD-GRPO stage; its peak the larger of the two
    assert result["recipes"]["opd_mdgrpo"]["wall_min"] == 3.0 and result["recipes"]["opd_mdgrpo"]["peak_rss_gb"] == 2.0
    assert result["recipes"]["opd_mdgrpo"]["seeds"] == 1 and result["base_model"] == "checkpoints/base-agent-history-tiny"
    pool = result["pool"]
    assert (pool["atg_share"], pool["per_task"][shop]["atg_share"], pool["per_task"][contact]["atg_share"]) == (0.125, 0.25, 0)
    assert pool["verification"] == {"multi_solution_steps": 10, "hidden_other_solutions": 20,
                                    "recovered_other_solutions": 5, "recall_other_solutions": 0.25}
    # how episodes end (these hand-made ones carry no action: a failure is "other"), and the runs' flips against
    # the base: sft seed 0 wins episodes 1 and 4, seed 1 wins episode 4, neither loses one
    assert result["endings"]["base"] == {"episodes": 4, "success": 1, "finished_early": 0, "step_cap": 0, "other": 3}
    assert result["endings"]["sft"] == {"episodes": 4, "seeds": 2, "success": 2.5, "finished_early": 0, "step_cap": 0,
                                        "other": 1.5, "won": 1.5, "lost": 0}
    # an evaluation that lacks an episode of the setting is refused, not paired with what it has
    with pytest.raises(litegui_pipeline.PipelineError, match="no episode of web.shopping at world seed 9500002 \\(2 of 6 missing\\)"):
        litegui_pipeline.results_summary(tmp_path, [shop, contact], 3, "checkpoints/base-agent-history-tiny")


def test_doctests():
    import doctest

    assert doctest.testmod(litegui_pipeline).failed == 0


@pytest.mark.parametrize("argv, message", [
    (["--tasks", "web.nope"], "unknown task 'web.nope'"),
    (["--tasks", "web.shopping", "web.shopping"], "named twice"),
    (["--eval-episodes", "0"], "--eval-episodes must be 1 or more"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as stop:
        litegui_pipeline.main(["--root", str(tmp_path / "r"), *argv])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_root_run_with_other_arguments_is_refused(tmp_path, capsys):
    (tmp_path / "setting.json").write_text(json.dumps({"tasks": ["web.shopping"], "auto_terminate": True,
                                                       "eval_episodes": 15}))
    with pytest.raises(SystemExit) as stop:
        litegui_pipeline.main(["--root", str(tmp_path), "--tasks", "web.shopping", "--report"])
    assert stop.value.code == 2 and "was run with --auto-terminate; pass the same" in capsys.readouterr().err


@pytest.mark.slow
def test_pipeline_runs_every_stage_and_resumes(tmp_path):
    root, results = tmp_path / "pipe", tmp_path / "litegui_pipeline.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "litegui_pipeline.py"), "--root", str(root), "--tasks",
           "web.ground", "desktop.open_file", "--atg-episodes", "1", "--atg-max-steps", "3", "--pool-per-task", "2",
           "--opd-steps", "1", "--grpo-steps", "1", "--eval-episodes", "1", "--eval-max-steps", "4", "--seeds", "0",
           "--results", str(results)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    pool = json.loads((root / "pool" / "pool.json").read_text())
    assert all(sum(counts.values()) == 2 for counts in pool["per_task"].values())
    assert pool["per_task"]["desktop.open_file"]["oracle_seed"] >= 1  # 3 steps cannot finish it
    # the data handed to exploration keeps only the executed action; the oracle's sets are kept aside
    pooled = read_episodes(root / "pool" / "episodes.jsonl", check_images=False)
    assert all(s.valid_actions == [s.action] for e in pooled for s in e.steps)
    # without auto_terminate the oracle's multi-step episodes end on its finish action
    assert all(e.steps[-1].action.type.value == "terminate" for e in pooled if e.task == "desktop.open_file")
    hidden = (root / "pool" / "oracle_valid_actions.jsonl").read_text().splitlines()
    assert len(hidden) == pool["steps"] and any(len(json.loads(h)["valid_actions"]) > 1 for h in hidden)
    summary = json.loads((root / "explore" / "verify_summary.json").read_text())
    assert summary["marks"] == summary["positives"] + summary["negatives"] > 0
    verified = read_episodes(root / "explore" / "verified.jsonl")  # images resolve from the export's directory
    assert all(s.action in s.valid_actions for e in verified for s in e.steps)
    for name in ("base", "sft-seed0", "opd-seed0", "opd_mdgrpo-seed0"):
        assert (root / "eval" / name / "summary.json").is_file()
    written = json.loads(results.read_text())
    assert set(written["recipes"]) == {"sft", "opd", "opd_mdgrpo"} and written["title"] == litegui_pipeline.TITLE
    row = written["recipes"]["opd_mdgrpo"]
    assert row["splits"]["episode_success"]["n"] == 2 and row["peak_rss_gb"] > 0 and row["wall_min"] > 0
    assert written["setting"]["auto_terminate"] is False and written["pool"]["episodes"] == 4
    assert "opd_mdgrpo" in out and "episode_success" in out and "ATG fills" in out
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "$ guirl" not in again and "opd_mdgrpo" in again  # every stage finished: nothing reruns

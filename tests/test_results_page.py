"""docs/results.md is rendered from results/*.json, and is up to date."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import render_results  # noqa: E402


def test_results_page_is_up_to_date():
    run = subprocess.run([sys.executable, "scripts/render_results.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_every_figure_comes_from_the_json(tmp_path, monkeypatch):
    result = {"command": "python benchmarks/base_agent.py", "commit": "abc", "data_seed": 7, "models": {
        "m/new": {"trained_families": {"step_success": 0.6123, "n": 1000}, "unseen_families": {"step_success": 0.25, "n": 400},
                  "grounding": {"step_success": 0.8, "n": 300}, "type_steps": {"step_success": 0.5, "n": 90},
                  "unchanged_output": {"same_output": 0.1}}}, "paired": {}}
    (tmp_path / "base_agent.json").write_text(json.dumps(result))
    monkeypatch.setattr(render_results, "RESULTS", tmp_path)
    page = render_results.render()
    assert "| multi-step steps, trained families | >= 0.55 | 0.612 |" in page
    assert "| sim episode success, trained families | >= 0.10 | - |" in page  # not measured: no figure
    assert "commit abc" in page

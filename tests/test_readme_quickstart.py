"""The README's quick start runs as written.

The shell block after the ``<!-- quickstart ... -->`` marker in README.md is taken verbatim and run with bash
from the repository root. Only the two variables the block itself documents are set from outside: ``STEPS``
(optimiser steps per training stage, cut to 2) and ``OUT`` (where every command writes and reads, a temporary
directory). Any failing command fails the test (``bash -e -o pipefail``), and so does an output that the next
command should have read but that is missing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- quickstart"


def quickstart_block(readme: str) -> str:
    """The first ```bash block after the quick-start marker, verbatim (without its fences)."""
    at = readme.find(MARKER)
    assert at >= 0, f"README.md has no {MARKER!r} marker before the quick-start block"
    found = re.search(r"```bash\n(.*?)\n```", readme[at:], flags=re.S)
    assert found, "no ```bash block after the quick-start marker"
    return found.group(1) + "\n"


def test_block_is_found_and_uses_its_variables():
    block = quickstart_block((ROOT / "README.md").read_text(encoding="utf-8"))
    # the test cuts the run through these two variables only; the block must honour values set outside it
    assert "STEPS=${STEPS:-" in block and "OUT=${OUT:-" in block
    assert "max_steps=$STEPS" in block
    assert "guirl train" in block


@pytest.mark.slow
def test_readme_quickstart_runs(tmp_path):
    block = quickstart_block((ROOT / "README.md").read_text(encoding="utf-8"))
    script = tmp_path / "quickstart.sh"
    script.write_text(block, encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "STEPS": "2", "OUT": str(out)}
    env.pop("VIRTUAL_ENV", None)  # the block activates .venv itself
    start = time.perf_counter()
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", str(script)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    assert proc.returncode == 0, (
        f"the README quick start failed (exit {proc.returncode}, {wall:.0f} s)\n"
        f"--- stdout (tail)\n{proc.stdout[-4000:]}\n--- stderr (tail)\n{proc.stderr[-4000:]}"
    )
    # each stage left what the next one reads
    assert (out / "sim" / "manifest.json").is_file()
    assert (out / "inspect" / "summary.json").is_file()
    assert (out / "reasoning" / "episodes.jsonl").is_file()
    for run in ("asft", "grpo"):
        assert (out / run / "final" / "config.json").is_file(), f"{run}: no final model"
        assert (out / run / "metrics.jsonl").is_file(), f"{run}: no metrics.jsonl"
    assert "trained 2 steps" in proc.stdout
    results = json.loads((out / "eval" / "results.json").read_text())
    assert results["metrics"]["grounding/samples"] == 20
    assert (out / "eval" / "report.html").is_file()

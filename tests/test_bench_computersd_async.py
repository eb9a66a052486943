"""``benchmarks/computersd_async.py``'s refusals (its runs are ComputerSD's trainer, tested in test_computersd.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import computersd_async  # noqa: E402


def test_a_hint_model_that_is_not_a_model_directory_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "step_00000030").mkdir()  # a trainer checkpoint: weights and optimiser state, no config.json
    monkeypatch.setattr(sys, "argv", ["computersd_async.py", "--hint-only", "--hint-models",
                                      "computersd-start-history-tiny", str(tmp_path / "step_00000030")])
    with pytest.raises(SystemExit) as err:
        computersd_async.main()
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "step_00000030" in lines[0] and "config.json" in lines[0]

"""``benchmarks/rl_room.py``: greedy and sampled success on training states, and with ``--models`` each model paired
state by state with the first."""

from __future__ import annotations

import doctest
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import rl_room  # noqa: E402

AGENT = ROOT / "checkpoints" / "base-agent-history-tiny"


def test_doctests():
    assert doctest.testmod(rl_room).failed == 0


def test_a_model_paired_with_itself_moves_by_nothing(sim_data, tmp_path):
    """The same model twice: the same states, the same greedy answers and the same seeded samples, so every paired
    difference is exactly 0 and both rows agree; the per-state lists stay out of the written result."""
    (tmp_path / "sim-seed3").symlink_to(sim_data.parent.parent)  # rl_room draws from <data>/sim-seed3
    out = tmp_path / "room.json"
    result = rl_room.main(["--models", f"a={AGENT}", f"b={AGENT}", "--states", "3", "--k", "2", "--temperatures", "1.0",
                           "--max-new-tokens", "24", "--data", str(tmp_path), "--out", str(out)])
    a, b = result["models"]["a"], result["models"]["b"]
    untimed = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert untimed(a["rows"]) == untimed(b["rows"])
    assert "versus_first" not in a and b["versus_first"]["against"] == "a"
    assert b["versus_first"]["greedy"]["diff"] == 0 and b["versus_first"]["sample_success"]["1.0"]["diff"] == 0
    assert b["versus_first"]["greedy"]["n"] == result["states"] == 3
    written = json.loads(out.read_text())
    assert "per_state" not in json.dumps(written) and written["models"]["b"]["versus_first"]["greedy"]["diff"] == 0


@pytest.mark.parametrize("item", ["start", "=x", f"start={ROOT / 'no-such-model'}"])
def test_a_bad_models_entry_is_refused_in_one_line(item, capsys):
    with pytest.raises(SystemExit) as err:
        rl_room.main(["--models", item])
    assert err.value.code == 2
    message = capsys.readouterr().err.strip()
    assert message.startswith("--models ") and "\n" not in message


def test_split_measures_exactly_the_states_of_a_given_file(sim_data, tmp_path):
    """``--split``: the states of that trajectories file (all of them when ``--states`` is larger), named in the
    result; a missing file is refused in one line."""
    import rl_fit

    fit, _ = rl_fit.split_episodes(sim_data, 1)
    from base_agent import load_steps

    n = len(load_steps(fit))
    result = rl_room.main(["--split", str(fit), "--states", "1000", "--k", "1", "--temperatures", "1.0",
                           "--max-new-tokens", "16", "--out", ""])
    assert result["states"] == n > 0 and result["split"] == str(fit)


def test_split_that_does_not_exist_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        rl_room.main(["--split", str(tmp_path / "none.jsonl")])
    assert err.value.code == 2
    assert "--split" in capsys.readouterr().err.strip().splitlines()[-1]

"""``benchmarks/rl_fit.py``: the fit / rest split of data seed 3's episodes, and its refusals (the training runs and
their measurement are ``rl_recipes.run_measured`` and ``rl_room``, tested in their own files)."""

from __future__ import annotations

import doctest
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import rl_fit  # noqa: E402


def test_doctests():
    assert doctest.testmod(rl_fit).failed == 0


def test_fit_and_rest_partition_the_episodes_by_task(sim_data):
    fit, rest = rl_fit.split_episodes(sim_data, 1)
    ids = lambda p: [json.loads(x)["id"] for x in p.read_text().splitlines()]  # noqa: E731
    every = ids(sim_data)
    assert sorted(ids(fit) + ids(rest)) == sorted(every) and not set(ids(fit)) & set(ids(rest))
    tasks = [json.loads(x)["task"] for x in fit.read_text().splitlines()]
    assert sorted(tasks) == sorted(set(tasks)) == sorted({json.loads(x)["task"] for x in sim_data.read_text().splitlines()})


@pytest.mark.parametrize("argv, names", [(["--recipe", "no_such_recipe"], "--recipe"), (["kl_coef"], "overrides")])
def test_bad_arguments_are_refused_in_one_line(argv, names, capsys):
    with pytest.raises(SystemExit) as err:
        rl_fit.main(argv)
    assert err.value.code == 2
    assert names in capsys.readouterr().err.strip().splitlines()[-1]

"""``benchmarks/rl_action_types.py``: the share of consecutive steps where the output stays while the right action
changes (a policy that does not follow the screen's progress), on hand-made rows and on a recorded episode."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import rl_action_types  # noqa: E402


def test_doctests():
    assert doctest.testmod(rl_action_types).failed == 0


def test_a_constant_policy_never_follows_and_an_oracle_always_does(sim_data):
    from guirl.trainers.rl_common import load_states

    states = [s for s in load_states([str(sim_data)]) if s.step.valid_actions]
    truths = [(s.episode.id, s.step.index, s.step.valid_actions[0]) for s in states]
    constant = rl_action_types.unchanged_outputs([(*t, "click(1, 1)") for t in truths])
    oracle = rl_action_types.unchanged_outputs([(*t, repr(t[2])) for t in truths])
    assert constant["changed_truth_pairs"] > 0 and constant["same_output"] == 1.0 and constant["outputs_per_episode"] == 1
    assert oracle["same_output"] == 0.0 and oracle["outputs_per_episode"] == oracle["truths_per_episode"] > 1

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


def test_an_escape_step_answered_with_its_twins_action_counts_as_ignoring_the_mistake(sim_data):
    """On the recorded recovery split: answering each error-escape step with its own target escapes it; answering
    with its back-on-track twin's target (the action the mistake replaced) counts as acting as if no mistake."""
    from guirl.matching.step import match_action
    from guirl.trainers.rl_common import load_states

    split = sim_data.parent / "recovery.jsonl"
    escape = [(s.episode, s.step, s.root) for s in load_states([str(split)], labels=["error_escape"])]
    twins = {s.episode.id: s.step for s in load_states([str(split)], labels=["back_on_track"])}
    assert escape and all(ep.id.removesuffix("-escape") + "-back" in twins for ep, _, _ in escape)

    def answered(pick):
        rows = []
        for ep, st, _ in escape:
            action = pick(ep, st)
            size = (st.screenshot.width, st.screenshot.height)
            rows.append((action, match_action(action, st.valid_actions, screen_size=size, a11y=st.a11y), ""))
        return rows

    own = answered(lambda ep, st: st.valid_actions[0])
    assert rl_action_types.ignored_mistake(escape, own, twins)[:2] == (len(escape), len(escape))
    replaced = answered(lambda ep, st: twins[ep.id.removesuffix("-escape") + "-back"].valid_actions[0])
    n, escaped, ignored = rl_action_types.ignored_mistake(escape, replaced, twins)
    assert ignored == n and escaped < n  # the replaced action does not undo the mistake
    assert rl_action_types.ignored_mistake(escape, replaced, {}) == (0, 0, 0)  # no twins: nothing counted

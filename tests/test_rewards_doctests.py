"""The examples in the reward docstrings run (TRL-style doctests)."""

import doctest

import pytest

import guirl.eval.text
import guirl.rewards.guilibra
import guirl.rewards.litegui
import guirl.rewards.matching


@pytest.mark.parametrize("module", [guirl.rewards.litegui, guirl.rewards.guilibra, guirl.rewards.matching, guirl.eval.text])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0

"""The examples in the reward docstrings run (TRL-style doctests)."""

import doctest

import pytest

import guirl.rewards.litegui


@pytest.mark.parametrize("module", [guirl.rewards.litegui])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0

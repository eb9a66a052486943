"""The examples in the reward docstrings run (TRL-style doctests)."""

import doctest

import pytest

import guirl.matching.text
import guirl.rewards.base
import guirl.rewards.guilibra
import guirl.rewards.guilibra_authors
import guirl.rewards.inputs
import guirl.rewards.litegui
import guirl.rewards.step

MODULES = [
    guirl.rewards.base,
    guirl.rewards.inputs,
    guirl.rewards.litegui,
    guirl.rewards.guilibra,
    guirl.rewards.guilibra_authors,
    guirl.rewards.step,
    guirl.matching.text,
]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0

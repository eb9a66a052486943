"""Reference policies for sanity-checking an evaluation setup.

- :func:`centre_click`: click the centre of the screen, whatever the task -
  the trivial grounding baseline (a model should beat it by far).
- :func:`guirl.rollout.policy.oracle_policy` (re-exported as ``oracle``): the
  first valid action; scores 1.0 on every offline metric with the
  ``inclusive`` rule, which checks the data and the scoring end to end.
"""

from __future__ import annotations

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.rollout.policy import PolicyInput, oracle_policy

oracle = oracle_policy


def centre_click(inputs: PolicyInput) -> Action:
    """A click at the centre of the screenshot (in screen pixels)."""
    width, height = inputs.screenshot.size
    return Action(type=ActionType.CLICK, point=(width / 2, height / 2), frame=Frame.screen(width, height))

"""``step_match``: the offline evaluation's step success as a binary reward.

1 when :func:`guirl.matching.step.match_action` counts the parsed action a
success against A*_t (type, target and value; the same rule, text and
direction options as ``guirl eval`` and :func:`guirl.eval.steps.evaluate_steps`),
else 0. This is the sparse reward TRL was run with on the shipped base agent
(docs/models.md, measurements of the shipped base agent under RL): what it trains
is exactly what held-out step success measures, with no partial credit for a
click near the target.

Columns: ``valid_actions``, ``output_frame``, ``screen_size`` (the prediction
is converted to screen pixels, as the evaluation does) and ``a11y`` (the
step's nodes, for the rules that take target boxes from the tree: ``infigui``,
``uis1``, ``aitw``; the default ``inclusive`` rule tests the target's own box
or point). Components logged: ``parsed``, ``type_match``, ``grounded``.

>>> from guirl.actions import Action, Frame
>>> from guirl.rewards import make_reward
>>> gt = Action(type="click", box=(0, 0, 100, 100), frame=Frame.screen(1000, 1000))
>>> reward = make_reward("step_match", fmt="qwen_computer_use")
>>> out = '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [%d, 50]}}</tool_call>'
>>> reward([out % 50, out % 400, "garbage"], valid_actions=[[gt]] * 3, screen_size=[(1000, 1000)] * 3,
...        output_frame=[Frame.screen(1000, 1000)] * 3)
[1.0, 0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guirl.actions import Frame, ParseFailure
from guirl.matching.step import DIRECTION_RULES, VALUE_RULES, match_action
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    get_column,
    parse_completions,
    register_reward,
    screen_frames,
    valid_actions_column,
)


@register_reward("step_match")
class StepMatchReward(Reward):
    """Binary step success of the parsed output (module docstring); in {0, 1}."""

    def __init__(
        self,
        fmt: str = "qwen_computer_use",
        rule: str = "inclusive",
        value_rule: str = "exact",
        direction_rule: str = "exact",
        merge_scroll_swipe: bool = True,
    ) -> None:
        if value_rule not in VALUE_RULES:
            raise ValueError(f"step_match: unknown value_rule {value_rule!r}; choose one of {VALUE_RULES}")
        if direction_rule not in DIRECTION_RULES:
            raise ValueError(f"step_match: unknown direction_rule {direction_rule!r}; choose one of {DIRECTION_RULES}")
        self.fmt = fmt
        self.options = {"rule": rule, "value_rule": value_rule, "direction_rule": direction_rule,
                        "merge_scroll_swipe": merge_scroll_swipe}

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        n = len(completions)
        valid = valid_actions_column(columns, n)
        screens = screen_frames(columns, valid, "step_match (predictions are compared in screen pixels)")
        nodes = get_column(columns, "a11y", n, None)
        preds = parse_completions(completions, self.fmt, columns)
        scores, parsed, typed, grounded = [], [], [], []
        for pred, actions, screen, a11y in zip(preds, valid, screens, nodes, strict=True):
            size = (screen.width, screen.height) if screen.kind != "relative" else (1, 1)
            if pred:
                try:
                    pred = pred.to_frame(Frame.screen(*size))
                except ValueError as err:  # an unsized frame the screen cannot resolve: model garbage
                    pred = ParseFailure(reason=f"cannot convert to screen pixels: {err}")
            m = match_action(pred, actions, screen_size=size, a11y=a11y or None, **self.options)
            scores.append(float(m.success))
            parsed.append(float(bool(pred)))
            typed.append(float(m.type_match))
            grounded.append(float(m.grounded))
        return RewardOutput(scores, {"parsed": parsed, "type_match": typed, "grounded": grounded})

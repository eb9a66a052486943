"""Property tests: every registered reward stays in its documented range for any model output.

Garbage (arbitrary unicode), near-misses (broken JSON, wrong fields, huge or
non-finite numbers) and well-formed outputs of every format are all scored
without raising.
"""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guirl.actions import Action, Frame
from guirl.judges import JudgeRequest, JudgeResult
from guirl.rewards import available_rewards, make_reward

SCREEN = Frame.screen(1000, 800)
VALID = [
    Action(type="click", box=(100, 100, 300, 200), frame=SCREEN),
    Action(type="type", text="hello world"),
    Action(type="scroll", direction="down"),
    Action(type="key", keys=("ctrl", "a")),
]


class EchoScoreJudge:
    """Answers with a score taken from the request (ground truth carried in the fields), including bad ones."""

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        text = json.dumps(request.fields, default=str)
        value = [1.0, 0.3, -2.0, 11, "x", None][len(text) % 6]
        return JudgeResult(verdict={"score": value}, ok=len(text) % 7 != 0)


def build(name: str):
    if name == "litegui_md":
        return make_reward(name, judge=EchoScoreJudge(), length_unit="chars")
    if name == "infigui_agent":
        return make_reward(name, subgoal_judge=EchoScoreJudge())
    if name == "litegui_format_length":
        return make_reward(name, length_unit="chars")
    return make_reward(name)


REWARDS = {name: build(name) for name in available_rewards()}

numbers = st.one_of(st.integers(-(10**9), 10**9), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5))
structured = st.builds(
    lambda kind, a, b, text, wrap: wrap.replace(
        "@",
        json.dumps(
            {
                "action_type": kind,
                "action": kind,
                "type": kind,
                "value": text,
                "text": text,
                "coordinate": [a, b],
                "point_2d": [a, b],
                "position": [a, b, a, b],
                "name": "mobile_use",
                "arguments": {"action": kind, "coordinate": [a, b], "text": text},
            },
            default=str,
        ),
    ),
    st.sampled_from(
        [
            "click",
            "Click",
            "CLICK",
            "left_click",
            "type",
            "Write",
            "TEXT_INPUT",
            "scroll",
            "SCROLL_DOWN",
            "key",
            "terminate",
            "LongPress",
            "navigateback",
            "",
            "fly",
        ]
    ),
    numbers,
    numbers,
    st.text(max_size=30),
    st.sampled_from(
        [
            "@",
            "<think>r</think><answer>@</answer>",
            "<think>r</think><tool_call>\n@\n</tool_call>",
            "<action>@</action>",
            "<think>x</think>@",
            "@}}}",
            "[@",
            '{"reasoning": "r", "subtasks": [], "action": @}',
        ]
    ),
)
outputs = st.one_of(st.text(max_size=300), structured, st.binary(max_size=50).map(lambda b: b.decode("latin-1")))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(outputs, min_size=1, max_size=4))
def test_every_reward_in_range_for_any_output(texts):
    n = len(texts)
    columns = {
        "valid_actions": [VALID] * n,
        "output_frame": [Frame.relative(1000)] * n,
        "screen_size": [(1000, 800)] * n,
        "instruction": ["open settings"] * n,
        "sub_goal": ["open the settings"] * n,
        "completion_ids": [[0] * 5] * n,
    }
    for name, reward in REWARDS.items():
        out = reward.score(texts, **columns)
        low, high = reward.score_range
        assert len(out.scores) == n, name
        assert all(low <= s <= high for s in out.scores), (name, out.scores)
        for key, values in out.components.items():
            assert len(values) == n, (name, key)
        for key, flags in out.failed.items():  # masked exactly where flagged, and the score stays a number
            assert [math.isnan(v) for v in out.components[key]] == flags, (name, key)
        assert not any(math.isnan(s) for s in reward(texts, **columns)), name

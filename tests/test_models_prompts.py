"""Step prompts: history window, image order, frame sentence, guidance, bad input."""

from __future__ import annotations

import pytest
from PIL import Image

from guirl.actions import Action, ActionType, Frame
from guirl.data.schema import HistoryItem
from guirl.models.prompts import build_messages, describe_frame, system_prompt

NOW = Image.new("RGB", (64, 64), "white")


def _texts(message) -> str:
    return "".join(item.get("text", "<image>") for item in message["content"])


def test_history_window_keeps_the_last_steps_with_their_images():
    history = [HistoryItem(output=f"output {i}") for i in range(5)]
    past = [Image.new("RGB", (8, 8), (i, 0, 0)) for i in range(5)]
    messages, images = build_messages("Open mail", NOW, history, history_window=2, history_images=past)
    user = _texts(messages[1])
    # window 2 of 5 steps: steps 4 and 5 (outputs 3 and 4), each after its own screenshot
    assert "output 2" not in user
    assert "<image>Step 4: output 3\n<image>Step 5: output 4\n" in user
    assert user.startswith("Task: Open mail\n") and user.endswith("Current screenshot:\n<image>")
    assert images == [past[3], past[4], NOW]


def test_history_without_output_is_written_in_the_format():
    click = Action(type=ActionType.CLICK, point=(500, 250), frame=Frame.relative(1000))
    messages, images = build_messages("Go", NOW, [HistoryItem(action=click)], fmt="qwen_computer_use")
    assert '"coordinate": [500, 250]' in _texts(messages[1]) and images == [NOW]


def test_system_prompt_names_format_and_frame_and_guidance_goes_last():
    prompt = system_prompt("qwen_computer_use", Frame.relative(1000))
    assert "qwen_computer_use" in prompt and "0 (left/top) to 1000" in prompt and "click" in prompt
    assert "(280x168)" in describe_frame(Frame(kind="resized", width=280, height=168))
    messages, _ = build_messages("Go", NOW, guidance="reference action: click OK")
    assert _texts(messages[1]).endswith("[PRIVILEGED_ACTION_GUIDANCE]\nreference action: click OK")


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="instruction"):
        build_messages("", NOW)
    with pytest.raises(ValueError, match="history_images"):
        build_messages("Go", NOW, [HistoryItem(output="x")], history_images=[])
    with pytest.raises(KeyError, match="valid names"):
        build_messages("Go", NOW, fmt="no_such_format")

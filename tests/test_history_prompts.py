"""The history-reading agent's prompt is one prompt: training (SFT collator), evaluation (recorded steps) and
the live episode (the model's own outputs, thoughts included) build it token for token alike."""

from __future__ import annotations

import pytest
import torch
from models_fixtures import tiny_policy
from PIL import Image

from guirl.actions import Frame
from guirl.data import read_episodes
from guirl.envs.sim import generate_dataset
from guirl.models.prompts import PromptSpec, written_action
from guirl.models.scoring import encode_prompt
from guirl.rollout.history import history_builder, recorded_prompt, window_prompt
from guirl.rollout.online import executed_action
from guirl.rollout.window import PastStep
from guirl.trainers.sft import Example, SFTCollator, SFTConfig, step_thought

SPEC = PromptSpec(fmt="qwen_computer_use", style="compact", history_window=3, reasoning=True, history_text="action")


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    generate_dataset(out_dir=str(out), seed=5, train_per_task=1, test_per_task=1, grounding_train=1, grounding_test=1,
                     tasks=["web.fill_form", "desktop.open_file"], heldout_tasks=[], recovery_prob=0.0)
    path = out / "trajectories" / "train.jsonl"
    return read_episodes(path), path.parent


def live_prompt(spec, policy, episode, root, t):
    """The prompt of step ``t`` when the agent itself wrote every earlier step: thought + the expert's action
    (what the trained agent writes), executed as the online runner executes it."""
    past = []
    for prev in episode.steps[:t]:
        image = Image.open(root / prev.screenshot.path).convert("RGB")
        frame = policy.frame_for(*image.size)
        text = f"<think>{step_thought(episode, prev, 'sub_goal')}</think>" + written_action(
            prev.action or prev.valid_actions[0], spec.fmt, frame)
        action, failure = executed_action(text, spec.fmt, frame, Frame.screen(*image.size))
        assert failure is None, failure
        past.append(PastStep(prev.index, image, action, text))
    image = Image.open(root / episode.steps[t].screenshot.path).convert("RGB")
    window = history_builder(spec)(past)
    return window_prompt(spec, policy.frame_for(*image.size), episode.instruction, image, window)


def test_live_recorded_and_training_prompts_are_the_same_tokens(episodes):
    policy = tiny_policy("qwen3_vl")
    collate = SFTCollator(policy.processor, policy.frame_for, SFTConfig(
        model="unused", format=SPEC.fmt, prompt_style=SPEC.style, history_window=3, history_text="action",
        thought="sub_goal", reasoning_switch=True, direct_fraction=0.0))
    assert collate.spec == SPEC
    eps, root = episodes
    compared = 0
    for episode in eps:
        for t in range(1, len(episode.steps)):
            live = encode_prompt(policy.processor, live_prompt(SPEC, policy, episode, root, t))
            recorded, _ = recorded_prompt(SPEC, policy.frame_for, episode, episode.steps[t], root)
            recorded = encode_prompt(policy.processor, recorded)
            assert live.input_ids == recorded.input_ids
            assert torch.equal(live.pixel_values, recorded.pixel_values)
            step = episode.steps[t]
            example = Example(episode, step, root, step.action or step.valid_actions[0],
                              step_thought(episode, step, "sub_goal"))
            trained = collate.encode(example)["input_ids"]
            assert trained[: len(recorded.input_ids)] == recorded.input_ids
            compared += 1
    text = policy.processor.tokenizer.decode(live.input_ids)
    assert "Think first." in text and "<think>" not in text and text.count("Step ") == 3
    assert compared >= 15


def test_raw_output_history_would_differ(episodes):
    """The test above can fail: with the raw outputs as history (thoughts included) the live prompt differs."""
    policy = tiny_policy("qwen3_vl")
    eps, root = episodes
    raw = PromptSpec(**{**SPEC.__dict__, "history_text": "output"})
    live = live_prompt(raw, policy, eps[0], root, 2)
    recorded, _ = recorded_prompt(raw, policy.frame_for, eps[0], eps[0].steps[2], root)
    assert "<think>" in str(live.messages) and live.messages != recorded.messages


def test_sub_goal_thought_names_the_text_to_type(episodes):
    eps, _ = episodes
    typed = [(ep, st) for ep in eps for st in ep.steps if (st.action or st.valid_actions[0]).type.value == "type"]
    assert typed
    for ep, st in typed:
        text = (st.action or st.valid_actions[0]).text
        assert text.lower() in step_thought(ep, st, "sub_goal").lower()


def test_bad_history_text_is_refused():
    with pytest.raises(ValueError, match="history_text"):
        PromptSpec(history_text="thoughts")


def test_a_thought_before_the_action_line_keeps_the_description():
    from guirl.actions import parse_action

    text = ('<think>Submit the form</think>Action: click the \'Send\' button\n<tool_call>\n{"name": "computer_use", '
            '"arguments": {"action": "left_click", "coordinate": [500, 250]}}\n</tool_call>')
    action = parse_action(text, "qwen_computer_use", Frame.relative(1000))
    assert action.description == "click the 'Send' button" and action.point == (500, 250)

"""A guirl model drives the runner through ModelPolicy (tiny random-weight
model on CPU): each step keeps the exact chat messages, the images in prompt
order (history screenshots included) and the sampled token ids."""

from __future__ import annotations

from guirl.actions.types import ParseFailure
from guirl.envs import available_envs, make_env
from guirl.rollout import EpisodeRunner, EpisodeSpec, ModelPolicy, TrajectoryRecorder, WindowHistory

assert "sim" in available_envs(), "the built-in sim world must be registered"

import models_fixtures  # noqa: E402


def test_model_policy_records_prompt_images_and_tokens(tmp_path):
    policy = ModelPolicy(models_fixtures.tiny_policy("qwen3_vl"), temperature=1.0, max_new_tokens=8, seed=3)
    env = make_env("sim", domain="web", task="web.search_open")
    with TrajectoryRecorder(tmp_path) as recorder:
        runner = EpisodeRunner(policy, max_steps=2, history=WindowHistory(steps=1, images=1), on_episode=recorder.record)
        rollout = runner.run_episode(env, EpisodeSpec(seed=0))
    env.close()
    first, second = rollout.steps  # random weights rarely finish: the step limit ends it
    for step in (first, second):
        out = step.output
        assert out.prompt[0]["role"] == "system" and out.prompt[1]["role"] == "user"
        assert 1 <= len(out.token_ids) <= 8
        assert isinstance(out.action, ParseFailure) == (step.action is None)
    # step 1 shows step 0's screenshot before the current one: 2 images, history first
    assert len(first.output.images) == 1 and len(second.output.images) == 2
    assert second.output.images[0] is first.inputs.screenshot
    assert second.output.images[1] is second.inputs.screenshot
    user_text = "".join(part.get("text", "") for part in second.output.prompt[1]["content"])
    assert f"Step 1: {first.output.text}" in user_text  # the history shows y_0

"""The base-agent curriculum: data generation, stages, resume and scores."""

from __future__ import annotations

import json

import pytest

from guirl.config import load_config
from guirl.data import read_episodes
from guirl.models.prompts import PromptSpec
from guirl.trainers.curriculum import CurriculumConfig, StageConfig, _sft_config, make_locate_set, train_curriculum


def test_locate_set_is_seeded_and_valid(tmp_path):
    a = read_episodes(make_locate_set(tmp_path / "a", 6, seed=3))
    b = read_episodes(make_locate_set(tmp_path / "b", 6, seed=3))
    assert [e.model_dump() for e in a] == [e.model_dump() for e in b]
    for ep in a:
        (target,) = ep.steps[0].valid_actions
        x1, y1, x2, y2 = target.box
        assert 48 <= y2 - y1 <= 96 and 0 <= x1 < x2 <= 512  # large enough for a tiny model's input
        assert target.description.split("'")[1] in ep.instruction
    assert (tmp_path / "a" / "images" / "0.png").read_bytes() == (tmp_path / "b" / "images" / "0.png").read_bytes()


@pytest.mark.slow
def test_tiny_curriculum_runs_resumes_and_scores(tmp_path):
    cfg = CurriculumConfig(
        output_dir=str(tmp_path / "run"), batch_size=2, num_threads=1, eval_every=0, save_every=1,
        history_window=2, history_text="action", thought="sub_goal",
        stages=[StageConfig(name="s1", data="locate", samples=8, max_steps=2, thought=False),
                StageConfig(name="s2", data="trajectories", samples=10, max_steps=2)],
    )
    result = train_curriculum(cfg)
    spec = PromptSpec.load(result["final_dir"])
    assert (spec.history_window, spec.history_text, spec.reasoning) == (2, "action", True)
    assert PromptSpec.load(tmp_path / "run" / "s1" / "final").reasoning is None
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert set(scores["scores"]) == {"grounding_unseen_screens", "steps_unseen_seeds", "steps_unseen_tasks"}
    assert (result["final_dir"] / "guirl_prompt.json").is_file()
    # a rerun finds every stage done and only re-evaluates
    again = train_curriculum(cfg)
    assert again["final_dir"] == result["final_dir"]
    assert json.loads((tmp_path / "run" / "scores.json").read_text())["history"] == {}


def test_stages_carry_history_and_the_thought_where_the_recipe_says(tmp_path):
    cfg = load_config(CurriculumConfig, "recipes/base_agent_history_tiny.yaml", [f"output_dir={tmp_path}"])
    small = cfg.model_copy(update={"stages": [s.model_copy(update={"samples": 10}) for s in cfg.stages]})
    sft = [_sft_config(small, stage, "model", None) for stage in small.stages]
    assert [s.history_window for s in sft] == [cfg.history_window] * 3 and cfg.history_window > 0
    assert [(s.thought, s.with_reasoning, s.reasoning_switch) for s in sft] == [
        ("recorded", False, False), ("recorded", False, False), ("sub_goal", True, True)]
    assert all(s.history_text == "action" and s.direct_fraction == 0 for s in sft)

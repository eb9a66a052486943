"""`guirl reasoning-data` on a small sim dataset (oracle and tiny-model teachers) and the SFT recipe."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from models_fixtures import tiny_model_dir

from guirl.actions import Action, ActionType, format_action
from guirl.commands import UsageError, reasoning_data
from guirl.config import load_config
from guirl.data import read_episodes
from guirl.envs.sim import generate_dataset
from guirl.judges import JudgeRequest, JudgeResult
from guirl.judges.serve import serve_judge
from guirl.trainers.sft import SFTConfig, build_examples, target_text

RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "reasoning_injection_tiny.yaml"


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="guirl")
    reasoning_data.add_parser(parser.add_subparsers())
    args = parser.parse_args(["reasoning-data", *argv])
    return args.func(args)


@pytest.fixture(scope="module")
def sim(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    generate_dataset(out_dir=str(out), domains=("desktop", "mobile"), tasks=("desktop.open_file",
                     "mobile.toggle_setting"), heldout_tasks=(), train_per_task=1, test_per_task=0,
                     grounding_train=0, grounding_test=0, recovery_prob=0.0, seed=1)
    return out / "trajectories" / "train.jsonl"


def test_oracle_teacher_cli(sim, tmp_path, capsys):
    out = tmp_path / "reasoning"
    assert _run("--episodes", str(sim), "--out", str(out), "--teacher", "oracle", "--seed", "1") == 0
    printed = capsys.readouterr().out
    source = read_episodes(sim)
    kept = read_episodes(out / "episodes.jsonl")  # screenshots were copied next to it
    n_steps = sum(len(e.steps) for e in source)
    assert sum(len(e.steps) for e in kept) == n_steps and f"reasoning/kept: {n_steps}" in printed
    for episode in kept:
        for step in episode.steps:
            assert step.reasoning and step.action is not None
            node_texts = [n.text for n in step.a11y if n.text]
            if step.action.target_point() is not None and step.action.type.value != "scroll":
                # the reasoning names the element the action hits (its text, quoted)
                assert any(f"'{t}'" in step.reasoning and t in (step.action.description or "") for t in node_texts)
    manifest = json.loads((out / "reasoning_manifest.json").read_text())
    assert manifest["counts"]["reasoning/acceptance_rate"] == 1.0 and manifest["settings"]["teacher"] == "oracle"
    # SFT reads it directly: every example's target starts with the reasoning in think tags
    cfg = load_config(SFTConfig, RECIPE, [f"train_data=[{out / 'episodes.jsonl'}]"])
    examples = build_examples(cfg.train_data, cfg, seed=0)
    assert len(examples) == n_steps  # direct_fraction 0: no direct-action copies
    assert all(target_text(ex, cfg.format, ex.target.frame).startswith("<think>") for ex in examples)
    # a rerun into the same directory is refused unless --overwrite says to replace it
    argv = ("--episodes", str(sim), "--out", str(out), "--teacher", "oracle", "--seed", "1")
    with pytest.raises(UsageError, match=r"already holds a reasoning dataset .*--overwrite"):
        _run(*argv)
    assert _run(*argv, "--overwrite") == 0
    assert [e.model_dump() for e in read_episodes(out / "episodes.jsonl")] == [e.model_dump() for e in kept]


def test_model_teacher_and_bottleneck_cli(sim, tmp_path):
    model = str(tiny_model_dir("qwen2_5_vl"))
    out = tmp_path / "model"
    assert _run("--episodes", str(sim), "--out", str(out), "--teacher", model, "--attempts", "2",
                "--limit-steps", "2", "--max-new-tokens", "8", "--images", "relative") == 0
    counts = json.loads((out / "reasoning_manifest.json").read_text())["counts"]
    assert counts["reasoning/teacher_steps"] == 2 and counts["reasoning/teacher_attempts"] >= 2
    assert counts["reasoning/kept"] + counts["reasoning/rejected_no_reasoning"] + counts[
        "reasoning/rejected_wrong_action"] == counts["reasoning/teacher_attempts"]
    # a random-weight teacher never writes <think> reasoning: both steps use both attempts (2 x 2 = 4),
    # all rejected, and no rejected step may reach the written dataset
    assert counts["reasoning/teacher_attempts"] == 4 and counts["reasoning/rejected_no_reasoning"] == 4
    assert counts["reasoning/kept"] == 0 and read_episodes(out / "episodes.jsonl") == []
    out = tmp_path / "bottleneck"
    assert _run("--episodes", str(sim), "--out", str(out), "--bottleneck-model", model, "--samples", "2",
                "--limit-steps", "2", "--max-new-tokens", "8") == 0
    counts = json.loads((out / "reasoning_manifest.json").read_text())["counts"]
    assert counts["bottleneck/checked"] == 2 and 4 <= counts["bottleneck/policy_calls"] <= 8
    # only bottleneck steps reach the teacher
    assert counts["reasoning/teacher_steps"] == counts["bottleneck/bottlenecks"]


def test_llm_teacher_and_compressor_over_http(sim, tmp_path):
    """Text-only teacher and D_spatial compressor behind a real OpenAI-compatible server on loopback."""
    prompts: list[str] = []
    finish = format_action(Action(type=ActionType.TERMINATE, status="success"), "qwen_computer_use")

    def llm(request: JudgeRequest) -> JudgeResult:
        prompts.append(request.prompt)
        if "Rewrite it as a concise description" in request.prompt:
            return JudgeResult(verdict={"description": "COMPRESSED page with a few elements"})
        return JudgeResult(verdict={"reasoning": "Everything is done, so I finish.", "action": finish})

    server = serve_judge(llm)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        out = tmp_path / "llm"
        assert _run("--episodes", str(sim), "--out", str(out), "--teacher", url, "--compress-url", url,
                    "--attempts", "2") == 0
    finally:
        server.shutdown()
        server.server_close()
    source = [s for e in read_episodes(sim) for s in e.steps]
    finishing = sum(any(a.type is ActionType.TERMINATE for a in s.valid_actions) for s in source)
    counts = json.loads((out / "reasoning_manifest.json").read_text())["counts"]
    # the same terminate is right exactly where terminate is valid; every other step fails both tries
    assert counts["reasoning/kept"] == finishing >= 1
    assert counts["reasoning/teacher_attempts"] == finishing + 2 * (len(source) - finishing)
    assert counts["reasoning/judge_compressed"] == len(source)
    teacher_prompts = [p for p in prompts if "Action space" in p]
    assert teacher_prompts and all("COMPRESSED page" in p for p in teacher_prompts)
    assert all(s.action.type is ActionType.TERMINATE for e in read_episodes(out / "episodes.jsonl") for s in e.steps)


def test_cli_errors_name_the_argument(sim, tmp_path):
    with pytest.raises(UsageError, match="--episodes"):
        _run("--episodes", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o"))
    with pytest.raises(UsageError, match=r"--teacher: .* not a model directory"):
        _run("--episodes", str(sim), "--out", str(tmp_path / "o"), "--teacher", str(tmp_path))
    with pytest.raises(UsageError, match="--format"):
        _run("--episodes", str(sim), "--out", str(tmp_path / "o"), "--format", "nope")
    with pytest.raises(UsageError, match="--samples"):
        _run("--episodes", str(sim), "--out", str(tmp_path / "o"), "--samples", "0")


def test_every_argument_has_help():
    parser = argparse.ArgumentParser(prog="guirl")
    reasoning_data.add_parser(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices["reasoning-data"]
    assert all(action.help for action in sub._actions)


def test_recipe_and_its_gpu_variant_load():
    cfg = load_config(SFTConfig, RECIPE)
    assert cfg.with_reasoning and cfg.optim.lr == 1e-3 and cfg.optim.warmup_ratio == 0.1
    assert "recipes/gpu/reasoning_injection.yaml" in RECIPE.read_text()
    gpu_cfg = load_config(SFTConfig, RECIPE.parent / "gpu" / "reasoning_injection.yaml")
    assert gpu_cfg.optim.lr == 2e-6 and gpu_cfg.optim.warmup_ratio == 0.1
    assert gpu_cfg.batch_size * gpu_cfg.grad_accum * 8 == 32  # InfiGUI-R1 SFT batch 32 on 8 processes

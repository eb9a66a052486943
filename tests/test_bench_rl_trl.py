"""``benchmarks/rl_trl.py``: TRL's GRPOTrainer on a guirl recipe (the reference trainer of rl_recipes --trainer trl)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch
from models_fixtures import tiny_model_dir
from safetensors.torch import load_file

from guirl.config import load_config
from guirl.models.load import load_policy
from guirl.rewards import Reward, RewardOutput, register_reward
from guirl.trainers.grpo import GRPOConfig

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import rl_trl  # noqa: E402


@register_reward("test_trl_letters")
class Letters(Reward):
    """Share of lower-case letters: dense, so every group has a spread of rewards and TRL's loss is not zero."""

    def score(self, completions, **columns):
        return RewardOutput([sum("a" <= ch <= "z" for ch in t) / max(1, len(t)) for t in completions])


def test_recipes_trl_cannot_run_are_refused_in_one_line():
    cfg = load_config(GRPOConfig, ROOT / "recipes" / "infigui_rloo_tiny.yaml")
    assert any(p.startswith("advantage=rloo") for p in rl_trl.unsupported(cfg))
    sngs = load_config(GRPOConfig, ROOT / "recipes" / "guilibra_kl_grpo_sngs_tiny.yaml")
    assert {p.split("=")[0].split(" ")[0] for p in rl_trl.unsupported(sngs)} == {"advantage", "success_signal"}
    plain = load_config(GRPOConfig, ROOT / "recipes" / "guilibra_kl_grpo_sngs_tiny.yaml",
                        ["advantage=grpo", "advantage_kwargs={}", "success_signal=null"])
    assert rl_trl.unsupported(plain) == []
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rl_trl.py"), "--config",
                           str(ROOT / "recipes" / "infigui_rloo_tiny.yaml")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("rl_trl: error:") and "advantage=rloo" in done.stderr


def test_trl_trains_the_language_model_and_saves_a_guirl_model(tmp_path, sim_data):
    model = tiny_model_dir("qwen3_vl")
    cfg = GRPOConfig(model=str(model), output_dir=str(tmp_path / "run"), train_data=[str(sim_data)], max_steps=2,
                     batch_size=1, group_size=4, micro_batch_size=4, max_new_tokens=6,
                     rewards=[{"name": "test_trl_letters"}], freeze_vision=True, num_threads=1, log_every=1,
                     report_to=[], optim={"lr": 1e-2})
    final = rl_trl.train_trl(cfg)
    start, end = load_file(str(model / "model.safetensors")), load_file(str(final / "model.safetensors"))
    vision = [k for k in start if ".visual." in k]
    language = [k for k in start if ".language_model.layers." in k]
    assert vision and language
    assert all(torch.equal(start[k], end[k]) for k in vision), "the vision tower is frozen, as the recipe says"
    assert any(not torch.equal(start[k], end[k]) for k in language), "TRL's steps changed the language model"
    policy = load_policy(final)  # loads as a guirl model, with the start's prompt spec
    assert policy.prompt == load_policy(model).prompt

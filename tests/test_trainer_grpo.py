"""The GRPO-family trainer: learning, the log-prob invariant, micro-batch independence, resume, filters."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from models_fixtures import tiny_model_dir
from safetensors.torch import load_file

from guirl.models.load import load_policy
from guirl.rewards import Reward, RewardOutput, register_reward
from guirl.rollout.hf_engine import HFEngine
from guirl.rollout.sample import Sample
from guirl.trainers.grpo import (
    GRPOConfig,
    GRPOSampler,
    is_informative,
    load_rl_policy,
    mark_overlong,
    single_solution,
    train_grpo,
)
from guirl.trainers.rl_common import ReferencePolicy, load_states, score_samples

ROOT = Path(__file__).resolve().parents[1]


@register_reward("test_letter_share")
class LetterShare(Reward):
    """Share of lower-case ASCII letters in the completion: dense and trivially learnable (shift the logits
    towards letter tokens), so a few steps must raise it."""

    def score(self, completions, **columns):
        texts = [c if isinstance(c, str) else "" for c in completions]
        return RewardOutput([sum("a" <= ch <= "z" for ch in t) / max(1, len(t)) for t in texts])


def config(tmp_path, data, **overrides) -> GRPOConfig:
    base = {"model": str(tiny_model_dir("qwen3_vl")), "output_dir": str(tmp_path / "run"), "train_data": [str(data)],
            "max_steps": 2, "batch_size": 2, "group_size": 4, "micro_batch_size": 8, "max_new_tokens": 6,
            "rewards": [{"name": "test_letter_share"}], "save_every": 0, "log_every": 1, "report_to": [],
            "num_threads": 1, "optim": {"lr": 1e-3, "max_grad_norm": 0.0}}
    return GRPOConfig(**(base | overrides))


def metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_reward_rises_and_every_parameter_changes(tmp_path, sim_data):
    cfg = config(tmp_path, sim_data, max_steps=10, group_size=8, batch_size=2, micro_batch_size=16, max_new_tokens=8,
                 optim={"lr": 1e-2, "max_grad_norm": 1.0})
    start = load_file(str(Path(cfg.model) / "model.safetensors"))
    result = train_grpo(cfg)
    end = load_file(str(result["final_dir"] / "model.safetensors"))
    unchanged = [k for k in start if k in end and torch.equal(start[k], end[k])]
    assert not unchanged, f"parameters that did not change: {unchanged[:5]}"
    logged = metrics(Path(cfg.output_dir))
    assert all(0 < m["policy/entropy"] < 10 for m in logged), "entropy must be logged and finite"
    rewards = [m["rewards/total_mean"] for m in logged]
    assert sum(rewards[-3:]) / 3 > sum(rewards[:3]) / 3 + 0.1, rewards  # measured: 0.73 -> 0.99


def test_freeze_vision_trains_the_language_model_only(tmp_path, sim_data):
    cfg = config(tmp_path, sim_data, max_steps=2, group_size=4, max_new_tokens=6, freeze_vision=True,
                 optim={"lr": 1e-2, "max_grad_norm": 0.0})
    start = load_file(str(Path(cfg.model) / "model.safetensors"))
    end = load_file(str(train_grpo(cfg)["final_dir"] / "model.safetensors"))
    vision = [k for k in start if ".visual." in k]
    language = [k for k in start if ".language_model." in k and "embed_tokens" not in k]
    assert vision and language
    assert all(torch.equal(start[k], end[k]) for k in vision), "a frozen vision tower changed"
    assert not [k for k in language if torch.equal(start[k], end[k])], "every language-model layer must train"


def test_trainer_logprobs_of_fresh_samples_equal_the_engine(tmp_path, sim_data):
    """The invariant: same prompt tokens and images in rollout and training (dropped images or a template
    mismatch would break it)."""
    cfg = config(tmp_path, sim_data, group_size=4, max_new_tokens=10, rewards=[{"name": "litegui_ms",
                 "kwargs": {"fmt": "qwen_computer_use"}}])
    policy = load_rl_policy(cfg)
    states = load_states(cfg.train_data)
    sampler = GRPOSampler(cfg, policy, HFEngine.from_policy(policy), states)
    batches, logged = sampler(policy.model, 0, [states[:2]])
    samples = [s for b in batches for s in b]
    assert len(samples) == 8 and logged["sampling/groups_trained"] == 2
    assert samples[0].prompt is samples[3].prompt, "the G samples of a state share one prompt object"
    with torch.no_grad():
        out = score_samples(policy.model, policy.processor, samples, cfg.temperature)
    for i, s in enumerate(samples):
        assert torch.allclose(out.logprobs[i, : s.num_tokens], torch.tensor(s.behaviour_logprobs), atol=1e-5)
        assert s.policy_version == 0 and s.group_id == f"{states[i // 4].episode.id}/{states[i // 4].step.index}"


@pytest.mark.parametrize("agg", ["token-mean", "seq-mean-token-mean"])
def test_update_does_not_depend_on_micro_batch_size(tmp_path, sim_data, agg):
    """The step's loss and gradient are the same whatever the micro-batch split.

    Compared on the gradient, not on weights after AdamW: Adam maps near-zero gradients to +-lr, so
    float noise of 1e-9 in a vanishing gradient would flip whole updates."""
    from guirl.trainers.rl_common import micro_batches, policy_gradient_loss

    cfg = config(tmp_path, sim_data, group_size=4, loss_agg_mode=agg, rewards=[{"name": "test_letter_share"}])
    policy = load_rl_policy(cfg)
    states = load_states(cfg.train_data)
    batches, _ = GRPOSampler(cfg, policy, HFEngine.from_policy(policy), states)(policy.model, 0, [states[:2]])
    samples = [s for b in batches for s in b]
    samples[1].trainable = False  # an overlong-filtered sample counts in no normaliser
    results = []
    for size in (1, 3, 8):
        split = micro_batches(samples, size, -(-len(samples) // size) + 1)  # one trailing empty micro-batch
        policy.model.zero_grad()
        total = 0.0
        for batch in split:
            loss, _ = policy_gradient_loss(policy.model, policy.processor, batch, split, temperature=1.0,
                                           loss_agg_mode=agg)
            loss.backward()
            total += float(loss)
        results.append((total, [p.grad.clone() for p in policy.model.parameters() if p.grad is not None]))
    for total, grads in results[1:]:
        assert total == pytest.approx(results[0][0], rel=1e-5, abs=1e-7)
        for a, b in zip(results[0][1], grads, strict=True):
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-7)
    assert any(g.abs().sum() > 0 for g in results[0][1])


def test_dynamic_sampling_and_overlong_filter_on_hand_made_groups():
    def group(rewards, reasons=None):
        return [Sample(None, [1, 2], [-0.1, -0.2], 0, "g", reward=r, finish_reason=(reasons or ["stop"] * 4)[i])
                for i, r in enumerate(rewards)]

    assert not is_informative(group([1.0, 1.0, 1.0, 1.0]))
    assert not is_informative(group([0.0, 0.0, 0.0, 0.0]))
    assert is_informative(group([0.0, 0.0, 0.5, 0.0]))
    samples = group([0.1, 0.2, 0.3, 0.4], ["stop", "length", "stop", "length"])
    assert mark_overlong(samples) == 2
    assert [s.trainable for s in samples] == [True, False, True, False]


def test_single_solution_ground_truth_keeps_only_the_recorded_action(sim_data):
    from guirl.rewards import make_reward

    states = load_states([str(sim_data)])
    multi = [s for s in states if len(s.step.valid_actions) > 1]
    assert multi, "the built-in world records steps with several valid actions"
    single = single_solution(multi)
    assert all(s.step.valid_actions == [m.step.action] for s, m in zip(single, multi, strict=True))
    assert all(len(m.step.valid_actions) > 1 for m in multi)  # the loaded states are not modified in place
    # the other valid action scores under the multi-solution ground truth, not under the single one
    step = multi[0].step
    other = next(a for a in step.valid_actions if a != step.action)
    reward = make_reward("step_match", fmt="qwen_computer_use")
    from guirl.actions import Frame, format_action

    screen = Frame.screen(step.screenshot.width, step.screenshot.height)
    text = format_action(other.to_frame(screen), "qwen_computer_use")
    cols = {"screen_size": [(screen.width, screen.height)], "output_frame": [screen]}
    assert reward([text], valid_actions=[step.valid_actions], **cols) == [1.0]
    assert reward([text], valid_actions=[single[0].step.valid_actions], **cols) == [0.0]


def test_evaluation_logs_offline_and_online_success_at_each_checkpoint(tmp_path, sim_data):
    """eval_every with eval_data and eval_online_tasks: one metrics line per evaluation with the held-out step
    success and the live episode success (overall and per task), the same episodes each time."""
    cfg = config(tmp_path, sim_data, max_steps=2, eval_every=1, eval_data=str(sim_data), eval_samples=4,
                 eval_online_tasks=["mobile.toggle_setting"], eval_online_episodes=2, eval_online_max_steps=2,
                 eval_online_env_kwargs={"preset": "coarse"})
    result = train_grpo(cfg)
    evals = [m for m in metrics(Path(cfg.output_dir)) if "eval/online_success" in m]
    assert [m["step"] for m in evals] == [1, 2]
    for m in evals:
        assert 0.0 <= m["eval/step_success"] <= 1.0 and 0.0 <= m["eval/online_success"] <= 1.0
        assert m["eval/online_success"] <= m["eval/online_progress"] <= 1.0  # a success counts as all its milestones
        assert m["eval/online_success/mobile.toggle_setting"] == m["eval/online_success"]
    assert set(result["final_eval"]) >= {"eval/step_success", "eval/online_success"}


def test_dynamic_sampling_drops_equal_groups_in_the_trainer(tmp_path, sim_data):
    # with a constant reward every group is uninformative: nothing is trained, every group is counted as dropped
    @register_reward("test_constant")
    class Constant(Reward):
        def score(self, completions, **columns):
            return RewardOutput([0.5] * len(completions))

    cfg = config(tmp_path, sim_data, rewards=[{"name": "test_constant"}], dynamic_sampling=True, refill_rounds=1)
    policy = load_rl_policy(cfg)
    sampler = GRPOSampler(cfg, policy, HFEngine.from_policy(policy), load_states(cfg.train_data))
    batches, logged = sampler(policy.model, 0, [load_states(cfg.train_data)[:2]])
    assert all(b == [] for b in batches) and logged["sampling/groups_dropped_frac"] == 1.0
    assert logged["sampling/groups_trained"] == 0.0


def test_lora_reference_is_the_adapter_disabled_policy(tmp_path, sim_data):
    cfg = config(tmp_path, sim_data, lora_rank=4, kl_coef=0.01)
    policy = load_rl_policy(cfg)
    reference = ReferencePolicy(policy.model, policy.processor)
    assert reference.frozen is None, "a LoRA policy keeps no second copy for its reference"
    with torch.no_grad():  # move the adapter away from zero so policy and reference differ
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.add_(0.05)
    plain = load_policy(cfg.model)
    states = load_states(cfg.train_data)
    sampler = GRPOSampler(cfg, policy, HFEngine.from_policy(policy), states)
    batches, _ = sampler(policy.model, 0, [states[:1]])
    samples = [s for b in batches for s in b]
    with torch.no_grad():
        base = score_samples(plain.model, plain.processor, samples, 1.0)
    for i, s in enumerate(samples):
        assert s.ref_logprobs is not None
        assert torch.allclose(torch.tensor(s.ref_logprobs), base.logprobs[i, : s.num_tokens], atol=1e-5)
        assert not torch.allclose(torch.tensor(s.ref_logprobs), torch.tensor(s.behaviour_logprobs), atol=1e-4)


def _launch(cfg_path: Path, run: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-m", "guirl", "train", "grpo", "--config", str(cfg_path),
                             f"output_dir={run}"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _losses(run: Path) -> dict[int, float]:
    return {m["step"]: m["train/loss"] for m in metrics(run)} if (run / "metrics.jsonl").exists() else {}


def test_kill_9_then_resume_gives_the_same_losses(tmp_path, sim_data):
    import yaml

    cfg = config(tmp_path, sim_data, max_steps=8, save_every=2, mu=2, temperature=1.0,  # a reward the subprocess knows
                 rewards=[{"name": "litegui_ms", "kwargs": {"fmt": "qwen_computer_use"}}])
    cfg_path = tmp_path / "grpo.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    first = _launch(cfg_path, straight)
    assert first.wait(timeout=300) == 0, first.stderr.read().decode()[-2000:]
    proc = _launch(cfg_path, killed)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if max(_losses(killed), default=0) >= 5:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert max(_losses(killed)) < 8, "the run finished before it could be killed"
    assert _launch(cfg_path, killed).wait(timeout=300) == 0
    expected, got = _losses(straight), _losses(killed)
    assert set(got) == set(range(1, 9))
    for step in range(1, 9):
        assert got[step] == pytest.approx(expected[step], rel=1e-6, abs=1e-9), step
    shutil.rmtree(tmp_path / "straight", ignore_errors=True)


def test_two_processes_under_torchrun_train_in_step(tmp_path, sim_data):
    """Two CPU processes (gloo): each samples its own states, gradients are averaged, and the run ends with one
    model; groups dropped on one process only still take part in every backward pass (no deadlock)."""
    import yaml

    cfg = config(tmp_path, sim_data, model=str(ROOT / "checkpoints" / "base-agent-tiny"), max_steps=2, batch_size=1,
                 group_size=4, micro_batch_size=2, max_new_tokens=48, dynamic_sampling=True,
                 rewards=[{"name": "litegui_ms", "kwargs": {"fmt": "qwen_computer_use"}}], optim={"lr": 1e-4})
    cfg_path = tmp_path / "grpo.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    torchrun = Path(sys.executable).parent / "torchrun"
    done = subprocess.run([str(torchrun), "--standalone", "--nproc_per_node", "2", "-m", "guirl", "train", "grpo",
                           "--config", str(cfg_path)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    logged = metrics(Path(cfg.output_dir))
    assert [m["step"] for m in logged] == [1, 2]
    assert all(m["train/loss"] == m["train/loss"] for m in logged)  # finite, not NaN
    start = load_file(str(ROOT / "checkpoints" / "base-agent-tiny" / "model.safetensors"))
    end = load_file(str(Path(cfg.output_dir) / "final" / "model.safetensors"))
    assert any(not torch.equal(start[k], end[k]) for k in start if k in end), "the averaged update changed nothing"

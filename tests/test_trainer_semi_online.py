"""Semi-online RL (UI-S1 / CCPO): the rollout prompt is the training prompt, the advantage of real rollouts
equals a hand computation, CASC prompts drop or crop history images, and the trainer runs end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from models_fixtures import tiny_model_dir
from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.models.load import load_policy
from guirl.models.prompts import PromptSpec
from guirl.models.scoring import encode_prompt
from guirl.rollout.casc import CascHistory
from guirl.rollout.hf_engine import HFEngine
from guirl.rollout.history import recorded_prompt, window_prompt
from guirl.rollout.window import PastStep, WindowHistory
from guirl.trainers.semi_online import SemiOnlineConfig, SemiOnlineSampler, load_episodes, train_semi_online

BASE_AGENT = Path(__file__).resolve().parents[1] / "checkpoints" / "base-agent-tiny"
HISTORY_AGENT = BASE_AGENT.parent / "base-agent-history-tiny"


def _config(tmp_path, data, **overrides) -> SemiOnlineConfig:
    base = {"model": str(tiny_model_dir("qwen3_vl")), "output_dir": str(tmp_path / "run"), "train_data": [str(data)],
            "max_steps": 2, "batch_size": 2, "group_size": 3, "micro_batch_size": 16, "max_new_tokens": 8,
            "save_every": 0, "log_every": 1, "report_to": [], "num_threads": 1, "history_window": 3,
            "history_images": 2, "optim": {"lr": 1e-3, "max_grad_norm": 0.0}}
    return SemiOnlineConfig(**(base | overrides))


def _sampler(cfg: SemiOnlineConfig):
    policy = load_policy(cfg.model)
    policy.prompt = PromptSpec(fmt=policy.prompt.fmt, style=policy.prompt.style, history_window=cfg.history_window,
                               history_images=cfg.history_images, casc=cfg.casc)
    return SemiOnlineSampler(cfg, policy, HFEngine.from_policy(policy)), policy


def test_rollout_prompt_is_the_recorded_training_prompt(tmp_path, sim_data):
    # patch_threshold -1: an untrained model mismatches and every step is patched with the expert's action, so
    # its history is the recorded one and SFT / evaluation (recorded_prompt) must build the very same prompt
    cfg = _config(tmp_path, sim_data, patch_threshold=-1)
    sampler, policy = _sampler(cfg)
    drawn = load_episodes(cfg.train_data)[:2]
    rollouts, _ = sampler.rollout(policy.model, drawn, step=0)
    compared = 0
    for r in rollouts:
        rec = drawn[r.group]
        for t, sample in enumerate(r.samples):
            if any(r.matched[:t]):  # a matched step shows the model's own output: not the recorded history
                continue
            prompt, _ = recorded_prompt(policy.prompt, policy.frame_for, rec.episode, rec.episode.steps[t], rec.root)
            expected = encode_prompt(policy.processor, prompt)
            assert sample.prompt.input_ids == expected.input_ids
            assert torch.equal(sample.prompt.pixel_values, expected.pixel_values)
            compared += 1
            if t >= 2:
                assert sample.prompt.num_images == 3  # two history screenshots (nAO, n images = 2) + the current
    assert compared >= 6


def _hand_advantage(groups: list[list[list[tuple[float, bool]]]], gamma: float = 0.5, eps: float = 1e-6):
    """Per rollout, per step: normalised discounted return from step 0 (stopping after a mismatch) over the
    group + the step reward normalised over the group's rollouts that reached the step."""
    def norm(values):
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
        return [(v - mean) / (std + eps) for v in values]

    out = []
    for group in groups:
        returns = []
        for steps in group:
            g = 0.0
            for r, matched in reversed(steps):
                g = r + gamma * (g if matched else 0.0)
            returns.append(g)
        episode = norm(returns)
        adv = [[episode[i]] * len(steps) for i, steps in enumerate(group)]
        for t in range(max(len(s) for s in group)):
            members = [i for i, s in enumerate(group) if len(s) > t]
            for i, a in zip(members, norm([group[i][t][0] for i in members]), strict=True):
                adv[i][t] += a
        out.append(adv)
    return out


def test_advantage_of_real_rollouts_equals_the_hand_computation(tmp_path, sim_data):
    # the shipped base agent, prompted as it was trained (no history), so rewards and matches vary
    cfg = _config(tmp_path, sim_data, model=str(BASE_AGENT), patch_threshold=1, history_window=0, history_images=0,
                  max_new_tokens=48, group_size=4)
    sampler, policy = _sampler(cfg)
    drawn = load_episodes(cfg.train_data)[:2]
    rollouts, _ = sampler.rollout(policy.model, drawn, step=3)
    samples, metrics = sampler.score(rollouts)
    groups = [[[(s.reward, m) for s, m in zip(r.samples, r.matched, strict=True)] for r in rollouts if r.group == b]
              for b in range(len(drawn))]
    expected = _hand_advantage(groups)
    got = [[[s.advantage for s in r.samples] for r in rollouts if r.group == b] for b in range(len(drawn))]
    for exp_group, got_group in zip(expected, got, strict=True):
        for e, g in zip(exp_group, got_group, strict=True):
            assert g == pytest.approx(e, abs=1e-6)
    assert len(samples) == sum(len(r.samples) for r in rollouts)
    assert len({round(s.reward, 6) for s in samples}) > 2  # real, varied rewards: the normalisation is not trivial
    assert any(any(r.matched) for r in rollouts) and not all(all(r.matched) for r in rollouts)
    assert 0.0 <= metrics["rollout/match_rate"] <= 1.0


def test_casc_max_prompt_drops_non_coordinate_images_and_captions_crops():
    spec = PromptSpec(fmt="qwen_computer_use", style="compact", history_window=3, history_images=3)
    screen = Image.new("RGB", (1080, 2400), "white")
    frame = Frame.screen(1080, 2400)
    past = [
        PastStep(0, screen, Action(type=ActionType.CLICK, point=(540.0, 1200.0), frame=frame), None),
        PastStep(1, screen, Action(type=ActionType.TYPE, text="hello"), None),
        PastStep(2, screen, Action(type=ActionType.LONG_PRESS, point=(100.0, 300.0), frame=frame), None),
    ]
    full = window_prompt(spec, frame, "task", screen, WindowHistory(3, 3)(past))
    cropped = window_prompt(PromptSpec(**{**spec.__dict__, "casc": "max"}), frame, "task", screen,
                            CascHistory(3, "max")(past))
    kept = window_prompt(PromptSpec(**{**spec.__dict__, "casc": "min"}), frame, "task", screen,
                         CascHistory(3, "min")(past))
    assert len(full.images) == 4 and len(cropped.images) == 3 and len(kept.images) == 4
    assert cropped.images[0].size != (1080, 2400) and cropped.images[1].size != (1080, 2400)
    assert kept.images[1].size == (1080, 2400)  # MIN keeps the type step's screenshot whole
    text = json.dumps(cropped.messages)
    assert text.count("[crop ") == 2
    area = sum(i.size[0] * i.size[1] for i in cropped.images[:-1])
    assert area < 0.2 * 3 * 1080 * 2400


@pytest.mark.parametrize("casc", ["off", "max"])
def test_train_semi_online_end_to_end(tmp_path, sim_data, casc):
    # from the shipped history-reading agent (a random model scores every sample 0: nothing to learn from),
    # sampling its thought and action in full
    result = train_semi_online(_config(tmp_path, sim_data, casc=casc, model=str(HISTORY_AGENT), max_new_tokens=80,
                                       optim={"lr": 1e-3, "max_grad_norm": 0.0, "weight_decay": 0.0}))
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert result["step"] == 2 and (tmp_path / "run" / "final" / "guirl_prompt.json").is_file()
    assert json.loads((tmp_path / "run" / "final" / "guirl_prompt.json").read_text())["casc"] == casc
    assert {"rollout/match_rate", "rollout/patched_frac", "advantages/episode_mean_abs"} <= set(rows[0])
    assert rows[0]["sampling/step_samples"] >= 2 * 3  # every step of every rollout is a sample
    # the update reached the weights (no weight decay: only the policy gradient moves them)
    start, final = _weights(HISTORY_AGENT), _weights(tmp_path / "run" / "final")
    moved = [name for name in start if not torch.equal(start[name], final[name])]
    assert any(abs(r["advantages/episode_mean_abs"]) > 0 for r in rows) and moved, rows


def _weights(model_dir) -> dict:
    from safetensors.torch import load_file

    return {k: v for f in sorted(Path(model_dir).glob("*.safetensors")) for k, v in load_file(f).items()}


def test_trainer_logprobs_of_fresh_rollout_samples_equal_the_engine(tmp_path, sim_data):
    """The invariant: the loss scores every step sample under exactly the prompt (tokens, history images, crops)
    it was generated from."""
    from guirl.trainers.rl_common import score_samples

    cfg = _config(tmp_path, sim_data, casc="max", patch_threshold=-1)
    sampler, policy = _sampler(cfg)
    batches, _ = sampler(policy.model, 0, [load_episodes(cfg.train_data)[:2]])
    samples = [s for b in batches for s in b]
    assert any(s.prompt.num_images > 1 for s in samples)  # history images are in play
    with torch.no_grad():
        out = score_samples(policy.model, policy.processor, samples, cfg.temperature)
    for i, s in enumerate(samples):
        assert torch.allclose(out.logprobs[i, : s.num_tokens], torch.tensor(s.behaviour_logprobs), atol=1e-5)

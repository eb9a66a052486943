"""SFT / ASFT on a freshly built tiny Qwen3-VL: loss falls, every parameter changes."""

from __future__ import annotations

import torch
from PIL import Image, ImageDraw

from guirl.actions import Action, ActionType, Frame
from guirl.data import Episode, ImageRef, Step, write_episodes
from guirl.models.build import build_model_dir
from guirl.models.load import load_policy
from guirl.trainers.core import OptimConfig
from guirl.trainers.sft import (
    SFTCollator,
    SFTConfig,
    action_spans,
    build_examples,
    enable_gradient_checkpointing,
    sft_loss,
    train_sft,
)


def _dataset(root, n=8):
    episodes = []
    (root / "img").mkdir(parents=True)
    for i in range(n):
        x = 40 + 20 * i
        img = Image.new("RGB", (256, 256), (200, 200, 200))
        ImageDraw.Draw(img).rectangle([x - 20, 100, x + 20, 148], fill=(30, 60, 200))
        img.save(root / "img" / f"{i}.png")
        frame = Frame.screen(256, 256)
        step = Step(
            index=0, screenshot=ImageRef(path=f"img/{i}.png", width=256, height=256),
            valid_actions=[Action(type=ActionType.CLICK, box=(x - 20, 100, x + 20, 148), frame=frame)],
            reasoning="The blue button is the target." if i % 2 else None,
        )
        episodes.append(Episode(id=f"e{i}", instruction="Click the blue button", steps=[step]))
    write_episodes(root / "train.jsonl", episodes)
    return root / "train.jsonl"


def test_spans_weights_and_labels_only_on_the_answer(tmp_path):
    data = _dataset(tmp_path)
    model_dir = build_model_dir("qwen3_vl", tmp_path / "model", seed=0)
    policy = load_policy(model_dir)
    cfg = SFTConfig(model=str(model_dir), train_data=[str(data)], alpha_action=2.0, alpha_grounding=4.0)
    examples = build_examples(cfg.train_data, cfg, seed=0)
    # 8 steps, the odd ones with reasoning; direct_fraction 0.5 adds reasoning-free copies of some of those 4
    assert sorted(ex.episode.id for ex in examples if ex.reasoning) == ["e1", "e3", "e5", "e7"]
    copies = [ex.episode.id for ex in examples if ex.reasoning is None and ex.step.reasoning]
    assert 1 <= len(copies) <= 4 and len(set(copies)) == len(copies) and len(examples) == 8 + len(copies)
    batch = SFTCollator(policy.processor, policy.frame_for, cfg)(examples[:2])
    labelled = batch["labels"] != -100
    # weights exist exactly where labels do; reasoning 1, action 2, coordinates 4
    assert torch.equal(batch["weights"] > 0, labelled)
    assert set(batch["weights"][labelled].tolist()) <= {1.0, 2.0, 4.0}
    assert 4.0 in batch["weights"][labelled].tolist()
    text = '<think>go</think><tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [12, 34]}}</tool_call>'
    spans = action_spans(text)
    assert text[spans["grounding"][0][0] : spans["grounding"][0][1]] == "[12, 34]"
    assert text[spans["action"][0][0] :].startswith("<tool_call>")


def test_a_few_steps_lower_the_loss_and_change_every_parameter(tmp_path):
    data = _dataset(tmp_path)
    model_dir = build_model_dir("qwen3_vl", tmp_path / "model", seed=0)
    before = {k: v.clone() for k, v in load_policy(model_dir).model.state_dict().items()}
    cfg = SFTConfig(
        model=str(model_dir), train_data=[str(data)], output_dir=str(tmp_path / "run"), max_steps=6,
        batch_size=4, grad_accum=2, report_to=[], save_every=0, log_every=1, alpha_grounding=4.0,
        optim=OptimConfig(lr=3e-3), num_threads=2,
    )
    result = train_sft(cfg)
    losses = [h["loss"] for h in result["history"]]
    assert losses[-1] < losses[0] * 0.7, losses
    after = load_policy(result["final_dir"]).model.state_dict()
    unchanged = [k for k, v in before.items() if torch.equal(v, after[k])]
    assert unchanged == [], unchanged


def test_gradient_checkpointing_gives_the_same_loss_and_gradients(tmp_path):
    data = _dataset(tmp_path)
    model_dir = build_model_dir("qwen3_vl", tmp_path / "model", seed=0)
    cfg = SFTConfig(model=str(model_dir), train_data=[str(data)], alpha_grounding=4.0)
    results = []
    for checkpointing in (False, True):
        policy = load_policy(model_dir)
        policy.model.requires_grad_(True)
        policy.model.train()
        if checkpointing:
            enable_gradient_checkpointing(policy.model)
        batch = SFTCollator(policy.processor, policy.frame_for, cfg)(build_examples(cfg.train_data, cfg, seed=0)[:2])
        loss, _ = sft_loss(policy.model, batch, [batch])
        loss.backward()
        grads = {n: p.grad.clone() for n, p in policy.model.named_parameters() if p.grad is not None}
        on = any(getattr(m, "gradient_checkpointing", False) for m in policy.model.modules())
        results.append((float(loss.detach()), grads, on))
    (plain_loss, plain_grads, off), (ckpt_loss, ckpt_grads, on) = results
    assert not off and on
    assert ckpt_loss == plain_loss
    assert plain_grads.keys() == ckpt_grads.keys() and len(plain_grads) > 50
    for name, grad in plain_grads.items():
        assert torch.allclose(grad, ckpt_grads[name], atol=1e-6), name

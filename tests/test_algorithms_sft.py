"""ASFT weighted cross-entropy and span finding with a real fast tokenizer (trained here)."""

from __future__ import annotations

import math

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from guirl.algorithms import asft_spans, asft_token_weights, weighted_cross_entropy

TARGET = (
    "<think>The settings icon is at the top right.</think>"
    '<answer>{"action_type": "Click", "action_description": "open settings", "value": "none", '
    '"point_2d": [812, 45]}</answer>'
)


@pytest.fixture(scope="module")
def fast_tokenizer() -> PreTrainedTokenizerFast:
    """A small byte-level BPE trained on a few GUI-Libra-like strings; nothing downloaded."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    corpus = [TARGET, '<answer>{"action_type": "Write", "value": "hello world", "point_2d": "none"}</answer>'] * 20
    tok.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    )
    return PreTrainedTokenizerFast(tokenizer_object=tok)


def test_spans_by_hand():
    spans = asft_spans(TARGET)
    ((a_start, a_end),) = spans["action"]
    assert TARGET[a_start:a_end].startswith('{"action_type"') and TARGET[a_end:].startswith("</answer>")
    ((g_start, g_end),) = spans["grounding"]
    assert TARGET[g_start:g_end] == "[812, 45]"
    # no <answer>: nothing but reasoning; an unclosed <answer> runs to the end
    assert asft_spans("<think>x</think>") == {"action": [], "grounding": []}
    assert asft_spans('<answer>{"point_2d": [1, 2]')["grounding"] and asft_spans('<answer>{"a": 1}')["action"]


def test_token_weights_from_offsets(fast_tokenizer):
    enc = fast_tokenizer(TARGET, return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    paper = asft_token_weights(TARGET, offsets, alpha_action=2.0, alpha_grounding=4.0, variant="paper")
    code = asft_token_weights(TARGET, offsets, alpha_action=2.0, alpha_grounding=4.0, variant="code")
    ((a_start, a_end),) = asft_spans(TARGET)["action"]
    ((g_start, g_end),) = asft_spans(TARGET)["grounding"]
    for (s, e), wp, wc in zip(offsets, paper.tolist(), code.tolist(), strict=True):
        piece = TARGET[s:e]
        if s < g_end and e > g_start:
            assert (wp, wc) == (4.0, 8.0), piece  # grounding: alpha_g (paper), alpha_a * alpha_g (code)
        elif s < a_end and e > a_start:
            assert (wp, wc) == (2.0, 2.0), piece
        else:
            assert (wp, wc) == (1.0, 1.0), piece
    # hand check: every token carrying a digit of the coordinates "812" / "45" weighs 8 in the code variant
    digit_weights = [
        w
        for (s, e), w in zip(offsets, code.tolist(), strict=True)
        if s >= g_start and any(ch.isdigit() for ch in TARGET[s:e])
    ]
    assert digit_weights and set(digit_weights) == {8.0}
    assert paper.sum() > len(offsets)  # some tokens weigh more than 1


def test_weighted_ce_hand_computed():
    # token 0: uniform logits over V = 4 -> CE = ln 4 = 1.386294
    # token 1: logits [ln 3, 0, 0, 0], target 0 -> p = 3 / 6 = 0.5 -> CE = ln 2 = 0.693147
    # weights [1, 3]: (1.386294 + 3 * 0.693147) / 4 = 0.866434; token 2 is ignored (-100)
    logits = torch.tensor([[[0.0, 0, 0, 0], [math.log(3), 0, 0, 0], [5.0, 0, 0, 0]]])
    labels = torch.tensor([[0, 0, -100]])
    loss, m = weighted_cross_entropy(logits, labels, torch.tensor([[1.0, 3.0, 7.0]]))
    assert float(loss) == pytest.approx(0.866434, abs=1e-6)
    # alpha = 1 everywhere is plain SFT (mean CE)
    plain, _ = weighted_cross_entropy(logits, labels, torch.ones(1, 3))
    assert float(plain) == pytest.approx((math.log(4) + math.log(2)) / 2)


def test_weighted_ce_invariant_to_micro_batching():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 5, 11, generator=g, dtype=torch.float64)
    labels = torch.randint(0, 11, (6, 5), generator=g)
    labels[0, 3:] = -100
    weights = torch.rand(6, 5, generator=g, dtype=torch.float64) * 4
    total_w = float((weights * (labels != -100)).sum())

    def run(micro):
        params = logits.clone().requires_grad_(True)
        total = 0.0
        for i in range(0, 6, micro):
            loss, _ = weighted_cross_entropy(
                params[i : i + micro], labels[i : i + micro], weights[i : i + micro], normaliser=total_w
            )
            loss.backward()
            total += float(loss)
        return total, params.grad

    full, full_grad = run(6)
    assert full == pytest.approx(float(weighted_cross_entropy(logits, labels, weights)[0]), abs=1e-12)
    for micro in (1, 2, 4):
        loss, grad = run(micro)
        assert loss == pytest.approx(full, abs=1e-12) and torch.allclose(grad, full_grad, atol=1e-12)

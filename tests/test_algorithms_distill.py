"""Reverse-KL distillation and value-gated OPSD: hand-computed cases."""

from __future__ import annotations

import math

import pytest
import torch

from guirl.algorithms import (
    gated_topk_kl_loss,
    reverse_kl_full_vocab,
    reverse_kl_sampled_token,
    reverse_kl_topk_tail,
    topk_tail_reverse_kl_per_token,
    value_gated_opsd_loss,
)


def test_full_vocab_hand_computed():
    # student logits [0, 0] -> p = [0.5, 0.5]; teacher logits [ln 3, 0] -> q = [0.75, 0.25]
    # KL(p || q) = 0.5 ln(0.5 / 0.75) + 0.5 ln(0.5 / 0.25) = 0.5 (-0.405465) + 0.5 (0.693147) = 0.143841
    student = torch.zeros(1, 1, 2, requires_grad=True)
    teacher = torch.tensor([[[math.log(3), 0.0]]], requires_grad=True)
    loss, m = reverse_kl_full_vocab(student, teacher, torch.ones(1, 1))
    assert float(loss.detach()) == pytest.approx(0.143841, abs=1e-6)
    loss.backward()
    assert teacher.grad is None  # the teacher is detached
    assert torch.isfinite(student.grad).all() and student.grad.abs().sum() > 0


def test_topk_tail_hand_computed_and_exact_at_full_k():
    # p = [0.5, 0.25, 0.25]; q = [0.5, 0.1, 0.4]
    # k = 1: buckets p [0.5 | 0.5], q [0.5 | 0.5] -> KL 0
    # full: 0.25 ln(0.25 / 0.1) + 0.25 ln(0.25 / 0.4) = 0.25 (0.916291) + 0.25 (-0.470004) = 0.111572
    student = torch.log(torch.tensor([[[0.5, 0.25, 0.25]]]))
    teacher = torch.log(torch.tensor([[[0.5, 0.1, 0.4]]]))
    assert float(topk_tail_reverse_kl_per_token(student, teacher, k=1)) == pytest.approx(0.0, abs=1e-6)
    assert float(topk_tail_reverse_kl_per_token(student, teacher, k=3)) == pytest.approx(0.111572, abs=1e-6)
    full, _ = reverse_kl_full_vocab(student, teacher, torch.ones(1, 1))
    topk, _ = reverse_kl_topk_tail(student, teacher, torch.ones(1, 1), k=50)  # k >= V: exact
    assert float(topk) == pytest.approx(float(full), abs=1e-6)


def test_topk_tail_lower_bounds_full_and_has_finite_grads():
    g = torch.Generator().manual_seed(0)
    student = (torch.randn(2, 3, 40, generator=g) * 4).requires_grad_(True)
    teacher = torch.randn(2, 3, 40, generator=g) * 4
    full, _ = reverse_kl_full_vocab(student, teacher, torch.ones(2, 3))
    for k in (1, 5, 20):
        topk, _ = reverse_kl_topk_tail(student, teacher, torch.ones(2, 3), k=k)
        assert float(topk.detach()) <= float(full.detach()) + 1e-5
        (grad,) = torch.autograd.grad(topk, student)
        assert torch.isfinite(grad).all()


def test_sampled_token_value_and_gradient():
    # logp_s = [-1, -2], logp_T = [-1.5, -1] -> d = [0.5, -1]; token-mean value = -0.25
    # gradient (score function, zero-mean +1 term dropped): d / N = [0.25, -0.5]
    s = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    loss, m = reverse_kl_sampled_token(s, torch.tensor([[-1.5, -1.0]]), torch.ones(1, 2))
    assert float(loss) == pytest.approx(-0.25) and m["distill/reverse_kl"] == pytest.approx(-0.25)
    loss.backward()
    assert torch.allclose(s.grad, torch.tensor([[0.25, -0.5]]))


def _sig(x):
    return 1 / (1 + math.exp(-x))


def test_opsd_hand_computed_paper_and_code():
    # two steps, one token each: q+ = -1, log pi = -2 -> delta = 1
    # s = +1: ell = 1, gate = sigmoid(5) = 0.993307; s = -1: ell = -1, gate = sigmoid(-5) = 0.006693
    # token-mean loss = (0.993307 * 1 + 0.006693 * -1) / 2 = 0.493307
    priv = torch.tensor([[-1.0], [-1.0]])
    values = torch.tensor([1.0, -1.0])
    expected = (_sig(5) - _sig(-5)) / 2
    # code variant: gate detached -> d loss / d logp = -gate * s / 2 = [-0.496654, +0.003347]
    logp = torch.tensor([[-2.0], [-2.0]], requires_grad=True)
    loss, m = value_gated_opsd_loss(logp, priv, values, torch.ones(2, 1), variant="code")
    loss.backward()
    assert float(loss) == pytest.approx(expected, abs=1e-6)
    assert torch.allclose(logp.grad, torch.tensor([[-_sig(5) / 2], [_sig(-5) / 2]]), atol=1e-6)
    assert m["opsd/conflict_frac"] == 0.5  # the s = -1 step's shift (+1) contradicts its value
    # paper variant: the gate carries gradient too: d/dlogp [sig(5 ell) ell] = (sig + 5 ell sig (1 - sig)) * (-s)
    logp = torch.tensor([[-2.0], [-2.0]], requires_grad=True)
    loss, _ = value_gated_opsd_loss(logp, priv, values, torch.ones(2, 1), variant="paper")
    loss.backward()
    g1 = -(_sig(5) + 5 * _sig(5) * (1 - _sig(5))) / 2  # ell = +1, s = +1
    g2 = (_sig(-5) - 5 * _sig(-5) * (1 - _sig(-5))) / 2  # ell = -1, s = -1
    assert float(loss) == pytest.approx(expected, abs=1e-6)
    assert torch.allclose(logp.grad, torch.tensor([[g1], [g2]]), atol=1e-6)


def test_opsd_gates_and_masking():
    priv, logp = torch.tensor([[-1.0], [-1.0]]), torch.tensor([[-2.0], [-2.0]])
    values, mask = torch.tensor([1.0, -1.0]), torch.ones(2, 1)
    # hard gate: 1[ell > 0] -> (1 * 1 + 0 * -1) / 2 = 0.5; reverse: (sig(-5) - sig(5)) / 2; none: (1 - 1) / 2 = 0
    assert float(value_gated_opsd_loss(logp, priv, values, mask, gate="hard")[0]) == pytest.approx(0.5)
    assert float(value_gated_opsd_loss(logp, priv, values, mask, gate="reverse")[0]) == pytest.approx(
        (_sig(-5) - _sig(5)) / 2
    )
    assert float(value_gated_opsd_loss(logp, priv, values, mask, gate="none")[0]) == pytest.approx(0.0)
    # s = 0 (tie / missing verdict) masks the step out of numerator and denominator: only the s = +1 step counts
    loss, _ = value_gated_opsd_loss(logp, priv, torch.tensor([1.0, 0.0]), mask)
    assert float(loss) == pytest.approx(_sig(5))
    with pytest.raises(ValueError, match="valid gates"):
        value_gated_opsd_loss(logp, priv, values, mask, gate="soft")
    with pytest.raises(ValueError, match="valid variants"):
        value_gated_opsd_loss(logp, priv, values, mask, variant="v2")


def test_gated_topk_kl_weights_by_sigmoid_of_kl():
    # p = [0.5, 0.5], q = [0.75, 0.25]: KL = 0.143841; weight sigmoid(5 * 0.143841) = 0.672517
    student, teacher = torch.zeros(1, 1, 2), torch.tensor([[[math.log(3), 0.0]]])
    loss, m = gated_topk_kl_loss(student, teacher, torch.ones(1, 1), k=50, beta=5.0)
    assert float(loss) == pytest.approx(0.143841 * _sig(5 * 0.143841), abs=1e-6)


def test_full_vocab_loop_vs_vectorised():
    g = torch.Generator().manual_seed(2)
    student, teacher = (
        torch.randn(2, 3, 7, generator=g, dtype=torch.float64),
        torch.randn(2, 3, 7, generator=g, dtype=torch.float64),
    )
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    total, count = 0.0, 0
    for b in range(2):
        for t in range(3):
            if mask[b, t]:
                p = torch.softmax(student[b, t], -1).tolist()
                q = torch.softmax(teacher[b, t], -1).tolist()
                total += sum(pi * math.log(pi / qi) for pi, qi in zip(p, q, strict=True))
                count += 1
    loss, _ = reverse_kl_full_vocab(student, teacher, mask)
    assert float(loss) == pytest.approx(total / count, abs=1e-12)


def test_opsd_and_distill_invariant_to_micro_batching():
    g = torch.Generator().manual_seed(4)
    logp = -torch.rand(6, 4, generator=g, dtype=torch.float64) * 3
    priv = logp + 0.5 * torch.randn(6, 4, generator=g, dtype=torch.float64)
    values = torch.tensor([1.0, -1.0, 0.0, 1.0, -1.0, 1.0], dtype=torch.float64)
    mask = (torch.rand(6, 4, generator=g) > 0.3).double()
    active_tokens = float((mask * (values != 0)[:, None]).sum())  # the s = 0 step does not count

    def run(micro, fn):
        params = logp.clone().requires_grad_(True)
        total = 0.0
        for i in range(0, 6, micro):
            sl = slice(i, i + micro)
            loss, _ = fn(params[sl], sl)
            loss.backward()
            total += float(loss.detach())
        return total, params.grad

    opsd = lambda p, sl: value_gated_opsd_loss(p, priv[sl], values[sl], mask[sl], num_tokens=active_tokens)  # noqa: E731
    kl = lambda p, sl: reverse_kl_sampled_token(p, priv[sl], mask[sl], num_tokens=float(mask.sum()))  # noqa: E731
    for fn in (opsd, kl):
        full, full_grad = run(6, fn)
        for micro in (1, 2, 4):
            loss, grad = run(micro, fn)
            assert loss == pytest.approx(full, abs=1e-12) and torch.allclose(grad, full_grad, atol=1e-12)
    plain, _ = value_gated_opsd_loss(logp, priv, values, mask)
    assert float(plain) == pytest.approx(run(6, opsd)[0], abs=1e-12)


def test_topk_tail_teacher_vs_student_buckets_hand_computed():
    # p (student) = [0.5, 0.3, 0.2]; q (teacher) = [0.2, 0.5, 0.3]; k = 1
    # teacher top-1 = token 1 (ComputerSD code): p [0.3 | 0.7], q [0.5 | 0.5]
    #   KL = 0.3 ln(0.3 / 0.5) + 0.7 ln(0.7 / 0.5) = 0.3 (-0.510826) + 0.7 (0.336472) = 0.082283
    # student top-1 = token 0: p [0.5 | 0.5], q [0.2 | 0.8]
    #   KL = 0.5 ln(2.5) + 0.5 ln(0.625) = 0.5 (0.916291) + 0.5 (-0.470004) = 0.223144
    student = torch.log(torch.tensor([[[0.5, 0.3, 0.2]]]))
    teacher = torch.log(torch.tensor([[[0.2, 0.5, 0.3]]]))
    assert float(topk_tail_reverse_kl_per_token(student, teacher, k=1)) == pytest.approx(0.082283, abs=1e-6)
    assert float(topk_tail_reverse_kl_per_token(student, teacher, k=1, topk_from="student")) == pytest.approx(
        0.223144, abs=1e-6
    )
    with pytest.raises(ValueError, match="valid sources"):
        topk_tail_reverse_kl_per_token(student, teacher, k=1, topk_from="both")


def test_gated_topk_kl_gate_ablations_and_step_mask():
    # same p, q, k = 1, teacher buckets: KL = 0.082283
    # sigmoid: 0.082283 * sigmoid(0.411414) = 0.082283 * 0.601427 = 0.049487
    # hard: 1[KL > 0] = 1 -> 0.082283; none: 0.082283; reverse: 0.082283 * sigmoid(-0.411414) = 0.032796
    student = torch.log(torch.tensor([[[0.5, 0.3, 0.2]], [[0.5, 0.3, 0.2]]]))
    teacher = torch.log(torch.tensor([[[0.2, 0.5, 0.3]], [[0.2, 0.5, 0.3]]]))
    mask = torch.ones(2, 1)
    expected = {"sigmoid": 0.049487, "hard": 0.082283, "none": 0.082283, "reverse": 0.032796}
    for gate, value in expected.items():
        loss, _ = gated_topk_kl_loss(student, teacher, mask, k=1, gate=gate)
        assert float(loss) == pytest.approx(value, abs=1e-6), gate
    # a step with s = 0 is masked: the loss is the other step's alone (same value), a masked-only batch gives 0
    loss, m = gated_topk_kl_loss(student, teacher, mask, k=1, step_values=torch.tensor([-1.0, 0.0]))
    assert float(loss) == pytest.approx(0.049487, abs=1e-6) and m["opsd/topk_kl"] == pytest.approx(0.082283, abs=1e-6)
    loss, _ = gated_topk_kl_loss(student, teacher, mask, k=1, step_values=torch.tensor([0.0, 0.0]))
    assert float(loss) == 0.0


def test_opsd_without_judge_direction_is_seed_loss():
    # code's GUI_OPD_JUDGE_GATE=false: s -> +1 on scored steps. q+ = -1, log pi = -2 -> delta = 1 on both steps
    # s = [+1, -1] -> [+1, +1]: ell = 1, gate sigmoid(5) on both -> token-mean 0.993307
    # gradient (code variant, gate detached): -gate / 2 on each token
    priv, values, mask = torch.tensor([[-1.0], [-1.0]]), torch.tensor([1.0, -1.0]), torch.ones(2, 1)
    logp = torch.tensor([[-2.0], [-2.0]], requires_grad=True)
    loss, _ = value_gated_opsd_loss(logp, priv, values, mask, variant="code", judge_direction=False)
    loss.backward()
    assert float(loss) == pytest.approx(_sig(5), abs=1e-6)
    assert torch.allclose(logp.grad, torch.full((2, 1), -_sig(5) / 2), atol=1e-6)
    # s = 0 stays masked
    loss, _ = value_gated_opsd_loss(logp.detach(), priv, torch.tensor([0.0, -1.0]), mask, judge_direction=False)
    assert float(loss) == pytest.approx(_sig(5), abs=1e-6)


def test_distillation_opsd_and_sft_losses_are_registered_by_one_vocabulary():
    from guirl.algorithms import (
        available_distill_losses,
        available_opsd_losses,
        available_sft_losses,
        bucket_reverse_kl_loss,
        gated_bucket_kl_loss,
        get_distill_loss,
        get_opsd_loss,
        reverse_kl_topk_tail,
    )

    assert available_distill_losses() == ["full_vocab", "sampled_token", "topk"]
    assert available_opsd_losses() == ["sampled_token", "topk"]  # the same names as OPD's
    assert available_sft_losses() == ["weighted_ce"]
    assert get_distill_loss("sampled_token") is reverse_kl_sampled_token
    assert get_distill_loss("topk") is bucket_reverse_kl_loss and get_opsd_loss("topk") is gated_bucket_kl_loss
    assert get_opsd_loss("sampled_token") is value_gated_opsd_loss
    with pytest.raises(KeyError, match="sampled_token"):
        get_distill_loss("sampled")
    # the registered top-k loss on gathered log-probs is the top-k-plus-tail KL of the logits
    torch.manual_seed(0)
    s, t, mask = torch.randn(2, 3, 11), torch.randn(2, 3, 11), torch.ones(2, 3)
    log_p, log_q = s.log_softmax(-1), t.log_softmax(-1)
    ids = log_q.topk(4, -1).indices
    got, _ = bucket_reverse_kl_loss(log_p.gather(-1, ids), log_q.gather(-1, ids), mask)
    want, _ = reverse_kl_topk_tail(s, t, mask, k=4)
    assert float(got) == pytest.approx(float(want), abs=1e-6)

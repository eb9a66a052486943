"""Property tests: losses stay finite with finite gradients on extreme but valid inputs."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from guirl.algorithms import (
    AGGREGATION_MODES,
    clipped_surrogate_loss,
    grpo_advantage,
    reverse_kl_full_vocab,
    reverse_kl_sampled_token,
    reverse_kl_topk_tail,
    rloo_advantage,
    sngs_advantage,
    value_gated_opsd_loss,
)


def _finite(*tensors):
    return all(torch.isfinite(t).all() for t in tensors)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    scale=st.sampled_from([0.01, 1.0, 30.0]),
    mode=st.sampled_from(AGGREGATION_MODES),
    level=st.sampled_from(["token", "sequence"]),
)
def test_policy_loss_gradients_finite(seed, scale, mode, level):
    g = torch.Generator().manual_seed(seed)
    logp = (-torch.rand(4, 6, generator=g) * scale * 3).requires_grad_(True)
    old = -torch.rand(4, 6, generator=g) * scale * 3
    ref = -torch.rand(4, 6, generator=g) * scale * 3
    mask = (torch.rand(4, 6, generator=g) > 0.5).float()  # may leave whole rows empty
    adv = torch.randn(4, generator=g) * scale
    loss, metrics = clipped_surrogate_loss(
        logp, old, adv, mask, ratio_level=level, loss_agg_mode=mode, ref_logprobs=ref, kl_coef=0.01, max_tokens=6
    )
    loss.backward()
    assert _finite(loss, logp.grad)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([0.1, 10.0, 1e3]), k=st.integers(1, 12))
def test_distillation_gradients_finite(seed, scale, k):
    g = torch.Generator().manual_seed(seed)
    student = (torch.randn(2, 3, 10, generator=g) * scale).requires_grad_(True)
    teacher = torch.randn(2, 3, 10, generator=g) * scale
    mask = torch.ones(2, 3)
    for fn in (
        lambda: reverse_kl_full_vocab(student, teacher, mask),
        lambda: reverse_kl_topk_tail(student, teacher, mask, k=k),
    ):
        loss, _ = fn()
        (grad,) = torch.autograd.grad(loss, student)
        assert _finite(loss, grad) and float(loss) >= -1e-4  # a KL (or its lower bound) is non-negative
    logp = torch.log_softmax(student, -1)[..., 0].detach().requires_grad_(True)
    tlogp = torch.log_softmax(teacher, -1)[..., 0]
    loss, _ = reverse_kl_sampled_token(logp, tlogp, mask)
    (grad,) = torch.autograd.grad(loss, logp)
    assert _finite(loss, grad)
    values = torch.tensor([1.0, -1.0])
    for variant in ("paper", "code"):
        lp = logp.detach().requires_grad_(True)
        loss, _ = value_gated_opsd_loss(lp, tlogp, values, mask, variant=variant)
        (grad,) = torch.autograd.grad(loss, lp)
        assert _finite(loss, grad)


@settings(max_examples=40, deadline=None)
@given(
    rewards=st.lists(st.floats(-1e6, 1e6), min_size=4, max_size=4).map(
        lambda r: torch.tensor(r * 2, dtype=torch.float64)
    )
)
def test_advantages_finite_and_centred(rewards):
    for adv, _ in (
        grpo_advantage(rewards, 4),
        grpo_advantage(rewards, 4, epsilon=0.0),
        rloo_advantage(rewards, 4),
        sngs_advantage(rewards, 4),
    ):
        assert _finite(adv)
    # GRPO / RLOO advantages sum to zero within each group
    assert abs(float(grpo_advantage(rewards, 4, std_scaling="none")[0][:4].sum())) <= 1e-6 * (
        1 + float(rewards.abs().max())
    )
    assert abs(float(rloo_advantage(rewards, 4)[0][:4].sum())) <= 1e-6 * (1 + float(rewards.abs().max()))

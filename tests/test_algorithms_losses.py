"""Policy loss, KL estimators and aggregate_loss: hand-computed cases and invariance."""

from __future__ import annotations

import math

import pytest
import torch

from guirl.algorithms import (
    AGGREGATION_MODES,
    aggregate_loss,
    available_policy_losses,
    batch_normalisers,
    clipped_surrogate_loss,
    get_policy_loss,
    kl_estimate,
    register_policy_loss,
)


def test_aggregate_modes_hand_computed():
    # loss [[1, 2, 3], [4, 0, 0]], mask [[1, 1, 0], [1, 0, 0]] -> kept 1, 2 | 4
    loss = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    assert aggregate_loss(loss, mask, "token-mean") == pytest.approx(7 / 3)  # (1 + 2 + 4) / 3
    assert aggregate_loss(loss, mask, "seq-mean-token-mean") == pytest.approx(2.75)  # (1.5 + 4) / 2
    assert aggregate_loss(loss, mask, "seq-mean-token-sum") == pytest.approx(3.5)  # (3 + 4) / 2
    assert aggregate_loss(loss, mask, "seq-mean-token-sum-norm", max_tokens=4) == pytest.approx(7 / 8)  # 7 / (2 * 4)
    with pytest.raises(ValueError, match="valid modes"):
        aggregate_loss(loss, mask, "token-sum")
    with pytest.raises(ValueError, match="max_tokens"):
        aggregate_loss(loss, mask, "seq-mean-token-sum-norm")


def test_policy_loss_registry():
    assert get_policy_loss("clipped") is clipped_surrogate_loss
    assert "clipped" in available_policy_losses()
    with pytest.raises(ValueError, match="already registered"):
        register_policy_loss("clipped")(clipped_surrogate_loss)
    with pytest.raises(KeyError, match="valid names: \\['clipped'"):
        get_policy_loss("ppo2")


def test_clipped_token_level_hand_computed():
    # token 0: log ratio +0.5 -> ratio 1.6487, A = +1, eps_high 0.28 -> min(1.6487, 1.28) = 1.28 -> loss -1.28
    # token 1: log ratio -0.5 -> ratio 0.6065, A = -1, eps_low 0.2 -> min(-0.6065, -0.8) = -0.8 -> loss +0.8
    # token-mean over 2 tokens: (-1.28 + 0.8) / 2 = -0.24; both tokens clipped
    logp = torch.tensor([[0.0], [0.0]], requires_grad=True)
    old = torch.tensor([[-0.5], [0.5]])
    loss, m = clipped_surrogate_loss(
        logp, old, torch.tensor([1.0, -1.0]), torch.ones(2, 1), clip_eps_low=0.2, clip_eps_high=0.28
    )
    assert float(loss) == pytest.approx(-0.24)
    assert m["losses/clipfrac_high"] == 0.5 and m["losses/clipfrac_low"] == 0.5 and m["losses/clipfrac"] == 1.0
    loss.backward()
    assert torch.equal(logp.grad, torch.zeros(2, 1))  # clipped tokens give no gradient


def test_clipped_unclipped_gradient_hand_computed():
    # ratio 1 (on-policy), A = 2: loss = -ratio * A, d loss / d logp = -ratio * A = -2; token-mean over 1 token
    logp = torch.tensor([[-1.0]], requires_grad=True)
    loss, _ = clipped_surrogate_loss(logp, logp.detach(), torch.tensor([2.0]), torch.ones(1, 1))
    loss.backward()
    assert float(loss) == pytest.approx(-2.0) and float(logp.grad) == pytest.approx(-2.0)


def test_clipped_sequence_level_hand_computed():
    # log ratios 0.2 and 0.4 -> sequence log ratio 0.3 -> ratio e^0.3 = 1.34986 > 1.28 -> clipped:
    # per-token loss -1.28 * A (A = 1) on both tokens -> -1.28
    logp = torch.tensor([[0.2, 0.4]])
    loss, m = clipped_surrogate_loss(
        logp, torch.zeros(1, 2), torch.tensor([1.0]), torch.ones(1, 2), clip_eps_high=0.28, ratio_level="sequence"
    )
    assert float(loss) == pytest.approx(-1.28)
    assert m["losses/ratio_mean"] == pytest.approx(math.exp(0.3))


def test_kl_estimators_hand_computed():
    # logp = -1, ref = -2: log ratio r = 1; k1 = 1; k2 = 0.5; k3 = e^-1 - 1 + 1 = 0.367879
    logp, ref = torch.tensor([-1.0]), torch.tensor([-2.0])
    assert float(kl_estimate(logp, ref, "k1")) == pytest.approx(1.0)
    assert float(kl_estimate(logp, ref, "k2")) == pytest.approx(0.5)
    assert float(kl_estimate(logp, ref, "k3")) == pytest.approx(math.exp(-1))
    assert float(kl_estimate(logp, ref, "low_var_kl")) == pytest.approx(math.exp(-1))
    assert float(kl_estimate(torch.tensor([0.0]), torch.tensor([-30.0]), "k3", clamp=10.0)) == 10.0
    with pytest.raises(ValueError, match="valid estimators"):
        kl_estimate(logp, ref, "k4")


def test_kl_penalty_added_per_token():
    # on-policy, A = 0 -> surrogate 0; k1 KL = logp - ref = 0.5 per token; kl_coef 0.1 -> loss 0.05
    logp = torch.full((1, 3), -1.0)
    loss, m = clipped_surrogate_loss(
        logp, logp, torch.zeros(1), torch.ones(1, 3), ref_logprobs=logp - 0.5, kl_coef=0.1, kl_estimator="k1"
    )
    assert float(loss) == pytest.approx(0.05) and m["losses/kl"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="ref_logprobs"):
        clipped_surrogate_loss(logp, logp, torch.zeros(1), torch.ones(1, 3), kl_coef=0.1)


def _random_batch(seed, b=6, t=5):
    g = torch.Generator().manual_seed(seed)
    logp = -torch.rand(b, t, generator=g, dtype=torch.float64) * 2
    old = logp + 0.3 * torch.randn(b, t, generator=g, dtype=torch.float64)
    ref = logp + 0.2 * torch.randn(b, t, generator=g, dtype=torch.float64)
    lengths = torch.randint(1, t + 1, (b,), generator=g)
    mask = (torch.arange(t)[None] < lengths[:, None]).double()
    adv = torch.randn(b, generator=g, dtype=torch.float64)
    return logp, old, ref, mask, adv


@pytest.mark.parametrize("mode", AGGREGATION_MODES)
@pytest.mark.parametrize("level", ["token", "sequence"])
def test_loss_and_gradient_invariant_to_micro_batching(mode, level):
    """Full batch == sum over micro-batches (any size, i.e. gradient accumulation) with global normalisers."""
    logp, old, ref, mask, adv = _random_batch(seed=7)
    kwargs = {
        "clip_eps_low": 0.2,
        "clip_eps_high": 0.28,
        "ratio_level": level,
        "loss_agg_mode": mode,
        "ref_logprobs": None,
        "kl_coef": 0.0,
        "max_tokens": 5,
    }

    def run(micro: int):
        params = logp.clone().requires_grad_(True)
        n_tok, n_seq = batch_normalisers([mask[i : i + micro] for i in range(0, len(mask), micro)])
        total = torch.zeros((), dtype=torch.float64)
        for i in range(0, len(mask), micro):  # gradient accumulation: backward per micro-batch, no rescaling
            sl = slice(i, i + micro)
            loss, _ = clipped_surrogate_loss(
                params[sl],
                old[sl],
                adv[sl],
                mask[sl],
                num_tokens=n_tok,
                num_sequences=n_seq,
                **{**kwargs, "ref_logprobs": ref[sl], "kl_coef": 0.05},
            )
            loss.backward()
            total = total + loss.detach()
        return total, params.grad

    full_loss, full_grad = run(6)
    # the full-batch result equals the plain (no global normaliser) aggregation
    plain, _ = clipped_surrogate_loss(logp, old, adv, mask, **{**kwargs, "ref_logprobs": ref, "kl_coef": 0.05})
    assert float(full_loss) == pytest.approx(float(plain), abs=1e-12)
    for micro in (1, 2, 3, 4):
        loss, grad = run(micro)
        assert float(loss) == pytest.approx(float(full_loss), abs=1e-12)
        assert torch.allclose(grad, full_grad, atol=1e-12)


def test_shape_errors_name_the_inputs():
    with pytest.raises(ValueError, match="must all be \\[B, T\\]"):
        clipped_surrogate_loss(torch.zeros(2, 3), torch.zeros(2, 4), torch.zeros(2), torch.ones(2, 3))
    with pytest.raises(ValueError, match="valid levels"):
        clipped_surrogate_loss(
            torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2), torch.ones(2, 3), ratio_level="seq"
        )


def _loop_clipped(logp, old, adv, mask, eps_low, eps_high):
    """Reference: per-token PPO clip in plain Python, seq-mean-token-mean."""
    per_seq = []
    for i in range(len(logp)):
        terms = []
        for t in range(len(logp[i])):
            if not mask[i][t]:
                continue
            ratio = math.exp(logp[i][t] - old[i][t])
            clipped = min(max(ratio, 1 - eps_low), 1 + eps_high)
            terms.append(-min(ratio * adv[i], clipped * adv[i]))
        per_seq.append(sum(terms) / max(len(terms), 1))
    return sum(per_seq) / len(per_seq)


def test_clipped_loop_vs_vectorised():
    logp, old, _, mask, adv = _random_batch(seed=11)
    loss, _ = clipped_surrogate_loss(
        logp, old, adv, mask, clip_eps_low=0.2, clip_eps_high=0.28, loss_agg_mode="seq-mean-token-mean"
    )
    ref = _loop_clipped(logp.tolist(), old.tolist(), adv.tolist(), mask.tolist(), 0.2, 0.28)
    assert float(loss) == pytest.approx(ref, abs=1e-12)


def test_litegui_sequence_objective_is_seq_mean():
    # LiteGUI A.6: -1/G sum_i min(rho_i A_i, clip(rho_i) A_i) with a sequence-level ratio.
    # On-policy (rho = 1), A = [+1, -1], lengths 1 and 3 tokens:
    #   seq-mean-token-mean: (-1 + 1) / 2 = 0 (the paper's 1/G average)
    #   token-mean:          (-1 * 1 + 1 * 3) / 4 = 0.5 (long sequences weigh more)
    logp = torch.tensor([[-1.0, 0.0, 0.0], [-1.0, -2.0, -0.5]])
    mask = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    adv = torch.tensor([1.0, -1.0])
    kw = {"ratio_level": "sequence", "clip_eps_low": 0.2, "clip_eps_high": 0.28}
    seq, _ = clipped_surrogate_loss(logp, logp, adv, mask, loss_agg_mode="seq-mean-token-mean", **kw)
    tok, _ = clipped_surrogate_loss(logp, logp, adv, mask, loss_agg_mode="token-mean", **kw)
    assert float(seq) == pytest.approx(0.0) and float(tok) == pytest.approx(0.5)

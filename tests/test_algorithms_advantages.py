"""Advantage estimators: hand-computed cases and loop-vs-vectorised equivalence."""

from __future__ import annotations

import math

import pytest
import torch

from guirl.algorithms import (
    available_adv_ests,
    broadcast_to_tokens,
    discounted_returns,
    get_adv_est,
    grpo_advantage,
    informative_groups,
    register_adv_est,
    rloo_advantage,
    semi_online_advantage,
    sngs_advantage,
)


def test_registry_names_duplicates_and_unknown():
    assert {"grpo", "rloo", "sngs", "semi_online"} <= set(available_adv_ests())
    assert get_adv_est("grpo") is grpo_advantage
    with pytest.raises(ValueError, match="already registered"):
        register_adv_est("grpo")(lambda rewards, group_size: (rewards, {}))
    with pytest.raises(KeyError, match="valid names: .*'grpo'"):
        get_adv_est("gae_typo")


def test_grpo_hand_computed():
    # group [1, 0, 0, 1]: mean 0.5, unbiased std = sqrt(4 * 0.25 / 3) = 0.57735
    # advantages = +-0.5 / 0.57735 = +-0.866025
    adv, metrics = grpo_advantage(torch.tensor([1.0, 0.0, 0.0, 1.0]), 4, epsilon=0.0)
    assert torch.allclose(adv, torch.tensor([0.866025, -0.866025, -0.866025, 0.866025]), atol=1e-6)
    # without std scaling (Dr. GRPO): just centred
    adv, _ = grpo_advantage(torch.tensor([1.0, 0.0, 0.0, 1.0]), 4, std_scaling="none")
    assert torch.equal(adv, torch.tensor([0.5, -0.5, -0.5, 0.5]))
    # a group with equal rewards gets zero advantages and is counted
    adv, metrics = grpo_advantage(torch.tensor([0.3, 0.3, 1.0, 0.0]), 2)
    assert adv[:2].abs().max() == 0 and metrics["advantages/frac_zero_std_groups"] == 0.5


def test_grpo_batch_scaling_hand_computed():
    # rewards [0, 2 | 4, 6]: group means 1, 5 -> centred [-1, 1, -1, 1]
    # batch std (unbiased) of [0, 2, 4, 6] = sqrt(20 / 3) = 2.581989
    adv, _ = grpo_advantage(torch.tensor([0.0, 2.0, 4.0, 6.0]), 2, std_scaling="batch", epsilon=0.0)
    assert torch.allclose(adv, torch.tensor([-1, 1, -1, 1]) / math.sqrt(20 / 3), atol=1e-6)


def test_rloo_hand_computed():
    # [1, 0, 0]: A_0 = 1 - (0 + 0)/2 = 1; A_1 = 0 - (1 + 0)/2 = -0.5; A_2 = -0.5
    adv, _ = rloo_advantage(torch.tensor([1.0, 0.0, 0.0]), 3)
    assert torch.allclose(adv, torch.tensor([1.0, -0.5, -0.5]))
    with pytest.raises(ValueError, match="group_size >= 2"):
        rloo_advantage(torch.tensor([1.0]), 1)


def test_sngs_hand_computed():
    # group [1, 0, 0, 0]: p_g = 0.25, lambda = clamp(0.5 + 1.5 * 0.25, 0, 1) = 0.875
    # grpo: mean 0.25, std = sqrt((0.5625 + 3 * 0.0625) / 3) = 0.5
    # A = [1.5, -0.5, -0.5, -0.5] -> negatives x 0.875 -> [1.5, -0.4375, -0.4375, -0.4375]
    adv, metrics = sngs_advantage(torch.tensor([1.0, 0.0, 0.0, 0.0]), 4, lambda_0=0.5, kappa=1.5, epsilon=0.0)
    assert torch.allclose(adv, torch.tensor([1.5, -0.4375, -0.4375, -0.4375]), atol=1e-6)
    assert metrics["advantages/sngs_lambda_mean"] == pytest.approx(0.875)
    # 7B setting (1.4, -0.5) with p_g = 0.25: lambda = clamp(1.275) = 1 -> plain GRPO
    adv7, _ = sngs_advantage(torch.tensor([1.0, 0.0, 0.0, 0.0]), 4, lambda_0=1.4, kappa=-0.5, epsilon=0.0)
    assert torch.allclose(adv7, torch.tensor([1.5, -0.5, -0.5, -0.5]), atol=1e-6)


def test_sngs_success_signal_is_the_success_rate():
    # a well-formatted group that is all wrong under GUI-Libra's reward: every completion 0.1 format credit.
    # With its accuracy (all 0) as the success signal p_g = 0 -> lambda = 0.5; from the total, p_g = 0.1 -> 0.65
    totals, accuracy = torch.full((4,), 0.1, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    _, with_success = sngs_advantage(totals, 4, success=accuracy)
    _, from_total = sngs_advantage(totals, 4)
    assert with_success["advantages/sngs_success_mean"] == 0.0
    assert with_success["advantages/sngs_lambda_mean"] == pytest.approx(0.5)
    assert from_total["advantages/sngs_success_mean"] == pytest.approx(0.1)
    assert from_total["advantages/sngs_lambda_mean"] == pytest.approx(0.65)
    # one right (1.0), two formatted but wrong (0.1), one unformatted (0.0): accuracy [1, 0, 0, 0] -> p_g = 0.25,
    # lambda = 0.875; the total's mean 0.3 would give 0.95. GRPO: mean 0.3, std = sqrt((0.49 + 2*0.04 + 0.09) / 3)
    # = sqrt(0.22); negative advantages (0.1 - 0.3) / std and (0 - 0.3) / std scaled by lambda
    rewards = torch.tensor([1.0, 0.1, 0.1, 0.0], dtype=torch.float64)
    adv, _ = sngs_advantage(rewards, 4, success=torch.tensor([1.0, 0.0, 0.0, 0.0]), epsilon=0.0)
    std = math.sqrt(0.22)
    assert torch.allclose(adv, torch.tensor([0.7 / std, -0.2 / std * 0.875, -0.2 / std * 0.875, -0.3 / std * 0.875],
                                            dtype=torch.float64))
    with pytest.raises(ValueError, match="shape"):
        sngs_advantage(rewards, 4, success=torch.zeros(3))


def _loop_grpo(rewards, g, eps):
    out = []
    for start in range(0, len(rewards), g):
        grp = rewards[start : start + g]
        mean = sum(grp) / g
        std = math.sqrt(sum((r - mean) ** 2 for r in grp) / (g - 1))
        out += [(r - mean) / (std + eps) for r in grp]
    return out


def _loop_sngs(rewards, g, lambda_0, kappa, eps):
    base = _loop_grpo(rewards, g, eps)
    out = []
    for start in range(0, len(rewards), g):
        lam = min(1.0, max(0.0, lambda_0 + kappa * sum(rewards[start : start + g]) / g))
        out += [a * lam if a < 0 else a for a in base[start : start + g]]
    return out


def test_loop_vs_vectorised():
    g = torch.Generator().manual_seed(0)
    rewards = torch.rand(8 * 5, generator=g, dtype=torch.float64)
    r = rewards.tolist()
    assert torch.allclose(
        grpo_advantage(rewards, 5, epsilon=1e-6)[0], torch.tensor(_loop_grpo(r, 5, 1e-6), dtype=torch.float64)
    )
    loo = [r[i] - (sum(r[i // 5 * 5 : i // 5 * 5 + 5]) - r[i]) / 4 for i in range(len(r))]
    assert torch.allclose(rloo_advantage(rewards, 5)[0], torch.tensor(loo, dtype=torch.float64))
    assert torch.allclose(
        sngs_advantage(rewards, 5, lambda_0=0.5, kappa=2.0)[0],
        torch.tensor(_loop_sngs(r, 5, 0.5, 2.0, 1e-6), dtype=torch.float64),
    )


def test_discounted_returns_reset_at_mismatch():
    # rewards [1, 1, 0.1, 1], matched [T, T, F, T], gamma 0.5:
    # G_3 = 1; G_2 = 0.1 (mismatch: nothing flows back past it)
    # G_1 = 1 + 0.5 * 0.1 = 1.05; G_0 = 1 + 0.5 * 1.05 = 1.525
    r = torch.tensor([[1.0, 1.0, 0.1, 1.0]])
    out = discounted_returns(r, torch.ones_like(r), torch.tensor([[True, True, False, True]]), 0.5)
    assert torch.allclose(out, torch.tensor([[1.525, 1.05, 0.1, 1.0]]))


def test_semi_online_hand_computed():
    # one group of G = 2 rollouts, S = 2 steps, gamma = 0.5, all matched:
    # rollout a: r = [1, 1] -> G_0 = 1.5; rollout b: r = [0, 1] -> G_0 = 0.5
    # episode: mean 1, std = sqrt(2 * 0.25 / 1) = 0.70711 -> A_ep = [+0.70711, -0.70711]
    # step 0: [1, 0] -> [+0.70711, -0.70711]; step 1: [1, 1] -> [0, 0]
    r = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    ones = torch.ones_like(r)
    adv, _ = semi_online_advantage(r, 2, step_mask=ones, matched=ones.bool(), gamma=0.5, epsilon=0.0)
    k = 1 / math.sqrt(2)
    assert torch.allclose(adv, torch.tensor([[2 * k, k], [-2 * k, -k]]), atol=1e-6)


def _loop_semi_online(r, mask, matched, g, gamma, eps):
    n, s = len(r), len(r[0])

    def returns(i):
        out, run = [0.0] * s, 0.0
        for t in reversed(range(s)):
            run = r[i][t] * mask[i][t] + gamma * (matched[i][t] and mask[i][t]) * run
            out[t] = run
        return out

    rets = [returns(i) for i in range(n)]

    def norm(values, members):
        xs = [values[i] for i in members]
        if not xs:
            return {}
        mean = sum(xs) / len(xs)
        std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
        return {i: (values[i] - mean) / (std + eps) for i in members}

    adv = [[0.0] * s for _ in range(n)]
    for start in range(0, n, g):
        rows = range(start, start + g)
        ep = norm({i: rets[i][0] for i in rows}, [i for i in rows if mask[i][0]])
        for t in range(s):
            st = norm({i: r[i][t] for i in rows}, [i for i in rows if mask[i][t]])
            for i in rows:
                if mask[i][t]:
                    adv[i][t] = ep.get(i, 0.0) + st[i]
    return adv


def test_semi_online_loop_vs_vectorised():
    gen = torch.Generator().manual_seed(1)
    n, s, g = 12, 5, 4
    r = torch.rand(n, s, generator=gen, dtype=torch.float64)
    lengths = torch.randint(1, s + 1, (n,), generator=gen)
    mask = torch.arange(s)[None] < lengths[:, None]
    matched = torch.rand(n, s, generator=gen) > 0.3
    adv, _ = semi_online_advantage(r, g, step_mask=mask, matched=matched, gamma=0.5, epsilon=1e-6)
    ref = _loop_semi_online(r.tolist(), mask.tolist(), matched.tolist(), g, 0.5, 1e-6)
    assert torch.allclose(adv, torch.tensor(ref, dtype=torch.float64), atol=1e-9)


def test_broadcast_to_every_step_and_token():
    # trajectories 0 and 1 have advantages 2 and -1; 3 step rows: traj 0, 0, 1
    values = torch.tensor([2.0, -1.0])
    mask = torch.tensor([[1, 1, 0], [1, 0, 0], [1, 1, 1]])
    out = broadcast_to_tokens(values, torch.tensor([0, 0, 1]), mask)
    assert torch.equal(out, torch.tensor([[2.0, 2.0, 0.0], [2.0, 0.0, 0.0], [-1.0, -1.0, -1.0]]))


def test_bad_shapes_name_the_problem():
    with pytest.raises(ValueError, match="group_size=3"):
        grpo_advantage(torch.zeros(4), 3)
    with pytest.raises(ValueError, match="std_scaling"):
        grpo_advantage(torch.zeros(4), 2, std_scaling="global")


def test_dynamic_sampling_keeps_informative_groups():
    # groups [1, 1] (all equal: dropped), [0, 1] (kept), [0.5, 0.5] (dropped)
    keep = informative_groups(torch.tensor([1.0, 1.0, 0.0, 1.0, 0.5, 0.5]), 2)
    assert keep.tolist() == [False, False, True, True, False, False]


def test_discounted_returns_reset_before_mismatch_as_uis1_code():
    # UI-S1 code (core_uis1.compute_step_discounted_returns): the running return is zeroed at a
    # mismatch, so the mismatched step's own reward does not flow back either.
    # rewards [1, 1, 0.1, 1], matched [T, T, F, T], gamma 0.5:
    # G_3 = 1; G_2 = 0.1 (running -> 0); G_1 = 1 + 0.5 * 0 = 1; G_0 = 1 + 0.5 * 1 = 1.5
    r = torch.tensor([[1.0, 1.0, 0.1, 1.0]])
    matched = torch.tensor([[True, True, False, True]])
    out = discounted_returns(r, torch.ones_like(r), matched, 0.5, reset="before")
    assert torch.allclose(out, torch.tensor([[1.5, 1.0, 0.1, 1.0]]))
    with pytest.raises(ValueError, match="reset"):
        discounted_returns(r, torch.ones_like(r), matched, 0.5, reset="never")


def test_semi_online_uis1_code_variant_hand_computed():
    # G = 2 rollouts, S = 2 steps, gamma = 0.5, all matched; a: r = [1, 1], b: r = [0, 1]
    # episode ('reward', pooled over the 4 steps of the group): mean 0.75,
    #   unbiased var = (3 * 0.25^2 + 0.75^2) / 3 = 0.25 -> std 0.5 -> a [0.5, 0.5], b [-1.5, 0.5]
    # step ('return'): G = a [1.5, 1], b [0.5, 1]; step 0: mean 1, std sqrt(0.5) -> +-0.70711; step 1: 0
    # total: a [0.5 + 0.70711, 0.5], b [-1.5 - 0.70711, 0.5]
    r = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    ones = torch.ones_like(r)
    kw = {"step_mask": ones, "matched": ones.bool(), "gamma": 0.5, "episode_signal": "reward", "step_signal": "return"}
    adv, _ = semi_online_advantage(r, 2, reset="before", epsilon=0.0, **kw)
    k = 1 / math.sqrt(2)
    assert torch.allclose(adv, torch.tensor([[0.5 + k, 0.5], [-1.5 - k, 0.5]]), atol=1e-6)
    # mean_norm (centre only, the code's config default): episode a [0.25, 0.25], b [-0.75, 0.25];
    # step 0: [1.5, 0.5] - 1 = [0.5, -0.5]; step 1: 0 -> a [0.75, 0.25], b [-1.25, 0.25]
    adv, _ = semi_online_advantage(r, 2, reset="before", scale_by_std=False, **kw)
    assert torch.allclose(adv, torch.tensor([[0.75, 0.25], [-1.25, 0.25]]))
    with pytest.raises(ValueError, match="episode_signal"):
        semi_online_advantage(r, 2, step_mask=ones, matched=ones.bool(), episode_signal="sum")


def _loop_uis1_code(r, mask, matched, g, gamma, eps):
    """Per-row loop in the shape of the UI-S1 code: rows (group, rollout, step), returns per rollout
    zeroed at a mismatch, episode stats over all rows of a group, step stats per (group, step)."""
    n, s = len(r), len(r[0])
    rets = [[0.0] * s for _ in range(n)]
    for i in range(n):
        run = 0.0
        for t in reversed(range(s)):
            if not mask[i][t]:
                continue
            if matched[i][t]:
                run = r[i][t] + gamma * run
                rets[i][t] = run
            else:
                run, rets[i][t] = 0.0, r[i][t]

    def stats(xs):
        mean = sum(xs) / len(xs)
        std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
        return mean, std

    adv = [[0.0] * s for _ in range(n)]
    for start in range(0, n, g):
        rows = range(start, start + g)
        ep_mean, ep_std = stats([r[i][t] for i in rows for t in range(s) if mask[i][t]])
        for t in range(s):
            members = [i for i in rows if mask[i][t]]
            if not members:
                continue
            st_mean, st_std = stats([rets[i][t] for i in members])
            for i in members:
                a_ep = (r[i][t] - ep_mean) / (ep_std + eps) if ep_std > 0 else 0.0
                a_st = (rets[i][t] - st_mean) / (st_std + eps) if st_std > 0 else 0.0
                adv[i][t] = a_ep + a_st
    return adv


def test_semi_online_code_variant_loop_vs_vectorised():
    gen = torch.Generator().manual_seed(2)
    n, s, g = 12, 5, 4
    r = torch.rand(n, s, generator=gen, dtype=torch.float64)
    lengths = torch.randint(1, s + 1, (n,), generator=gen)
    mask = torch.arange(s)[None] < lengths[:, None]
    matched = torch.rand(n, s, generator=gen) > 0.3
    adv, _ = semi_online_advantage(
        r, g, step_mask=mask, matched=matched, episode_signal="reward", step_signal="return", reset="before"
    )
    ref = _loop_uis1_code(r.tolist(), mask.tolist(), matched.tolist(), g, 0.5, 1e-6)
    assert torch.allclose(adv, torch.tensor(ref, dtype=torch.float64), atol=1e-9)

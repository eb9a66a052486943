"""Parity with TRL's GRPOTrainer on identical random tensors (to 1e-6).

How TRL is called: ``GRPOTrainer._compute_loss`` is a method of a trainer
that normally needs a model, datasets and reward functions. We build the
trainer with ``GRPOTrainer.__new__`` (no ``__init__``: nothing heavy), set
only the attributes ``_compute_loss`` reads (``loss_type``,
``importance_sampling_level``, ``epsilon_low/high``, ``beta``, a real
``GRPOConfig`` as ``args``, a real CPU ``accelerate.Accelerator``), and
replace the one model call, ``_get_per_token_logps_and_entropies``, by a
function returning our log-prob tensor. Everything after it - ratio,
clipping, KL, per-token loss, aggregation per ``loss_type`` - is TRL's own
code. TRL's advantage code is inline in ``_generate_and_score_completions``
(not callable alone): ``trl_advantages`` below replays its lines for
``scale_rewards`` group/batch/none using TRL's own ``nanstd``.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
import torch
from accelerate import Accelerator  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.trainer.utils import nanstd  # noqa: E402

from guirl.algorithms import clipped_surrogate_loss, grpo_advantage  # noqa: E402

B, T, MAX_LEN = 6, 7, 9


@pytest.fixture(scope="module")
def trl_parts(tmp_path_factory):
    """One real GRPOConfig and Accelerator for the module (building them is the slow part)."""
    args = GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("trl")),
        report_to=[],
        use_cpu=True,
        bf16=False,
        max_completion_length=MAX_LEN,
    )
    return args, Accelerator(cpu=True)  # after GRPOConfig, which resets accelerate's shared state


def _trainer(
    parts, loss_type: str, level: str, eps_low: float, eps_high: float, beta: float, kl_weighted: bool
) -> GRPOTrainer:
    args, accelerator = parts
    args.loss_type, args.epsilon, args.epsilon_high, args.beta = loss_type, eps_low, eps_high, beta
    args.use_bias_correction_kl = kl_weighted
    tr = GRPOTrainer.__new__(GRPOTrainer)
    tr.args = args
    tr.loss_type = loss_type
    tr.importance_sampling_level = level
    tr.epsilon_low, tr.epsilon_high, tr.beta = eps_low, eps_high, beta
    tr.top_entropy_quantile = 1.0
    tr.off_policy_mask_threshold = None
    tr.use_vllm = False
    tr.aux_loss_enabled = False
    tr._entropy_bonus_enabled = False
    tr.max_completion_length = MAX_LEN
    tr.current_gradient_accumulation_steps = 1
    tr._metrics = {"train": defaultdict(list), "eval": defaultdict(list)}
    tr.model = torch.nn.Linear(1, 1)  # only .training is read
    tr.accelerator = accelerator
    return tr


def _random_batch(seed: int):
    g = torch.Generator().manual_seed(seed)
    logp = (-torch.rand(B, T, generator=g) * 3).double()
    old = logp + 0.3 * torch.randn(B, T, generator=g).double()  # ratios well outside [0.8, 1.28]
    ref = logp + 0.2 * torch.randn(B, T, generator=g).double()
    mask = (torch.rand(B, T, generator=g) > 0.25).double()
    mask[0] = 0.0  # an empty completion
    mask[1, 0] = 1.0
    adv = torch.randn(B, generator=g).double()
    return logp, old, ref, mask, adv


def _trl_loss(tr, logp, old, ref, mask, adv):
    logp = logp.clone().requires_grad_(True)
    tr._get_per_token_logps_and_entropies = lambda *a, **k: (logp, torch.zeros_like(logp), None)
    inputs = {
        "prompt_ids": torch.zeros(B, 2, dtype=torch.long),
        "prompt_mask": torch.ones(B, 2),
        "completion_ids": torch.zeros(B, T, dtype=torch.long),
        "completion_mask": mask,
        "advantages": adv,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref,
        "num_items_in_batch": mask.sum(),
    }
    loss = tr._compute_loss(tr.model, inputs)
    (grad,) = torch.autograd.grad(loss, logp)
    return loss.detach(), grad


CASES = [
    # (trl loss_type, importance level, guirl aggregation mode)
    ("grpo", "token", "seq-mean-token-mean"),
    ("grpo", "sequence", "seq-mean-token-mean"),
    ("bnpo", "token", "token-mean"),
    ("dapo", "token", "token-mean"),
    ("dr_grpo", "token", "seq-mean-token-sum-norm"),
]


@pytest.mark.parametrize("loss_type,level,mode", CASES)
@pytest.mark.parametrize("beta,kl_weighted", [(0.0, False), (0.04, False), (0.04, True)])
def test_loss_and_grad_match_trl(loss_type, level, mode, beta, kl_weighted, trl_parts):
    logp, old, ref, mask, adv = _random_batch(seed=len(loss_type) * 7 + len(level) + int(beta * 100))
    tr = _trainer(trl_parts, loss_type, level, 0.2, 0.28, beta, kl_weighted)
    trl_loss, trl_grad = _trl_loss(tr, logp, old, ref, mask, adv)

    ours_logp = logp.clone().requires_grad_(True)
    loss, metrics = clipped_surrogate_loss(
        ours_logp,
        old,
        adv,
        mask,
        clip_eps_low=0.2,
        clip_eps_high=0.28,
        ratio_level=level,
        loss_agg_mode=mode,
        ref_logprobs=ref,
        kl_coef=beta,
        kl_estimator="k3",
        kl_importance_weighted=kl_weighted,
        max_tokens=MAX_LEN,
    )
    (grad,) = torch.autograd.grad(loss, ours_logp)
    assert abs(float(loss.detach()) - float(trl_loss)) < 1e-6
    assert torch.allclose(grad, trl_grad, atol=1e-6)
    # the clip statistics agree with TRL's logged ones
    assert abs(metrics["losses/clipfrac_high"] - tr._metrics["train"]["clip_ratio/high_mean"][-1]) < 1e-6


def trl_advantages(rewards: torch.Tensor, num_generations: int, scale_rewards: str) -> torch.Tensor:
    """TRL GRPOTrainer._generate_and_score_completions, sum_then_normalize branch, replayed line by line."""
    mean_grouped_rewards = torch.nanmean(rewards.view(-1, num_generations), dim=1)
    mean_grouped_rewards = mean_grouped_rewards.repeat_interleave(num_generations, dim=0)
    if scale_rewards in ["group", "none"]:
        std_rewards = nanstd(rewards.view(-1, num_generations), dim=1).repeat_interleave(num_generations, dim=0)
    else:
        std_rewards = nanstd(rewards).expand_as(rewards)
    advantages = rewards - mean_grouped_rewards
    if scale_rewards != "none":
        advantages = advantages / (std_rewards + 1e-4)
    return torch.nan_to_num(advantages, nan=0.0)


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
def test_advantages_match_trl(scale):
    g = torch.Generator().manual_seed(3)
    rewards = torch.rand(5 * 4, generator=g).double()
    rewards[8:12] = 0.5  # a group with zero std
    ours, _ = grpo_advantage(rewards, 4, std_scaling=scale, epsilon=1e-4)
    assert torch.allclose(ours, trl_advantages(rewards, 4, scale), atol=1e-6)

"""Advantage estimators, registered by name (``get_adv_est(name)``).

Layout: ``rewards`` is ``[B*G]`` with the ``G`` completions of each input
contiguous (TRL's ``repeat_interleave`` layout): rows ``g*G .. g*G+G-1`` are
group ``g``. Every estimator returns ``(advantages, metrics)``.

- ``grpo``: ``(R - mean_g) / (std_g + eps)`` (DeepSeekMath; LiteGUI MD-GRPO,
  docs/methods.md section 1); ``std_scaling`` = ``group`` | ``batch`` | ``none`` (Dr. GRPO
  drops the std). ``std`` is the unbiased (n-1) standard deviation, as TRL.
- ``rloo``: ``R_i - mean_{j != i} R_j`` (InfiGUI-R1, docs/methods.md section 3).
- ``sngs``: GRPO, then negative advantages scaled by
  ``lambda_g = clamp(lambda_0 + kappa * p_g, 0, 1)``, ``p_g`` the group's
  success rate (the mean of an explicit ``success`` signal, else of R)
  (GUI-Libra, docs/methods.md section 4).
- ``semi_online``: UI-S1 / CCPO step + episode advantage over ``[N, S]``
  step rewards (docs/methods.md section 5; the UI-S1 authors' code variant through
  ``episode_signal``, ``step_signal``, ``reset`` and ``scale_by_std``).
:func:`broadcast_to_tokens` spreads trajectory- or step-level values over tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor

from guirl.algorithms.registry import register_adv_est


def _safe_divide(num: Tensor, den: Tensor) -> Tensor:
    """``num / den``, 0 where ``den == 0`` (a constant group with ``epsilon=0``)."""
    return torch.where(den > 0, num / torch.where(den > 0, den, torch.ones_like(den)), torch.zeros_like(num))


def _grouped(rewards: Tensor, group_size: int) -> Tensor:
    if rewards.dim() != 1:
        raise ValueError(f"rewards must be [B*G], got shape {tuple(rewards.shape)}")
    if group_size < 1 or rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards cannot be split into groups of group_size={group_size}")
    return rewards.view(-1, group_size)  # [B, G]


def _group_std(grouped: Tensor) -> Tensor:
    if grouped.shape[1] < 2:
        return torch.zeros_like(grouped[:, :1])
    return grouped.std(dim=1, keepdim=True)  # unbiased, [B, 1]


@register_adv_est("grpo")
def grpo_advantage(
    rewards: Tensor, group_size: int, *, std_scaling: str = "group", epsilon: float = 1e-6
) -> tuple[Tensor, dict[str, float]]:
    """Group-normalised advantage [B*G] from rewards [B*G] (GRPO, DeepSeekMath eq. 3).

    ``std_scaling``: ``group`` divides by the group std (paper), ``batch`` by
    the std of the whole batch (TRL ``scale_rewards='batch'``), ``none``
    only centres (Dr. GRPO). TRL uses ``epsilon=1e-4``; verl 1e-6.
    """
    grouped = _grouped(rewards, group_size)
    centred = grouped - grouped.mean(dim=1, keepdim=True)  # [B, G]
    group_std = _group_std(grouped)
    if std_scaling == "group":
        adv = _safe_divide(centred, group_std + epsilon)
    elif std_scaling == "batch":
        batch_std = rewards.std() if rewards.numel() > 1 else torch.zeros((), dtype=rewards.dtype)
        adv = _safe_divide(centred, batch_std + epsilon)
    elif std_scaling == "none":
        adv = centred
    else:
        raise ValueError(f"unknown std_scaling {std_scaling!r}; valid: ['group', 'batch', 'none']")
    metrics = {
        "advantages/mean": float(adv.mean()),
        "advantages/std": float(adv.std()) if adv.numel() > 1 else 0.0,
        "advantages/frac_zero_std_groups": float((group_std.squeeze(1) == 0).float().mean()),
    }
    return adv.reshape(-1), metrics


@register_adv_est("rloo")
def rloo_advantage(rewards: Tensor, group_size: int) -> tuple[Tensor, dict[str, float]]:
    """Leave-one-out advantage ``R_i - (sum_j R_j - R_i) / (G - 1)`` [B*G] (RLOO; InfiGUI-R1)."""
    if group_size < 2:
        raise ValueError(f"RLOO needs group_size >= 2 (a baseline from the other samples), got {group_size}")
    grouped = _grouped(rewards, group_size)
    baseline = (grouped.sum(dim=1, keepdim=True) - grouped) / (group_size - 1)
    adv = grouped - baseline
    return adv.reshape(-1), {"advantages/mean": float(adv.mean()), "advantages/abs_mean": float(adv.abs().mean())}


@register_adv_est("sngs")
def sngs_advantage(
    rewards: Tensor,
    group_size: int,
    *,
    success: Tensor | None = None,
    lambda_0: float = 0.5,
    kappa: float = 1.5,
    epsilon: float = 1e-6,
) -> tuple[Tensor, dict[str, float]]:
    """Success-adaptive negative gradient scaling (GUI-Libra SNGS) [B*G].

    GRPO advantages of ``rewards``; the negative ones of group ``g`` are
    multiplied by ``lambda_g = clamp(lambda_0 + kappa * p_g, 0, 1)``, ``p_g``
    the group's success rate: the group mean of ``success`` [B*G] (1 where a
    completion succeeded, e.g. GUI-Libra's accuracy component; the GRPO
    trainer's ``success_signal``). Without ``success`` the group mean reward
    stands in, which is the success rate only for 0/1 rewards: with
    GUI-Libra's ``0.1 format + 0.9 accuracy`` a well-formatted group that is
    all wrong would get ``p_g = 0.1``. Defaults: the authors' code (0.5, 1.5);
    the paper's per-model values are in docs/methods.md section 4.
    """
    adv, _ = grpo_advantage(rewards, group_size, std_scaling="group", epsilon=epsilon)
    grouped_adv = adv.view(-1, group_size)
    if success is None:
        success = rewards
    elif success.shape != rewards.shape:
        raise ValueError(f"success must have the shape of rewards {tuple(rewards.shape)}, got {tuple(success.shape)}")
    p_g = _grouped(success.to(rewards.dtype), group_size).mean(dim=1, keepdim=True)  # [B, 1]
    lam = torch.clamp(lambda_0 + kappa * p_g, 0.0, 1.0)
    scaled = torch.where(grouped_adv < 0, grouped_adv * lam, grouped_adv)
    metrics = {
        "advantages/mean": float(scaled.mean()),
        "advantages/sngs_lambda_mean": float(lam.mean()),
        "advantages/sngs_success_mean": float(p_g.mean()),
    }
    return scaled.reshape(-1), metrics


def _masked_group_normalise(
    values: Tensor, mask: Tensor, group_size: int, epsilon: float, scale_by_std: bool = True
) -> Tensor:
    """Normalise ``values`` [N, S] over the G rollouts of each group, separately per column, under ``mask``
    (``scale_by_std=False``: centre only, UI-S1 code's ``mean_norm``)."""
    n, s = values.shape
    v = values.reshape(-1, group_size, s)
    m = mask.reshape(-1, group_size, s).to(values.dtype)
    count = m.sum(dim=1, keepdim=True)  # [B, 1, S]
    mean = (v * m).sum(dim=1, keepdim=True) / count.clamp(min=1.0)
    if not scale_by_std:
        return ((v - mean) * m).reshape(n, s)
    var = (((v - mean) * m) ** 2).sum(dim=1, keepdim=True) / (count - 1).clamp(min=1.0)
    std = torch.where(count > 1, var.sqrt(), torch.zeros_like(var))
    return (_safe_divide(v - mean, std + epsilon) * m).reshape(n, s)


def discounted_returns(
    rewards: Tensor, step_mask: Tensor, matched: Tensor, gamma: float, reset: str = "after"
) -> Tensor:
    """Discounted return [N, S] that stops at a mismatch (UI-S1's "reset at the first mismatch").

    ``reset='after'`` (default, docs/methods.md section 5): ``G_t = r_t + gamma * matched_t * G_{t+1}``; a
    mismatched step keeps its own reward, which still flows back to the steps before it, but
    nothing after it flows back past it.
    ``reset='before'`` (UI-S1 code, ``compute_step_discounted_returns`` in X-PLUG/MobileAgent
    ``UI-S1/uis1/core_uis1.py``): a mismatched step's return is its own reward and the running
    return is zeroed there, so neither it nor anything after it reaches the earlier steps.
    Padded steps are 0.
    """
    if reset not in ("after", "before"):
        raise ValueError(f"unknown reset {reset!r}; valid: ['after', 'before']")
    m = step_mask.to(rewards.dtype)
    cont = matched.to(rewards.dtype) * m
    out = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    for t in range(rewards.shape[1] - 1, -1, -1):
        out[:, t] = rewards[:, t] * m[:, t] + gamma * cont[:, t] * running
        running = out[:, t] * cont[:, t] if reset == "before" else out[:, t]
    return out


@register_adv_est("semi_online")
def semi_online_advantage(
    rewards: Tensor,
    group_size: int,
    *,
    step_mask: Tensor,
    matched: Tensor,
    gamma: float = 0.5,
    episode_weight: float = 1.0,
    step_weight: float = 1.0,
    step_signal: str = "reward",
    episode_signal: str = "return",
    reset: str = "after",
    scale_by_std: bool = True,
    epsilon: float = 1e-6,
) -> tuple[Tensor, dict[str, float]]:
    """Semi-online RL advantage (UI-S1; CCPO, docs/methods.md section 5), ``[N, S]`` from step rewards ``[N, S]``.

    ``N = B*G`` rollouts of ``S`` steps over the same offline trajectory
    (step ``t`` of every rollout in a group faces the same expert state).

    - episode level (``episode_signal='return'``, docs/methods.md): ``G_0`` = discounted
      return from the first step (``gamma``), stopping at the first mismatch
      (``reset``, see :func:`discounted_returns`), normalised over the group and
      broadcast to every step of the rollout;
    - step level: ``r_t`` (``step_signal='reward'``, docs/methods.md) or the
      discounted return ``G_t`` (``'return'``), normalised over the group
      rollouts that reached step ``t``.

    ``A = episode_weight * A_episode + step_weight * A_step`` (0 on padding).

    docs/methods.md: episode = normalised discounted return, step = normalised reward /
    UI-S1 code (X-PLUG/MobileAgent ``UI-S1/uis1/core_uis1.py``,
    ``compute_uis1_outcome_advantage``): episode = each step's own reward ``r_t``
    normalised over *all* steps of all G rollouts of the group
    (``episode_signal='reward'``), step = ``G_t`` normalised per step
    (``step_signal='return'``), returns with ``reset='before'``; normalisation
    ``mean_norm`` (centre only, ``scale_by_std=False``, config default) or
    ``mean_std_norm`` (``train_example.sh``). The UI-S1 paper is not among the seeds.
    """
    if rewards.shape != step_mask.shape or rewards.shape != matched.shape or rewards.dim() != 2:
        raise ValueError("rewards, step_mask and matched must all be [N, S]")
    returns = discounted_returns(rewards, step_mask, matched, gamma, reset)  # [N, S]
    if episode_signal == "return":
        first = returns[:, :1]  # [N, 1]
        a_episode = _masked_group_normalise(first, step_mask[:, :1], group_size, epsilon, scale_by_std)  # [N, 1]
    elif episode_signal == "reward":
        s = rewards.shape[1]  # pool the G*S steps of a group into one column
        pooled = _masked_group_normalise(
            rewards.reshape(-1, 1), step_mask.reshape(-1, 1), group_size * s, epsilon, scale_by_std
        )
        a_episode = pooled.reshape(rewards.shape)  # [N, S]
        first = returns[:, :1]
    else:
        raise ValueError(f"unknown episode_signal {episode_signal!r}; valid: ['return', 'reward']")
    if step_signal == "reward":
        signal = rewards
    elif step_signal == "return":
        signal = returns
    else:
        raise ValueError(f"unknown step_signal {step_signal!r}; valid: ['reward', 'return']")
    a_step = _masked_group_normalise(signal, step_mask, group_size, epsilon, scale_by_std)  # [N, S]
    adv = (episode_weight * a_episode + step_weight * a_step) * step_mask.to(rewards.dtype)
    metrics = {
        "advantages/episode_mean_abs": float(a_episode.abs().mean()),
        "advantages/step_mean_abs": float(a_step.abs().mean()),
        "advantages/episode_return_mean": float(first.mean()),
    }
    return adv, metrics


def informative_groups(rewards: Tensor, group_size: int) -> Tensor:
    """Dynamic sampling (DAPO; LiteGUI MD-GRPO): a bool mask [B*G] keeping groups whose rewards are not all equal.

    A group with identical rewards has zero advantage everywhere and only
    dilutes the batch; drop it (and resample) before computing the loss.
    """
    grouped = _grouped(rewards, group_size)
    keep = (grouped != grouped[:, :1]).any(dim=1, keepdim=True)  # [B, 1]
    return keep.expand_as(grouped).reshape(-1)


def broadcast_to_tokens(values: Tensor, index: Tensor, mask: Tensor) -> Tensor:
    """Spread per-trajectory (or per-step) ``values`` [N] over tokens: [M, T].

    ``index`` [M] gives, for each of the M token rows (one row per step
    sample), which entry of ``values`` it belongs to; ``mask`` [M, T] its
    completion tokens. ComputerSD's trajectory-level GRPO (docs/methods.md section 2)
    broadcasts one advantage to every token of every step of a trajectory.
    """
    if index.dim() != 1 or index.shape[0] != mask.shape[0]:
        raise ValueError(f"index must be [M] matching mask [M, T]; got {tuple(index.shape)} and {tuple(mask.shape)}")
    return values[index].unsqueeze(-1) * mask.to(values.dtype)

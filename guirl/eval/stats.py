"""Confidence intervals and estimators shared by every evaluation.

- :func:`wilson_interval`: Wilson score interval for a success rate
  (E. B. Wilson, 1927, "Probable inference, the law of succession, and
  statistical inference"). Unlike the normal ("Wald") interval it stays
  inside [0, 1] and is sensible for 0/n and n/n, which small online
  evaluations (tens of episodes) hit often.
- :func:`paired_difference`: the mean per-item difference of two evaluations of the same items (after
  minus before) and its normal interval: what "paired 95% interval" means in every benchmark.
- :func:`pass_at_k`: the unbiased pass@k estimator of Chen et al. 2021
  ("Evaluating Large Language Models Trained on Code", eq. 1).
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` for ``successes`` out of ``n``.

    ``centre = (p + z^2/2n) / (1 + z^2/n)``,
    ``half = z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)``, with
    ``z`` the two-sided normal quantile for ``confidence`` (1.96 at 95%).
    ``n = 0`` gives the uninformative ``(0.0, 1.0)``.

    >>> [round(v, 4) for v in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n, got successes={successes}, n={n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def success_rate(successes: int, n: int, confidence: float = 0.95) -> dict[str, float]:
    """``{"rate", "ci_low", "ci_high", "n", "successes"}`` for a report row."""
    low, high = wilson_interval(successes, n, confidence)
    return {
        "rate": successes / n if n else 0.0,
        "ci_low": low,
        "ci_high": high,
        "n": float(n),
        "successes": float(successes),
    }


def paired_difference(before: list[float], after: list[float], confidence: float = 0.95) -> dict[str, float]:
    """``{"diff", "low", "high", "n"}``: the mean of ``after[i] - before[i]`` over the same items and its
    two-sided normal interval (``z * sd / sqrt(n)``, sample standard deviation; 0 wide for one item).

    >>> paired_difference([0, 0, 1, 1], [1, 1, 1, 1])["diff"], round(paired_difference([0, 0, 1, 1], [1, 1, 1, 1])["low"], 3)
    (0.5, -0.066)
    """
    if len(before) != len(after) or not before:
        raise ValueError(f"paired_difference needs two equal, non-empty lists, got {len(before)} and {len(after)}")
    d = [b - a for a, b in zip(before, after, strict=True)]
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else 0.0
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * sd / math.sqrt(n)
    return {"diff": mean, "low": mean - half, "high": mean + half, "n": n}


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` are correct.

    ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021, eq. 1); needs ``k <= n``.

    >>> pass_at_k(4, 1, 1), pass_at_k(4, 1, 4)
    (0.25, 1.0)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)

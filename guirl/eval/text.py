"""Text-value comparisons used by the public evaluators.

- :func:`token_f1`: set-of-words F1 as in MindAct's ``calculate_f1`` (Mind2Web
  operation F1): both empty -> 1, one empty -> 0. Lower-cased here
  (departure: MindAct compares case-sensitively; pass ``lower=False``).
- :func:`guilibra_f1`: GUI-Libra's ``calculate_f1_score`` (defined once in
  :mod:`guirl.rewards.matching`, shared with the GUI-Libra RL reward).
- :func:`anls_match`: GUI-Odyssey's typed-text match (substring, or
  normalised Levenshtein similarity >= 0.5).
"""

from __future__ import annotations

from guirl.rewards.matching import guilibra_f1, set_f1

__all__ = ["anls_match", "guilibra_f1", "levenshtein", "token_f1"]


def token_f1(pred: str, gold: str, lower: bool = True) -> float:
    """Word-set F1 between ``pred`` and ``gold``.

    >>> token_f1("type new york", "type new york city")  # P=3/3, R=3/4 -> 6/7
    0.8571428571428571
    """
    p = set((pred.lower() if lower else pred).split())
    g = set((gold.lower() if lower else gold).split())
    if not p and not g:
        return 1.0
    return set_f1(p, g)


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def anls_match(pred: str, gold: str, threshold: float = 0.5) -> bool:
    """GUI-Odyssey's text match (``GUIOdyssey_action_matching.text_matching``):
    a substring either way, or normalised Levenshtein similarity
    ``1 - dist / max(len)`` of at least ``threshold`` (stripped, case kept).

    >>> anls_match("hello wrld", "hello world")  # 1 - 1/11 = 0.909
    True
    """
    pred, gold = pred.strip(), gold.strip()
    if gold in pred or pred in gold:
        return True
    length = max(len(pred), len(gold))
    return 1 - levenshtein(pred, gold) / length >= threshold


def normalise_text(text: str | None) -> str:
    """Lower-case and collapse whitespace (exact-match comparisons)."""
    return " ".join((text or "").lower().split())

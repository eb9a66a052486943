"""Text-value comparisons of the public evaluators and the rewards (pure functions).

- :func:`token_f1`: set-of-words F1 as in SeeClick's ``calculate_f1``
  (``agent_tasks/mind2web_test.py``, Mind2Web operation F1): both empty -> 1,
  one empty -> 0. Lower-cased by default (SeeClick lower-cases the value
  before calling it; pass ``lower=False`` to compare as given). MindAct's
  own ``calculate_f1`` also drops tokens that are punctuation
  (``drop_punctuation=True``).
- :func:`set_f1`: the one word-set F1 (0 when either set is empty); the
  others are built on it.
- :func:`guilibra_f1`: GUI-Libra's ``calculate_f1_score`` (shared by its RL
  reward and its offline evaluation).
- :func:`anls_match`: GUI-Odyssey's typed-text match (substring, or
  normalised Levenshtein similarity >= 0.5).
"""

from __future__ import annotations

import re
import string

__all__ = ["anls_match", "guilibra_f1", "levenshtein", "normalise_text", "set_f1", "token_f1", "words"]

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str | None) -> list[str]:
    return _WORD.findall((text or "").lower())


def set_f1(pred: set[str], ref: set[str], beta: float = 1.0) -> float:
    """F1 of two word sets (F-beta with ``beta``: recall counts ``beta`` times as much as precision);
    0 when either is empty or they share nothing.

    >>> set_f1({"a", "b"}, {"a", "c"}), round(set_f1({"a"}, {"a", "b"}, beta=2.0), 4)
    (0.5, 0.5556)
    """
    if not pred or not ref:
        return 0.0
    common = len(pred & ref)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    if beta == 1.0:
        return 2 * precision * recall / (precision + recall)
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def guilibra_f1(prediction: str | None, reference: str | None) -> float:
    """GUI-Libra's value F1 (``calculate_f1_score`` in its EasyR1 reward), used
    by both its RL verifier and its offline evaluation.

    Square brackets dropped, lower-cased, whitespace-split word *sets*; when
    both sides are a single word, a substring either way scores 1; an empty
    side scores 0 (even when both are empty).

    >>> guilibra_f1("[Down]", "down"), guilibra_f1("york", "newyork")
    (1.0, 1.0)
    >>> round(guilibra_f1("new york", "new york city"), 4)  # P=2/2, R=2/3 -> 0.8
    0.8
    """
    pred = set((prediction or "").replace("[", "").replace("]", "").lower().split())
    ref = set((reference or "").replace("[", "").replace("]", "").lower().split())
    if len(pred) == 1 and len(ref) == 1:
        (p,), (r,) = pred, ref
        if p in r or r in p:
            return 1.0
    return set_f1(pred, ref)


def token_f1(pred: str, gold: str, lower: bool = True, drop_punctuation: bool = False) -> float:
    """Word-set F1 between ``pred`` and ``gold``; ``drop_punctuation`` removes
    tokens found in ``string.punctuation`` (MindAct's test ``x not in
    string.punctuation``, so e.g. ``-`` and ``()`` go, ``a-b`` stays).

    >>> token_f1("type new york", "type new york city")  # P=3/3, R=3/4 -> 6/7
    0.8571428571428571
    """
    p = set((pred.lower() if lower else pred).split())
    g = set((gold.lower() if lower else gold).split())
    if drop_punctuation:
        p = {t for t in p if t not in string.punctuation}
        g = {t for t in g if t not in string.punctuation}
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

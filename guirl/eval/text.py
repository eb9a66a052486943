"""Text-value comparisons used by the public evaluators.

- :func:`token_f1`: set-of-words F1 as in MindAct's ``calculate_f1`` (Mind2Web
  operation F1): both empty -> 1, one empty -> 0. Lower-cased here
  (departure: MindAct compares case-sensitively; pass ``lower=False``).
- :func:`guilibra_f1`: GUI-Libra's ``calculate_f1_score``: square brackets
  dropped, lower-cased word sets; when both sides are one word, a substring
  either way counts as 1.
- :func:`anls_match`: GUI-Odyssey's typed-text match (substring, or
  normalised Levenshtein similarity >= 0.5).
"""

from __future__ import annotations


def _words(text: str, lower: bool) -> set[str]:
    return set((text.lower() if lower else text).split())


def _set_f1(p: set[str], g: set[str]) -> float:
    """F1 of two word sets; 0 when either is empty or they share nothing."""
    if not p or not g:
        return 0.0
    common = len(p & g)
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def token_f1(pred: str, gold: str, lower: bool = True) -> float:
    """Word-set F1 between ``pred`` and ``gold``.

    >>> token_f1("type new york", "type new york city")  # P=3/3, R=3/4 -> 6/7
    0.8571428571428571
    """
    p, g = _words(pred, lower), _words(gold, lower)
    if not p and not g:
        return 1.0
    return _set_f1(p, g)


def guilibra_f1(pred: str, gold: str) -> float:
    """GUI-Libra's word F1 (see module doc); empty sides score 0, not 1."""
    p = _words(pred.replace("[", "").replace("]", ""), True)
    g = _words(gold.replace("[", "").replace("]", ""), True)
    if len(p) == 1 and len(g) == 1:
        (pw,), (gw,) = p, g
        if pw in gw or gw in pw:
            return 1.0
    return _set_f1(p, g)


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

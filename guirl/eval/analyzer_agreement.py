"""How well a GUI analyzer agrees with the expert it was distilled from, on held-out steps (ComputerSD).

What ComputerSD's training reads from the analyzer is the step value (a vote of +1 when the step is both
consistent and effective, else -1, :attr:`guirl.judges.analyzer.AnalyzerVerdict.vote`) and, on the
scored steps, its guide / avoid text. So the measures are:

- ``valid_rate``: answers that :func:`guirl.judges.analyzer.verdict_of` accepts (one JSON object with
  0/1 consistency and effectiveness); a judge that raises counts as an invalid answer (``errors``);
- ``vote_agreement``: the vote equals the expert's, over **all** steps: an invalid answer is a
  disagreement (ComputerSD masks such a step, so it teaches nothing);
- ``consistency_agreement`` / ``effectiveness_agreement``: the same per field;
- ``vote_agreement_valid``: the vote agreement over the valid answers only (0 when there is none);
- ``vote_agreement_pos`` / ``vote_agreement_neg``: the vote agreement on the expert's +1 / -1 steps, and
  ``vote_balanced`` their mean (over the classes present): the expert's votes are mostly -1 for a weak
  policy, so a judge that always says -1 has a high ``vote_agreement`` but a balanced one of 0.5;
- ``expert_positive_rate``: the share of +1 expert votes, i.e. what "always -1" would score (1 - it).

:func:`agreement_of` computes them from results already in hand; :func:`analyzer_agreement` asks a judge
first (one request per record of :mod:`guirl.datagen.analyzer_data`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from guirl.judges.analyzer import AnalyzerVerdict, verdict_of
from guirl.judges.base import Judge, JudgeResult


def expert_verdict(record: dict[str, Any]) -> AnalyzerVerdict:
    """The recorded expert verdict of a record (its ``verdict`` fields)."""
    v = record.get("verdict")
    if not isinstance(v, dict) or "consistency" not in v or "effectiveness" not in v:
        raise ValueError(f"record {record.get('id', '?')!r} has no expert verdict (need verdict.consistency and "
                         f"verdict.effectiveness), got {v!r}")
    return AnalyzerVerdict(int(v["consistency"]), int(v["effectiveness"]), str(v.get("guide") or ""),
                           str(v.get("avoid") or ""))


def agreement_of(results: Sequence[JudgeResult | None], experts: Sequence[AnalyzerVerdict]) -> dict[str, float]:
    """Agreement of the judge ``results`` (None: the call failed) with the ``experts``' verdicts (module doc)."""
    if len(results) != len(experts):
        raise ValueError(f"{len(results)} results for {len(experts)} expert verdicts: give one result per step")
    n = len(experts)
    if n == 0:
        raise ValueError("no steps to compare: the held-out split is empty")
    verdicts = [verdict_of(r) for r in results]
    valid = [v for v in verdicts if v is not None]
    same_vote = sum(v is not None and v.vote == e.vote for v, e in zip(verdicts, experts, strict=True))
    per_class = {}
    for sign, name in ((1, "pos"), (-1, "neg")):
        pairs = [(v, e) for v, e in zip(verdicts, experts, strict=True) if e.vote == sign]
        per_class[name] = sum(v is not None and v.vote == sign for v, _ in pairs) / len(pairs) if pairs else None
    present = [a for a in per_class.values() if a is not None]
    return {
        "steps": float(n),
        "valid_rate": len(valid) / n,
        "vote_agreement": same_vote / n,
        "consistency_agreement": sum(v is not None and v.consistency == e.consistency
                                     for v, e in zip(verdicts, experts, strict=True)) / n,
        "effectiveness_agreement": sum(v is not None and v.effectiveness == e.effectiveness
                                       for v, e in zip(verdicts, experts, strict=True)) / n,
        "vote_agreement_valid": same_vote / len(valid) if valid else 0.0,
        "vote_agreement_pos": per_class["pos"] if per_class["pos"] is not None else float("nan"),
        "vote_agreement_neg": per_class["neg"] if per_class["neg"] is not None else float("nan"),
        "vote_balanced": sum(present) / len(present),
        "expert_positive_rate": sum(e.vote > 0 for e in experts) / n,
        "errors": float(sum(r is None for r in results)),
    }


def analyzer_agreement(judge: Judge, records: Sequence[dict[str, Any]], limit: int | None = None,
                       keep_answers: bool = False) -> dict[str, Any]:
    """Ask ``judge`` about every record (the first ``limit``) and measure its agreement with the expert.

    Returns :func:`agreement_of`'s numbers plus ``wall_s`` and ``s_per_step``; with ``keep_answers`` also
    ``answers``: per step the id, the judge's raw text and whether it was valid.
    """
    from guirl.datagen.analyzer_data import record_request

    records = list(records)[:limit] if limit is not None else list(records)
    experts = [expert_verdict(r) for r in records]
    t0 = time.perf_counter()
    results: list[JudgeResult | None] = []
    for record in records:
        try:
            results.append(judge(record_request(record)))
        except Exception:  # noqa: BLE001 - a judge that raises gives an invalid answer, not a crashed evaluation
            results.append(None)
    wall = time.perf_counter() - t0
    out: dict[str, Any] = agreement_of(results, experts)
    out |= {"wall_s": wall, "s_per_step": wall / max(1, len(records))}
    if keep_answers:
        out["answers"] = [{"id": r.get("id"), "raw": res.raw if res is not None else None,
                           "valid": verdict_of(res) is not None} for r, res in zip(records, results, strict=True)]
    return out


__all__ = ["agreement_of", "analyzer_agreement", "expert_verdict"]

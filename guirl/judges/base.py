"""The Judge protocol: planning judge (LiteGUI), GUI analyzer (ComputerSD),
sub-goal scorer (InfiGUI-R1), verify model (LiteGUI pipeline) and outcome
judge (evaluation) all go through it.

A judge gets a :class:`JudgeRequest` (the role's prompt text, the images,
and structured fields) and returns a :class:`JudgeResult`: the parsed JSON
verdict, the raw text, and ``ok=False`` with a reason when the judge's
answer could not be read (callers then score zero / mask, never crash).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from guirl.registry import Registry


@dataclass
class JudgeRequest:
    role: str  # "planning", "analyzer", "verifier", "subgoal", "outcome", ...
    prompt: str
    images: list[Image.Image] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class JudgeResult:
    verdict: dict[str, Any]
    raw: str = ""
    ok: bool = True
    reason: str = ""


@runtime_checkable
class Judge(Protocol):
    def __call__(self, request: JudgeRequest) -> JudgeResult: ...


JUDGES: Registry[Callable[..., Judge]] = Registry(
    "judge", ["guirl.judges.http", "guirl.judges.outcome", "guirl.judges.ground_truth", "guirl.judges.checkpoint",
              "guirl.judges.analyzer"]
)


def register_judge(name: str):
    """Register a judge factory ``(**kwargs) -> Judge`` under ``name``."""
    return JUDGES.register(name)


def make_judge(name: str, **kwargs: Any) -> Judge:
    return JUDGES.get(name)(**kwargs)


def available_judges() -> list[str]:
    return JUDGES.names()


def judge_many(judge: Judge, requests: Sequence[JudgeRequest], max_workers: int | None = None) -> list[JudgeResult]:
    """Results of ``requests`` in order: through ``judge.judge_many`` when the judge has one (the HTTP
    client sends them concurrently), else one after another."""
    batch = getattr(judge, "judge_many", None)
    if callable(batch):
        return batch(list(requests), max_workers)
    return [judge(request) for request in requests]

"""The Judge protocol: planning judge (LiteGUI), GUI analyzer (ComputerSD),
sub-goal scorer (InfiGUI-R1), verify model (LiteGUI pipeline) and outcome
judge (evaluation) all go through it.

A judge gets a :class:`JudgeRequest` (the role's prompt text, the images,
and structured fields) and returns a :class:`JudgeResult`: the parsed JSON
verdict, the raw text, and ``ok=False`` with a reason when the judge's
answer could not be read (callers then score zero / mask, never crash).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from PIL import Image


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


_JUDGES: dict[str, Any] = {}


def register_judge(name: str):
    """Register a judge factory ``(**kwargs) -> Judge`` under ``name``."""

    def deco(factory):
        if name in _JUDGES:
            raise ValueError(f"judge {name!r} is already registered")
        _JUDGES[name] = factory
        return factory

    return deco


def make_judge(name: str, **kwargs: Any) -> Judge:
    try:
        factory = _JUDGES[name]
    except KeyError:
        raise KeyError(f"unknown judge {name!r}; known judges: {sorted(_JUDGES)}") from None
    return factory(**kwargs)


def available_judges() -> list[str]:
    return sorted(_JUDGES)

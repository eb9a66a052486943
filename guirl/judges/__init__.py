"""Judges: one protocol for every model-as-judge role (see guirl.judges.base).

Built-in judges (``make_judge(name, ...)``): ``openai`` (any OpenAI-compatible
chat-completions server), ``rule_outcome`` (deterministic Lite-Bench outcome
audit of an episode log), ``ground_truth`` (the environment's own verdict).
"""

from guirl.judges import http as _http  # noqa: F401 - registers "openai"
from guirl.judges import outcome as _outcome  # noqa: F401 - registers "rule_outcome", "ground_truth"
from guirl.judges.base import Judge, JudgeRequest, JudgeResult, available_judges, make_judge, register_judge

__all__ = ["Judge", "JudgeRequest", "JudgeResult", "available_judges", "make_judge", "register_judge"]

"""Judges: one protocol for every model-as-judge role (see guirl.judges.base)."""

from guirl.judges.base import Judge, JudgeRequest, JudgeResult, available_judges, make_judge, register_judge

__all__ = ["Judge", "JudgeRequest", "JudgeResult", "available_judges", "make_judge", "register_judge"]

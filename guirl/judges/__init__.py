"""Judges: one protocol for every model-as-judge role (see guirl.judges.base).

Built-in judges (``make_judge(name, ...)``):

- ``openai``: any OpenAI-compatible chat-completions server (concurrent
  ``judge_many``, timeouts, retries with back-off, a cache);
- ``checkpoint``: a loaded guirl checkpoint answering the role prompt;
- ``ground_truth_planning`` / ``ground_truth_subgoal``: the planning judge
  (LiteGUI R_sub) and sub-goal scorer (InfiGUI-R1) against the built-in
  world's recorded plan and sub-goal;
- ``ground_truth_analyzer``: ComputerSD's GUI analyzer from the built-in
  world's oracle (:mod:`guirl.judges.analyzer`);
- ``rule_outcome`` (deterministic Lite-Bench outcome audit of an episode
  log) and ``ground_truth`` (the environment's own outcome verdict).

Role prompts and verdict checks for ``planning``, ``subgoal`` and ``analyzer`` are in
:mod:`guirl.judges.prompts`.
"""

from guirl.judges import analyzer as _analyzer  # noqa: F401 - registers "ground_truth_analyzer"
from guirl.judges import ground_truth as _ground_truth  # noqa: F401 - registers "ground_truth_planning", "..._subgoal"
from guirl.judges import http as _http  # noqa: F401 - registers "openai"
from guirl.judges import outcome as _outcome  # noqa: F401 - registers "rule_outcome", "ground_truth"
from guirl.judges import verify as _verify  # noqa: F401 - registers "ground_truth_verify"
from guirl.judges.base import (
    Judge,
    JudgeRequest,
    JudgeResult,
    available_judges,
    judge_many,
    make_judge,
    register_judge,
)

__all__ = ["Judge", "JudgeRequest", "JudgeResult", "available_judges", "judge_many", "make_judge", "register_judge"]

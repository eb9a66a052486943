"""ComputerSD's GUI analyzer (docs/methods.md section 2): one executed step -> consistency, effectiveness, guide, avoid.

The analyzer is a judge role (``role="analyzer"``, prompt in :mod:`guirl.judges.prompts`). Its input is the
task, the pre-action context (the agent's previous outputs), the agent's response, the executed action and
the screens before and after it; its answer is one JSON object::

    {"consistency": 0|1, "effectiveness": 0|1, "guide": "...", "avoid": "..."}

- :func:`analyzer_request` builds the request (the data block shows instruction, history, response and
  action; environment facts for the ground-truth backend ride in ``fields`` only);
- :func:`read_votes` reads judge results, :func:`step_value` turns votes into the step value ``s``:
  a vote is +1 when consistency and effectiveness are both 1, else -1; ``s`` is the majority of the
  readable votes, and 0 on a tie or when no vote could be read (that step's OPSD term is masked);
- :func:`guidance_block_of` writes the privileged block the teacher scores under (``Guide:`` / ``Avoid:``
  lines after :data:`~guirl.models.prompts.GUIDANCE_HEADER`).

Backends: ``ground_truth_analyzer`` below (the built-in world's oracle), and any judge of the registry
with the ``analyzer`` role prompt: ``checkpoint`` (a loaded model) and ``openai`` (a served model).

``ground_truth_analyzer`` (departure: the paper's analyzer is a fine-tuned VLM looking at the two
screens; this one reads the environment):

- effectiveness: the oracle's verdict on the executed action (``fields["effective"]``: the built-in
  world's ``info["advancing"]``, or success for a finishing action); a step whose response did not parse
  is ineffective;
- consistency: the response's ``Action:`` sentence (else its ``<think>`` reasoning) names what was acted on:
  the content words of the element under the executed point (the smallest a11y node with text that holds it),
  a scroll's direction, the typed text, the pressed keys, the opened app, or a finishing word for terminate /
  answer (``finish``, ``done``, ``complete``, ``answer``, ``terminate``, ``stop``); neither sentence nor
  reasoning, or a point on no named element, is 0;
- guide: the oracle's first valid action at the pre-action state, its description and the action as the
  policy writes it (``Reference action: ...``), so a policy that learnt to read reference actions can
  follow it; avoid: the executed action's description when the step was not effective.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guirl.judges.base import JudgeRequest, JudgeResult, register_judge
from guirl.judges.ground_truth import content_tokens
from guirl.judges.prompts import check_analyzer_verdict, make_request

# at a line's start, or right after the reasoning's closing tag (``<think>..</think>Action: ...``)
_ACTION_SENTENCE = re.compile(r"(?:^|</think>)[ \t]*Action\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_THOUGHT = re.compile(r"<think>(.*?)</think>", re.IGNORECASE | re.DOTALL)
FINISH_WORDS = frozenset({"finish", "finished", "done", "complete", "completed", "answer", "terminate", "stop", "end"})


@dataclass(frozen=True)
class AnalyzerVerdict:
    consistency: int
    effectiveness: int
    guide: str = ""
    avoid: str = ""

    @property
    def vote(self) -> int:
        """+1 when the step is both consistent and effective, else -1."""
        return 1 if self.consistency == 1 and self.effectiveness == 1 else -1

    def to_json(self) -> str:
        return json.dumps({"consistency": self.consistency, "effectiveness": self.effectiveness,
                           "guide": self.guide, "avoid": self.avoid}, ensure_ascii=False)


def verdict_of(result: JudgeResult | None) -> AnalyzerVerdict | None:
    """The verdict of one analyzer answer, or None when it is missing, failed or not an analyzer answer."""
    if result is None or not result.ok or not isinstance(result.verdict, dict):
        return None
    if check_analyzer_verdict(result.verdict):
        return None
    v = result.verdict
    return AnalyzerVerdict(int(v["consistency"]), int(v["effectiveness"]), str(v.get("guide") or ""),
                           str(v.get("avoid") or ""))


def read_votes(results: Sequence[JudgeResult | None]) -> list[AnalyzerVerdict | None]:
    return [verdict_of(r) for r in results]


def step_value(votes: Sequence[AnalyzerVerdict | None]) -> int:
    """Majority of the readable votes' +1 / -1; 0 on a tie or when none is readable (the step is masked)."""
    total = sum(v.vote for v in votes if v is not None)
    return (total > 0) - (total < 0)


def chosen_verdict(votes: Sequence[AnalyzerVerdict | None], value: int) -> AnalyzerVerdict | None:
    """The first readable vote that agrees with the step value (whose guide / avoid the teacher reads)."""
    readable = [v for v in votes if v is not None]
    return next((v for v in readable if v.vote == value), readable[0] if readable else None)


def guidance_block_of(verdict: AnalyzerVerdict | None) -> str | None:
    """The text of the privileged block (after the header) for ``verdict``; None when there is nothing to say."""
    if verdict is None:
        return None
    lines = [f"Guide: {verdict.guide.strip()}" if verdict.guide.strip() else "",
             f"Avoid: {verdict.avoid.strip()}" if verdict.avoid.strip() else ""]
    text = "\n".join(line for line in lines if line)
    return text or None


def action_sentence(response: str | None) -> str | None:
    """What the response says it does: its last ``Action: ...`` sentence (qwen_computer_use writes one before the
    call), else its ``<think>`` reasoning (an agent that thinks a sub-goal and writes no sentence before finishing).

    >>> action_sentence("<think>Tap Save</think>Action: click the 'Save' button\\n<tool_call>...")
    "click the 'Save' button"
    >>> action_sentence("<think>The task is done: finish</think><tool_call>..."), action_sentence("<tool_call>...")
    ('The task is done: finish', None)
    """
    found = _ACTION_SENTENCE.findall(response or "")
    if found:
        return found[-1].strip()
    thought = _THOUGHT.findall(response or "")
    return thought[-1].strip() or None if thought else None


def acted_element(point: Sequence[float] | None, a11y: Sequence[Any] | None) -> str | None:
    """The text of the smallest a11y node with text whose box holds ``point`` (screen pixels)."""
    if point is None or not a11y:
        return None
    x, y = float(point[0]), float(point[1])
    best, best_area = None, float("inf")
    for node in a11y:
        box = getattr(node, "box", None) if not isinstance(node, dict) else node.get("box")
        text = getattr(node, "text", None) if not isinstance(node, dict) else node.get("text")
        if not box or not text:
            continue
        x1, y1, x2, y2 = box
        area = (x2 - x1) * (y2 - y1)
        if x1 <= x <= x2 and y1 <= y <= y2 and area < best_area:
            best, best_area = str(text), area
    return best


def named_target(action: dict[str, Any] | None, element: str | None) -> frozenset[str] | None:
    """The words an Action sentence must contain to be consistent with ``action`` (None: nothing to name)."""
    if not action:
        return None
    kind = action.get("type")
    if kind in ("terminate", "answer"):
        return None  # checked against FINISH_WORDS
    if kind == "scroll":  # a scroll's point only places it: the sentence names its direction
        return content_tokens(action.get("direction") or "scroll")
    if action.get("point") is not None:
        return content_tokens(element) if element else frozenset()
    if kind == "type":
        return content_tokens(action.get("text") or "")
    if kind == "key":
        return content_tokens(" ".join(action.get("keys") or []))
    if kind == "open_app":
        return content_tokens(action.get("text") or "")
    return content_tokens(kind or "")


def is_consistent(response: str | None, action: dict[str, Any] | None, element: str | None) -> bool:
    sentence = action_sentence(response)
    if sentence is None or not action:
        return False
    said = content_tokens(sentence)
    if action.get("type") in ("terminate", "answer"):
        return bool(said & FINISH_WORDS) or bool(content_tokens(action.get("text") or "") & said)
    needed = named_target(action, element)
    return bool(needed) and needed <= said


def analyzer_request(instruction: str, history: Sequence[str], response: str, action: dict[str, Any] | None,
                     before=None, after=None, **facts: Any) -> JudgeRequest:
    """An ``analyzer`` request: the prompt shows instruction, history, response and action; ``facts``
    (``effective``, ``element``, ``guide_actions``, ``taken``) are for the ground-truth backend only."""
    images = [im for im in (before, after) if im is not None]
    return make_request("analyzer", images=images, instruction=instruction, history=list(history),
                        response=response, action=action, **facts)


def trajectory_requests(tr, fmt: str) -> list[JudgeRequest]:
    """One analyzer request per step of an online trajectory (:mod:`guirl.rollout.online` steps: the
    response, the action, the screens before and after, the acted-on element, the step's valid actions
    written in ``fmt`` as the Guide references); what ComputerSD's trainer and the analyzer data ask."""
    from guirl.models.guidance import pointed_reference
    from guirl.models.prompts import written_action

    out, history = [], []
    for step in tr.steps:
        action = step.action
        refs = []
        for a in step.before.valid_actions or []:
            try:
                refs.append({"description": a.description or a.type.value,
                             "written": written_action(pointed_reference(a), fmt, step.frame)})
            except ValueError:  # the format cannot write this action
                continue
        # the oracle's verdict (the built-in world's info["advancing"]); None where the environment has no
        # oracle (MiniWoB++): the ground-truth analyzer then refuses and the step is masked
        effective = step.info.get("advancing") if action is not None else False
        out.append(analyzer_request(
            tr.instruction, history, step.sample.text,
            action.model_dump(mode="json", exclude_none=True) if action is not None else None,
            before=step.before.screenshot, after=step.after.screenshot, effective=effective,
            element=acted_element(action.point if action is not None else None, step.before.a11y),
            guide_actions=refs, taken=action.description if action is not None and action.description else
            (f"{action.type.value} at {list(action.point)}" if action is not None and action.point else None)))
        history.append(step.sample.text)
    return out


def guide_text(description: str | None, written: str) -> str:
    """The ground-truth analyzer's guide: the action's description and the action as the policy writes it."""
    return f"{description or 'the next action'}. Reference action: {written}".strip()


def analyzer_guidance(actions, fmt: str, frame) -> str:
    """The privileged block the ground-truth analyzer writes for reference ``actions`` (the first one guides),
    for measuring how much a policy follows analyzer guidance (:func:`guirl.eval.steps.evaluate_steps`)."""
    from guirl.models.guidance import pointed_reference
    from guirl.models.prompts import written_action

    first = actions[0]
    return f"Guide: {guide_text(first.description or first.type.value, written_action(pointed_reference(first), fmt, frame))}"


@register_judge("ground_truth_analyzer")
class GroundTruthAnalyzer:
    """The analyzer from the environment's oracle (module doc). Reads ``fields``: ``response``, ``action``
    (the executed Action as JSON, None if the response did not parse), ``effective`` (the oracle's verdict),
    ``element`` (text under the executed point), ``guide_actions`` (``[{"description", "written"}]``: the
    oracle's valid actions at the pre-action state) and ``taken`` (the executed action's description)."""

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        f = request.fields
        if "effective" not in f or f["effective"] is None:
            return JudgeResult({}, ok=False, reason="no oracle verdict (fields['effective']): the ground-truth "
                                                     "analyzer needs an environment with an oracle (sim)")
        action = f.get("action")
        effective = bool(f["effective"]) and action is not None
        consistent = is_consistent(f.get("response"), action, f.get("element"))
        refs = f.get("guide_actions") or []
        guide = guide_text(refs[0].get("description"), refs[0].get("written", "")) if refs else ""
        avoid = ""
        if not effective:
            avoid = "writing an output that does not parse" if action is None else (f.get("taken") or "this action")
        verdict = AnalyzerVerdict(int(consistent), int(effective), guide.strip(), avoid)
        return JudgeResult(json.loads(verdict.to_json()), raw=verdict.to_json())


__all__ = [
    "AnalyzerVerdict",
    "GroundTruthAnalyzer",
    "acted_element",
    "analyzer_guidance",
    "action_sentence",
    "analyzer_request",
    "chosen_verdict",
    "guidance_block_of",
    "guide_text",
    "is_consistent",
    "read_votes",
    "step_value",
    "verdict_of",
]

"""The verify role (LiteGUI ATG, docs/methods.md section 1.5): is a proposed GUI action right here?

A verifier reads one proposal of a GUI model (its raw output and the
action parsed from it, in screen pixels) with the task, the dialogue
history and the recent screenshots (the last image is the current screen),
and answers one JSON object ``{"verdict": "Yes" | "No", "reason": "..."}``.
The ATG loop (:mod:`guirl.datagen.atg`) asks it ``votes`` times per proposal.

- :func:`verify_request` builds the request: the role prompt with a data
  block (:func:`guirl.judges.prompts.data_block`: the data is evidence, never
  instructions) of ``instruction``, ``history``, ``proposal``, ``action``,
  ``parse_failure``, ``screen_size`` and ``vote`` (which of the votes this
  is, so that every vote is its own request: a caching HTTP client asks the
  server again, a sampling server votes independently). The reference
  ``valid_actions`` and ``a11y`` stay in ``fields`` and never reach the
  prompt, so the ``openai`` and ``checkpoint`` judges verify from the
  prompt alone.
- :func:`read_vote` turns a :class:`JudgeResult` into a :class:`Vote`:
  ``yes`` True / False, or None (masked) when the call failed or the answer
  holds no ``verdict`` (or ``eval`` / ``answer``) of yes / no.
- ``ground_truth_verify`` answers from the built-in world's ``A*_t``: Yes iff
  :func:`guirl.matching.step.match_action` says the action is one of the valid
  actions (inclusive point rule, exact value); the reason of a No says what
  is wrong (no action, wrong type, wrong element, wrong text / value)
  without naming the right answer (the reason goes back to the proposer as
  a negative constraint, not as guidance). Departure: an action that is
  effect-equivalent to a valid one but matches none (the world's judge,
  :func:`guirl.envs.sim.is_advancing`, would accept it) gets No.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guirl.actions.types import Action, ActionType
from guirl.data.schema import A11yNode
from guirl.judges.base import JudgeRequest, JudgeResult, register_judge
from guirl.judges.prompts import DATA_RULE, data_block, fields_from_prompt

ROLE = "verify"

VERIFY_PROMPT = f"""You verify one proposed action of a GUI agent before it is executed.
{DATA_RULE}

The data block holds: "instruction" (the agent's task), "history" (the agent's previous outputs, oldest first),
"proposal" (the agent's output for this step), "action" (the action parsed from it, coordinates in pixels of the
current screenshot, or null with "parse_failure" saying why it could not be read) and "screen_size" (width, height).
The images are the recent screenshots; the last one is the current screen.

Decide whether executing this action now is a correct next step towards the task: the right kind of action, on
the right element, with the right text or value.

Answer with one JSON object and nothing else:
{{"verdict": "Yes" or "No", "reason": "what is wrong, or why it is right"}}.

{{data}}"""

#: The fields the verify prompt's data block shows (the reference never does).
SHOWN_FIELDS = ("instruction", "history", "proposal", "action", "parse_failure", "screen_size", "vote")
VERDICT_KEYS = ("verdict", "eval", "answer")


@dataclass(frozen=True)
class Vote:
    """One verifier vote: ``yes`` is True / False, or None when masked (failed or unreadable)."""

    yes: bool | None
    reason: str


def verify_request(
    instruction: str,
    proposal: str,
    action: Action | None,
    images: list | None = None,
    history: list[str] | None = None,
    parse_failure: str | None = None,
    screen_size: tuple[int, int] | None = None,
    vote: int = 1,
    valid_actions: list[Action] | None = None,
    a11y: list[A11yNode] | None = None,
) -> JudgeRequest:
    """A verify-role :class:`JudgeRequest` (module doc); ``valid_actions`` and ``a11y`` only in ``fields``."""
    fields: dict[str, Any] = {
        "instruction": instruction,
        "history": list(history or []),
        "proposal": proposal,
        "action": action.model_dump(mode="json", exclude_none=True) if action is not None else None,
        "parse_failure": parse_failure,
        "screen_size": list(screen_size) if screen_size else None,
        "vote": vote,
    }
    shown = {name: fields[name] for name in SHOWN_FIELDS if fields.get(name) is not None or name == "action"}
    prompt = VERIFY_PROMPT.replace("{data}", data_block(shown))
    fields.update(valid_actions=valid_actions, a11y=a11y)
    return JudgeRequest(role=ROLE, prompt=prompt, images=list(images or []), fields=fields)


def _yes_no(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    word = value.strip().strip(".!\"'").lower()
    return True if word == "yes" else False if word == "no" else None


def read_vote(result: JudgeResult) -> Vote:
    """The vote in a verifier's result; a failed call or an answer without yes / no is masked (``yes=None``)."""
    if not result.ok:
        return Vote(None, f"masked: {result.reason or 'the verifier call failed'}")
    verdict = result.verdict if isinstance(result.verdict, dict) else {}
    key = next((k for k in VERDICT_KEYS if k in verdict), None)
    yes = _yes_no(verdict.get(key)) if key else None
    if yes is None:
        found = f"{key}={verdict.get(key)!r}" if key else f"keys {sorted(verdict)[:5]}"
        return Vote(None, f"masked: the answer holds no 'verdict' of Yes or No ({found})")
    reason = verdict.get("reason")
    return Vote(yes, reason if isinstance(reason, str) else "")


def _as_action(value: Any) -> Action | None:
    if isinstance(value, Action) or value is None:
        return value
    return Action.model_validate(value)


def _hit(point: tuple[float, float], a11y: list[A11yNode] | None) -> str:
    """The smallest a11y node under ``point``, named as the oracle names widgets."""
    x, y = point
    under = [n for n in a11y or [] if n.box[0] <= x <= n.box[2] and n.box[1] <= y <= n.box[3]]
    if not under:
        return "no element"
    node = min(under, key=lambda n: (n.box[2] - n.box[0]) * (n.box[3] - n.box[1]))
    return f"the '{node.text}' {node.role}" if node.text else f"the {node.role}"


def ground_truth_verdict(action: Action | None, valid_actions: list[Action], screen_size: tuple[int, int],
                         a11y: list[A11yNode] | None = None, parse_failure: str | None = None) -> dict[str, str]:
    """``{"verdict": "Yes" | "No", "reason": ...}`` of ``action`` against ``valid_actions`` (module doc).

    >>> from guirl.actions import Frame
    >>> ok = Action(type=ActionType.CLICK, box=(10.0, 10.0, 50.0, 30.0), frame=Frame.screen(100, 100))
    >>> ground_truth_verdict(Action(type=ActionType.KEY, keys=("enter",)), [ok], (100, 100))["reason"]
    'wrong type: a key action is not what this step needs'
    >>> ground_truth_verdict(Action(type=ActionType.CLICK, point=(90.0, 90.0), frame=Frame.screen(100, 100)),
    ...                      [ok], (100, 100))["reason"]
    'wrong element: the click at (90, 90) hits no element, which is not a valid target here'
    """
    from guirl.matching.step import match_action  # eval pulls in more than the judges need at import

    if action is None:
        return {"verdict": "No", "reason": f"no action: the proposal does not parse ({parse_failure or 'unreadable'})"}
    kind = action.type.value.replace("_", " ")
    # one match per valid action: which of the same type the point hits (a valid action without a point never misses)
    matches = [match_action(action, [gold], screen_size=screen_size, a11y=a11y) for gold in valid_actions]
    same_type = [m for m in matches if m.type_match]
    if any(m.success for m in matches):
        return {"verdict": "Yes", "reason": f"the {kind} is one of the valid actions here"}
    if not same_type:
        return {"verdict": "No", "reason": f"wrong type: a {kind} action is not what this step needs"}
    if not any(m.grounded or not m.needs_point for m in same_type):
        point = action.target_point()
        if point is None:
            return {"verdict": "No", "reason": f"wrong element: the {kind} has no point on the screen"}
        where = f"({point[0]:.0f}, {point[1]:.0f})"
        reason = f"wrong element: the {kind} at {where} hits {_hit(point, a11y)}, which is not a valid target here"
        return {"verdict": "No", "reason": reason}
    if action.type is ActionType.TYPE or action.text is not None:
        return {"verdict": "No", "reason": f"wrong text: {kind} {action.text!r} is not the text this step needs"}
    return {"verdict": "No", "reason": f"wrong value: the {kind} has the wrong keys, direction or amount"}


@register_judge("ground_truth_verify")
class GroundTruthVerifyJudge:
    """Verifier from the built-in world's ``A*_t`` (module doc). Reads ``fields["action"]``,
    ``fields["valid_actions"]``, ``fields["screen_size"]`` and ``fields["a11y"]`` (the prompt's data
    block fills in what the fields lack; it never holds the reference)."""

    def __call__(self, request: JudgeRequest) -> JudgeResult:
        fields = {**(fields_from_prompt(request.prompt) or {}), **request.fields}
        valid, size = fields.get("valid_actions"), fields.get("screen_size")
        if not valid:
            return JudgeResult({}, ok=False, reason="no reference: pass the step's A*_t as fields['valid_actions']")
        if not (isinstance(size, (list, tuple)) and len(size) == 2):
            return JudgeResult({}, ok=False, reason=f"fields['screen_size'] must be (width, height), got {size!r}")
        try:
            action = _as_action(fields.get("action"))
            valid = [_as_action(a) for a in valid]
            a11y = [n if isinstance(n, A11yNode) else A11yNode.model_validate(n) for n in fields.get("a11y") or []]
        except ValueError as err:
            return JudgeResult({}, ok=False,
                               reason=f"fields['action'] / ['valid_actions'] / ['a11y'] unreadable: {err}")
        verdict = ground_truth_verdict(action, valid, (int(size[0]), int(size[1])), a11y or None,
                                       fields.get("parse_failure"))
        return JudgeResult(verdict=verdict, raw=json.dumps(verdict))

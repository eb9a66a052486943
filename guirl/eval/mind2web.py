"""Mind2Web step metrics: element accuracy, operation F1, step success.

Following MindAct (Deng et al. 2023, "Mind2Web", sec 4) as SeeClick applies
it to screenshots (multimodal Mind2Web; njucckevin/SeeClick
``agent_tasks/mind2web_test.py``):

- **Ele.Acc**: the predicted click point lies in a positive candidate's box
  (``inclusive`` rule, whatever the predicted operation; Step.valid_actions
  hold one action per positive candidate, see
  :mod:`guirl.data.adapters.mind2web`);
- **Op.F1**: word-set F1 (:func:`guirl.matching.text.token_f1`, no punctuation
  dropped) between SeeClick's operation strings: the operation id (``4``
  CLICK, ``3`` TYPE, ``2`` SELECT) followed, for TYPE / SELECT, by the
  lower-cased value (:func:`f1_operation_string`). The numeric id keeps an
  option word such as "select" in a value from counting as the operation;
- **Step SR**: element correct and Op.F1 == 1;
- **Task SR**: every step of a task succeeds.

Averages: ``mind2web/<metric>`` is macro over tasks (mean of per-task means,
SeeClick's "Macro Ele Acc / Op F1 / Step SR"); ``<metric>_micro`` is the mean
over steps (SeeClick's "Element Acc" and "Step Success");
``operation_f1_by_op`` is the mean over the gold operations CLICK / TYPE /
SELECT of their mean F1 (SeeClick's printed "Operation F1"). A missing or
unparsable prediction scores 0 on every metric (SeeClick's "format wrong").

Departures: SeeClick rounds the normalised gold box to 3 decimals before the
point test, which moves its edges by up to 0.0005 of the screen; guirl
tests the box in pixels. MindAct's text-only ``calculate_f1`` also drops
punctuation tokens and keeps case (``token_f1(..., lower=False,
drop_punctuation=True)``).
"""

from __future__ import annotations

from collections import defaultdict

from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.schema import Step
from guirl.matching.rules import MatchRule, point_matches
from guirl.matching.step import in_screen
from guirl.matching.text import token_f1

#: Mind2Web operations and the guirl action types read as each.
OPERATIONS = {ActionType.CLICK: "CLICK", ActionType.TYPE: "TYPE", ActionType.SELECT: "SELECT"}
#: SeeClick's action ids for the operations (``action2step``).
OPERATION_IDS = {"CLICK": "4", "TYPE": "3", "SELECT": "2"}


def operation_string(action: Action) -> str:
    """``"CLICK"``, ``"TYPE value"`` or ``"SELECT value"``; other types give their name."""
    op = OPERATIONS.get(action.type, action.type.value.upper())
    if op == "CLICK" or not action.text:
        return op
    return f"{op} {action.text}"


def f1_operation_string(action: Action) -> str:
    """SeeClick's Op.F1 string: ``"4"`` (CLICK), ``"3 value"`` (TYPE), ``"2 value"``
    (SELECT), the value lower-cased; other types give their name.

    >>> f1_operation_string(Action(type=ActionType.SELECT, text="Select A State"))
    '2 select a state'
    """
    op = OPERATIONS.get(action.type, action.type.value.upper())
    op_id = OPERATION_IDS.get(op, op)
    if op in ("TYPE", "SELECT"):
        return f"{op_id} {(action.text or '').lower()}"
    return op_id


def score_step(
    step: Step, pred: Action | ParseFailure | None, rule: MatchRule | str = "inclusive"
) -> dict[str, float]:
    """``{"element", "op_f1", "step_success"}`` for one Mind2Web step."""
    if not step.valid_actions:
        raise ValueError(f"Mind2Web step {step.index} has no positive candidate (valid_actions is empty)")
    if not pred:
        return {"element": 0.0, "op_f1": 0.0, "step_success": 0.0}
    w, h = step.screenshot.width, step.screenshot.height
    pred = in_screen(pred, w, h)
    point = pred.target_point()
    golds = [in_screen(g, w, h) for g in step.valid_actions]
    element = point is not None and any(
        point_matches(point, target_box=g.box, target_point=g.point, screen_size=(w, h), rule=rule) for g in golds
    )
    op_f1 = token_f1(f1_operation_string(pred), f1_operation_string(golds[0]), lower=False)
    return {"element": float(element), "op_f1": op_f1, "step_success": float(element and op_f1 == 1.0)}


def evaluate_mind2web(
    steps: list[tuple[str, Step]],
    predictions: list[Action | ParseFailure | None],
    rule: MatchRule | str = "inclusive",
) -> dict[str, float]:
    """Macro (per task) and micro (per step) Mind2Web metrics, keys ``mind2web/...``."""
    if len(steps) != len(predictions):
        raise ValueError(f"got {len(steps)} Mind2Web steps but {len(predictions)} predictions")
    per_task: dict[str, list[dict[str, float]]] = defaultdict(list)
    per_op: dict[str, list[float]] = defaultdict(list)
    for (task_id, step), pred in zip(steps, predictions, strict=True):
        row = score_step(step, pred, rule)
        per_task[task_id].append(row)
        gold_op = OPERATIONS.get(step.valid_actions[0].type)
        if gold_op is not None:
            per_op[gold_op].append(row["op_f1"])
    out: dict[str, float] = {"mind2web/tasks": float(len(per_task)), "mind2web/steps": float(len(steps))}
    all_rows = [r for rows in per_task.values() for r in rows]
    for key, name in (("element", "element_accuracy"), ("op_f1", "operation_f1"), ("step_success", "step_success")):
        task_means = [sum(r[key] for r in rows) / len(rows) for rows in per_task.values()]
        out[f"mind2web/{name}"] = sum(task_means) / len(task_means) if task_means else 0.0
        out[f"mind2web/{name}_micro"] = sum(r[key] for r in all_rows) / len(all_rows) if all_rows else 0.0
    op_means = [sum(v) / len(v) for v in per_op.values()]
    out["mind2web/operation_f1_by_op"] = sum(op_means) / len(op_means) if op_means else 0.0
    task_ok = [all(r["step_success"] == 1.0 for r in rows) for rows in per_task.values()]
    out["mind2web/task_success"] = sum(task_ok) / len(task_ok) if task_ok else 0.0
    return out

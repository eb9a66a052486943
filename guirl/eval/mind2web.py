"""Mind2Web step metrics: element accuracy, operation F1, step success.

Following MindAct (Deng et al. 2023, "Mind2Web", sec 4) as SeeClick applies
it to screenshots (multimodal Mind2Web):

- **Ele.Acc**: the predicted click point lies in a positive candidate's box
  (``inclusive`` rule; Step.valid_actions hold one action per positive
  candidate, see :mod:`guirl.data.adapters.mind2web`);
- **Op.F1**: word-set F1 (:func:`guirl.eval.text.token_f1`) between the
  predicted and gold operation strings ``"CLICK"`` / ``"TYPE <value>"`` /
  ``"SELECT <value>"``;
- **Step SR**: element correct and Op.F1 == 1;
- **Task SR**: every step of a task succeeds.

Averages are macro over tasks (mean of per-task means, as MindAct's and
SeeClick's scripts print); micro (per-step) means are reported as well.
"""

from __future__ import annotations

from collections import defaultdict

from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.schema import Step
from guirl.eval.matching import MatchRule, point_matches
from guirl.eval.offline import in_screen
from guirl.eval.text import token_f1

#: Mind2Web operations and the guirl action types read as each.
OPERATIONS = {ActionType.CLICK: "CLICK", ActionType.TYPE: "TYPE", ActionType.SELECT: "SELECT"}


def operation_string(action: Action) -> str:
    """``"CLICK"``, ``"TYPE value"`` or ``"SELECT value"``; other types give their name."""
    op = OPERATIONS.get(action.type, action.type.value.upper())
    if op == "CLICK" or not action.text:
        return op
    return f"{op} {action.text}"


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
    op_f1 = token_f1(operation_string(pred), operation_string(golds[0]))
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
    for (task_id, step), pred in zip(steps, predictions, strict=True):
        per_task[task_id].append(score_step(step, pred, rule))
    out: dict[str, float] = {"mind2web/tasks": float(len(per_task)), "mind2web/steps": float(len(steps))}
    all_rows = [r for rows in per_task.values() for r in rows]
    for key, name in (("element", "element_accuracy"), ("op_f1", "operation_f1"), ("step_success", "step_success")):
        task_means = [sum(r[key] for r in rows) / len(rows) for rows in per_task.values()]
        out[f"mind2web/{name}"] = sum(task_means) / len(task_means) if task_means else 0.0
        out[f"mind2web/{name}_micro"] = sum(r[key] for r in all_rows) / len(all_rows) if all_rows else 0.0
    task_ok = [all(r["step_success"] == 1.0 for r in rows) for rows in per_task.values()]
    out["mind2web/task_success"] = sum(task_ok) / len(task_ok) if task_ok else 0.0
    return out

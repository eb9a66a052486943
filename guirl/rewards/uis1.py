"""UI-S1 step reward and CCPO's distance-based coordinate reward (docs/methods.md section 5).

Step reward (semi-online RL): ``w_fmt r_fmt + w_act r_act`` (0.1 / 0.9), with
``r_act`` = 1.0 full match (type and every parameter), 0.5 type only, 0.1
parsed but wrong type, 0 unparsable. Two modes:

``mode="paper"`` (default): the paper's intent on guirl's parse. The output
is read by guirl's tolerant ``uis1`` parser (action names normalised,
``Click`` / ``tap`` accepted; ``}}``, trailing text and a bare JSON object
accepted); "type" is guirl's :class:`~guirl.actions.ActionType`, so
``system_button`` Back / Home / Menu are three actions (Back for Home is a
wrong type, 0.1); ``r_fmt`` = 1 when the output parses into an executable
action (and, with ``require_think``, has a non-empty ``<think>`` block), so
decodable JSON with unusable fields scores 0. Full match: ``match='strict'``
(:func:`params_match`: point in the box, or within ``point_tolerance`` of the
point; text equal after normalisation; status checked) or ``match='code'``
(:func:`code_params_match`, the authors' geometry and text rules on guirl's
parse, a hybrid). A predicted swipe written as a path (the format's only
form) has the path's direction (guirl's content convention) when the ground
truth gives a direction.

``mode="code"``: the UI-S1 authors' reward as it runs (X-PLUG/MobileAgent
``UI-S1/verl/utils/reward_score/gui_traj.py``,
``gui_action_match_compute_score``, with ``x/data/agent/json.py``
``JsonFormat.parse_response``, ``x/data/text.py`` ``parse_tags`` and
``gui_utils/utils.py`` ``check_response_match``), reproduced on the raw
output (the code is in :mod:`guirl.rewards.uis1_code`, re-exported here):

- parsing: the first ``<think>(.*?)</think>`` and ``<action>(.*?)</action>``
  (regex, DOTALL, stripped), then plain ``json.loads`` of the action text. No
  ``<action>`` block, or text that does not decode (``}}``, trailing text, a
  ``<tool_call>`` wrapper inside it), raises before the format score is set:
  score 0. A JSON list, string or number decodes: it keeps the format credit
  and scores action 0 (its fields cannot be read);
- format: 1 iff the ``<think>`` block is non-empty once the action decoded
  (``require_think`` and ``match`` are not read in this mode);
- any error while matching (a missing ``coordinate`` / ``coordinate2`` /
  ``text`` / ``button`` / ``action`` key, a coordinate that is not two
  numbers, a non-string text) leaves ``r_act`` at 0 and keeps the format
  credit (``0.1 r_fmt``);
- action names compared exactly on the raw JSON (``Click`` is not ``click``:
  wrong type, 0.1);
- per ground-truth action (``check_response_match``): ``wait`` /
  ``terminate``: the type alone is a full match (status not checked);
  ``system_button``: one type, the button its parameter (compared
  lower-cased and stripped), so Back for Home is 0.5 (score 0.55);
  ``type``, ``answer`` and ``key`` all expect a predicted ``type`` whose text
  is a case-insensitive substring of the ground truth's or contains it (an
  ``answer`` predicted for an ``answer`` is a wrong type, 0.1; an empty text
  is a substring of every text); ``open``: predicted ``open``, same text rule;
  ``click`` / ``long_press``: same name, the predicted point inside the box
  enlarged 1.2x about its centre (edges count) or within 0.04 (Euclidean,
  x / W and y / H) of the point; ``swipe``: the finger direction of the
  predicted ``coordinate -> coordinate2`` (dominant axis in those units, ``up``
  on a tie) against the ground truth's ``direction`` field, else the finger
  direction of its own two points, up and down swapped in both cases (left and
  right are not); any other ground-truth name: wrong type (0.1);
- the step's own check: with the ``authors_check`` column (guirl's
  AndroidControl reader keeps each step's ``check_options``, or the check
  ``TrajDataset`` builds from ``action_content``), the step is scored against
  that one check as written (:func:`code_check_score`), as the authors score
  it: a ``candidate_bbox`` that is a list of boxes is never normalised (it
  stays in pixels, so only the point can match), a check with both a path and
  a ``direction`` is read by its direction, key names are compared as written
  (``backspace`` stays ``backspace``), an ``open`` check wants a predicted
  ``open`` (a click on its icon is a wrong type), and the step's
  ``annotation`` applies: ``HARMFUL`` (a negative example) scores
  ``1 - r_act``, ``NEUTRAL`` 0.5. Without the column the check is rebuilt from
  each valid guirl Action (below), which carries no annotation and
  normalises every box;
- not reproduced: the ``1 / num_steps`` step reward (a separate output of
  their function, not part of its score).

Lines (MobileAgent commit 11cea57): ``gui_traj.py`` 27-44 (parse, then format
29-32, then 0.5 / 1.0 / 0.1 at 37-42), 50 (bare ``except``), 56 (``0.1 format
+ 0.9 action``); ``json.py`` 109-117 (``parse_action`` = ``json.loads``);
``text.py`` 3-20; ``gui_utils/utils.py`` 15-16 (1.2, 0.04), 19-27
(``norm_coordinate``: prediction / resized size, ground truth / screen size;
``candidate_bbox`` only when it is one flat box), 30-35 (``check_text``), 37-55
(``predict_direction``), 57-65 (``check_click``), 101-143
(``check_response_match``: wait / terminate 105, system_button 109, type /
answer / key 114, open 119, swipe 124-135, click / long_press 138, otherwise 143).

How a guirl ground-truth Action becomes the authors' ``check_options``:
BACK / HOME / ENTER and KEY ``menu`` -> ``system_button`` Back / Home / Enter /
Menu; OPEN_APP -> ``open``; KEY -> ``key`` with its adb name. Their RL
data set (``verl/utils/dataset/rl_dataset.py`` ``TrajDataset``, the
``traj_grpo`` config) builds each check as a copy of the step's action, its
``bbox`` as ``candidate_bbox`` (else ``[]``), for training and validation
alike. So a click's box is that single flat box (which ``norm_coordinate``
normalises); a box-only click (their data always has a point; their code
would raise) is tested on the box only. A swipe with both end points is
compared by its path, direction or not: the up / down swap then applies to
the ground truth's own finger movement, so a vertical prediction equal to the
ground truth scores type only (the authors' code does this on every swipe it
trains and validates on; docs/methods.md section 5's "full match" does not). A swipe with
only a ``direction`` becomes their evaluation file's ``direction`` field
(their up / down is the content's, as guirl's; their left / right is the
finger's, so guirl's is reversed): a predicted finger movement matches it when
it is the movement the direction implies. A prediction given as a guirl Action
is written as the authors' JSON (a direction-only swipe has no
``coordinate2``: action 0). With several valid actions (A*_t) the best score
is taken; the authors score one.

CCPO distance reward: for coordinate actions, the binary position check is
replaced by ``r_dist(d) = 1 if d <= tau_min else exp(-(d - tau_min) / tau_min)``
(``tau_min`` = 0.04, 0.1 on AITW; the curve is ours, the paper gives none;
docs/methods.md section 5). ``d`` is the unit-frame distance (x / W, y / H) from the
predicted point to the ground-truth *box* when there is one (0 inside, so a
click in the box always gets full credit, also when the ground truth has a
point besides), else to the ground-truth point; the box wins as in
:func:`params_match`. In the step reward (``coordinate_reward='distance'``,
paper mode only) a type-matched coordinate action scores ``0.5 + 0.5 * r_dist``
when its other parameters match, so it slides from "type only" (0.5) to "full
match" (1.0). CCPO's code is not public (searched).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.actions.types import OPPOSITE_DIRECTION
from guirl.matching.rules import point_in_box
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    get_column,
    output_frames,
    parse_completions,
    register_reward,
    require_sized_ground_truth,
    screen_frames,
    valid_actions_column,
)
from guirl.rewards.matching import (
    action_point,
    box_in_frame,
    distance_to_box,
    params_match,
    point_in_frame,
)
from guirl.rewards.uis1_code import (
    THINK_BLOCK,
    UNIT,
    code_action_score,
    code_check_score,
    parse_uis1_code,
)

MODES = ("paper", "code")
#: ``doctest.testmod`` of this module also runs the examples of the parser it re-exports
__test__ = {"parse_uis1_code": parse_uis1_code, "code_check_score": code_check_score}


def distance_reward(distance: float, tau_min: float = 0.04) -> float:
    """``1`` within ``tau_min``, then ``exp(-(d - tau_min) / tau_min)``; in (0, 1]."""
    if tau_min <= 0:
        raise ValueError(f"tau_min must be positive, got {tau_min}")
    return 1.0 if distance <= tau_min else math.exp(-(distance - tau_min) / tau_min)


def coordinate_distance(pred: Action, gt: Action) -> float | None:
    """Unit-frame distance from ``pred``'s point to ``gt``'s box (0 inside) when it has one,
    else to ``gt``'s point; None if either side has no position."""
    p = action_point(pred, UNIT)
    if p is None:
        return None
    if gt.box is not None:
        return distance_to_box(p, box_in_frame(gt.box, gt.frame, UNIT))
    if gt.point is not None:
        return math.dist(p, point_in_frame(gt.point, gt.frame, UNIT))
    return None


def _without_position(gt: Action) -> Action:
    return gt.model_copy(update={"point": None, "box": None})


def _swipe_direction(action: Action) -> str | None:
    """``direction``, else derived from ``point -> end_point`` (dominant axis; guirl's
    content-movement convention, the opposite of the finger's movement)."""
    if action.direction is not None:
        return action.direction
    if action.point is None or action.end_point is None:
        return None
    start = point_in_frame(action.point, action.frame, UNIT)
    end = point_in_frame(action.end_point, action.frame, UNIT)
    dx, dy = end[0] - start[0], end[1] - start[1]
    finger = ("right" if dx > 0 else "left") if abs(dx) > abs(dy) else ("down" if dy > 0 else "up")
    return OPPOSITE_DIRECTION[finger]


def code_params_match(pred: Action, gt: Action, point_tolerance: float = 0.04, box_scale: float = 1.2) -> bool:
    """The authors' full-match rules on guirl-parsed actions (``match='code'``, a hybrid), types assumed equal.

    Position: inside ``gt.box`` enlarged ``box_scale`` about its centre, or within
    ``point_tolerance`` (unit frame) of ``gt.point``; text: case-insensitive
    substring either way; swipe: direction only (guirl's convention on both
    sides); status (terminate) not checked. ``mode='code'`` is the authors' code itself.
    """
    if gt.type is ActionType.SWIPE:
        want = _swipe_direction(gt)
        return want is not None and _swipe_direction(pred) == want
    if gt.box is not None or gt.point is not None:
        p = action_point(pred, UNIT)
        if p is None:
            return False
        hit = False
        if gt.box is not None:
            x1, y1, x2, y2 = box_in_frame(gt.box, gt.frame, UNIT)
            cx, cy, hw, hh = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * box_scale / 2, (y2 - y1) * box_scale / 2
            hit = point_in_box(p, (cx - hw, cy - hh, cx + hw, cy + hh))
        if not hit and gt.point is not None:
            hit = math.dist(p, point_in_frame(gt.point, gt.frame, UNIT)) <= point_tolerance
        if not hit:
            return False
    if gt.text is not None:
        if pred.text is None:
            return False
        a, b = pred.text.lower().strip(), gt.text.lower().strip()
        if a not in b and b not in a:
            return False
    if gt.keys is not None and set(pred.keys or ()) != set(gt.keys):
        return False
    return gt.direction is None or pred.direction == gt.direction


def _full_match(pred: Action, gt: Action, match: str, point_tolerance: float) -> bool:
    if match == "strict":
        return params_match(pred, gt, UNIT, point_tolerance)
    if match == "code":
        return code_params_match(pred, gt, point_tolerance)
    raise ValueError(f"unknown match {match!r}; valid: ['strict', 'code']")


def uis1_action_score(
    pred: Action | ParseFailure | Any,
    gt: Action,
    *,
    point_tolerance: float = 0.04,
    coordinate_reward: str = "binary",
    tau_min: float = 0.04,
    match: str = "strict",
    mode: str = "paper",
    pred_frame: Frame | None = None,
) -> float:
    """UI-S1 ``r_act`` in {0, 0.1, 0.5, 1} (``binary``); with ``distance``, [0.5, 1]
    for type-matched coordinate actions. ``match``: ``strict`` | ``code``;
    ``mode``: ``paper`` | ``code`` (:func:`code_action_score`; ``match`` not read).
    See the module docstring."""
    if mode == "code":
        if coordinate_reward != "binary":
            raise ValueError(
                "mode='code' is the authors' binary reward; coordinate_reward='distance' needs mode='paper'"
            )
        return code_action_score(pred, gt, pred_frame=pred_frame, point_tolerance=point_tolerance)
    if mode != "paper":
        raise ValueError(f"unknown mode {mode!r}; valid: {list(MODES)}")
    if not isinstance(pred, (Action, ParseFailure)):
        raise TypeError(f"mode='paper' scores a parsed Action (or ParseFailure), got {type(pred).__name__}")
    if not pred:
        return 0.0
    if pred.type is not gt.type:
        return 0.1
    if pred.type is ActionType.SWIPE and pred.direction is None and gt.direction is not None:
        # the format writes a swipe as its finger path: its direction is the path's (guirl convention)
        pred = pred.model_copy(update={"direction": _swipe_direction(pred)})
    if coordinate_reward == "binary" or (gt.point is None and gt.box is None):
        return 1.0 if _full_match(pred, gt, match, point_tolerance) else 0.5
    if coordinate_reward != "distance":
        raise ValueError(f"unknown coordinate_reward {coordinate_reward!r}; valid: ['binary', 'distance']")
    d = coordinate_distance(pred, gt)
    if d is None or not _full_match(pred, _without_position(gt), match, point_tolerance):
        return 0.5
    return 0.5 + 0.5 * distance_reward(d, tau_min)


def _has_think(text: str) -> bool:
    """A non-empty ``<think>`` block (UI-S1 code: ``think_str.strip()`` non-empty)."""
    m = THINK_BLOCK.search(text)
    return m is not None and bool(m.group(1).strip())


@register_reward("uis1_step")
class StepReward(Reward):
    """UI-S1 / CCPO step reward ``w_fmt r_fmt + w_act max_{a* in A*_t} r_act`` in [0, w_fmt + w_act].

    ``mode='paper'`` (default) scores guirl's parse; ``mode='code'`` is the UI-S1
    authors' ``gui_traj.py`` on the raw output, against the step's ``authors_check``
    (its raw ``check_options``) when that column is given (module docstring).
    """

    def __init__(
        self,
        fmt: str = "uis1",
        w_format: float = 0.1,
        w_action: float = 0.9,
        require_think: bool = False,
        point_tolerance: float = 0.04,
        coordinate_reward: str = "binary",
        tau_min: float = 0.04,
        match: str = "strict",
        mode: str = "paper",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; valid: {list(MODES)}")
        if mode == "code" and fmt != "uis1":
            raise ValueError(f"mode='code' reads UI-S1's <think>/<action> output; use fmt='uis1', not {fmt!r}")
        if mode == "code" and coordinate_reward != "binary":
            raise ValueError(
                "mode='code' is the authors' binary reward; coordinate_reward='distance' needs mode='paper'"
            )
        self.fmt, self.w_format, self.w_action, self.require_think = fmt, w_format, w_action, require_think
        self.mode = mode
        self.params = {
            "point_tolerance": point_tolerance,
            "coordinate_reward": coordinate_reward,
            "tau_min": tau_min,
            "match": match,
        }
        self.score_range = (0.0, w_format + w_action)

    def _code_scores(self, completions: Sequence[Any], columns: dict[str, Any], valid: list[list[Action]]):
        n = len(completions)
        frames = output_frames(n, self.fmt, columns, require_sized=True)
        checks = get_column(columns, "authors_check", n, None)
        screens = screen_frames(columns, valid, "uis1_step(mode='code') on a raw check") if any(
            c is not None for c in checks) else [UNIT] * n
        tol = self.params["point_tolerance"]
        for completion, frame, actions, check, screen in zip(completions, frames, valid, checks, screens, strict=True):
            response = parse_uis1_code(completion_text(completion))
            if response is None:  # parse_response raised before the format score was set
                yield 0.0, 0.0
                continue
            if check is not None:  # the authors score the step's one check, as written
                size = screen.from_unit((1.0, 1.0))
                act = code_check_score(response.action, check, screen_size=size, pred_frame=frame, point_tolerance=tol)
            else:
                act = max(code_action_score(response.action, gt, pred_frame=frame, point_tolerance=tol) for gt in actions)
            yield response.format_score, act

    def _paper_scores(self, completions: Sequence[Any], columns: dict[str, Any], valid: list[list[Action]]):
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        for completion, pred, actions in zip(completions, preds, valid, strict=True):
            fmt = float(bool(pred) and (not self.require_think or _has_think(completion_text(completion))))
            yield fmt, max(uis1_action_score(pred, gt, **self.params) for gt in actions)  # type: ignore[arg-type]

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        valid = valid_actions_column(columns, len(completions))
        require_sized_ground_truth(valid)
        pairs = (self._code_scores if self.mode == "code" else self._paper_scores)(completions, columns, valid)
        fmt_scores, act_scores = [], []
        for fmt, act in pairs:
            fmt_scores.append(fmt)
            act_scores.append(act)
        scores = [self.w_format * f + self.w_action * a for f, a in zip(fmt_scores, act_scores)]
        return RewardOutput(scores, {"format": fmt_scores, "action": act_scores})


@register_reward("ccpo_distance")
class DistanceReward(Reward):
    """CCPO coordinate reward in [0, 1]: ``r_dist`` for coordinate ground truths (type must
    match, other parameters too; 1 inside the ground-truth box), 1/0 full match for the
    others; max over A*_t."""

    def __init__(self, fmt: str = "uis1", tau_min: float = 0.04, point_tolerance: float = 0.04) -> None:
        self.fmt, self.tau_min, self.point_tolerance = fmt, tau_min, point_tolerance

    def one(self, pred: Action | ParseFailure, gt: Action) -> float:
        if not pred or pred.type is not gt.type:
            return 0.0
        if gt.point is None and gt.box is None:
            return float(params_match(pred, gt, UNIT, self.point_tolerance))
        d = coordinate_distance(pred, gt)
        if d is None or not params_match(pred, _without_position(gt), UNIT, self.point_tolerance):
            return 0.0
        return distance_reward(d, self.tau_min)

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        valid = valid_actions_column(columns, len(completions))
        require_sized_ground_truth(valid)
        preds = parse_completions(completions, self.fmt, columns, require_sized=True)
        scores = [max(self.one(p, gt) for gt in actions) for p, actions in zip(preds, valid, strict=True)]
        return RewardOutput(scores, {"parsed": [float(bool(p)) for p in preds]})

"""UI-S1 step reward and CCPO's distance-based coordinate reward (METHODS.md 5).

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
output:

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
- not reproduced: the ``HARMFUL`` / ``NEUTRAL`` step annotations (``1 - r_act``
  / 0.5) and the ``1 / num_steps`` step reward (no such columns).

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
trains and validates on; METHODS.md 5's "full match" does not). A swipe with
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
METHODS.md 5). ``d`` is the unit-frame distance (x / W, y / H) from the
predicted point to the ground-truth *box* when there is one (0 inside, so a
click in the box always gets full credit, also when the ground truth has a
point besides), else to the ground-truth point; the box wins as in
:func:`params_match`. In the step reward (``coordinate_reward='distance'``,
paper mode only) a type-matched coordinate action scores ``0.5 + 0.5 * r_dist``
when its other parameters match, so it slides from "type only" (0.5) to "full
match" (1.0). CCPO's code is not public (searched).
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.actions.formats._mobile import GUIRL_TO_ADB
from guirl.actions.types import OPPOSITE_DIRECTION
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    output_frames,
    parse_completions,
    register_reward,
    require_sized_ground_truth,
    valid_actions_column,
)
from guirl.rewards.matching import (
    action_point,
    box_in_frame,
    distance_to_box,
    params_match,
    point_in_box,
    point_in_frame,
)

UNIT = Frame.unit()
MODES = ("paper", "code")
#: ``gui_utils/utils.py``: ``BBOX_ENLARGE_FACTOR`` and ``POINT_DISTANCE_THRESHOLD``.
BBOX_ENLARGE_FACTOR = 1.2
POINT_DISTANCE_THRESHOLD = 0.04
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_ACTION = re.compile(r"<action>(.*?)</action>", re.DOTALL)


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


# -- mode="code": the authors' gui_traj.py -------------------------------------------


@dataclass(frozen=True)
class CodeResponse:
    """What ``JsonFormat.parse_response`` returns when it does not raise: the stripped
    ``<think>`` text (None without a block) and the ``json.loads`` of the ``<action>`` text."""

    think: str | None
    action: Any

    @property
    def format_score(self) -> float:
        """``gui_traj.py``: 1 iff ``think_str is not None and think_str.strip()``."""
        return float(self.think is not None and bool(self.think.strip()))


def _first_tag(text: str, pattern: re.Pattern[str]) -> str | None:
    """``x/data/text.py`` ``parse_tags`` for one tag: first non-greedy match, stripped."""
    m = pattern.search(text)
    return None if m is None else m.group(1).strip()


def parse_uis1_code(text: str) -> CodeResponse | None:
    """The authors' parse (``JsonFormat.parse_response``): plain ``json.loads`` of the first
    ``<action>`` block; None where theirs raises (no block, or text that does not decode).

    >>> parse_uis1_code('<think>t</think><action>{"action": "click", "coordinate": [1, 2]}</action>').action
    {'action': 'click', 'coordinate': [1, 2]}
    >>> parse_uis1_code('<action>{"action": "wait"}}</action>') is None  # '}}': json.loads raises
    True
    >>> parse_uis1_code('<action>[{"action": "wait"}]</action>').action  # a list decodes
    [{'action': 'wait'}]
    """
    action = _first_tag(text, _ACTION)
    if action is None:  # json.loads(None): TypeError
        return None
    try:
        decoded = json.loads(action)
    except (ValueError, RecursionError):
        return None
    return CodeResponse(_first_tag(text, _THINK), decoded)


def _frame_size(frame: Frame) -> tuple[float, float]:
    """The divisors of ``norm_coordinate``: the frame's width and height (scale for a relative frame)."""
    return frame.from_unit((1.0, 1.0))


def _norm_coordinate(action: Any, width: float, height: float) -> Any:
    """``gui_utils/utils.py`` ``norm_coordinate`` on a deep copy (raises where theirs does)."""
    action = copy.deepcopy(action)
    if "candidate_bbox" in action and len(action["candidate_bbox"]) == 4:
        x, y, w, h = action["candidate_bbox"]
        action["candidate_bbox"] = [[x / width, y / height, w / width, h / height]]
    if "coordinate" in action:
        action["coordinate"] = [action["coordinate"][0] / width, action["coordinate"][1] / height]
    if "coordinate2" in action:
        action["coordinate2"] = [action["coordinate2"][0] / width, action["coordinate2"][1] / height]
    return action


def _check_text(pred: Any, gt: str) -> bool:
    """``check_text`` (not restricted): case-insensitive substring either way."""
    a, b = pred.lower().strip(), gt.lower().strip()
    return a in b or b in a


def _predict_direction(start: Any, end: Any) -> str:
    """``predict_direction``: the finger direction, dominant axis, ``up`` on a tie."""
    x1, y1 = start
    x2, y2 = end
    dx, dy = x2 - x1, y2 - y1
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def _check_click(click: Any, boxes: list, gt_point: Any, threshold: float) -> bool:
    """``check_click`` with ``enlarge_bbox`` (x1.2 about the centre, edges inclusive), else
    the Euclidean unit distance to the point (``np.linalg.norm``) within ``threshold``."""
    for x_min, y_min, x_max, y_max in boxes:
        cx, cy = (x_min + x_max) / 2, (y_min + y_max) / 2
        w, h = (x_max - x_min) * BBOX_ENLARGE_FACTOR, (y_max - y_min) * BBOX_ENLARGE_FACTOR
        if cx - w / 2 <= click[0] <= cx + w / 2 and cy - h / 2 <= click[1] <= cy + h / 2:
            return True
    if gt_point is not None:
        dx, dy = gt_point[0] - click[0], gt_point[1] - click[1]
        return math.sqrt(dx * dx + dy * dy) <= threshold
    return False


_SWAP_VERTICAL = {"down": "up", "up": "down"}


def _check_response_match(pred: Any, gt: dict, threshold: float) -> tuple[bool, bool]:
    """``check_response_match``: (type match, full match) of the normalised prediction
    against a unit-frame ground truth; raises where theirs does."""
    kind = gt["action"]
    if kind in ("wait", "terminate"):
        return (True, True) if pred["action"] == kind else (False, False)
    if kind == "system_button":
        if pred["action"] == "system_button":
            return True, gt["button"].lower().strip() == pred["button"].lower().strip()
        return False, False
    if kind in ("type", "answer", "key"):
        if pred["action"] == "type":
            return True, _check_text(pred["text"], gt["text"])
        return False, False
    if kind == "open":
        if pred["action"] == "open":
            return True, _check_text(pred["text"], gt["text"])
        return False, False
    if kind == "swipe":
        if pred["action"] == "swipe":
            want = gt["direction"] if "direction" in gt else _predict_direction(gt["coordinate"], gt["coordinate2"])
            got = _predict_direction(pred["coordinate"], pred["coordinate2"])
            return True, got == _SWAP_VERTICAL.get(want, want)
        return False, False
    if kind in ("long_press", "click"):
        if pred["action"] == kind:
            return True, _check_click(pred["coordinate"], gt.get("candidate_bbox", []), gt["coordinate"], threshold)
        return False, False
    return False, False


_SYSTEM_BUTTONS = {ActionType.BACK: "Back", ActionType.HOME: "Home", ActionType.ENTER: "Enter"}
_AUTHORS_NAMES = {ActionType.OPEN_APP: "open"}


def authors_action(action: Action, ground_truth: bool = False) -> dict[str, Any]:
    """``action`` as the authors' JSON, coordinates in the unit frame (x / W, y / H).

    ``ground_truth``: their ``check_options`` (a click's box as ``candidate_bbox``,
    its point as ``coordinate`` or None; a swipe without a path as its
    ``direction`` in their data's convention: up / down kept, left / right
    reversed). See the module docstring.
    """
    kind = action.type
    if kind in _SYSTEM_BUTTONS or (kind is ActionType.KEY and action.keys == ("menu",)):
        return {"action": "system_button", "button": _SYSTEM_BUTTONS.get(kind, "Menu")}
    out: dict[str, Any] = {"action": _AUTHORS_NAMES.get(kind, kind.value)}
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS):
        if ground_truth:
            p = None if action.point is None else point_in_frame(action.point, action.frame, UNIT)
            out["coordinate"] = None if p is None else list(p)
            out["candidate_bbox"] = [] if action.box is None else [list(box_in_frame(action.box, action.frame, UNIT))]
        else:
            p = action_point(action, UNIT)
            if p is not None:
                out["coordinate"] = list(p)
    elif kind is ActionType.SWIPE:
        if action.point is not None:
            out["coordinate"] = list(point_in_frame(action.point, action.frame, UNIT))
        if action.end_point is not None:
            out["coordinate2"] = list(point_in_frame(action.end_point, action.frame, UNIT))
        # TrajDataset's check is a copy of the action: a path, when there is one, is what is compared
        if action.direction is not None and (action.point is None or action.end_point is None):
            d = action.direction
            if ground_truth:  # their evaluation data's field: vertical = content, horizontal = finger
                out["direction"] = d if d in ("up", "down") else OPPOSITE_DIRECTION[d]
            else:  # a prediction writes its finger direction (the format's "direction" variant)
                out["direction"] = OPPOSITE_DIRECTION[d]
    elif kind is ActionType.KEY:
        keys = action.keys or ()
        out["text"] = GUIRL_TO_ADB.get(keys[0], keys[0]) if len(keys) == 1 else "+".join(keys)
    elif action.text is not None:
        out["text"] = action.text
    if kind is ActionType.TERMINATE and action.status is not None:
        out["status"] = action.status
    return out


def code_action_score(
    pred: Any,
    gt: Action,
    *,
    pred_frame: Frame | None = None,
    point_tolerance: float = POINT_DISTANCE_THRESHOLD,
) -> float:
    """The authors' ``r_act`` (``gui_traj.py``): 1.0 / 0.5 / 0.1, and 0 where their matching raises.

    ``pred``: the decoded ``<action>`` JSON (any JSON value, coordinates in
    ``pred_frame``, required), a guirl :class:`Action` (written as their JSON),
    or a :class:`ParseFailure` (their parse raised: 0).
    """
    if isinstance(pred, ParseFailure):
        return 0.0
    if isinstance(pred, Action):
        pred, width, height = authors_action(pred), 1.0, 1.0
    elif pred_frame is None:
        raise ValueError("code_action_score needs pred_frame, the frame the raw prediction's coordinates are in")
    else:
        width, height = _frame_size(pred_frame)
    want = authors_action(gt, ground_truth=True)
    try:
        type_match, full_match = _check_response_match(_norm_coordinate(pred, width, height), want, point_tolerance)
    except Exception:  # gui_traj.py: a bare except around the whole scoring; r_act stays 0
        return 0.0
    if not type_match:
        return 0.1
    return 1.0 if full_match else 0.5


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
    m = _THINK.search(text)
    return m is not None and bool(m.group(1).strip())


@register_reward("uis1_step")
class StepReward(Reward):
    """UI-S1 / CCPO step reward ``w_fmt r_fmt + w_act max_{a* in A*_t} r_act`` in [0, w_fmt + w_act].

    ``mode='paper'`` (default) scores guirl's parse; ``mode='code'`` is the UI-S1
    authors' ``gui_traj.py`` on the raw output (module docstring).
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
        frames = output_frames(len(completions), self.fmt, columns, require_sized=True)
        tol = self.params["point_tolerance"]
        for completion, frame, actions in zip(completions, frames, valid, strict=True):
            response = parse_uis1_code(completion_text(completion))
            if response is None:  # parse_response raised before the format score was set
                yield 0.0, 0.0
                continue
            yield (
                response.format_score,
                max(code_action_score(response.action, gt, pred_frame=frame, point_tolerance=tol) for gt in actions),
            )

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

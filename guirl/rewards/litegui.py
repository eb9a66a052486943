"""LiteGUI rewards (docs/methods.md section 1; LiteGUI appendix A.2-A.6).

- :func:`phi_gui` - the action matcher of eq. 9 / 26, in [0, 1];
- ``litegui_ms`` - the multi-solution reward ``R_ms = max_{a* in A*_t} phi_gui`` (eq. 15 / 27);
- ``litegui_format_length`` - JSON-aware format score times a DAPO-style soft
  overlength factor, in [0, 1];
- ``litegui_md`` - MD-GRPO's dual-level reward
  ``w_gui R_ms + w_subtask R_sub + w_format R_format/length`` (run config
  0.60 / 0.30 / 0.10, A.6), ``R_sub`` from a planning judge (A.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from guirl.actions import Action, ActionType, Frame, ParseFailure
from guirl.actions.formats._common import iter_json_objects
from guirl.matching.text import normalise_text, words
from guirl.rewards.base import (
    Reward,
    RewardOutput,
    completion_text,
    get_column,
    parse_completions,
    register_reward,
    screen_frames,
    valid_actions_column,
)
from guirl.rewards.matching import action_point, box_in_frame, distance_to_box, point_in_frame


def position_score(
    point: tuple[float, float],
    box: tuple[float, float, float, float],
    *,
    central_fraction: float = 0.5,
    decay_px: float = 200.0,
) -> float:
    """LiteGUI ``m_pos`` (eq. 24) for a point and a target box, both in screen pixels.

    Inside the central region (the box shrunk to ``central_fraction`` of its
    width and height about its centre): 1. Inside the box but outside the
    centre: linear from 1 at the central region's edge to 0.5 at the box edge,
    measured by the normalised Chebyshev offset from the centre
    ``u = max(|x - cx| / (w/2), |y - cy| / (h/2))``. Outside:
    ``0.5 * exp(-d / decay_px)``, ``d`` = distance to the box boundary.
    (The paper gives neither the central size nor the interpolation variable;
    both are our choice, continuous at every boundary.)
    """
    x1, y1, x2, y2 = box
    d = distance_to_box(point, box)
    if d > 0 or not (x1 <= point[0] <= x2 and y1 <= point[1] <= y2):
        return 0.5 * math.exp(-d / decay_px)
    half_w, half_h = (x2 - x1) / 2, (y2 - y1) / 2
    cx, cy = x1 + half_w, y1 + half_h
    u = max(abs(point[0] - cx) / half_w if half_w > 0 else 0.0, abs(point[1] - cy) / half_h if half_h > 0 else 0.0)
    if u <= central_fraction:
        return 1.0
    return 1.0 - 0.5 * (u - central_fraction) / (1.0 - central_fraction)


def point_position_score(
    point: tuple[float, float],
    target: tuple[float, float],
    *,
    radius: float,
    central_fraction: float = 0.5,
    decay_px: float = 200.0,
) -> float:
    """``m_pos`` for a ground-truth *point* (no box), both in screen pixels: the box rule
    of :func:`position_score` on a disc of ``radius`` px about the point.

    Distance ``d`` to the point: 1 within ``central_fraction * radius``;
    linear from 1 to 0.5 up to ``radius``; beyond, ``0.5 * exp(-(d - radius) / decay_px)``.
    Departure: the paper scores positions against a box only; read literally, a
    point is a zero-size box, which gives 1 on the point and 0.4988 one pixel
    away (a cliff). ``radius`` is guirl's choice (the rewards pass
    ``0.04 * max(W, H)``, InfiGUI-R1's evaluation tolerance).

    >>> point_position_score((530, 500), (500, 500), radius=40)  # d = 30: 1 - 0.5 * (0.75 - 0.5) / 0.5
    0.75
    """
    if radius <= 0:
        raise ValueError(f"radius must be positive, got {radius}")
    d = math.dist(point, target)
    if d > radius:
        return 0.5 * math.exp(-(d - radius) / decay_px)
    u = d / radius
    if u <= central_fraction:
        return 1.0
    return 1.0 - 0.5 * (u - central_fraction) / (1.0 - central_fraction)


def value_score(pred: Action, gt: Action) -> float:
    """LiteGUI ``m_val`` (eq. 25): 1 exact, 0.5 partial, 0 otherwise.

    Text: exact after lower-casing and collapsing whitespace; partial when
    one contains the other or they share a word. Keys: equal
    sets exact; overlapping sets partial. (The paper does not define
    "partial"; this is our reading.)
    """
    if gt.keys is not None:
        pk, gk = set(pred.keys or ()), set(gt.keys)
        return 1.0 if pk == gk else (0.5 if pk & gk else 0.0)
    p, g = normalise_text(pred.text), normalise_text(gt.text)
    if p == g:
        return 1.0
    if p and g and (p in g or g in p or set(words(p)) & set(words(g))):
        return 0.5
    return 0.0


def type_matches(pred: Action, gt: Action) -> bool:
    """LiteGUI types: SCROLL_UP / SCROLL_DOWN are distinct types, so scroll direction is part of the type."""
    if pred.type is not gt.type:
        return False
    if gt.type is ActionType.SCROLL and gt.direction is not None:
        return pred.direction == gt.direction
    return True


def phi_gui(
    pred: Action | ParseFailure,
    gt: Action,
    screen: Frame,
    *,
    w_type: float = 1.0,
    w_pos: float = 1.0,
    w_val: float = 1.0,
    central_fraction: float = 0.5,
    decay_px: float = 200.0,
    point_radius: float = 0.04,
    gate_on_type: bool = False,
) -> float:
    """LiteGUI's action matcher (eq. 9 / 26) in [0, 1]; a ParseFailure scores 0.

    ``phi = (w_t m_type + 1[b*] w_p m_pos + 1[v*] w_v m_val) / (w_t + 1[b*] w_p + 1[v*] w_v)``.
    Positions are compared in ``screen`` (a sized screen-pixel frame; the
    200 px decay is in screen pixels). A ground-truth point without a box is
    scored by :func:`point_position_score` with a radius of
    ``point_radius * max(W, H)`` of ``screen`` (departure: the paper has no
    point rule; a zero-size box would be a cliff). This function sees only
    the parsed action: the schema check of the output text (reasoning,
    subtasks) is ``litegui_ms``'s. ``v*`` is ``gt.text`` or ``gt.keys`` (an annotated
    empty text counts as given). Choices where the paper is silent: the
    predicted position is the action's point (a predicted box: its centre);
    a DRAG is scored on its start point only (``end_point`` is not scored);
    scroll direction is part of the type (SCROLL_UP / SCROLL_DOWN), not of
    ``v*``; a prediction with no position against a ``b*`` scores ``m_pos = 0``.

    ``gate_on_type`` (guirl's option, off = the paper): a wrong action type scores 0 instead of
    its position and value credit. The paper's sum pays a CLICK on the field of a TYPE step
    1/3 and on the target of a DOUBLE_CLICK 1/2. (On the tiny base agent RL drifted to
    clicking with either form: docs/experiments.md, "RL on recorded steps: learning".)
    """
    if not pred:
        return 0.0
    if gate_on_type and not type_matches(pred, gt):
        return 0.0
    num = w_type * float(type_matches(pred, gt))
    den = w_type
    if gt.box is not None or gt.point is not None:
        p = action_point(pred, screen)
        if p is None:
            m_pos = 0.0
        elif gt.box is not None:
            box = box_in_frame(gt.box, gt.frame, screen)
            m_pos = position_score(p, box, central_fraction=central_fraction, decay_px=decay_px)
        else:
            if screen.width is None or screen.height is None:
                raise ValueError(f"phi_gui needs a sized screen frame to score a point ground truth, got {screen}")
            target = point_in_frame(gt.point, gt.frame, screen)  # type: ignore[arg-type]
            radius = point_radius * max(screen.width, screen.height)
            m_pos = point_position_score(
                p, target, radius=radius, central_fraction=central_fraction, decay_px=decay_px
            )
        num += w_pos * m_pos
        den += w_pos
    if gt.text is not None or gt.keys is not None:
        num += w_val * value_score(pred, gt)
        den += w_val
    return num / den if den > 0 else 0.0


def multi_solution_score(
    pred: Action | ParseFailure, valid_actions: Sequence[Action], screen: Frame, **phi_params: float
) -> tuple[float, int]:
    """``(max_{a*} phi_gui(pred, a*), argmax)`` over A*_t (eq. 15); argmax 0 when nothing parses."""
    best, best_i = 0.0, 0
    if not pred:
        return best, best_i
    for i, gt in enumerate(valid_actions):
        s = phi_gui(pred, gt, screen, **phi_params)
        if s > best:
            best, best_i = s, i
    return best, best_i


def most_matched_action(pred: Action | ParseFailure, valid_actions: Sequence[Action], screen: Frame) -> Action:
    """Most-Matched-GT guidance for Guided OPD (eq. 8): ``argmax_{a*} phi_gui``.

    The first of A*_t (a deterministic reference) when ``pred`` does not parse.
    """
    return valid_actions[multi_solution_score(pred, valid_actions, screen)[1]]


def _lower_keys(obj: dict) -> dict[Any, Any]:
    return {k.lower() if isinstance(k, str) else k: v for k, v in obj.items()}


def schema_ok(text: str, pred: Action | ParseFailure) -> bool:
    """Whether ``text`` follows LiteGUI's output schema ``y = {reasoning, subtasks, action}``.

    The JSON object the litegui parser reads (the first with an ``action`` or
    ``type`` key, keys case-insensitive) must hold ``reasoning`` as a string and
    ``subtasks`` as a list of strings or objects, and its action must parse.
    (The paper does not spell out the item schema; this is guirl's reading.)

    >>> from guirl.actions import parse_action
    >>> bare = '{"type": "CLICK", "position": [50, 50]}'
    >>> schema_ok(bare, parse_action(bare, "litegui"))
    False
    """
    if not pred:
        return False
    for _, obj in iter_json_objects(text):
        fields = _lower_keys(obj)
        if "action" not in fields and "type" not in fields:
            continue
        subtasks = fields.get("subtasks")
        return (
            isinstance(fields.get("reasoning"), str)
            and isinstance(subtasks, list)
            and all(isinstance(item, (str, dict)) for item in subtasks)
        )
    return False


@register_reward("litegui_ms")
class MultiSolutionReward(Reward):
    """``R_ms = max_{a* in A*_t} phi_gui(y, a*)`` (LiteGUI eq. 15), in [0, 1].

    An output that does not parse, or (with ``fmt='litegui'`` and
    ``require_schema``) breaks the output schema (:func:`schema_ok`: no
    reasoning string, no subtask list, wrong field types) scores 0, as
    docs/methods.md section 1 says. ``point_radius``: the disc radius, as a fraction of
    ``max(W, H)``, that scores a point ground truth (:func:`point_position_score`).
    ``gate_on_type``: see :func:`phi_gui` (off: the paper's additive matcher).

    >>> from guirl.actions import Action, Frame
    >>> gt = Action(type="click", box=(0, 0, 100, 100), frame=Frame.screen(1000, 1000))
    >>> phi_gui(Action(type="click", point=(50, 50), frame=Frame.screen(1000, 1000)), gt, Frame.screen(1000, 1000))
    1.0
    >>> from guirl.rewards import make_reward
    >>> reward = make_reward("litegui_ms", fmt="litegui")
    >>> output = '{"reasoning": "", "subtasks": [], "action": {"type": "CLICK", "position": [90, 50]}}'
    >>> reward([output], valid_actions=[[gt]], output_frame=[Frame.screen(1000, 1000)])  # u = 0.8: (1 + 0.7) / 2
    [0.85]
    >>> reward(['{"type": "CLICK", "position": [50, 50]}'], valid_actions=[[gt]])  # no reasoning / subtasks
    [0.0]
    """

    def __init__(
        self,
        fmt: str = "litegui",
        w_type: float = 1.0,
        w_pos: float = 1.0,
        w_val: float = 1.0,
        central_fraction: float = 0.5,
        decay_px: float = 200.0,
        point_radius: float = 0.04,
        require_schema: bool = True,
        gate_on_type: bool = False,
    ) -> None:
        self.fmt = fmt
        self.require_schema = require_schema and fmt == "litegui"  # other formats have no reasoning/subtasks
        self.phi_params = {
            "w_type": w_type,
            "w_pos": w_pos,
            "w_val": w_val,
            "central_fraction": central_fraction,
            "decay_px": decay_px,
            "point_radius": point_radius,
            "gate_on_type": gate_on_type,
        }

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        valid = valid_actions_column(columns, len(completions))
        screens = screen_frames(columns, valid, "LiteGUI's position score")
        preds = parse_completions(completions, self.fmt, columns, require_sized=True, unsized_kind_ok="screen")
        scores, parsed, schema, matched = [], [], [], []
        for completion, pred, actions, screen in zip(completions, preds, valid, screens, strict=True):
            follows = not self.require_schema or schema_ok(completion_text(completion), pred)
            s, i = multi_solution_score(pred, actions, screen, **self.phi_params) if follows else (0.0, 0)
            scores.append(s)
            parsed.append(float(bool(pred)))
            schema.append(float(follows and bool(pred)))
            matched.append(float(i))
        return RewardOutput(scores, {"parsed": parsed, "schema": schema, "matched_index": matched})


def soft_overlength_factor(length: int, max_length: int, cache_length: int) -> float:
    """DAPO's soft overlength punishment mapped to a factor in [0, 1]:
    1 up to ``max_length - cache_length``, linear to 0 at ``max_length``, 0 beyond."""
    if cache_length <= 0:
        return 1.0 if length <= max_length else 0.0
    start = max_length - cache_length
    if length <= start:
        return 1.0
    return max(0.0, 1.0 - (length - start) / cache_length)


def json_format_score(text: str, fmt: str, pred: Action | ParseFailure) -> float:
    """1 when the output follows the schema (:func:`schema_ok`); 0.5 when it holds a JSON
    object with some of ``reasoning`` / ``subtasks`` / ``action`` but breaks the schema; 0 otherwise."""
    if schema_ok(text, pred):
        return 1.0
    for _, obj in iter_json_objects(text):
        if {"action", "reasoning", "subtasks"} & set(_lower_keys(obj)):
            return 0.5
    return 0.0


@register_reward("litegui_format_length")
class FormatLengthReward(Reward):
    """JSON-aware format score times the soft overlength factor, in [0, 1] (LiteGUI A.6).

    Length is in tokens (``completion_ids`` column, which TRL passes) when
    ``length_unit='tokens'``, in characters when ``'chars'``. Departure: the
    paper names the reward ("JSON-aware soft overlength penalty") but gives
    neither its formula nor its lengths; this is DAPO's soft penalty turned
    into a [0, 1] factor on a JSON schema check. ``max_length=1024`` and
    ``cache_length=256`` (full score up to 768 tokens, linear to 0 at 1024)
    are guirl's choice, not the paper's (DAPO itself used 20480 / 4096); set
    ``max_length`` to the run's maximum completion length.
    """

    def __init__(
        self, fmt: str = "litegui", max_length: int = 1024, cache_length: int = 256, length_unit: str = "tokens"
    ) -> None:
        if length_unit not in ("tokens", "chars"):
            raise ValueError(f"length_unit must be 'tokens' or 'chars', got {length_unit!r}")
        self.fmt, self.max_length, self.cache_length, self.length_unit = fmt, max_length, cache_length, length_unit

    def score(self, completions: Sequence[Any], **columns: Any) -> RewardOutput:
        n = len(completions)
        texts = [completion_text(c) for c in completions]
        preds = parse_completions(completions, self.fmt, columns)
        if self.length_unit == "tokens":
            lengths = [len(ids) for ids in get_column(columns, "completion_ids", n)]
        else:
            lengths = [len(t) for t in texts]
        fmt_scores = [json_format_score(t, self.fmt, p) for t, p in zip(texts, preds, strict=True)]
        factors = [soft_overlength_factor(length, self.max_length, self.cache_length) for length in lengths]
        scores = [f * g for f, g in zip(fmt_scores, factors, strict=True)]
        return RewardOutput(scores, {"format": fmt_scores, "length_factor": factors})

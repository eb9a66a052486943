"""Geometry and text matching shared by the rewards (pure functions, no I/O).

Coordinates are compared in one frame: :func:`point_in_frame` and
:func:`box_in_frame` convert through :class:`~guirl.actions.Frame` (the
action layer's conversion), so a Qwen2.5-VL point in resized pixels and a
dataset box in screen pixels meet in the same frame.
"""

from __future__ import annotations

import math

from guirl.actions import Action, ActionType, Frame
from guirl.actions.types import Box, Point
from guirl.matching.rules import point_in_box
from guirl.matching.text import normalise_text


def _same_kind_unsized(src: Frame, dst: Frame) -> bool:
    return src.kind == dst.kind and src.kind != "relative" and (src.width is None or dst.width is None)


def point_in_frame(point: Point, src: Frame, dst: Frame) -> Point:
    """``point`` (in ``src``) expressed in ``dst``. A sizeless frame of the
    same kind as ``dst`` (``Frame.screen()``) is taken to be ``dst`` itself."""
    if src == dst or _same_kind_unsized(src, dst):
        return (float(point[0]), float(point[1]))
    return src.convert_point(point, dst)


def box_in_frame(box: Box, src: Frame, dst: Frame) -> Box:
    x1, y1 = point_in_frame(box[:2], src, dst)
    x2, y2 = point_in_frame(box[2:], src, dst)
    return (x1, y1, x2, y2)


def action_point(action: Action, dst: Frame) -> Point | None:
    """The action's target point (point, else box centre) in ``dst``."""
    p = action.target_point()
    return None if p is None else point_in_frame(p, action.frame, dst)


def distance_to_box(point: Point, box: Box) -> float:
    """Euclidean distance from ``point`` to the nearest point of ``box`` (0 inside)."""
    dx = max(box[0] - point[0], 0.0, point[0] - box[2])
    dy = max(box[1] - point[1], 0.0, point[1] - box[3])
    return math.hypot(dx, dy)


def box_iou(a: Box, b: Box) -> float:
    """Intersection over union of two ``[x1, y1, x2, y2]`` boxes (0 for empty union)."""
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def action_value(action: Action) -> str | None:
    """The action's textual argument as one string: text, keys (``ctrl+a``),
    direction (scroll/swipe) or status (terminate); None if it has none."""
    if action.text is not None:
        return action.text
    if action.keys is not None:
        return "+".join(action.keys)
    if action.type in (ActionType.SCROLL, ActionType.SWIPE) and action.direction is not None:
        return action.direction
    if action.type is ActionType.TERMINATE and action.status is not None:
        return action.status
    return None


def params_match(pred: Action, gt: Action, frame: Frame, point_tolerance: float) -> bool:
    """Whether every parameter of ``gt`` is matched by ``pred`` (types assumed equal).

    Position: the predicted point inside ``gt.box``, or within
    ``point_tolerance`` (distance in ``frame``) of ``gt.point``; text:
    equal after :func:`normalise_text`; keys: equal as sets; direction and
    status: equal; drag/swipe end points like points.
    """
    if gt.box is not None or gt.point is not None:
        p = action_point(pred, frame)
        if p is None:
            return False
        if gt.box is not None:
            if not point_in_box(p, box_in_frame(gt.box, gt.frame, frame)):
                return False
        else:
            g = point_in_frame(gt.point, gt.frame, frame)  # type: ignore[arg-type]
            if math.dist(p, g) > point_tolerance:
                return False
    if gt.end_point is not None:
        if pred.end_point is None:
            return False
        e = point_in_frame(pred.end_point, pred.frame, frame)
        if math.dist(e, point_in_frame(gt.end_point, gt.frame, frame)) > point_tolerance:
            return False
    if gt.text is not None and normalise_text(pred.text) != normalise_text(gt.text):
        return False
    if gt.keys is not None and set(pred.keys or ()) != set(gt.keys):
        return False
    if gt.direction is not None and pred.direction != gt.direction:
        return False
    return gt.status is None or pred.status == gt.status

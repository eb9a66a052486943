"""Point-vs-target matching rules of the public evaluators, as named options.

Every rule compares in **screen pixels** of the step's screenshot: the
prediction and the target are first converted there (see
:mod:`guirl.actions.frames`). A target is a box, a point, or both; where a
target has only a point and the step has an accessibility tree, some
evaluators take the element under it as the box.

Rules (``MATCH_RULES[name]``):

- ``inclusive`` - ScreenSpot v1/v2 (SeeClick's ``screenspot_test``),
  ScreenSpot-Pro (``eval_screenspot_pro.py``) and SeeClick's Mind2Web test:
  correct iff ``x1 <= x <= x2 and y1 <= y <= y2`` (edges count).
- ``exclusive`` - the same with strict inequalities (a point exactly on the
  edge misses); GUI-Libra's reward for box targets.
- ``guilibra`` - GUI-Libra reward (``r1gui_accuracy_reward``): strict box
  test; for a point target, normalised squared distance
  ``(dx/W)^2 + (dy/H)^2 < 0.05^2``.
- ``infigui`` - InfiGUI-R1's AndroidControl evaluation
  (``eval/android_control``, ``check_click``): inside a candidate box
  enlarged 1.2x about its centre (edges count), or within
  ``0.04 * max(W, H)`` pixels of the ground-truth point. InfiGUI tests every
  box of the step's ``candidate_bbox`` list; when guirl has to build the
  candidates from the a11y tree it takes the *smallest* box containing the
  target point (a guirl choice: the released eval file ships its boxes).
- ``infigui_resized`` - the ``infigui`` rule in the authors' arithmetic:
  their ``check_click`` is called with the *resized* image size, so the
  distance is measured in pixels of the image the model saw and the radius is
  ``0.04 * max(w, h)`` of that image (``radius_frame="prediction"``; the
  prediction's frame size is passed as ``pred_size``). On a 1080 x 2400
  screen resized to 1092 x 2408, (153.86, 237.69) in the resized image
  against (71, 288) hits under ``infigui`` (95.9 <= 96 screen px) and misses
  here (96.8 > 96.32 resized px). Without a pixel size for the prediction
  (a relative frame) it measures in screen pixels, as ``infigui``.
- ``uis1`` - UI-S1's AndroidControl evaluation (X-PLUG/MobileAgent
  ``UI-S1/evaluation/qwenvl_utils.py``, ``check_click``): the same 1.2x box,
  but the distance is taken in *normalised* coordinates without aspect
  correction, ``sqrt((dx/W)^2 + (dy/H)^2) <= 0.04`` (on a 1080 x 2400
  screen: 43 px across, 96 px down, where ``infigui`` allows 96 px both ways).
- ``aitw`` - AITW's ``action_matching`` (google-research
  ``android_in_the_wild/action_matching.py``) for taps: both points in the
  same enlarged annotation box, or normalised distance ``<= 0.14``
  (``_TAP_DISTANCE_THRESHOLD``); every a11y box containing the target point
  is a candidate (not only the smallest). ``ANNOTATION_*_AUGMENT_FRACTION =
  1.4`` *adds* 140% (its docstring: "1.4 == 240% total increase"), and the
  grown box is clamped the way AITW's ``_resize_annotation_bounding_boxes``
  does, in normalised units: ``top' = max(0, top - 0.7 h)``,
  ``h' = min(1, 2.4 h)`` (same for x / w). The clamp keeps the size, so a box
  near the top or left edge reaches further down or right than a centred
  2.4x box would.
- ``odyssey`` - GUI-Odyssey's ``click_matching``
  (``src/eval_mm/GUIOdyssey_action_matching.py``): inside the (SAM2) box as
  given, not enlarged (edges count), or normalised distance ``<= 0.14``.
- ``uir1`` - UI-R1's AndroidControl evaluation (lll6gg/UI-R1
  ``evaluation/eval_ac.py``): pixel distance to the target point ``< 0.14``
  times the screen width (1080 px on AndroidControl; guirl takes the shorter
  side, the width of a portrait phone); no box.

Departures: a point inside the target's own box always hits under the box
rules (the enlarged box is tested besides the original one, so float
rounding cannot drop it; AITW could miss such a point only for a box that
reaches off screen); AITW's own scroll matching compares only the main axis
of the two finger paths (up matches down), while guirl's offline metrics
compare the direction by default (``direction_rule`` in
:mod:`guirl.matching.step`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from guirl.actions.types import Box, Point
from guirl.data.schema import A11yNode


@dataclass(frozen=True)
class MatchRule:
    """How a predicted point is judged against a target (see module doc)."""

    name: str
    box_scale: float = 1.0  # enlarge candidate boxes about their centre by this factor
    inclusive: bool = True  # box edges count as inside
    radius_max_side: float | None = None  # hit if pixel distance <= this * max(W, H)
    radius_normalised: float | None = None  # hit if distance in unit-square coords < this
    radius_min_side: float | None = None  # hit if pixel distance < this * min(W, H) (strict)
    a11y_candidates: str = "none"  # "none" | "smallest" | "all": boxes from the a11y tree
    aitw_clamp: bool = False  # grow boxes as AITW does (clamped top-left, size kept; see module doc)
    radius_frame: str = "screen"  # "prediction": radius_max_side measured in the prediction's image (pred_size)
    description: str = ""


MATCH_RULES: dict[str, MatchRule] = {
    r.name: r
    for r in (
        MatchRule("inclusive", description="ScreenSpot v1/v2/Pro, SeeClick Mind2Web: point in box, edges count"),
        MatchRule("exclusive", inclusive=False, description="strict point in box (edges miss)"),
        MatchRule(
            "guilibra",
            inclusive=False,
            radius_normalised=0.05,
            description="GUI-Libra: strict box; point target within normalised distance 0.05",
        ),
        MatchRule(
            "infigui",
            box_scale=1.2,
            radius_max_side=0.04,
            a11y_candidates="smallest",
            description="InfiGUI-R1: box x1.2 or within 0.04*max(W,H) of the target point; "
            "smallest a11y box containing the point",
        ),
        MatchRule(
            "infigui_resized",
            box_scale=1.2,
            radius_max_side=0.04,
            a11y_candidates="smallest",
            radius_frame="prediction",
            description="InfiGUI-R1 in its evaluator's arithmetic: box x1.2 or within 0.04*max(w,h) of the "
            "target point, in pixels of the resized image the model saw",
        ),
        MatchRule(
            "uis1",
            box_scale=1.2,
            radius_normalised=0.04,
            a11y_candidates="smallest",
            description="UI-S1: box x1.2 or normalised distance <= 0.04 (no aspect correction)",
        ),
        MatchRule(
            "aitw",
            box_scale=2.4,
            radius_normalised=0.14,
            a11y_candidates="all",
            aitw_clamp=True,
            description="AITW action_matching: same annotation box grown by 140% (x2.4, clamped as AITW) "
            "or normalised distance <= 0.14",
        ),
        MatchRule(
            "uir1",
            radius_min_side=0.14,
            description="UI-R1 AndroidControl: pixel distance < 0.14 * the screen's shorter side (its width)",
        ),
        MatchRule(
            "odyssey",
            radius_normalised=0.14,
            description="GUI-Odyssey click_matching: in the box as given, or normalised distance <= 0.14",
        ),
    )
}


def get_rule(name: str | MatchRule) -> MatchRule:
    if isinstance(name, MatchRule):
        return name
    try:
        return MATCH_RULES[name]
    except KeyError:
        raise KeyError(f"unknown match rule {name!r}; known rules: {sorted(MATCH_RULES)}") from None


def scale_box(box: Box, factor: float) -> Box:
    """``box`` enlarged (or shrunk) by ``factor`` about its centre (factor 1: ``box`` itself,
    exactly, so that edge points stay on the edge)."""
    if factor == 1.0:
        return box
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    hw, hh = (box[2] - box[0]) * factor / 2, (box[3] - box[1]) * factor / 2
    return (cx - hw, cy - hh, cx + hw, cy + hh)


def aitw_grow_box(box: Box, factor: float, screen_size: tuple[int, int]) -> Box:
    """``box`` grown as AITW's ``_resize_annotation_bounding_boxes`` does.

    In units of the screen (0-1), with ``f = factor - 1`` (AITW's augment
    fraction, 1.4 for ``factor`` 2.4): ``top' = max(0, top - f*h/2)``,
    ``h' = min(1, h + f*h)``, the same for ``left`` / ``w``; the box keeps
    that size even where its top-left corner was clamped to 0.

    >>> aitw_grow_box((0, 10, 10, 30), 2.4, (100, 100))  # top 10 - 14 -> 0; h 20 -> 48
    (0.0, 0.0, 24.0, 48.0)
    """
    width, height = screen_size
    frac = factor - 1.0
    top, left = box[1] / height, box[0] / width
    h, w = (box[3] - box[1]) / height, (box[2] - box[0]) / width
    new_top, new_left = max(0.0, top - frac * h / 2), max(0.0, left - frac * w / 2)
    new_h, new_w = min(1.0, h + frac * h), min(1.0, w + frac * w)
    return (new_left * width, new_top * height, (new_left + new_w) * width, (new_top + new_h) * height)


def grow_box(box: Box, rule: MatchRule, screen_size: tuple[int, int]) -> Box:
    """``box`` enlarged by ``rule.box_scale`` (about its centre, or AITW's way)."""
    if rule.aitw_clamp and rule.box_scale != 1.0:
        return aitw_grow_box(box, rule.box_scale, screen_size)
    return scale_box(box, rule.box_scale)


def point_in_box(point: Point, box: Box, inclusive: bool = True) -> bool:
    x, y = point
    if inclusive:
        return box[0] <= x <= box[2] and box[1] <= y <= box[3]
    return box[0] < x < box[2] and box[1] < y < box[3]


def box_area(box: Box) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def a11y_boxes_containing(
    point: Point,
    nodes: list[A11yNode],
    smallest_only: bool,
    scale: float = 1.0,
    grow: Callable[[Box], Box] | None = None,
) -> list[Box]:
    """Boxes of the a11y nodes whose box (enlarged by ``scale``, or by
    ``grow`` when given) contains ``point`` (edges count); the smallest
    first, or only it with ``smallest_only`` (ties: first in tree order)."""
    grow = grow or (lambda b: scale_box(b, scale))
    hits = [n.box for n in nodes if point_in_box(point, grow(n.box))]
    hits.sort(key=box_area)  # stable: equal areas keep tree order
    return hits[:1] if smallest_only else hits


def point_matches(
    pred: Point,
    *,
    target_box: Box | None,
    target_point: Point | None,
    screen_size: tuple[int, int],
    rule: MatchRule | str = "inclusive",
    a11y: list[A11yNode] | None = None,
    pred_size: tuple[float, float] | None = None,
) -> bool:
    """Whether predicted point ``pred`` hits the target under ``rule``.

    All coordinates are screen pixels; ``screen_size`` is ``(W, H)``.
    ``pred_size``: ``(w, h)`` of the image the prediction was written in (the
    model's resized screenshot), read by rules with ``radius_frame="prediction"``
    (``infigui_resized``); without it they measure in screen pixels.
    A rule without distance tolerance and a target without a box (and no
    a11y box to stand in) only matches the exact point.
    """
    rule = get_rule(rule)
    width, height = screen_size
    boxes: list[Box] = [target_box] if target_box is not None else []
    if target_box is None and target_point is not None and a11y and rule.a11y_candidates != "none":
        smallest = rule.a11y_candidates == "smallest"
        # AITW enlarges every annotation box first, then asks for one box holding both points
        grow = None if smallest else (lambda b: grow_box(b, rule, screen_size))
        boxes = a11y_boxes_containing(target_point, a11y, smallest_only=smallest, grow=grow)
    for box in boxes:
        # an enlarged box contains the original one; testing both keeps float rounding in
        # the scaling from ever dropping a point that is inside the original box
        if point_in_box(pred, box, rule.inclusive) or (
            rule.box_scale > 1.0 and point_in_box(pred, grow_box(box, rule, screen_size), rule.inclusive)
        ):
            return True
    if target_point is None:
        return False
    dx, dy = pred[0] - target_point[0], pred[1] - target_point[1]
    if rule.radius_max_side is not None:
        if rule.radius_frame == "prediction" and pred_size is not None:  # the distance in the model's image
            rw, rh = pred_size
            if math.hypot(dx * rw / width, dy * rh / height) <= rule.radius_max_side * max(rw, rh):
                return True
        elif math.hypot(dx, dy) <= rule.radius_max_side * max(width, height):
            return True
    if rule.radius_min_side is not None and math.hypot(dx, dy) < rule.radius_min_side * min(width, height):
        return True
    if rule.radius_normalised is not None:
        nd2 = (dx / width) ** 2 + (dy / height) ** 2
        # GUI-Libra tests d^2 < 0.05^2; AITW, GUI-Odyssey and UI-S1 test d <= threshold
        if nd2 < rule.radius_normalised**2 or (rule.inclusive and nd2 <= rule.radius_normalised**2):
            return True
    if not boxes and rule.radius_max_side is None and rule.radius_normalised is None and rule.radius_min_side is None:
        return (dx, dy) == (0.0, 0.0)
    return False

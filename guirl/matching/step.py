"""The step matcher: does a predicted action match one of a step's valid actions (A*_t)?

:func:`match_action` is the one definition of step success, shared by
offline evaluation (:mod:`guirl.eval.offline`), the step reward
(:mod:`guirl.rewards.step`), the replay environment, the judges, data
construction and the trainers. Its options:

- type: SWIPE and SCROLL are one type by default (guirl writes both as a
  content direction; ``merge_scroll_swipe=False`` splits them);
- target point: hits the target under the chosen :mod:`~guirl.matching.rules`
  rule;
- text (``value_rule``): ``exact`` (lower-cased, spaces collapsed), ``f1``
  (GUI-Libra's word F1 >= 0.5), ``anls`` (GUI-Odyssey's ``text_matching``:
  substring or ANLS >= 0.5, case kept), ``substring`` (InfiGUI-R1's and
  UI-S1's ``check_text``: lower-cased and stripped, either one contains the
  other - so an empty prediction matches), ``none`` (text not compared, as
  AITW's ``check_actions_match``). Key combos as sets; terminate status
  where given;
- scroll / swipe (``direction_rule``): ``exact`` (default: the content
  direction must agree), ``axis`` (AITW's ``_check_drag_actions_match``: same
  main axis, so up matches down), ``any`` (UI-S1's
  ``evaluate_android_control_action``: any swipe is right).

A prediction that is None or a ParseFailure matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from guirl.actions.frames import Frame
from guirl.actions.types import POINTED_TYPES, Action, ActionType, ParseFailure
from guirl.data.schema import A11yNode
from guirl.matching.rules import MatchRule, point_matches
from guirl.matching.text import anls_match, guilibra_f1, normalise_text

TEXT_TYPES = frozenset({ActionType.TYPE, ActionType.OPEN_APP, ActionType.ANSWER, ActionType.SELECT})
DIRECTION_TYPES = frozenset({ActionType.SCROLL, ActionType.SWIPE})
VALUE_RULES = ("exact", "f1", "anls", "substring", "none")
DIRECTION_RULES = ("exact", "axis", "any")
_AXIS = {"up": "vertical", "down": "vertical", "left": "horizontal", "right": "horizontal"}


@dataclass(frozen=True)
class StepMatch:
    """How one prediction fares against a step's valid actions."""

    type_match: bool
    needs_point: bool  # some valid action of this step is pointed
    grounded: bool  # same type and the point hits a pointed valid action
    success: bool


def in_screen(action: Action, width: int, height: int) -> Action:
    """``action`` with its coordinates in screen pixels of a ``width`` x ``height`` screen.

    A ``screen`` frame that carries no size is taken to be this screen."""
    screen = Frame.screen(width, height)
    if action.frame.kind == "screen" and action.frame.width is None:
        return action.model_copy(update={"frame": screen})
    return action.to_frame(screen)


def _same_type(a: ActionType, b: ActionType, merge_scroll_swipe: bool) -> bool:
    if merge_scroll_swipe and a in DIRECTION_TYPES and b in DIRECTION_TYPES:
        return True
    return a == b


def _is_pointed(action: Action) -> bool:
    """Click-like actions with a target; TYPE / SELECT only when their target is
    an element box (Mind2Web), not a bare point (GUI-Libra records one on Write)."""
    if action.type in POINTED_TYPES:
        return action.point is not None or action.box is not None
    return action.type in (ActionType.TYPE, ActionType.SELECT) and action.box is not None


def _text_matches(pred: str, gold: str, value_rule: str) -> bool:
    if value_rule == "f1":
        return guilibra_f1(pred, gold) >= 0.5
    if value_rule == "anls":
        return anls_match(pred, gold)
    if value_rule == "substring":
        p, g = pred.lower().strip(), gold.lower().strip()
        return p in g or g in p
    if value_rule == "none":
        return True
    return normalise_text(pred) == normalise_text(gold)


def _direction_matches(pred: str | None, gold: str, direction_rule: str) -> bool:
    if direction_rule == "any":
        return True
    if direction_rule == "axis":
        return pred is not None and _AXIS.get(pred) == _AXIS.get(gold)
    return pred == gold


def _value_matches(pred: Action, gold: Action, value_rule: str, direction_rule: str = "exact") -> bool:
    if gold.type in TEXT_TYPES and gold.text is not None:
        return _text_matches(pred.text or "", gold.text, value_rule)
    if gold.type is ActionType.KEY and gold.keys is not None:
        return set(pred.keys or ()) == set(gold.keys)
    if gold.type in DIRECTION_TYPES and gold.direction is not None:
        return _direction_matches(pred.direction, gold.direction, direction_rule)
    if gold.type is ActionType.TERMINATE and gold.status is not None:
        return pred.status == gold.status
    return True


def match_action(
    pred: Action | ParseFailure | None,
    valid_actions: list[Action],
    *,
    screen_size: tuple[int, int],
    a11y: list[A11yNode] | None = None,
    rule: MatchRule | str = "inclusive",
    value_rule: str = "exact",
    merge_scroll_swipe: bool = True,
    direction_rule: str = "exact",
) -> StepMatch:
    """Best match of ``pred`` over ``valid_actions`` (see module doc)."""
    if value_rule not in VALUE_RULES:
        raise ValueError(f"unknown value_rule {value_rule!r}; choose one of {VALUE_RULES}")
    if direction_rule not in DIRECTION_RULES:
        raise ValueError(f"unknown direction_rule {direction_rule!r}; choose one of {DIRECTION_RULES}")
    if not valid_actions:
        raise ValueError("a step needs at least one valid action to be scored; this one has none")
    width, height = screen_size
    needs_point = any(_is_pointed(v) for v in valid_actions)
    if not pred:  # ParseFailure or None: scores zero everywhere
        return StepMatch(False, needs_point, False, False)
    frame = pred.frame  # the image the prediction was written in, before it is brought to the screen
    pred_size = (frame.width, frame.height) if frame.kind != "relative" and frame.width is not None else None
    pred = in_screen(pred, width, height)
    best = StepMatch(False, needs_point, False, False)
    for gold in valid_actions:
        gold = in_screen(gold, width, height)
        if not _same_type(pred.type, gold.type, merge_scroll_swipe):
            continue
        point_ok = True
        if _is_pointed(gold):
            target = pred.target_point()
            point_ok = target is not None and point_matches(
                target,
                target_box=gold.box,
                target_point=gold.point,
                screen_size=screen_size,
                rule=rule,
                a11y=a11y,
                pred_size=pred_size,
            )
        success = point_ok and _value_matches(pred, gold, value_rule, direction_rule)
        candidate = StepMatch(True, needs_point, point_ok and _is_pointed(gold), success)
        best = max(best, candidate, key=lambda m: (m.success, m.grounded, m.type_match))
    return best

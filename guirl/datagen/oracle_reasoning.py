"""Templated reasoning from the a11y tree: observation -> intent -> element and place -> action.

Used by :class:`guirl.datagen.teachers.OracleTeacher`. Each of the four parts
has several phrasings; a seeded ``random.Random`` picks one, so the same
seed writes the same text and different steps read differently. The element
part names the target element's text and role, the screen region it lies in
(:func:`guirl.datagen.spatial.region_name`) and its labelled container.
"""

from __future__ import annotations

import random
import re

from guirl.actions import Action, ActionType, Frame
from guirl.data.schema import A11yNode, Step
from guirl.datagen.spatial import is_interactive, region_name

Box = tuple[float, float, float, float]

_OBSERVE = ("The screen shows {roots}.", "I see {roots} on the screen.", "Looking at the screenshot, there is {roots}.")
_FOCUS = (" The focus is on the {element}.", " The {element} has the focus.")
_INTENT = ("The task is: {goal} The next step is to {sub_goal}.",
           "My goal is: {goal} To move on, I need to {sub_goal}.",
           "Overall I must do this: {goal} Right now the step is to {sub_goal}.")
_INTENT_NO_SUBGOAL = ("The task is: {goal}", "My goal is: {goal}")
_NEXT = ("The next step is to {sub_goal}.", "Now I need to {sub_goal}.", "Right now the step is to {sub_goal}.")
_DONE = (" Steps done so far: {n}.", " {n} earlier actions are in the history.")
_PLACE = ("The {element} is in the {region} of the screen{inside}{coords}.",
          "I find the {element} in the {region} part of the screen{inside}{coords}.",
          "The element I need is the {element}, located in the {region} area{inside}{coords}.")
_VERB = {ActionType.CLICK: "click", ActionType.DOUBLE_CLICK: "double-click", ActionType.RIGHT_CLICK: "right-click",
         ActionType.TRIPLE_CLICK: "triple-click", ActionType.MIDDLE_CLICK: "middle-click",
         ActionType.LONG_PRESS: "long-press", ActionType.MOVE: "move the pointer onto", ActionType.DRAG: "drag"}
_POINTED_ACT = ("So I {verb} the {element}.", "I will {verb} it.", "Therefore I {verb} the {element}.")


def _element(node: A11yNode) -> str:
    text = " ".join(node.text.split())
    return f"'{text}' {node.role}" if text else node.role


def _screen_box(node: A11yNode, frame: Frame, size: tuple[int, int]) -> Box:
    screen = Frame.screen(*size)
    source = screen if frame.kind == "screen" and frame.width is None else frame
    x1, y1 = source.convert_point(node.box[:2], screen)
    x2, y2 = source.convert_point(node.box[2:], screen)
    return (x1, y1, x2, y2)


def target_node(step: Step, action: Action) -> A11yNode | None:
    """The a11y node an action works on: same box, else the smallest (interactive first) node under its point;
    for typing without a point, the focused node."""
    if not step.a11y:
        return None
    size = (step.screenshot.width, step.screenshot.height)
    boxes = [(_screen_box(n, step.a11y_frame, size), n) for n in step.a11y]
    if action.box is not None:
        same = [n for box, n in boxes if all(abs(a - b) <= 0.5 for a, b in zip(box, action.box, strict=True))]
        if same:
            return max(same, key=lambda n: (is_interactive(n), bool(n.text.strip())))
    point = action.target_point()
    if point is not None:
        under = [(box, n) for box, n in boxes if box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]]
        if under:  # interactive first, then the smallest box
            area = lambda box: (box[2] - box[0]) * (box[3] - box[1])  # noqa: E731
            return min(under, key=lambda bn: (not is_interactive(bn[1]), area(bn[0])))[1]
    focused = [n for n in step.a11y if n.focused]
    return focused[-1] if focused else None


_STOPWORDS = frozenset({"the", "a", "an", "to", "of", "in", "on", "with", "and", "or", "then", "it", "its"})


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOPWORDS}


def choose_target(step: Step, sub_goal: str | None, candidates: list[Action] | None = None) -> Action:
    """The valid action (of ``candidates``, default all) that best fits the sub-goal, so reasoning and action agree.

    Fit = words shared by the sub-goal and the action's description plus its
    target element's text and role; ties go to the recorded action, then to
    pointed actions (they need spatial reasoning), then to list order.
    """
    goal_words = _words(sub_goal or "")

    def key(indexed: tuple[int, Action]) -> tuple:
        index, action = indexed
        node = target_node(step, action) if action.target_point() is not None else None
        text = " ".join([action.description or "", node.text if node else "", node.role if node else ""])
        return (len(goal_words & _words(text)), action == step.action, action.target_point() is not None, -index)

    return max(enumerate(candidates or step.valid_actions), key=key)[1]


def _container(step: Step, node: A11yNode) -> A11yNode | None:
    """The nearest labelled ancestor of ``node`` (its window, dialog, list...)."""
    by_id = {n.id: n for n in step.a11y or []}
    parent, seen = node.parent, {node.id}
    while parent is not None and parent in by_id and parent not in seen:
        seen.add(parent)
        if by_id[parent].text.strip():
            return by_id[parent]
        parent = by_id[parent].parent
    return None


def _roots(step: Step) -> str:
    ids = {n.id for n in step.a11y or []}
    roots = [n for n in step.a11y or [] if (n.parent is None or n.parent not in ids) and n.text.strip()]
    dialogs = [n for n in step.a11y or [] if n.role.lower() in ("dialog", "alertdialog") and n not in roots]
    shown = [f"the {_element(n)}" for n in (roots + dialogs)[:4]]
    if not shown:
        return "a screen without labelled windows"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _coords(action: Action, size: tuple[int, int], coords: str) -> str:
    point = action.target_point()
    if coords == "none" or point is None:
        return ""
    if coords == "relative":
        x, y = Frame.screen(*size).convert_point(point, Frame.relative(1000))
        return f", around ({round(x)}, {round(y)}) in 0-1000 coordinates"
    return f", around ({round(point[0])}, {round(point[1])}) in screen pixels"


def _action_sentence(action: Action, node: A11yNode | None, rng: random.Random) -> str:
    kind = action.type
    element = _element(node) if node is not None else "target"
    if kind in _VERB:
        return rng.choice(_POINTED_ACT).format(verb=_VERB[kind], element=element)
    if kind is ActionType.TYPE:
        where = f" into the {element}" if node is not None else ""
        return rng.choice(("I type '{t}'{w}.", "Next I enter the text '{t}'{w}.")).format(t=action.text or "", w=where)
    if kind is ActionType.KEY:
        return rng.choice(("I press {k}.", "The right key here is {k}, so I press it.")).format(
            k="+".join(action.keys or ()))
    if kind in (ActionType.SCROLL, ActionType.SWIPE):
        where = f" in the {element}" if node is not None else ""
        verb = "scroll" if kind is ActionType.SCROLL else "swipe"
        return f"I {verb} {action.direction or 'down'}{where} to bring more content into view."
    if kind is ActionType.ANSWER:
        return rng.choice(("The answer is '{t}', so I report it.", "I can now answer: '{t}'.")).format(t=action.text)
    if kind is ActionType.TERMINATE:
        if action.status == "failure":
            return "The task cannot be completed, so I stop and report failure."
        return rng.choice(("Everything the task asks for is done, so I finish.", "The task is complete; I end it."))
    if kind is ActionType.SELECT:
        return f"I choose the option '{action.text}' in the {element}."
    return f"I {action.description or kind.value.replace('_', ' ')}."


def oracle_reasoning(step: Step, action: Action, goal: str, sub_goal: str | None, rng: random.Random,
                     coords: str = "none", style: str = "full") -> str:
    """Observation, intent, target element and its place, then the action (``action`` in screen pixels).

    ``style="compact"`` keeps the spatial part only: the next step (no goal restated, no screen inventory), the target
    element and its place, the action; about half the full text's length, for a student too small to write
    the full one (a guirl departure, docs/reasoning_injection.md)."""
    if style not in ("full", "compact"):
        raise ValueError(f"style must be 'full' or 'compact', got {style!r}")
    size = (step.screenshot.width, step.screenshot.height)
    next_step = sub_goal or action.description
    if style == "compact":
        parts = [rng.choice(_NEXT).format(sub_goal=_lower_first(next_step))] if next_step else []
        parts += _place_and_action(step, action, size, coords, rng)
        return " ".join(parts)
    parts = [rng.choice(_OBSERVE).format(roots=_roots(step))]
    focused = [n for n in step.a11y or [] if n.focused]
    if focused and rng.random() < 0.5:
        parts[-1] += rng.choice(_FOCUS).format(element=_element(focused[-1]))
    goal_text = goal.strip() if goal.strip().endswith((".", "?", "!")) else goal.strip() + "."
    if next_step:
        parts.append(rng.choice(_INTENT).format(goal=goal_text, sub_goal=_lower_first(next_step)))
    else:
        parts.append(rng.choice(_INTENT_NO_SUBGOAL).format(goal=goal_text))
    if step.history and rng.random() < 0.5:
        parts[-1] += rng.choice(_DONE).format(n=len(step.history))
    return " ".join(parts + _place_and_action(step, action, size, coords, rng))


def _place_and_action(step: Step, action: Action, size: tuple[int, int], coords: str, rng: random.Random) -> list[str]:
    """The target element's place on the screen (when the action has one) and the action sentence."""
    parts = []
    node = target_node(step, action) if action.type not in (ActionType.TERMINATE, ActionType.ANSWER) else None
    if node is not None and (action.target_point() is not None or action.type is ActionType.TYPE):
        box = _screen_box(node, step.a11y_frame, size)
        container = _container(step, node)
        inside = f", inside the {_element(container)}" if container is not None else ""
        parts.append(rng.choice(_PLACE).format(element=_element(node), region=region_name(box, size),
                                               inside=inside, coords=_coords(action, size, coords)))
    parts.append(_action_sentence(action, node, rng))
    return parts


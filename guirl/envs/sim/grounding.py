"""Single-step grounding tasks: "click the 'Export' button" on a varied screen.

The screen is reached by a short seeded random walk of clicks from the
domain's start; the target is a clickable widget whose text is unique on that
screen. Success is read from the world state: the last widget a click
activated (``last_click``) is the target.
"""

from __future__ import annotations

import random

from guirl.envs.sim.engine import World
from guirl.envs.sim.tasks import Milestone, Task

PHRASES = {
    "button": "the '{t}' button", "icon": "the '{t}' icon", "link": "the link '{t}'", "listitem": "'{t}' in the list",
    "tab": "the '{t}' tab", "checkbox": "the '{t}' checkbox", "radio": "the '{t}' option", "switch": "the '{t}' switch",
    "textbox": "the '{t}' text field", "spinbutton": "the '{t}' field", "combobox": "the '{t}' drop-down",
    "menu": "the '{t}' menu", "menuitem": "the '{t}' menu item",
}


def grounding_task(world: World, rng: random.Random, walk: int = 3) -> Task:
    """Walk ``0..walk`` random clicks from the start, then pick a target on that screen."""
    for _ in range(rng.randint(0, walk)):
        screen = world.screen()
        options = [w for w in screen.widgets if w.enabled and w.click is not None and screen.hit(*_centre(w)) is w]
        if not options:
            break
        target = rng.choice(options)
        world.state, _ = world.simulate(world.state, _click(target, world))
    world.state.pop("last_click", None)  # the walk's clicks are not the answer
    screen = world.screen()
    counts: dict[str, int] = {}
    for w in screen.widgets:
        counts[w.text] = counts.get(w.text, 0) + 1
    targets = [w for w in screen.widgets if w.enabled and w.click is not None and w.text and counts[w.text] == 1
               and w.role in PHRASES and screen.hit(*_centre(w)) is w]
    target = rng.choice(targets)
    verb = "Tap" if world.domain.name == "mobile" else "Click"
    instruction = f"{verb} {PHRASES[target.role].format(t=target.text)}."
    target_id = target.id
    milestone = Milestone(instruction.rstrip("."), lambda s, v: s.get("last_click") == target_id)
    return Task(f"{world.domain.name}.ground", world.domain.name, instruction, [milestone], single_step=True)


def _centre(widget) -> tuple[float, float]:
    x1, y1, x2, y2 = widget.box
    return ((x1 + x2) / 2, (y1 + y2) / 2)


def _click(widget, world: World):
    from guirl.actions.types import Action, ActionType

    return Action(type=ActionType.CLICK, point=_centre(widget), frame=world.frame)

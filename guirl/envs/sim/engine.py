"""The world engine: state, screens, and what an Action does to them.

World state is a flat ``dict`` of immutable values (str, int, bool, tuple),
so copying it is cheap and two states compare by :func:`state_key`. A domain
(desktop, web, mobile) builds the :class:`Screen` from the state and reduces
its own commands; the engine handles the generic ones (``set``, ``toggle``,
``focus``, ``seq``, ``scroll``) and turns every Action into a command by
hit-testing. Nothing here raises on a bad action: unknown types, points off
screen, typing with no focused field... have no effect and say so in info.
"""

from __future__ import annotations

from typing import Any, Protocol

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.envs.sim.content import Content
from guirl.envs.sim.presets import Preset
from guirl.envs.sim.widgets import Command, Screen

State = dict[str, Any]
#: state fields that record what just happened, not where the world is
EPHEMERAL = frozenset({"last_click"})
_CLICKS = {ActionType.CLICK: "click", ActionType.DOUBLE_CLICK: "double", ActionType.RIGHT_CLICK: "right",
           ActionType.LONG_PRESS: "right", ActionType.TRIPLE_CLICK: "click"}


class Domain(Protocol):
    name: str

    def initial_state(self, content: Content) -> State: ...

    def build(self, state: State, content: Content, preset: Preset) -> Screen: ...

    def reduce(self, state: State, content: Content, command: Command) -> None: ...


def _lasting(state: State) -> State:
    if "last_click" in state:
        return {k: v for k, v in state.items() if k not in EPHEMERAL}
    return state


def state_key(state: State) -> frozenset:
    """Hashable identity of a state (ephemeral fields left out)."""
    return frozenset(_lasting(state).items())


def full_key(state: State) -> frozenset:
    """Hashable identity of a state including what the last action activated."""
    return frozenset(state.items())


class World:
    """One domain's world: content, preset and the current state."""

    def __init__(self, domain: Domain, content: Content, preset: Preset, state: State | None = None):
        self.domain = domain
        self.content = content
        self.preset = preset
        self.state: State = state if state is not None else domain.initial_state(content)
        self._screens: dict[frozenset, Screen] = {}

    @property
    def frame(self) -> Frame:
        return Frame.screen(self.preset.width, self.preset.height)

    def screen(self, state: State | None = None) -> Screen:
        """The screen of ``state`` (default: the current one), cached by state."""
        state = self.state if state is None else state
        key = state_key(state)
        screen = self._screens.get(key)
        if screen is None:
            if len(self._screens) > 4096:
                self._screens.clear()
            screen = self.domain.build(state, self.content, self.preset)
            self._screens[key] = screen
        return screen

    # -- applying actions -------------------------------------------------------
    def simulate(self, state: State, action: Action) -> tuple[State, dict[str, Any]]:
        """The state after ``action`` from ``state`` (``state`` is left unchanged) and an info dict."""
        screen = self.screen(state)
        frame = Frame.screen(screen.width, screen.height)
        info: dict[str, Any] = {"effect": "no_effect"}
        try:
            action = action.to_frame(frame)
        except ValueError as err:  # a frame without a size cannot be converted
            return state, {"effect": "invalid_action", "reason": str(err)}
        command = self._command(screen, state, action, info)
        if command is None:
            return state, info
        new = dict(state)
        new.pop("last_click", None)
        self.run(new, command)
        if info.get("clicked"):
            new["last_click"] = info["clicked"]
        if _lasting(new) != _lasting(state):
            info["effect"] = "changed"
        return new, info

    def _command(self, screen: Screen, state: State, action: Action, info: dict) -> Command | None:
        kind = action.type
        point = action.target_point()
        if kind in _CLICKS or kind in (ActionType.SELECT, ActionType.SCROLL, ActionType.SWIPE):
            if point is None and kind not in (ActionType.SCROLL, ActionType.SWIPE):
                info["effect"] = "invalid_action"
                info["reason"] = f"{kind.value} needs a point"
                return None
            if point is not None and not (0 <= point[0] < screen.width and 0 <= point[1] < screen.height):
                info["effect"] = "out_of_screen"
                return None
        if kind in _CLICKS:
            widget = screen.hit(*point)
            if widget is None or not widget.enabled:
                return None
            info["hit"] = widget.id
            command = getattr(widget, _CLICKS[kind])
            if command is None and kind is ActionType.DOUBLE_CLICK:
                command = widget.click  # a double click still clicks
            if command is not None and kind in (ActionType.CLICK, ActionType.TRIPLE_CLICK):
                info["clicked"] = widget.id
            if command is not None and kind is ActionType.TRIPLE_CLICK and screen.type_target is not None:
                command = ("seq", command, ("selall",))
            return command
        if kind is ActionType.SELECT:
            widget = screen.hit(*point)
            options = getattr(widget, "options", None) if widget else None
            if not options or action.text not in options:
                info["reason"] = "no drop-down with that option here"
                return None
            return options[action.text]
        if kind in (ActionType.SCROLL, ActionType.SWIPE):
            return self._scroll_command(screen, action, point)
        if kind is ActionType.TYPE:
            if screen.type_target is None or not action.text:
                info["reason"] = "no focused text field"
                return None
            return ("type", screen.type_target, action.text)
        if kind is ActionType.OPEN_APP:
            launch = getattr(self.domain, "open_app", None)
            command = launch(action.text or "") if launch else None
            if command is None:
                info["reason"] = "no app of that name here"
            return command
        if kind in (ActionType.KEY, ActionType.ENTER, ActionType.BACK, ActionType.HOME):
            keys = action.keys or (kind.value,)
            return screen.keymap.get(keys) or self._generic_key(screen, keys)
        info["effect"] = "unsupported"
        return None

    def _scroll_command(self, screen: Screen, action: Action, point) -> Command | None:
        direction = action.direction
        if direction is None and action.type is ActionType.SWIPE and point and action.end_point:
            dy = action.end_point[1] - point[1]
            direction = "down" if dy < 0 else "up"  # finger moves up -> content shows what is below
        if direction not in ("up", "down"):
            return None
        if point is not None:
            area = screen.scroll_area_at(*point)
        else:
            area = next((w.scroll for w in screen.widgets if w.scroll), None)
        if area is None or area not in screen.scroll_limits:
            return None
        limit, step = screen.scroll_limits[area]
        return ("scroll", area, step if direction == "down" else -step, limit)

    @staticmethod
    def _generic_key(screen: Screen, keys: tuple[str, ...]) -> Command | None:
        if screen.type_target is not None:
            if keys == ("ctrl", "a"):
                return ("selall",)
            if keys == ("backspace",):
                return ("backspace", screen.type_target)
        return None

    # -- commands ---------------------------------------------------------------
    def run(self, state: State, command: Command) -> None:
        """Apply ``command`` to ``state`` in place."""
        op = command[0]
        if op == "seq":
            for sub in command[1:]:
                self.run(state, sub)
        elif op == "set":
            for i in range(1, len(command), 2):
                state[command[i]] = command[i + 1]
        elif op == "toggle":
            state[command[1]] = not state.get(command[1], False)
        elif op == "focus":
            state["focus"] = command[1]
            state["selall"] = bool(len(command) > 2 and command[2])
        elif op == "selall":
            state["selall"] = True
        elif op == "type":
            field, text = command[1], command[2]
            old = "" if state.get("selall") else str(state.get(field, ""))
            state[field] = (old + text)[:60]
            state["selall"] = False
        elif op == "backspace":
            state[command[1]] = "" if state.get("selall") else str(state.get(command[1], ""))[:-1]
            state["selall"] = False
        elif op == "scroll":
            key = f"scroll.{command[1]}"
            limit = command[3]
            state[key] = max(0, min(limit, state.get(key, 0) + command[2]))
        else:
            self.domain.reduce(state, self.content, command)


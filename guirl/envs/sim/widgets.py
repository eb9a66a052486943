"""Widgets, screens and hit-testing for the built-in GUI world.

A :class:`Screen` is the flat, drawing-ordered list of :class:`Widget` s a
domain builds from the world state, plus the keyboard map of that screen.
Widgets carry *commands* (plain tuples such as ``("open_folder", "Music")``)
that the domain's reducer applies; the engine never interprets them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guirl.data.schema import A11yNode

Box = tuple[int, int, int, int]
Command = tuple


@dataclass
class Widget:
    """One on-screen element.

    ``role`` is the accessibility role (button, icon, textbox, checkbox, radio,
    combobox, menu, menuitem, tab, dialog, list, listitem, link, text, ...);
    ``style`` picks how it is drawn. ``click`` / ``double`` / ``right`` are the
    commands a click, double-click or right-click (long press) sends; a widget
    without any is inert. ``scroll`` names the scroll area a wheel or swipe
    over the widget moves.
    """

    id: str
    role: str
    text: str
    box: Box
    style: str = ""
    parent: str | None = None
    click: Command | None = None
    double: Command | None = None
    right: Command | None = None
    scroll: str | None = None
    enabled: bool = True
    focused: bool = False
    checked: bool | None = None
    value: str | None = None
    modal: bool = False
    options: dict[str, Command] | None = None  # drop-down: option text -> command

    def contains(self, x: float, y: float) -> bool:
        x1, y1, x2, y2 = self.box
        return x1 <= x < x2 and y1 <= y < y2

    @property
    def interactive(self) -> bool:
        return self.enabled and (self.click is not None or self.double is not None or self.right is not None)


@dataclass
class Screen:
    """Everything drawn at one step, topmost widget last."""

    width: int
    height: int
    widgets: list[Widget]
    keymap: dict[tuple[str, ...], Command] = field(default_factory=dict)
    type_target: str | None = None  # state field that typed text goes into
    theme: str = "desktop"
    scroll_limits: dict[str, tuple[int, int]] = field(default_factory=dict)  # area -> (max offset, step)

    def hit(self, x: float, y: float) -> Widget | None:
        """The topmost widget under (x, y); a modal dialog blocks what is beneath it."""
        for widget in reversed(self.widgets):
            if widget.contains(x, y) and (widget.interactive or widget.modal or widget.scroll):
                return widget
            if widget.modal:  # outside the dialog: blocked
                return None
        return None

    def scroll_area_at(self, x: float, y: float) -> str | None:
        for widget in reversed(self.widgets):
            if widget.scroll and widget.contains(x, y):
                return widget.scroll
            if widget.modal and not widget.contains(x, y):
                return None
        return None

    def a11y(self) -> list[A11yNode]:
        """The accessibility tree (parents come before children)."""
        return [
            A11yNode(
                id=w.id,
                role=w.role,
                text=w.text,
                box=tuple(float(v) for v in w.box),
                parent=w.parent,
                enabled=w.enabled,
                focused=w.focused,
                checked=w.checked,
                value=w.value,
            )
            for w in self.widgets
        ]

    def find(self, widget_id: str) -> Widget | None:
        for widget in self.widgets:
            if widget.id == widget_id:
                return widget
        return None

"""Building blocks the domains lay screens out with (geometry only, no drawing)."""

from __future__ import annotations

from guirl.envs.sim.presets import Preset
from guirl.envs.sim.widgets import Box, Command, Screen, Widget


def text_width(text: str, font: int) -> int:
    """Approximate drawn width of ``text`` (wide enough for the default font)."""
    return int(len(text) * font * 0.62) + 2


class Builder:
    """Accumulates widgets top to bottom in drawing order."""

    def __init__(self, preset: Preset, theme: str):
        self.p = preset
        self.widgets: list[Widget] = []
        self.keymap: dict[tuple[str, ...], Command] = {}
        self.type_target: str | None = None
        self.theme = theme
        self.scroll_limits: dict[str, tuple[int, int]] = {}

    def add(self, id: str, role: str, text: str, box: Box, **kw) -> Widget:
        box = tuple(int(v) for v in box)
        widget = Widget(id=id, role=role, text=text, box=box, **kw)
        self.widgets.append(widget)
        return widget

    def key(self, *pairs: tuple[tuple[str, ...], Command | None]) -> None:
        for keys, command in pairs:
            if command is not None:
                self.keymap[keys] = command

    def screen(self) -> Screen:
        return Screen(self.p.width, self.p.height, self.widgets, self.keymap, self.type_target, self.theme,
                      self.scroll_limits)

    # -- composite widgets --------------------------------------------------------
    def button(self, id: str, text: str, x: int, y: int, command: Command | None, parent: str | None = None,
               style: str = "button", width: int | None = None, height: int | None = None, role: str = "button",
               **kw) -> Widget:
        p = self.p
        w = width or max(text_width(text, p.font) + 2 * p.pad, int(p.row * 1.4))
        h = height or p.control
        return self.add(id, role, text, (x, y, x + w, y + h), style=style, click=command, parent=parent, **kw)

    def textbox(self, id: str, label: str, box: Box, value: str, field: str, state: dict, parent: str | None,
                select_all: bool = False, role: str = "textbox", style: str = "field") -> Widget:
        focused = state.get("focus") == field
        if focused:
            self.type_target = field
        return self.add(id, role, label, box, style=style, click=("focus", field, select_all), parent=parent,
                        focused=focused, value=value)

    def checkbox(self, id: str, text: str, x: int, y: int, checked: bool, command: Command, parent: str | None,
                 role: str = "checkbox", style: str = "checkbox") -> Widget:
        p = self.p
        h = p.control
        w = text_width(text, p.font) + h + 2 * p.pad
        return self.add(id, role, text, (x, y, x + w, y + h), style=style, click=command, parent=parent,
                        checked=checked)

    def dialog(self, id: str, title: str, width: int, height: int, close: Command | None) -> tuple[Box, int]:
        """A modal dialog centred on screen; returns its box and the y where its content starts."""
        p = self.p
        width = min(width, p.width - 2 * p.pad, p.font * 40)
        height = min(height, p.height - 2 * p.pad)
        x1, y1 = (p.width - width) // 2, (p.height - height) // 2
        box = (x1, y1, x1 + width, y1 + height)
        self.add(id, "dialog", title, box, style="dialog", modal=True)
        bar = p.control
        if close is not None:
            self.add(f"{id}.close", "button", "Close", (box[2] - bar, y1, box[2], y1 + bar), style="close",
                     click=close, parent=id)
            self.key((("escape",), close))
        return box, y1 + bar + p.pad

    def combobox(self, id: str, label: str, box: Box, value: str, options: list[str], field: str, state: dict,
                 parent: str | None) -> None:
        """A drop-down: clicking opens the option list below it (state['dd'] = id); SELECT picks directly."""
        opts = {o: ("set", field, o, "dd", None) for o in options}
        is_open = state.get("dd") == id
        self.add(id, "combobox", label, box, style="combo", click=("set", "dd", None if is_open else id),
                 parent=parent, value=value, options=opts)
        if is_open:
            self.key((("escape",), ("set", "dd", None)))
            h = box[3] - box[1]
            top = box[3]
            if top + h * len(options) > self.p.height:  # open upwards when there is no room below
                top = box[1] - h * len(options)
            lst = self.add(f"{id}.list", "list", label, (box[0], top, box[2], top + h * len(options)),
                           style="popup", parent=id, modal=True)
            for i, option in enumerate(options):
                y = top + i * h
                self.add(f"{id}.opt{i}", "listitem", option, (box[0], y, box[2], y + h), style="option",
                         click=opts[option], parent=lst.id, checked=option == value)

    def scroll_rows(self, area: str, count: int, state: dict, top: int, bottom: int, row: int) -> tuple[int, int]:
        """Register a scroll area; returns (first visible index, rows visible)."""
        visible = max(1, min(self.p.max_rows, (bottom - top) // row))
        limit = max(0, count - visible)
        first = min(state.get(f"scroll.{area}", 0), limit)
        if limit:
            self.scroll_limits[area] = (limit, max(1, visible - 1))
        return first, visible

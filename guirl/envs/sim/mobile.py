"""Mobile domain: a phone home screen, app screens, back/home buttons, scrolling lists.

Apps: Settings (a scrolling list of settings, each with its own page and
switch), Contacts (a scrolling list, detail pages, a new-contact form),
Camera (asks for a permission first) and a few simple apps that are only
there to be opened by mistake. State: ``app``, ``page``, ``stack`` (back
history), ``m.<setting>``, ``added`` (new contacts), ``c.name`` / ``c.phone``,
``dlg``, ``focus``.
"""

from __future__ import annotations

from guirl.envs.sim.content import MOBILE_SETTINGS, Content
from guirl.envs.sim.kit import Builder
from guirl.envs.sim.presets import Preset
from guirl.envs.sim.widgets import Screen

APPS = ("Settings", "Contacts", "Camera", "Clock", "Notes", "Maps", "Music", "Mail")
DIALOGS = {"permission": ("Allow Camera to take pictures?", ("Allow", "Deny")),
           "appinfo": ("App info", ("OK",)), "calling": ("Calling...", ("End call",))}


class Mobile:
    name = "mobile"

    def initial_state(self, content: Content) -> dict:
        state = {"app": "home", "page": "main", "stack": (), "added": (), "c.name": "", "c.phone": "", "dlg": None,
                 "focus": None, "selall": False, "dd": None}
        for name, on in content.phone_settings.items():
            state[f"m.{name}"] = on
        return state

    def open_app(self, name: str) -> tuple | None:
        """The command an ``open_app`` action sends (app names match case-insensitively)."""
        match = [app for app in APPS if app.lower() == name.strip().lower()]
        return ("launch", match[0]) if match else None

    def contacts(self, state: dict, content: Content) -> dict[str, str]:
        book = dict(content.contacts)
        book.update(dict(state["added"]))
        return dict(sorted(book.items()))

    # -- screens --------------------------------------------------------------------------------
    def build(self, state: dict, content: Content, preset: Preset) -> Screen:
        b = Builder(preset, "mobile")
        p = preset
        status_h, nav_h = int(p.row * 0.4), p.control
        b.add("phone", "window", "Phone", (0, 0, p.width, p.height), style="phone")
        b.add("status", "text", "12:30", (0, 0, p.width, status_h), style="statusbar", parent="phone")
        top, bottom = status_h, p.height - nav_h
        if state["app"] == "home":
            self._home(b, top, content)
        else:
            title = state["app"] if state["page"] == "main" else state["page"].split(":")[-1]
            bar = max(p.control, int(p.row * 0.9))
            b.add("appbar", "toolbar", title, (0, top, p.width, top + bar), style="appbar", parent="phone")
            b.add("appbar.back", "button", "Navigate up", (0, top, bar, top + bar), style="arrow",
                  click=("mback",), parent="appbar")
            getattr(self, f"_{state['app'].lower()}", self._simple)(b, state, content, top + bar + p.pad // 2, bottom)
        w3 = p.width // 3
        for i, (name, command) in enumerate((("Back", ("mback",)), ("Home", ("mhome",)), ("Recents", None))):
            b.add(f"nav.{name}", "button", name, (i * w3, bottom, (i + 1) * w3, p.height), style=f"nav_{name}",
                  click=command, parent="phone")
        b.key((("back",), ("mback",)), (("home",), ("mhome",)), (("escape",), ("mback",)))
        if state["dlg"]:
            self._dialog(b, state)
        return b.screen()

    def _home(self, b: Builder, top: int, content: Content) -> None:
        p = b.p
        cols = 3 if p.width < 500 else 4
        cell_w = p.width // cols
        cell_h = p.icon + p.font + 3 * p.pad
        for i, name in enumerate(content.shuffled(APPS)):
            x, y = (i % cols) * cell_w, top + p.pad + (i // cols) * cell_h
            b.add(f"app.{name}", "icon", name, (x + p.pad // 2, y, x + cell_w - p.pad // 2, y + cell_h - p.pad),
                  style="app_icon", click=("launch", name), right=("set", "dlg", "appinfo"), parent="phone")

    def _rows(self, b: Builder, state: dict, area: str, labels: list[str], commands: list[tuple], top: int,
              bottom: int, values: list[str] | None = None) -> None:
        p = b.p
        first, visible = b.scroll_rows(area, len(labels), state, top, bottom, p.row)
        b.add(f"{area}.list", "list", area, (0, top, p.width, bottom), style="list", parent="phone", scroll=area)
        values = values or [None] * len(labels)
        for i, (label, command, value) in enumerate(list(zip(labels, commands, values))[first:first + visible]):
            y = top + i * p.row
            b.add(f"{area}.{label}", "listitem", label, (0, y, p.width, y + p.row - 2), style="row", click=command,
                  parent=f"{area}.list", value=value)

    def _settings(self, b: Builder, state: dict, content: Content, top: int, bottom: int) -> None:
        p = b.p
        if state["page"] == "main":
            names = list(MOBILE_SETTINGS)
            values = ["On" if state[f"m.{n}"] else "Off" for n in names]
            self._rows(b, state, "settings", names, [("open", n) for n in names], top, bottom, values)
            return
        name = state["page"]
        h = p.control
        b.checkbox(f"switch.{name}", f"Use {name}", p.pad, top + p.pad, state[f"m.{name}"], ("toggle", f"m.{name}"),
                   "phone", role="switch", style="switch")
        b.add("setting.help", "text", "On" if state[f"m.{name}"] else "Off", (p.pad, top + 2 * p.pad + h,
              p.width - p.pad, top + 2 * p.pad + 2 * h), style="body", parent="phone")

    def _contacts(self, b: Builder, state: dict, content: Content, top: int, bottom: int) -> None:
        p = b.p
        page = state["page"]
        h = p.control
        if page == "main":
            book = list(self.contacts(state, content))
            self._rows(b, state, "contacts", book, [("open", f"detail:{n}") for n in book], top, bottom)
            bar = next(w for w in b.widgets if w.id == "appbar").box  # the add button sits in the app bar
            size = bar[3] - bar[1]
            b.add("fab.add", "button", "Add contact", (p.width - size, bar[1], p.width, bar[3]), style="fab",
                  click=("open", "New contact"), parent="appbar")
        elif page.startswith("detail:"):
            name = page.split(":", 1)[1]
            b.add("contact.name", "text", name, (p.pad, top, p.width - p.pad, top + h), style="heading", parent="phone")
            b.add("contact.phone", "text", self.contacts(state, content).get(name, ""),
                  (p.pad, top + h + p.pad, p.width - p.pad, top + 2 * h + p.pad), style="body", parent="phone")
            b.button("btn.call", "Call", p.pad, top + 2 * h + 3 * p.pad, ("set", "dlg", "calling"), "phone", height=h)
        else:  # new contact form
            y = top + p.pad
            for field, label in (("c.name", "Name"), ("c.phone", "Phone")):
                b.textbox(f"field.{label}", label, (p.pad, y, p.width - p.pad, y + h), state[field], field, state,
                          "phone")
                y += h + p.pad
            b.button("btn.save", "Save", p.pad, y, ("save_contact",), "phone", height=h)
            if state["focus"] == "c.name":
                b.key((("enter",), ("focus", "c.phone")))

    def _simple(self, b: Builder, state: dict, content: Content, top: int, bottom: int) -> None:
        p = b.p
        b.add("app.body", "text", f"{state['app']} is empty", (p.pad, top, p.width - p.pad, top + p.row),
              style="body", parent="phone")

    def _dialog(self, b: Builder, state: dict) -> None:
        p = b.p
        b.keymap.clear()
        b.type_target = None
        close = ("set", "dlg", None)
        title, buttons = DIALOGS[state["dlg"]]
        box, _ = b.dialog(f"dlg.{state['dlg']}", title, int(p.width * 0.9), 2 * p.row + 2 * p.pad, None)
        h = p.control
        x = box[0] + p.pad
        for label in buttons:
            w = b.button(f"dlg.{label}", label, x, box[3] - h - p.pad, close, f"dlg.{state['dlg']}", height=h)
            x = w.box[2] + p.pad
        b.key((("back",), close), (("escape",), close))

    # -- commands -------------------------------------------------------------------------------
    def reduce(self, state: dict, content: Content, command: tuple) -> None:
        op = command[0]
        here = (state["app"], state["page"])
        if op == "launch":
            state.update(app=command[1], page="main", stack=state["stack"] + (here,), focus=None,
                         dlg="permission" if command[1] == "Camera" else None)
            _clear_scroll(state)
        elif op == "open":
            state.update(page=command[1], stack=state["stack"] + (here,), focus=None)
            if command[1] == "New contact":
                state.update({"c.name": "", "c.phone": ""})
        elif op == "mback":
            if state["stack"]:
                app, page = state["stack"][-1]
                state.update(app=app, page=page, stack=state["stack"][:-1], focus=None)
                if app == "home":
                    _clear_scroll(state)
        elif op == "mhome":
            state.update(app="home", page="main", stack=(), focus=None)
            _clear_scroll(state)
        elif op == "save_contact" and state["c.name"].strip() and state["c.phone"].strip():
            state["added"] = state["added"] + ((state["c.name"].strip(), state["c.phone"].strip()),)
            state.update(page="main", stack=state["stack"][:-1], focus=None)


def _clear_scroll(state: dict) -> None:
    for key in [k for k in state if k.startswith("scroll.")]:
        del state[key]

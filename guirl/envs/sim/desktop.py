"""Desktop domain: desktop icons, a file manager, a text editor with menus, a settings window.

State fields: ``app`` (home/files/editor/settings), ``dlg`` (open dialog),
``menu`` (open menu), ``sel`` (selected icon or file), ``folder`` / ``fhist``
(file manager location and back history), ``doc`` / ``text`` (editor),
``saved`` / ``exported`` (what was written), ``tab`` and ``p.<setting>`` /
``s.<setting>`` (settings being edited / saved), ``focus``, ``dd``.
"""

from __future__ import annotations

from guirl.envs.sim.content import SETTINGS_TABS, Content
from guirl.envs.sim.kit import Builder
from guirl.envs.sim.presets import Preset
from guirl.envs.sim.widgets import Screen

APPS = ("Files", "Editor", "Settings", "Trash", "Terminal")
MENUS = {
    "File": (("New", ("new",), ("ctrl", "n")), ("Save", ("save",), ("ctrl", "s")),
             ("Save As...", ("set", "dlg", "save", "fname", ""), ("ctrl", "shift", "s")),
             ("Export...", ("set", "dlg", "export", "fmt", "Markdown"), ("ctrl", "e")),
             ("Close", ("close_app",), ("ctrl", "w"))),
    "Edit": (("Select All", ("seq", ("focus", "text"), ("selall",)), None), ("Clear", ("set", "text", ""), None)),
    "Help": (("About", ("set", "dlg", "about"), None),),
}
FORMATS = ["PDF", "HTML", "Markdown"]
SETTING_NAMES = [n for checks, nums in SETTINGS_TABS.values() for n in checks + nums]
DIALOG_TEXT = {"about": ("About Editor", "Editor 2.1 - a simple text editor"),
               "error": ("Error", "The application could not start"),
               "props": ("Properties", "Size: 4 KB  Owner: you")}


class Desktop:
    name = "desktop"

    def initial_state(self, content: Content) -> dict:
        state = {"app": "home", "dlg": None, "menu": None, "sel": None, "folder": None, "fhist": (),
                 "doc": None, "text": "", "saved": (), "exported": (), "msg": "", "tab": "General", "focus": None,
                 "selall": False, "dd": None, "fname": "", "fmt": "Markdown"}
        for name in SETTING_NAMES:
            state[f"s.{name}"] = _val(content.settings[name])
            state[f"p.{name}"] = state[f"s.{name}"]
        return state

    # -- screens ----------------------------------------------------------------------
    def build(self, state: dict, content: Content, preset: Preset) -> Screen:
        b = Builder(preset, "desktop")
        p = preset
        b.add("desktop", "window", "Desktop", (0, 0, p.width, p.height), style="wallpaper")
        task_h = p.taskbar
        b.add("taskbar", "toolbar", "Taskbar", (0, p.height - task_h, p.width, p.height), style="taskbar")
        app = state["app"]
        if app == "home":
            self._home(b, state, content)
        else:
            titles = {"files": f"Files - {state['folder'] or 'Home'}", "settings": "Settings",
                      "editor": f"Editor - {(state['doc'] or 'untitled').split('/')[-1]}"}
            top = self._window(b, state, titles[app])
            getattr(self, f"_{app}")(b, state, content, top)
        if state["dlg"]:
            self._dialog(b, state)
        return b.screen()

    def _home(self, b: Builder, state: dict, content: Content) -> None:
        p = b.p
        cell_w, cell_h = p.icon + 3 * p.pad + p.font * 2, p.icon + p.font + 3 * p.pad
        cols = max(1, (p.width - p.pad) // cell_w)
        for i, name in enumerate(content.shuffled(APPS)):
            x, y = p.pad + (i % cols) * cell_w, p.pad + (i // cols) * cell_h
            b.add(f"icon.{name}", "icon", name, (x, y, x + cell_w - p.pad, y + cell_h - p.pad), style="app_icon",
                  parent="desktop", click=("set", "sel", name), double=("open_app", name),
                  focused=state["sel"] == name)
        if state["sel"]:
            b.key((("enter",), ("open_app", state["sel"])))
        b.key((("escape",), ("set", "sel", None)))

    def _window(self, b: Builder, state: dict, title: str) -> int:
        p = b.p
        bar = p.control
        b.add("window", "window", title, (0, 0, p.width, p.height - p.taskbar), style="window")
        b.add("window.title", "text", title, (0, 0, p.width, bar), style="titlebar", parent="window")
        b.add("window.close", "button", "Close", (p.width - bar, 0, p.width, bar), style="close",
              click=("close_app",), parent="window")
        b.key((("ctrl", "w"), ("close_app",)))
        return bar

    def _files(self, b: Builder, state: dict, content: Content, top: int) -> None:
        p = b.p
        h = p.control
        y = top + p.pad // 2
        back = ("back",) if state["fhist"] else None
        b.button("files.back", "Back", p.pad, y, back, "window", height=h, enabled=back is not None)
        home_x = b.widgets[-1].box[2] + p.pad
        b.button("files.home", "Home", home_x, y, ("goto", None), "window", height=h)
        b.key((("alt", "left"), back), (("backspace",), back))
        y += h + p.pad
        left = p.pad
        if p.width >= 800:  # sidebar with every folder on wide screens
            side_w = int(p.width * 0.18)
            for i, folder in enumerate(content.folders):
                b.add(f"side.{folder}", "link", folder, (p.pad, y + i * p.row, side_w, y + (i + 1) * p.row),
                      style="side", click=("goto", folder), parent="window", focused=state["folder"] == folder)
            left = side_w + p.pad
        folder = state["folder"]
        items = list(content.folders) if folder is None else list(content.folders.get(folder, ()))
        bottom = p.height - p.taskbar - p.pad
        first, visible = b.scroll_rows("files", len(items), state, y, bottom, p.row)
        b.add("files.list", "list", folder or "Home", (left, y, p.width - p.pad, bottom), style="list",
              parent="window", scroll="files")
        if not items:
            b.add("files.empty", "text", "This folder is empty", (left, y, p.width - p.pad, y + p.row), parent="files.list")
        for i, name in enumerate(items[first:first + visible]):
            ry = y + i * p.row
            is_folder = folder is None
            b.add(f"item.{name}", "listitem", name, (left, ry, p.width - p.pad, ry + p.row),
                  style="folder" if is_folder else "file", parent="files.list", click=("set", "sel", name),
                  double=("open_item", name), right=("set", "dlg", "props"), focused=state["sel"] == name)
        if state["sel"]:
            b.key((("enter",), ("open_item", state["sel"])))

    def _editor(self, b: Builder, state: dict, content: Content, top: int) -> None:
        p = b.p
        h = p.control
        x = 0
        for menu, items in MENUS.items():
            w = b.button(f"menu.{menu}", menu, x, top, ("set", "menu", None if state["menu"] == menu else menu),
                         "window", style="menubar", height=h, role="menu", width=None)
            x = w.box[2]
            for _label, command, keys in items:
                if keys:
                    b.key((keys, command))
        name = (state["doc"] or "untitled").split("/")[-1]
        area = (p.pad, top + h + p.pad, p.width - p.pad, p.height - p.taskbar - p.pad)
        b.textbox("editor.text", name, area, state["text"], "text", state, "window", role="textbox", style="textarea")
        b.key((("ctrl", "a"), ("seq", ("focus", "text"), ("selall",))))
        if state["menu"]:
            b.keymap.clear()
            b.type_target = None
            menu_btn = b.widgets[[w.id for w in b.widgets].index(f"menu.{state['menu']}")]
            items = MENUS[state["menu"]]
            width = max(int(p.font * 11), menu_btn.box[2] - menu_btn.box[0])
            x0, y0 = menu_btn.box[0], menu_btn.box[3]
            b.add("menu.popup", "menu", state["menu"], (x0, y0, x0 + width, y0 + h * len(items)), style="popup",
                  modal=True)
            for i, (label, command, keys) in enumerate(items):
                shortcut = "+".join(k.title() for k in keys) if keys else ""
                b.add(f"menuitem.{label}", "menuitem", label, (x0, y0 + i * h, x0 + width, y0 + (i + 1) * h),
                      style="option", click=("seq", ("set", "menu", None), command), parent="menu.popup",
                      value=shortcut or None)
            b.key((("escape",), ("set", "menu", None)))

    def _settings(self, b: Builder, state: dict, content: Content, top: int) -> None:
        p = b.p
        h = p.control
        x = p.pad
        for tab in SETTINGS_TABS:
            w = b.button(f"tab.{tab}", tab, x, top + p.pad, ("set", "tab", tab, "focus", None), "window",
                         style="tab", height=h, role="tab", focused=state["tab"] == tab)
            x = w.box[2] + p.pad // 2
        tabs = list(SETTINGS_TABS)
        nxt = tabs[(tabs.index(state["tab"]) + 1) % len(tabs)]
        b.key((("ctrl", "tab"), ("set", "tab", nxt, "focus", None)), (("escape",), ("close_app",)))
        y = top + p.pad + h + p.pad
        checks, numbers = SETTINGS_TABS[state["tab"]]
        for name in checks:
            b.checkbox(f"check.{name}", name, 2 * p.pad, y, state[f"p.{name}"], ("toggle", f"p.{name}"), "window")
            y += p.row
        for name in numbers:
            label_w = int(len(name) * p.font * 0.62) + p.pad
            b.add(f"label.{name}", "text", name, (2 * p.pad, y, 2 * p.pad + label_w, y + h), parent="window")
            x1 = 3 * p.pad + label_w
            b.textbox(f"num.{name}", name, (x1, y, x1 + p.font * 5, y + h), state[f"p.{name}"], f"p.{name}",
                      state, "window", select_all=True, role="spinbutton")
            y += p.row
        by = p.height - p.taskbar - p.pad - h
        x = p.width - p.pad
        for label, command in (("Cancel", ("close_app",)), ("Apply", ("settings_save",)),
                               ("OK", ("seq", ("settings_save",), ("close_app",)))):
            w = b.button(f"btn.{label}", label, 0, by, command, "window", height=h)
            width = w.box[2] - w.box[0]
            w.box = (x - width, by, x, by + h)
            x -= width + p.pad
        if state["focus"]:
            b.key((("enter",), ("settings_save",)))

    def _dialog(self, b: Builder, state: dict) -> None:
        p = b.p
        b.keymap.clear()
        b.type_target = None
        dlg = state["dlg"]
        cancel = ("set", "dlg", None, "focus", None, "dd", None, "msg", "")
        h = p.control
        if dlg in DIALOG_TEXT:
            title, text = DIALOG_TEXT[dlg]
            text = state["msg"] or text
            box, y = b.dialog(f"dlg.{dlg}", title, int(p.width * 0.7), 3 * p.row + 2 * p.pad, cancel)
            b.add("dlg.text", "text", text, (box[0] + p.pad, y, box[2] - p.pad, y + h), parent=f"dlg.{dlg}")
            ok = b.button("dlg.ok", "OK", 0, box[3] - h - p.pad, cancel, f"dlg.{dlg}", height=h)
            ok.box = (box[2] - p.pad - (ok.box[2] - ok.box[0]), ok.box[1], box[2] - p.pad, ok.box[3])
            b.key((("enter",), cancel))
            return
        title = "Save As" if dlg == "save" else "Export"
        box, y = b.dialog(f"dlg.{dlg}", title, int(p.width * 0.8), 3 * p.row + 3 * p.pad, cancel)
        label_w = int(p.font * 6)
        b.add("dlg.label", "text", "File name" if dlg == "save" else "Format",
              (box[0] + p.pad, y, box[0] + p.pad + label_w, y + h), parent=f"dlg.{dlg}")
        field_box = (box[0] + 2 * p.pad + label_w, y, box[2] - p.pad, y + h)
        confirm = ("save_as",) if dlg == "save" else ("export",)
        buttons_y = box[3] - h - p.pad
        x = box[2] - p.pad
        for label, command in (("Cancel", cancel), ("Save" if dlg == "save" else "Export", confirm)):
            w = b.button(f"dlg.{label}", label, 0, buttons_y, command, f"dlg.{dlg}", height=h)
            width = w.box[2] - w.box[0]
            w.box = (x - width, buttons_y, x, buttons_y + h)
            x -= width + p.pad
        if dlg == "save":
            b.textbox("dlg.fname", "File name", field_box, state["fname"], "fname", state, f"dlg.{dlg}")
        else:
            b.combobox("dlg.format", "Format", field_box, state["fmt"], FORMATS, "fmt", state, f"dlg.{dlg}")
        if not state["dd"]:
            b.key((("enter",), confirm), (("escape",), cancel))

    # -- commands -----------------------------------------------------------------------
    def reduce(self, state: dict, content: Content, command: tuple) -> None:
        op = command[0]
        if op == "open_app":
            name = command[1]
            state.update(sel=None, menu=None, dd=None, focus=None)
            if name == "Terminal":
                state.update(dlg="error", msg="Terminal could not start")
            elif name in ("Files", "Trash"):
                state.update(app="files", folder=None if name == "Files" else "Trash", fhist=())
            elif name == "Editor":
                state.update(app="editor", doc=None, text="")
            elif name == "Settings":
                state.update(app="settings", tab="General")
                for setting in SETTING_NAMES:
                    state[f"p.{setting}"] = state[f"s.{setting}"]
        elif op == "close_app":
            state.update(app="home", sel=None, menu=None, dd=None, focus=None, dlg=None, fhist=(), folder=None)
            state.pop("scroll.files", None)
        elif op in ("goto", "open_item", "back"):
            self._navigate(state, content, command)
        elif op == "new":
            state.update(doc=None, text="", focus=None)
        elif op == "save":
            if state["doc"]:
                state["saved"] = state["saved"] + ((state["doc"].split("/")[-1], state["text"]),)
            else:
                state.update(dlg="save", fname="")
        elif op == "save_as":
            if state["fname"].strip():
                name = state["fname"].strip()
                state.update(saved=state["saved"] + ((name, state["text"]),), doc=name, dlg=None, focus=None)
        elif op == "export":
            state.update(exported=state["exported"] + ((state["doc"] or "untitled", state["fmt"]),), dlg=None,
                         dd=None)
        elif op == "settings_save":
            for setting in SETTING_NAMES:
                state[f"s.{setting}"] = state[f"p.{setting}"]
            state["focus"] = None

    def _navigate(self, state: dict, content: Content, command: tuple) -> None:
        op, folder = command[0], state["folder"]
        if op == "back":
            if state["fhist"]:
                state.update(folder=state["fhist"][-1], fhist=state["fhist"][:-1], sel=None)
                state.pop("scroll.files", None)
            return
        target = command[1]
        if op == "open_item" and folder is not None:  # a file
            path = f"{folder}/{target}"
            if target.endswith((".txt", ".py")) and path in content.file_text:
                state.update(app="editor", doc=path, text=content.file_text[path], sel=None, fhist=(), folder=None)
                state.pop("scroll.files", None)
            else:
                state.update(dlg="error", msg=f"No application can open {target}")
            return
        if target != folder:
            state.update(folder=target, fhist=state["fhist"] + (folder,), sel=None)
            state.pop("scroll.files", None)


def _val(value: object) -> object:
    return value if isinstance(value, bool) else str(value)

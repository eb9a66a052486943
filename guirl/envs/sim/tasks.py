"""Task families: an instruction, a plan of milestones, success from world state.

A task's plan is a list of :class:`Milestone` s, each a predicate on the
world state (and its screen, for "the item is visible"). Predicates are
*cumulative*: milestone i holds only if everything milestones < i achieved
still holds, so ``progress`` = 1 + the last milestone that holds. The last
milestone is the goal. An agent then ends the episode with ``terminate``
(or ``answer`` for question tasks). Several actions may move progress on:
a double-click can achieve two milestones at once, a keyboard shortcut can
skip the menu, a link can skip typing the address.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from guirl.envs.sim.content import COUNTRIES, PEOPLE, Content
from guirl.envs.sim.web import HOME, normalise_url, slug

Check = Callable[[dict, Callable[[str], bool]], bool]  # (state, is_visible(widget_id)) -> bool


@dataclass
class Milestone:
    description: str
    check: Check


@dataclass
class Task:
    """One task instance."""

    family: str
    domain: str
    instruction: str
    milestones: list[Milestone]
    setup: dict[str, Any] = field(default_factory=dict)  # state fields changed before the episode starts
    type_texts: tuple[str, ...] = ()  # texts the oracle may type
    answer: str | None = None  # question tasks: the expected answer
    single_step: bool = False  # grounding: one action, then the episode ends
    apps: tuple[str, ...] = ()  # apps the oracle may open with ``open_app`` (mobile)
    refine: Callable[[dict], int] | None = None  # finer progress within a milestone (higher is better)

    def progress(self, state: dict, visible: Callable[[str], bool]) -> int:
        for i in range(len(self.milestones) - 1, -1, -1):
            if self.milestones[i].check(state, visible):
                return i + 1
        return 0

    def done(self, state: dict, visible: Callable[[str], bool]) -> bool:
        return self.milestones[-1].check(state, visible)


def _m(description: str, check: Check) -> Milestone:
    return Milestone(description, check)


# -- desktop ------------------------------------------------------------------------------
def _open_file_plan(content: Content, rng: random.Random) -> tuple[str, str, list[Milestone]]:
    pairs = [(f, n) for f, names in content.folders.items() for n in names if n.endswith((".txt", ".py"))]
    folder, name = rng.choice(pairs)
    path = f"{folder}/{name}"

    def files(s):
        return s["app"] == "files" and s["dlg"] is None

    plan = [
        _m("Select the Files icon", lambda s, v: s["app"] == "home" and s["sel"] == "Files" and s["dlg"] is None),
        _m("Open the Files app", lambda s, v: files(s) and s["folder"] is None),
        _m(f"Open the {folder} folder", lambda s, v: files(s) and s["folder"] == folder),
        _m(f"Find {name} in the list", lambda s, v: files(s) and s["folder"] == folder and v(f"item.{name}")),
        _m(f"Select {name}", lambda s, v: files(s) and s["folder"] == folder and s["sel"] == name and v(f"item.{name}")),
        _m(f"Open {name}", lambda s, v: s["app"] == "editor" and s["doc"] == path and s["dlg"] is None
           and s["menu"] is None),
    ]
    return folder, name, plan


def desktop_open_file(content: Content, rng: random.Random) -> Task:
    folder, name, plan = _open_file_plan(content, rng)
    return Task("desktop.open_file", "desktop", f"Open the file '{name}' from the {folder} folder.", plan)


def desktop_export(content: Content, rng: random.Random) -> Task:
    folder, name, plan = _open_file_plan(content, rng)
    path, fmt = f"{folder}/{name}", rng.choice(("PDF", "HTML"))

    def doc(s):
        return s["app"] == "editor" and s["doc"] == path

    plan += [
        _m("Open the File menu", lambda s, v: doc(s) and s["menu"] == "File"),
        _m("Choose Export...", lambda s, v: doc(s) and s["dlg"] == "export" and s["fmt"] != fmt),
        _m("Open the Format drop-down", lambda s, v: doc(s) and s["dlg"] == "export" and s["dd"] == "dlg.format"),
        _m(f"Choose {fmt}", lambda s, v: doc(s) and s["dlg"] == "export" and s["fmt"] == fmt and s["dd"] is None),
        _m("Click Export", lambda s, v: (path, fmt) in s["exported"]),
    ]
    return Task("desktop.export_document", "desktop", f"Open '{name}' from {folder} and export it as {fmt}.", plan)


def desktop_settings(content: Content, rng: random.Random) -> Task:
    from guirl.envs.sim.content import SETTINGS_TABS

    tab1 = rng.choice(list(SETTINGS_TABS))
    check = rng.choice(SETTINGS_TABS[tab1][0])
    on = not content.settings[check]
    tab2 = rng.choice(list(SETTINGS_TABS))
    number = SETTINGS_TABS[tab2][1][0]
    value = str(rng.choice([v for v in (8, 14, 16, 25, 30) if v != content.settings[number]]))

    def app(s):
        return s["app"] == "settings" and s["dlg"] is None

    def c1(s):
        return app(s) and s[f"p.{check}"] == on

    plan = [
        _m("Select the Settings icon", lambda s, v: s["app"] == "home" and s["sel"] == "Settings" and s["dlg"] is None),
        _m("Open Settings", lambda s, v: app(s)),
        _m(f"Open the {tab1} tab", lambda s, v: app(s) and s["tab"] == tab1),
        _m(f"{'Check' if on else 'Uncheck'} '{check}'", lambda s, v: c1(s)),
    ]
    if tab2 != tab1:
        plan.append(_m(f"Open the {tab2} tab", lambda s, v: c1(s) and s["tab"] == tab2))
    plan += [
        _m(f"Click the '{number}' field", lambda s, v: c1(s) and s["tab"] == tab2 and s["focus"] == f"p.{number}"
           and s["selall"]),
        _m(f"Type {value}", lambda s, v: c1(s) and s[f"p.{number}"] == value),
        _m("Save with OK or Apply", lambda s, v: s[f"s.{check}"] == on and s[f"s.{number}"] == value),
    ]
    verb = "turn on" if on else "turn off"
    return Task("desktop.change_settings", "desktop",
                f"In Settings, {verb} '{check}' and set '{number}' to {value}, then save.", plan, type_texts=(value,))


def desktop_save(content: Content, rng: random.Random) -> Task:
    from guirl.envs.sim.content import WORDS

    text = " ".join(rng.sample(WORDS, 2))
    name = rng.choice(("notes", "memo", "todo", "ideas", "draft")) + ".txt"

    def ed(s):
        return s["app"] == "editor" and s["doc"] is None

    def typed(s):
        return ed(s) and s["text"] == text

    plan = [
        _m("Select the Editor icon", lambda s, v: s["app"] == "home" and s["sel"] == "Editor" and s["dlg"] is None),
        _m("Open the Editor", lambda s, v: ed(s) and s["dlg"] is None and s["menu"] is None),
        _m("Click the text area", lambda s, v: ed(s) and s["focus"] == "text" and s["dlg"] is None and s["menu"] is None
           and text.startswith(s["text"])),
        _m(f"Type '{text}'", lambda s, v: typed(s) and s["dlg"] is None and s["menu"] is None),
        _m("Open the File menu", lambda s, v: typed(s) and s["menu"] == "File"),
        _m("Choose Save As...", lambda s, v: typed(s) and s["dlg"] == "save" and s["fname"] == ""),
        _m("Click the file name field", lambda s, v: typed(s) and s["dlg"] == "save" and s["focus"] == "fname"
           and s["fname"] == ""),
        _m(f"Type {name}", lambda s, v: typed(s) and s["dlg"] == "save" and s["fname"] == name),
        _m("Click Save", lambda s, v: (name, text) in s["saved"]),
    ]
    return Task("desktop.save_document", "desktop", f"Write '{text}' in a new document and save it as {name}.",
                plan, type_texts=(text, name))


# -- web ----------------------------------------------------------------------------------------
def _url(s: dict) -> str:
    return s["urls"][s["tab"]]


def web_search(content: Content, rng: random.Random) -> Task:
    query = rng.choice(list(content.results))
    title = rng.choice(content.results[query])
    results = f"{HOME}/?q={query}"
    plan = [
        _m("Click the search box", lambda s, v: _url(s) == HOME and s["focus"] == "q" and s["q"] == ""),
        _m(f"Type '{query}'", lambda s, v: _url(s) == HOME and s["q"].strip().lower() == query),
        _m("Search", lambda s, v: _url(s) == results and s["popup"] is None),
        _m(f"Open the result '{title}'", lambda s, v: _url(s) == slug(title)),
    ]
    return Task("web.search_open", "web", f"Search for '{query}' and open the result '{title}'.", plan,
                type_texts=(query,))


def web_shopping(content: Content, rng: random.Random) -> Task:
    first, second = rng.sample(list(content.products), 2)
    want = sorted((first, second))

    def shop(s):
        return _url(s) == "shop.example" and s["popup"] is None

    def has(s, *names):  # other items may be in the cart too; they must go before checking out
        return all(n in s["cart"] for n in names)

    def cart(s):
        return _url(s) == "shop.example/cart" and has(s, first, second)

    plan = [
        _m("Click the address bar", lambda s, v: _url(s) == HOME and s["focus"] == "addr" and s["selall"]),
        _m("Type shop.example", lambda s, v: s["focus"] == "addr" and normalise_url(s["addr"]) == "shop.example"),
        _m("Go to shop.example", lambda s, v: _url(s) == "shop.example"),
        _m("Close the cookie pop-up", lambda s, v: shop(s)),
        _m(f"Find {first}", lambda s, v: shop(s) and v(f"add.{first}")),
        _m(f"Add {first} to the cart", lambda s, v: shop(s) and has(s, first)),
        _m(f"Find {second}", lambda s, v: shop(s) and has(s, first) and v(f"add.{second}")),
        _m(f"Add {second} to the cart", lambda s, v: shop(s) and has(s, first, second)),
        _m("Open the cart", lambda s, v: cart(s)),
        _m("Remove anything else from the cart", lambda s, v: cart(s) and sorted(s["cart"]) == want),
        _m("Check out", lambda s, v: sorted(s["order"]) == want),
    ]
    def fewer_extras(s):  # every item that is not wanted must leave the cart, one at a time
        return -sum(1 for item in s["cart"] if item not in want) - max(0, len(s["cart"]) - len(set(s["cart"])))

    return Task("web.shopping", "web", f"Go to shop.example, put {first} and {second} in the cart and check out.",
                plan, type_texts=("shop.example",), refine=fewer_extras)


def web_form(content: Content, rng: random.Random) -> Task:
    name = rng.choice(PEOPLE)
    email = f"{name.lower()}@mail.example"
    country = rng.choice(COUNTRIES[:4])
    ship = rng.choice(("Standard", "Express"))

    def base(s):
        return s["tab"] == 1 and _url(s) == "forms.example"

    def form(s):
        return base(s) and s["dd"] is None

    def f1(s):
        return form(s) and s["f.name"] == name

    def f2(s):
        return f1(s) and s["f.email"] == email

    def f3(s):
        return f2(s) and s["f.country"] == country

    plan = [
        _m("Switch to the Contact tab", lambda s, v: form(s) and s["f.name"] == ""),
        _m("Click the Name field", lambda s, v: form(s) and s["focus"] == "f.name" and s["f.name"] == ""),
        _m(f"Type {name}", lambda s, v: f1(s)),
        _m("Click the Email field", lambda s, v: f1(s) and s["focus"] == "f.email" and s["f.email"] == ""),
        _m(f"Type {email}", lambda s, v: f2(s)),
        _m("Open the Country drop-down", lambda s, v: base(s) and s["f.name"] == name and s["f.email"] == email
           and s["dd"] == "field.Country"),
        _m(f"Choose {country}", lambda s, v: f3(s)),
        _m(f"Select {ship} shipping", lambda s, v: f3(s) and s["f.ship"] == ship),
        _m("Check 'I agree'", lambda s, v: f3(s) and s["f.ship"] == ship and s["f.agree"]),
        _m("Submit the form", lambda s, v: s["sent"] == (name, email, country, ship)),
    ]
    setup = {"urls": (HOME, "forms.example")}
    return Task("web.fill_form", "web", f"In the Contact tab, send the form as {name} ({email}) from {country} "
                f"with {ship} shipping.", plan, setup=setup, type_texts=(name, email))


# -- mobile ---------------------------------------------------------------------------------------
def _contacts_main(s: dict) -> bool:
    return s["app"] == "Contacts" and s["page"] == "main" and s["dlg"] is None


def mobile_toggle(content: Content, rng: random.Random) -> Task:
    setting = rng.choice(list(content.phone_settings))
    on = not content.phone_settings[setting]

    def main(s):
        return s["app"] == "Settings" and s["page"] == "main" and s["dlg"] is None

    plan = [
        _m("Open Settings", lambda s, v: main(s)),
        _m(f"Find '{setting}'", lambda s, v: main(s) and v(f"settings.{setting}")),
        _m(f"Open '{setting}'", lambda s, v: s["app"] == "Settings" and s["page"] == setting and s["dlg"] is None),
        _m(f"Turn {'on' if on else 'off'} {setting}", lambda s, v: s[f"m.{setting}"] == on),
    ]
    return Task("mobile.toggle_setting", "mobile", f"Turn {'on' if on else 'off'} {setting}.", plan,
                apps=("Settings", "Contacts"))


def mobile_add_contact(content: Content, rng: random.Random) -> Task:
    name = rng.choice([p for p in PEOPLE if p not in content.contacts]) + " " + rng.choice(("Lee", "Khan", "Silva"))
    phone = f"555-{rng.randint(1000, 9999)}"

    def form(s):
        return s["app"] == "Contacts" and s["page"] == "New contact" and s["dlg"] is None

    plan = [
        _m("Open Contacts", lambda s, v: _contacts_main(s)),
        _m("Tap Add contact", lambda s, v: form(s) and s["c.name"] == ""),
        _m("Tap the Name field", lambda s, v: form(s) and s["focus"] == "c.name" and s["c.name"] == ""),
        _m(f"Type {name}", lambda s, v: form(s) and s["c.name"] == name),
        _m("Tap the Phone field", lambda s, v: form(s) and s["c.name"] == name and s["focus"] == "c.phone"
           and s["c.phone"] == ""),
        _m(f"Type {phone}", lambda s, v: form(s) and s["c.name"] == name and s["c.phone"] == phone),
        _m("Tap Save", lambda s, v: (name, phone) in s["added"]),
    ]
    return Task("mobile.add_contact", "mobile", f"Add a contact named {name} with phone number {phone}.", plan,
                type_texts=(name, phone), apps=("Contacts", "Settings"))


def mobile_find_contact(content: Content, rng: random.Random) -> Task:
    name = rng.choice(list(content.contacts))
    plan = [
        _m("Open Contacts", lambda s, v: _contacts_main(s)),
        _m(f"Find {name}", lambda s, v: _contacts_main(s) and v(f"contacts.{name}")),
        _m(f"Open {name}", lambda s, v: s["app"] == "Contacts" and s["page"] == f"detail:{name}" and s["dlg"] is None),
    ]
    return Task("mobile.find_contact", "mobile", f"What is {name}'s phone number? Answer with the number.", plan,
                answer=content.contacts[name], apps=("Contacts", "Settings"))


#: task family name -> (domain, generator(content, rng) -> Task); grounding families live in grounding.py
FAMILIES: dict[str, tuple[str, Callable[[Content, random.Random], Task]]] = {
    "desktop.open_file": ("desktop", desktop_open_file),
    "desktop.change_settings": ("desktop", desktop_settings),
    "desktop.save_document": ("desktop", desktop_save),
    "desktop.export_document": ("desktop", desktop_export),
    "web.search_open": ("web", web_search),
    "web.shopping": ("web", web_shopping),
    "web.fill_form": ("web", web_form),
    "mobile.toggle_setting": ("mobile", mobile_toggle),
    "mobile.add_contact": ("mobile", mobile_add_contact),
    "mobile.find_contact": ("mobile", mobile_find_contact),
}

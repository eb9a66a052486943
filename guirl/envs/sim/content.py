"""Seeded content of one world: files, settings, products, contacts, results.

Everything a task may ask about is drawn here from the episode's seed, so the
same seed always gives the same world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FOLDERS = ("Documents", "Pictures", "Music", "Projects", "Downloads")
FILE_STEMS = (
    "report", "budget", "notes", "invoice", "letter", "plan", "summary", "draft", "agenda", "resume",
    "photo", "song", "slides", "todo", "recipe", "thesis", "minutes", "ideas", "contract", "poster",
)
FILE_EXTS = {
    "Documents": ("txt", "pdf"), "Pictures": ("png", "jpg"), "Music": ("mp3",),
    "Projects": ("txt", "py"), "Downloads": ("zip", "txt", "pdf"),
}
WORDS = ("hello", "world", "meeting", "friday", "budget", "draft", "lunch", "plan", "team", "call", "notes", "today")
PRODUCTS = (
    "Apples", "Milk", "Bread", "Coffee", "Eggs", "Rice", "Tea", "Butter", "Cheese", "Pasta", "Honey", "Juice",
)
PEOPLE = (
    "Alice", "Ben", "Carla", "David", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Leo",
    "Maya", "Nora", "Omar", "Paula", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Victor", "Wen", "Zoe",
)
COUNTRIES = ("France", "Germany", "Japan", "Kenya", "Brazil", "Canada")
QUERIES = ("wireless mouse", "green tea", "city map", "rain boots", "desk lamp", "chess set", "river cruise")
#: desktop settings: tab -> (checkboxes, number fields)
SETTINGS_TABS = {
    "General": (("Auto save", "Show hidden files"), ("Autosave minutes",)),
    "Editor": (("Spell check", "Line numbers"), ("Font size",)),
    "Display": (("Dark mode", "Animations"), ("Zoom percent",)),
}
MOBILE_SETTINGS = ("Wi-Fi", "Bluetooth", "Airplane mode", "Dark theme", "Location", "Notifications", "Battery saver")


@dataclass
class Content:
    """The static content of one world (never changed by actions)."""

    folders: dict[str, tuple[str, ...]] = field(default_factory=dict)
    file_text: dict[str, str] = field(default_factory=dict)
    settings: dict[str, object] = field(default_factory=dict)  # initial saved desktop settings
    products: dict[str, str] = field(default_factory=dict)  # name -> price
    contacts: dict[str, str] = field(default_factory=dict)  # name -> phone number
    results: dict[str, tuple[str, ...]] = field(default_factory=dict)  # query -> result titles
    phone_settings: dict[str, bool] = field(default_factory=dict)
    layout_seed: int = 0  # orders home-screen icons

    def shuffled(self, items: tuple[str, ...]) -> tuple[str, ...]:
        """``items`` in this world's order (home screens differ between seeds)."""
        order = list(items)
        random.Random(self.layout_seed).shuffle(order)
        return tuple(order)


def make_content(rng: random.Random) -> Content:
    """Draw one world's content."""
    content = Content()
    stems = list(FILE_STEMS)
    for folder in FOLDERS:
        rng.shuffle(stems)
        n = rng.randint(4, 8)
        names = sorted(f"{stem}.{rng.choice(FILE_EXTS[folder])}" for stem in stems[:n])
        content.folders[folder] = tuple(names)
        for name in names:
            content.file_text[f"{folder}/{name}"] = " ".join(rng.choice(WORDS) for _ in range(3))
    for checks, numbers in SETTINGS_TABS.values():
        for name in checks:
            content.settings[name] = rng.random() < 0.5
        for name in numbers:
            content.settings[name] = rng.choice((10, 12, 15, 20))
    for name in rng.sample(PRODUCTS, 8):
        content.products[name] = f"${rng.randint(1, 9)}.{rng.randint(0, 99):02d}"
    for name in sorted(rng.sample(PEOPLE, 14)):
        content.contacts[name] = f"555-{rng.randint(1000, 9999)}"
    for query in QUERIES:
        words = query.split()
        titles = [f"{query.title()} review", f"Best {words[-1]} deals", f"{words[0].title()} guide", f"Buy {query}"]
        rng.shuffle(titles)
        content.results[query] = tuple(titles)
    for name in MOBILE_SETTINGS:
        content.phone_settings[name] = rng.random() < 0.5
    content.layout_seed = rng.randrange(2**31)
    return content

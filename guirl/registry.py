"""One name -> object table for guirl's extension points.

Used for output formats, environments, judges, rewards, advantage
estimators and policy losses, and nowhere else. Registering a
name twice is an error; an unknown name raises a ``KeyError`` that lists the
valid names. ``builtin_modules`` are imported on first lookup so built-ins
register themselves without import cycles; a module whose optional
dependency (``optional``) is missing is skipped, and looking up the name it
would have registered (its last dotted part) raises
:class:`guirl.extras.MissingExtra`, which names the extra to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, kind: str, builtin_modules: Iterable[str] = (), optional: Iterable[str] = ()):
        self.kind = kind
        self._items: dict[str, T] = {}
        self._builtin_modules = list(builtin_modules)
        self._optional = set(optional)
        self._skipped: dict[str, str] = {}  # name a skipped built-in module would register -> missing module
        self._loaded = False

    def add(self, name: str, item: T) -> T:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} needs a non-empty string name, got {name!r}")
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered; pick another name")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: ``@registry.register("name")``."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} needs a non-empty string name, got {name!r}")

        def deco(item: T) -> T:
            return self.add(name, item)

        return deco

    def get(self, name: str) -> T:
        self._load_builtins()
        try:
            return self._items[name]
        except KeyError:
            if name in self._skipped:
                from guirl.extras import MissingExtra

                raise MissingExtra(f"{self.kind} {name!r}", self._skipped[name]) from None
            raise KeyError(f"unknown {self.kind} {name!r}; valid names: {sorted(self._items)}") from None

    def names(self) -> list[str]:
        self._load_builtins()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._load_builtins()
        return name in self._items

    def _load_builtins(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self._builtin_modules:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as err:
                if err.name not in self._optional:
                    raise
                self._skipped[module.rsplit(".", 1)[-1]] = err.name

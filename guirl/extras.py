"""Optional extras (``pyproject.toml``'s ``[project.optional-dependencies]``) and the error that names one.

A feature whose package is missing raises :class:`MissingExtra`, an ``ImportError`` whose message names
the extra to install; ``guirl <verb>`` prints it as one line (exit 2) instead of a traceback, and so it does
for a bare ``ModuleNotFoundError`` of a package listed in :data:`EXTRA_OF`. This module imports nothing
from guirl, so every layer may raise the error.
"""

from __future__ import annotations

#: top-level module -> the extra of pyproject.toml that installs it
EXTRA_OF = {
    "ray": "ray",
    "vllm": "vllm",
    "miniwob": "miniwob",
    "selenium": "miniwob",
    "trl": "dev",
    "tensorboard": "dev",
}


def install_hint(extra: str) -> str:
    """``pip install -e '.[extra]'`` (run in the guirl checkout)."""
    return f"pip install -e '.[{extra}]'"


class MissingExtra(ImportError):
    """``what`` needs ``module``, which is not installed; the message says which extra installs it."""

    def __init__(self, what: str, module: str, extra: str | None = None, note: str = ""):
        self.what, self.module = what, module
        self.extra = extra or EXTRA_OF.get(module.split(".")[0], module.split(".")[0])
        message = f"{what} needs {module}, which is not installed: {install_hint(self.extra)}"
        super().__init__(message + (f" ({note})" if note else ""), name=module)


def missing_extra_message(err: BaseException) -> str | None:
    """One line naming the extra to install when ``err`` (or an error it was raised from) is a missing
    optional package; None when it is anything else (a bug, which keeps its traceback)."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, MissingExtra):
            return str(current)
        if isinstance(current, ModuleNotFoundError) and current.name:
            top = current.name.split(".")[0]
            if top in EXTRA_OF:
                extra = EXTRA_OF[top]
                return f"{top} is not installed; it comes with the '{extra}' extra: {install_hint(extra)}"
        current = current.__cause__ or current.__context__
    return None

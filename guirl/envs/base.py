"""The Env protocol every environment implements (gymnasium-style).

``reset(seed) -> Observation``; ``step(action) -> (Observation, reward,
terminated, truncated, info)``. Actions are guirl Actions; an environment
converts them into its own frame (``Observation.frame``) itself, so a policy
may answer in any frame. Unknown or out-of-screen actions never crash an
environment: they have no effect or lead to an error state, and ``info``
says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action
from guirl.data.schema import A11yNode, Subtask


@dataclass
class Observation:
    """What the agent sees at one step.

    ``valid_actions`` (A*_t) and ``sub_goal`` / ``subtasks`` are filled only
    by environments that know them (the built-in world, replay); they are for
    rewards, judges and data generation, never for the policy's prompt.
    """

    screenshot: Image.Image
    instruction: str
    a11y: list[A11yNode] | None = None
    valid_actions: list[Action] | None = None
    sub_goal: str | None = None
    subtasks: list[Subtask] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def frame(self) -> Frame:
        """Screen-pixel frame of this observation's screenshot."""
        return Frame.screen(*self.screenshot.size)


StepResult = tuple[Observation, float, bool, bool, dict[str, Any]]


@runtime_checkable
class Env(Protocol):
    """A GUI environment."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Observation: ...

    def step(self, action: Action) -> StepResult: ...

    def close(self) -> None: ...


_ENVS: dict[str, Any] = {}


def register_env(name: str):
    """Register an environment factory ``(**kwargs) -> Env`` under ``name``."""

    def deco(factory):
        if name in _ENVS:
            raise ValueError(f"environment {name!r} is already registered")
        _ENVS[name] = factory
        return factory

    return deco


def make_env(name: str, **kwargs: Any) -> Env:
    """Build a registered environment by name (``sim``, ``miniwob``, ...)."""
    _load_builtin_envs()
    try:
        factory = _ENVS[name]
    except KeyError:
        raise KeyError(f"unknown environment {name!r}; known environments: {sorted(_ENVS)}") from None
    return factory(**kwargs)


def available_envs() -> list[str]:
    _load_builtin_envs()
    return sorted(_ENVS)


#: Modules that register the built-in environments when first needed; a
#: module whose optional dependency is missing is skipped (its make_env then
#: errors with the list of what is available).
_BUILTIN_ENV_MODULES = ["guirl.envs.sim", "guirl.envs.miniwob"]
_loaded = False


def _load_builtin_envs() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for module in _BUILTIN_ENV_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            # An optional dependency (miniwob, selenium) is not installed.
            if err.name not in _OPTIONAL_DEPENDENCIES:
                raise


_OPTIONAL_DEPENDENCIES = {"miniwob", "selenium"}

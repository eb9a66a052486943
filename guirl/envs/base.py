"""The Env protocol every environment implements (gymnasium-style).

``reset(seed) -> Observation``; ``step(action) -> (Observation, reward,
terminated, truncated, info)``. Actions are guirl Actions; an environment
converts them into its own frame (``Observation.frame``) itself, so a policy
may answer in any frame. Unknown or out-of-screen actions never crash an
environment: they have no effect or lead to an error state, and ``info``
says which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action
from guirl.data.schema import A11yNode, Subtask
from guirl.registry import Registry


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


#: The built-in environments register themselves when their module is
#: imported; MiniWoB is skipped when its optional dependencies are missing
#: (make_env then names what is available).
ENVS: Registry[Callable[..., Env]] = Registry(
    "environment", ["guirl.envs.sim", "guirl.envs.miniwob", "guirl.envs.replay", "guirl.envs.routed"], optional=["miniwob", "selenium"]
)


def register_env(name: str):
    """Register an environment factory ``(**kwargs) -> Env`` under ``name``."""
    return ENVS.register(name)


def make_env(name: str, **kwargs: Any) -> Env:
    """Build a registered environment by name (``sim``, ``miniwob``, ...)."""
    return ENVS.get(name)(**kwargs)


def available_envs() -> list[str]:
    return ENVS.names()

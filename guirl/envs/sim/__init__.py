"""The built-in GUI world: desktop, web and mobile screens drawn with Pillow.

Public API::

    env = SimEnv(domain="desktop", preset="coarse", task="desktop.open_file")
    obs = env.reset(seed=0)
    obs.valid_actions            # A*_t: every valid next action, screen pixels
    is_advancing(env, action)    # does this action move the task on?
    generate_dataset(out_dir, ...)

See docs/sim.md.
"""

from __future__ import annotations

from guirl.actions.types import Action
from guirl.envs.base import register_env
from guirl.envs.sim.env import SimEnv, available_tasks
from guirl.envs.sim.presets import DOMAINS, PRESET_NAMES, get_preset


def oracle_valid_actions(env: SimEnv) -> list[Action]:
    """A*_t at the env's current state (screen-pixel frame, with boxes)."""
    return list(env.judgement().actions)


def is_advancing(env: SimEnv, action: Action) -> bool:
    """Whether ``action`` (any frame) is a valid next action at the env's current state."""
    return env.oracle.advances(env.state, action, env.anchor, env.judgement())


@register_env("sim")
def make_sim_env(**kwargs) -> SimEnv:
    """Factory for ``make_env("sim", domain=..., preset=..., task=...)``."""
    return SimEnv(**kwargs)


def generate_dataset(*args, **kwargs):
    """See :func:`guirl.envs.sim.generation.generate_dataset`."""
    from guirl.envs.sim.generation import generate_dataset as run

    return run(*args, **kwargs)


__all__ = ["DOMAINS", "PRESET_NAMES", "SimEnv", "available_tasks", "generate_dataset", "get_preset",
           "is_advancing", "oracle_valid_actions"]

"""``routed``: several registered environments behind one, the task name choosing which.

A task is written ``<env>:<task>`` (``sim:desktop.open_file``, ``miniwob:click-button``); ``reset``
sends the rest of the name to that environment as its ``task`` option, and every ``step`` goes to
the environment of the current episode. So one training run, one environment slot per episode, can
mix the built-in world with MiniWoB++ tasks::

    make_env("routed", envs={"sim": {"preset": "coarse"}, "miniwob": {}})

Each environment is built at its first episode and kept; ``close`` closes them all.
"""

from __future__ import annotations

from typing import Any

from guirl.envs.base import Observation, StepResult, make_env, register_env


@register_env("routed")
class RoutedEnv:
    def __init__(self, envs: dict[str, dict[str, Any]] | None = None):
        if not envs:
            raise ValueError("routed needs envs: {name: constructor arguments}, e.g. {sim: {}, miniwob: {}}")
        self.kwargs = {name: dict(kwargs or {}) for name, kwargs in envs.items()}
        self.built: dict[str, Any] = {}
        self.current: Any = None

    def _env(self, name: str):
        if name not in self.kwargs:
            raise ValueError(f"task names environment {name!r}, which routed was not given; "
                             f"given: {sorted(self.kwargs)}")
        if name not in self.built:
            self.built[name] = make_env(name, **self.kwargs[name])
        return self.built[name]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Observation:
        options = dict(options or {})
        task = options.pop("task", None)
        if not isinstance(task, str) or ":" not in task:
            raise ValueError(f"routed tasks are '<env>:<task>' (e.g. 'sim:desktop.open_file'), got {task!r}")
        name, _, inner = task.partition(":")
        self.current = None
        env = self._env(name)
        obs = env.reset(seed=seed, options={**options, "task": inner} if inner else options or None)
        self.current = env
        obs.info["env"] = name
        return obs

    def step(self, action) -> StepResult:
        if self.current is None:
            raise RuntimeError("call reset() before step()")
        return self.current.step(action)

    def close(self) -> None:
        for env in self.built.values():
            try:
                env.close()
            except Exception:  # noqa: BLE001 - closing what is left
                pass
        self.built.clear()
        self.current = None


__all__ = ["RoutedEnv"]

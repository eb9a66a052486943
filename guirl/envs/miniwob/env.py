"""MiniWoB++ (Liu et al., 2018, "Reinforcement Learning on Web Interfaces
Using Workflow-Guided Exploration") as a guirl :class:`~guirl.envs.base.Env`.

One headless Chromium per environment (started on the first ``reset``);
``reset(options={"task": ...})`` switches task in the same browser. The
observation is the 160x210 task screenshot (375x667 for ``flight.*``), the
task's utterance as instruction, and an a11y tree from the DOM. Actions are
guirl Actions in any frame, executed as mouse/keyboard input at screen
pixels (:mod:`guirl.envs.miniwob.execute`).

Departures from the ``miniwob`` gymnasium env: the reward is the task's raw
reward (1 success, -1 failure, partial credit where the task gives it), not
scaled by elapsed time; and the task's wall-clock limit (10 s by default in
MiniWoB) is raised to ``episode_time_limit_s`` so that a slow policy is judged
on its actions, not on its speed (``None`` keeps the task's own limit).
A terminate action ends the episode where it is: success only if the task
already said so.
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import gymnasium
import miniwob  # noqa: F401  (registers the miniwob/* gymnasium ids)
from gymnasium.envs.registration import load_env_creator
from miniwob.screenshot import get_screenshot
from selenium.common.exceptions import WebDriverException
from urllib3.exceptions import HTTPError

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.envs.base import Observation, StepResult, register_env
from guirl.envs.miniwob.a11y import dom_to_a11y
from guirl.envs.miniwob.browser import BrowserInstance, find_browser, task_url
from guirl.envs.miniwob.execute import execute_action


class BrowserCrashed(RuntimeError):
    """The browser or its driver stopped answering; the environment restarts it on the next reset."""


@lru_cache(maxsize=1)
def available_tasks() -> tuple[str, ...]:
    """Every task the installed ``miniwob`` package registers (``click-button``, ``flight.AA``, ...)."""
    tasks = []
    for env_id, spec in gymnasium.envs.registry.items():
        if env_id.startswith("miniwob/"):
            tasks.append(load_env_creator(spec.entry_point).subdomain)
    return tuple(sorted(set(tasks)))


def check_task(task: str) -> str:
    if task not in available_tasks():
        raise ValueError(f"unknown MiniWoB task {task!r}; known tasks: {', '.join(available_tasks())}")
    return task


_OBSERVE_JS = (
    "return [core.getUtterance(), core.getDOMInfo(), WOB_DONE_GLOBAL, "
    "WOB_RAW_REWARD_GLOBAL, WOB_REWARD_REASON];"
)


@register_env("miniwob")
class MiniWoBEnv:
    """A MiniWoB++ task in headless Chromium (see module docstring)."""

    def __init__(
        self,
        task: str = "click-button",
        episode_time_limit_s: float | None = 600.0,
        settle_ms: float = 0.0,
        data_mode: str = "train",
        chromium: str | None = None,
        chromedriver: str | None = None,
    ):
        """
        Args:
            task: MiniWoB task name (``available_tasks()``).
            episode_time_limit_s: the task's wall-clock limit is raised to at
                least this; ``None`` keeps the task's own (usually 10 s).
            settle_ms: pause after each action before the screenshot (for
                animated widgets).
            data_mode: MiniWoB data mode (``train`` / ``test``).
            chromium, chromedriver: executables (default: Debian's /usr/bin).
        """
        self.task = check_task(task)
        self.episode_time_limit_s = episode_time_limit_s
        self.settle_ms = settle_ms
        self.data_mode = data_mode
        self.chromium, self.chromedriver = find_browser(chromium, chromedriver)
        self._instance: BrowserInstance | None = None
        self._done = True
        self._last: Observation | None = None
        self._episode_start = 0.0

    # -- protocol ---------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Observation:
        options = dict(options or {})
        task = check_task(options.pop("task", self.task))
        self.data_mode = options.pop("data_mode", self.data_mode)
        if options:
            raise ValueError(f"unknown MiniWoB reset options {sorted(options)}; known: task, data_mode")
        with self._crash_guard("reset"):
            instance = self._browser_for(task)
            instance.force_stop()
            instance.mode = self.data_mode
            if self.episode_time_limit_s is not None:
                instance.driver.execute_script(
                    "core.EPISODE_MAX_TIME = Math.max(core.EPISODE_MAX_TIME, arguments[0]);",
                    int(self.episode_time_limit_s * 1000),
                )
            instance.begin_task(seed=seed)
            self._done = False
            self._episode_start = time.monotonic()
            obs, _ = self._observe()
        return obs

    def step(self, action: Action) -> StepResult:
        if self._done or self._instance is None or self._last is None:
            raise RuntimeError("the MiniWoB episode is over (or never started); call reset() first")
        info: dict[str, Any] = {"task": self.task}
        with self._crash_guard("step"):
            if action.type is ActionType.TERMINATE:
                info["agent_terminated"] = True
            else:
                error = execute_action(action, self._instance.driver, self._last.frame)
                if error:
                    info["action_error"] = error
            if self.settle_ms:
                time.sleep(self.settle_ms / 1000)
            obs, meta = self._observe()
        done = bool(meta["done"])
        raw_reward = float(meta["raw_reward"]) if done else 0.0
        info.update(
            raw_reward=raw_reward,
            reason=meta["reason"],
            success=done and raw_reward > 0,
            elapsed_s=time.monotonic() - self._episode_start,
        )
        terminated = done or bool(info.get("agent_terminated"))
        self._done = terminated
        obs.info.update(info)
        return obs, raw_reward, terminated, False, info

    def close(self) -> None:
        if self._instance is not None:
            self._instance.close()
            self._instance = None
        self._done = True

    def __del__(self) -> None:
        if getattr(self, "_instance", None) is not None:
            self.close()

    # -- helpers ----------------------------------------------------------------
    def browser_pids(self) -> list[int]:
        """Process ids of this environment's chromedriver and chromium (empty before the first reset)."""
        return list(self._instance.process_ids) if self._instance is not None else []

    def _browser_for(self, task: str) -> BrowserInstance:
        """The running browser, showing ``task``'s page (restarted if it died or needs another window)."""
        instance = self._instance
        if instance is not None and (instance.died or task.startswith("flight.") != self.task.startswith("flight.")):
            instance.close()
            instance = None
        if instance is None:
            instance = BrowserInstance(task, self.chromium, self.chromedriver)
            self._instance = instance
            instance.create_driver()
        elif task != self.task:
            instance.load_page(task_url(task))
        self.task = task
        return instance

    def _observe(self) -> tuple[Observation, dict[str, Any]]:
        instance = self._instance
        assert instance is not None
        utterance, dom, done, raw_reward, reason = instance.driver.execute_script(_OBSERVE_JS)
        if isinstance(utterance, dict):
            utterance = utterance["utterance"]
        screenshot = get_screenshot(
            instance.driver, instance.inner_width, instance.inner_height, instance.task_width, instance.task_height
        )
        obs = Observation(
            screenshot=screenshot,
            instruction=str(utterance),
            a11y=dom_to_a11y(dom, instance.task_width, instance.task_height),
            info={"task": self.task},
        )
        self._last = obs
        return obs, {"done": done, "raw_reward": raw_reward, "reason": reason}

    def _crash_guard(self, what: str):
        return _CrashGuard(self, what)

    @property
    def frame(self) -> Frame:
        return self._last.frame if self._last is not None else Frame.screen()


class _CrashGuard:
    """Turn driver/connection errors into :class:`BrowserCrashed` and mark the browser dead."""

    def __init__(self, env: MiniWoBEnv, what: str):
        self.env, self.what = env, what

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is not None and isinstance(exc, (WebDriverException, HTTPError, ConnectionError)):
            self.env._done = True
            if self.env._instance is not None:
                self.env._instance.died = True
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise BrowserCrashed(
                f"MiniWoB browser failed during {self.what} of {self.env.task!r}: {type(exc).__name__}: {first_line}"
            ) from exc
        return False

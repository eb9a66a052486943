"""MiniWoB++ (Liu et al., 2018, "Reinforcement Learning on Web Interfaces
Using Workflow-Guided Exploration") as a guirl :class:`~guirl.envs.base.Env`.

One headless Chromium per environment (started on the first ``reset``);
``reset(options={"task": ...})`` switches task in the same browser. The
observation is the 160x210 task screenshot (375x667 for ``flight.*``), the
task's utterance as instruction (with any icon the query shows written as
its tag and class names, :data:`~guirl.envs.miniwob.a11y.QUERY_JS`;
``info["utterance"]`` then keeps MiniWoB's), and an a11y tree from the DOM.
Actions are guirl Actions in any frame, executed as mouse/keyboard input at
screen pixels (:mod:`guirl.envs.miniwob.execute`).

Departures from the ``miniwob`` gymnasium env: the reward is the task's raw
reward (1 success, -1 failure, partial credit where the task gives it), not
scaled by elapsed time; and the task's wall-clock limit (10 s by default in
MiniWoB) is raised to ``episode_time_limit_s`` so that a slow policy is judged
on its actions, not on its speed (``None`` keeps the task's own limit).
A terminate action ends the episode where it is: success only if the task
already said so.

After each action (and reset) the environment settles: it waits, up to
``settle_timeout_ms`` (1 s), while the page has work pending (a short timer
due, an animation running, an image loading, or a DOM change made
asynchronously less than ``settle_quiet_ms`` ago; :mod:`guirl.envs.miniwob.settle`),
so that delayed menus, fades and expanding panels are observed in their
final state, and a step that leaves nothing pending is observed at once
(``settle=False`` never waits; ``info["settle_ms"]`` says how long it
waited, ``info["settle_reason"]`` for what). The observation of the step
that ends an episode is that episode's final page (MiniWoB's "START" sync
screen, already shown for the next episode, is hidden for it), marked
``info["final"] = True``.

``oracle=True`` gives the tasks that have a scripted expert
(:data:`guirl.envs.miniwob.scripted.SCRIPTED_TASKS`) what the built-in world's
oracle gives: ``valid_actions`` (the expert's action on the current page) in
every observation that is not final, and ``info["advancing"]`` after every
step (the episode ended in success, or the action matched the expert's under
:func:`guirl.matching.step.match_action`, ``inclusive``). That is what the
ground-truth analyzer of ComputerSD and the offline rewards read. Tasks with
no script get neither (the analyzer then masks their steps), as does a page
where the script finds no target.
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
from guirl.envs.miniwob.a11y import CLIP_JS, QUERY_JS, dom_to_a11y
from guirl.envs.miniwob.browser import BrowserInstance, find_browser, task_url
from guirl.envs.miniwob.execute import execute_action
from guirl.envs.miniwob.settle import INSTALL_JS as _SETTLE_INSTALL_JS
from guirl.envs.miniwob.settle import SETTLE_JS as _SETTLE_JS


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


#: Reads utterance, DOM (clipped and hit-tested, :data:`~guirl.envs.miniwob.a11y.CLIP_JS`)
#: and the reward globals. When the episode is over MiniWoB has already
#: counted the next episode and shown its sync screen ("START") over the
#: page, whose elements still show this episode's final state: the episode
#: counter is put back for the DOM read (so elements keep this episode's
#: refs, not fresh ones that the next reset's counter would repeat) and the
#: sync screen is hidden until the screenshot is taken.
_OBSERVE_JS = (
    "var W = arguments[0], H = arguments[1], done = WOB_DONE_GLOBAL, coverHidden = false;"
    "var cover = document.getElementById('sync-task-cover');"
    "if (done && cover && cover.style.display !== 'none') { cover.style.display = 'none'; coverHidden = true; }"
    "if (done) { WOB_EPISODE_ID -= 1; }"
    "var dom; try { dom = core.getDOMInfo(); } finally { if (done) { WOB_EPISODE_ID += 1; } }"
    f"dom = {CLIP_JS.strip()}(dom, W, H);"
    f"var query = {QUERY_JS.strip()};"
    "return [core.getUtterance(), dom, done, WOB_RAW_REWARD_GLOBAL, WOB_REWARD_REASON, coverHidden, query];"
)

_RESTORE_COVER_JS = "var c = document.getElementById('sync-task-cover'); if (c) { c.style.display = 'block'; }"

#: Before a new episode: forget the refs MiniWoB stored on elements that
#: outlive an episode (<body>, the task area), since the episode restarts
#: the ref counter and would hand the same numbers to new elements.
_FORGET_REFS_JS = (
    "document.querySelectorAll('[data-wob_ref]').forEach(function (el) {"
    " delete el.dataset.wob_ref; delete el.dataset.wob_eps; });"
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
        settle: bool = True,
        settle_timeout_ms: float = 1000.0,
        settle_quiet_ms: float = 50.0,
        chromium: str | None = None,
        chromedriver: str | None = None,
        oracle: bool = False,
    ):
        """
        Args:
            task: MiniWoB task name (``available_tasks()``).
            episode_time_limit_s: the task's wall-clock limit is raised to at
                least this; ``None`` keeps the task's own (usually 10 s).
            settle_ms: a further fixed pause after each action (after settling).
            data_mode: MiniWoB data mode (``train`` / ``test``).
            settle: after each action (and reset), wait while the page has
                work pending before observing: a short ``setTimeout`` due
                (menus that open 300 ms after typing), an animation frame,
                a CSS / jQuery animation running (fades, expanding panels),
                an image loading, or a DOM change made by a timer or frame
                callback less than ``settle_quiet_ms`` ago; at most
                ``settle_timeout_ms``. Nothing pending: no wait.
                ``False`` observes right away.
            settle_timeout_ms: the most one settle waits (ms).
            settle_quiet_ms: how long the DOM must stay unchanged after an
                asynchronous change (ms).
            chromium, chromedriver: executables (default: Debian's /usr/bin).
            oracle: fill ``valid_actions`` and ``info["advancing"]`` from the task's
                scripted expert, where it has one (module docstring).
        """
        self.task = check_task(task)
        self.episode_time_limit_s = episode_time_limit_s
        self.settle_ms = settle_ms
        self.settle = settle
        self.settle_timeout_ms = settle_timeout_ms
        self.settle_quiet_ms = settle_quiet_ms
        self.data_mode = data_mode
        self.oracle = oracle
        self.chromium, self.chromedriver = find_browser(chromium, chromedriver)
        self._instance: BrowserInstance | None = None
        self._done = True
        self._last: Observation | None = None
        self._prev: Observation | None = None  # the observation before the last action (the oracle's)
        self._expected: Action | None = None  # the scripted expert's action on self._last (oracle)
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
            instance.driver.execute_script(_FORGET_REFS_JS + _SETTLE_INSTALL_JS)
            instance.begin_task(seed=seed)
            self._done = False
            self._episode_start = time.monotonic()
            settle = self._settle()
            obs, _ = self._observe()
        obs.info.update(settle)
        self._expert(obs)
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
            settle = self._settle()
            if self.settle_ms:
                time.sleep(self.settle_ms / 1000)
            obs, meta = self._observe()
        info.update(settle)
        done = bool(meta["done"])
        raw_reward = float(meta["raw_reward"]) if done else 0.0
        info.update(
            raw_reward=raw_reward,
            reason=meta["reason"],
            success=done and raw_reward > 0,
            elapsed_s=time.monotonic() - self._episode_start,
        )
        if self.oracle and self._expected is not None:
            info["advancing"] = bool(info["success"]) or (not done and self._matches_expert(action))
        if not done:
            self._expert(obs)
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

    def _settle(self) -> dict[str, Any]:
        """Wait while the page has work pending (see ``settle``); what it waited, as ``info`` entries."""
        if not self.settle or self.settle_timeout_ms <= 0:
            return {}
        instance = self._instance
        assert instance is not None
        waited, reason, capped = instance.driver.execute_async_script(
            _SETTLE_JS, float(self.settle_timeout_ms), float(self.settle_quiet_ms)
        )
        info: dict[str, Any] = {"settle_ms": round(float(waited), 1)}
        if reason:
            info["settle_reason"] = str(reason)
        if capped:
            info["settle_capped"] = True
        return info

    def _observe(self) -> tuple[Observation, dict[str, Any]]:
        """The current observation; once the episode is over, its final state (``info["final"]``)."""
        instance = self._instance
        assert instance is not None
        driver = instance.driver
        utterance, dom, done, raw_reward, reason, cover_hidden, (plain, with_icons) = driver.execute_script(
            _OBSERVE_JS, instance.task_width, instance.task_height
        )
        if isinstance(utterance, dict):
            utterance = utterance["utterance"]
        utterance = str(utterance)
        miniwob_utterance = utterance
        if utterance == plain and with_icons != plain:  # the query's text, less an icon it names (QUERY_JS)
            utterance = with_icons
        try:
            screenshot = get_screenshot(
                driver, instance.inner_width, instance.inner_height, instance.task_width, instance.task_height
            )
        finally:
            if cover_hidden:
                driver.execute_script(_RESTORE_COVER_JS)
        info: dict[str, Any] = {"task": self.task}
        if done:
            info["final"] = True
        if utterance != miniwob_utterance:
            info["utterance"] = miniwob_utterance
        obs = Observation(
            screenshot=screenshot,
            instruction=utterance,
            a11y=dom_to_a11y(dom, instance.task_width, instance.task_height),
            info=info,
        )
        self._prev, self._last = self._last, obs
        return obs, {"done": done, "raw_reward": raw_reward, "reason": reason}

    def _expert(self, obs: Observation) -> None:
        """With ``oracle``: the scripted expert's action on ``obs`` as its ``valid_actions``."""
        from guirl.envs.miniwob.scripted import expert_action

        self._expected = expert_action(self.task, obs) if self.oracle else None
        if self._expected is not None:
            obs.valid_actions = [self._expected]

    def _matches_expert(self, action: Action) -> bool:
        from guirl.envs.miniwob.scripted import matches_expert

        assert self._prev is not None and self._expected is not None
        return matches_expert(action, self._expected, self._prev)

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

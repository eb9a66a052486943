"""SimEnv: the built-in GUI world behind guirl's Env protocol.

``reset(seed)`` draws the world content and a task from the seed; ``step``
applies one guirl Action (any frame; converted with ``to_frame``). Reward is
1.0 when the episode ends successfully (``terminate`` with the goal reached,
the right ``answer``, or, for single-step grounding, the right click) and 0
otherwise; reaching the goal does not end an episode by itself unless
``auto_terminate``. ``max_steps`` truncates.
"""

from __future__ import annotations

import random
from typing import Any

from guirl.actions.types import Action, ActionType
from guirl.data.schema import Subtask
from guirl.envs.base import Observation, StepResult
from guirl.envs.sim.content import make_content
from guirl.envs.sim.desktop import Desktop
from guirl.envs.sim.engine import World, state_key
from guirl.envs.sim.grounding import grounding_task
from guirl.envs.sim.mobile import Mobile
from guirl.envs.sim.oracle import Judgement, Oracle
from guirl.envs.sim.presets import DOMAINS, get_preset
from guirl.envs.sim.render import render
from guirl.envs.sim.tasks import FAMILIES, Task
from guirl.envs.sim.web import Web

DOMAIN_CLASSES = {"desktop": Desktop, "web": Web, "mobile": Mobile}


def available_tasks(domain: str | None = None) -> list[str]:
    """Task family names (``<domain>.ground`` are the single-step grounding families)."""
    names = list(FAMILIES) + [f"{d}.ground" for d in DOMAINS]
    return sorted(n for n in names if domain is None or n.startswith(domain + "."))


class SimEnv:
    """The procedurally generated GUI world (desktop, web, mobile)."""

    def __init__(self, domain: str | None = None, preset: str = "coarse", task: str | None = None,
                 max_steps: int | None = None, screen_size: tuple[int, int] | None = None, oracle: bool = True,
                 auto_terminate: bool = False, ground_walk: int = 3):
        """
        Args:
            domain: desktop, web or mobile (default: the task's domain; with neither, the domain of the family
                each reset's ``options['task']`` names, else desktop).
            preset: UI scale preset, ``coarse`` (large widgets, CPU models), ``realistic`` or ``hd``.
            task: a family from :func:`available_tasks`, ``ground`` (grounding in ``domain``),
                ``multi`` (any multi-step family of the domain) or None (any family of the domain).
            max_steps: step limit per episode (default: 2 x the plan length + 4).
            screen_size: (width, height) to override the preset's screen size.
            oracle: fill ``valid_actions`` in every observation and ``info["advancing"]`` after every
                step (costs time; ``is_advancing`` works either way; sub-goals and plans are always given).
            auto_terminate: end the episode as soon as the goal state is reached.
            ground_walk: most random clicks before a grounding target is chosen.
        """
        if task is not None and task not in ("ground", "multi") and task not in available_tasks():
            raise ValueError(f"unknown sim task {task!r}; choose one of {available_tasks()} or 'ground' / 'multi'")
        #: a domain named by neither argument follows the task each reset asks for (``options["task"]``)
        self.domain_follows_task = domain is None and not (task and "." in task)
        if domain is None:
            domain = task.split(".")[0] if task and "." in task else "desktop"
        if domain not in DOMAINS:
            raise ValueError(f"unknown sim domain {domain!r}; choose one of {list(DOMAINS)}")
        if task and "." in task and not task.startswith(domain + "."):
            raise ValueError(f"task {task!r} is not in domain {domain!r}")
        self.domain_name, self.task_name = domain, task
        self.preset_name, self.screen_size = preset, screen_size
        self.preset = get_preset(preset, domain, screen_size)
        self.max_steps, self.use_oracle, self.auto_terminate = max_steps, oracle, auto_terminate
        self.ground_walk = ground_walk
        self.domain = DOMAIN_CLASSES[domain]()
        self.world: World | None = None
        self.task: Task | None = None
        self.oracle: Oracle | None = None

    # -- episode ----------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Observation:
        options = options or {}
        self.seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        rng = random.Random(f"sim:{self.seed}")
        if self.domain_follows_task and isinstance(options.get("task"), str) and "." in options["task"]:
            self._use_domain(options["task"].split(".")[0])
        content = make_content(rng)
        self.world = World(self.domain, content, self.preset)
        family = options.get("task", self.task_name)
        choices = list(available_tasks(self.domain_name))
        if family in (None, "multi"):
            pool = [n for n in choices if not n.endswith(".ground")] if family == "multi" else choices
            family = rng.choice(pool)
        elif family == "ground":
            family = f"{self.domain_name}.ground"
        if family not in choices:
            raise ValueError(f"unknown task {family!r} for domain {self.domain_name!r}; choose one of {choices}")
        if family.endswith(".ground"):
            self.task = grounding_task(self.world, rng, self.ground_walk)
        else:
            self.task = FAMILIES[family][1](content, rng)
            self.world.state.update(self.task.setup)
        self.oracle = Oracle(self.world, self.task)
        self.steps, self.over = 0, False
        self.anchor = state_key(self.world.state)
        self.high_water = 0  # the most progress reached this episode
        self.limit = 1 if self.task.single_step else (self.max_steps or 2 * len(self.task.milestones) + 4)
        self._judgement: Judgement | None = None
        return self._observe({})

    def _use_domain(self, domain: str) -> None:
        if domain not in DOMAINS:
            raise ValueError(f"unknown sim domain {domain!r} (from the task's name); choose one of {list(DOMAINS)}")
        if domain != self.domain_name:
            self.domain_name, self.domain = domain, DOMAIN_CLASSES[domain]()
            self.preset = get_preset(self.preset_name, domain, self.screen_size)

    @property
    def state(self) -> dict:
        return self.world.state

    def judgement(self) -> Judgement:
        """The oracle's verdict on the current state (cached until the next step)."""
        if self._judgement is None:
            self._judgement = self.oracle.judge(self.world.state, self.anchor)
        return self._judgement

    def snapshot(self) -> dict[str, Any]:
        """Where the episode is now (state, last on-track state, best progress, step count), for :meth:`restore`."""
        if self.world is None:
            raise RuntimeError("call reset() before snapshot()")
        return {"state": dict(self.world.state), "anchor": self.anchor, "high_water": self.high_water,
                "steps": self.steps, "over": self.over}

    def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Put the episode back where :meth:`snapshot` was taken (same seed and task); returns its observation."""
        if self.world is None:
            raise RuntimeError("call reset() with the snapshot's seed and task before restore()")
        self.world.state = dict(snapshot["state"])
        self.anchor, self.high_water = snapshot["anchor"], snapshot["high_water"]
        self.steps, self.over = snapshot["steps"], snapshot["over"]
        self._judgement = None
        return self._observe({})

    def step(self, action: Action) -> StepResult:
        if self.world is None:
            raise RuntimeError("call reset() before step()")
        if self.over:
            info = {"effect": "episode_over", "reason": "the episode has ended; call reset()"}
            return self._observe(info), 0.0, True, False, info
        if not isinstance(action, Action):
            info = {"effect": "invalid_action", "reason": f"not an Action: {getattr(action, 'reason', action)!r}"}
            return self._finish_step(info, terminated=False, success=False)
        state = self.world.state
        if action.type in (ActionType.TERMINATE, ActionType.ANSWER):
            success = self.oracle.finish_correct(state, action)
            return self._finish_step({"effect": "ended", "advancing": success}, terminated=True, success=success)
        new_state, info = self.world.simulate(state, action)
        if self.use_oracle:
            advancing = self.oracle.advances(state, action, self.anchor, self.judgement())
            info["advancing"] = advancing
        else:  # without the oracle only progress is tracked
            advancing = self.oracle.rank(new_state) > self.oracle.rank(state)
        self.world.state = new_state
        if advancing:
            self.anchor = state_key(new_state)
        done = self.oracle.done(new_state)
        terminated = self.task.single_step or (self.auto_terminate and done)
        return self._finish_step(info, terminated=terminated, success=done if terminated else False)

    def _finish_step(self, info: dict, terminated: bool, success: bool) -> StepResult:
        self.steps += 1
        self._judgement = None
        truncated = not terminated and self.steps >= self.limit
        self.over = terminated or truncated
        info["success"] = bool(terminated and success)
        obs = self._observe(info)
        return obs, 1.0 if info["success"] else 0.0, terminated, truncated, obs.info

    def _observe(self, extra: dict) -> Observation:
        state = self.world.state
        screen = self.world.screen(state)
        progress = self.oracle.progress(state)
        milestones = self.task.milestones
        subtasks = [Subtask(description=m.description,
                            status="done" if i < progress else "in_progress" if i == progress else "pending")
                    for i, m in enumerate(milestones)]
        self.high_water = max(self.high_water, progress)
        info = {"task": self.task.family, "domain": self.domain_name, "preset": self.preset.name, "seed": self.seed,
                "step": self.steps, "max_steps": self.limit, "progress": progress, "milestones": len(milestones),
                **extra}
        valid, on_track = None, True
        if self.use_oracle and not self.over:
            judgement = self.judgement()
            valid, on_track = judgement.actions, judgement.on_track
            info["on_track"] = on_track
        if progress == len(milestones):
            sub_goal = "The task is done: finish" + (" with the answer" if self.task.answer else "")
        else:
            regressed = progress < self.high_water  # a wrong action undid some progress
            sub_goal = milestones[min(self.high_water, len(milestones) - 1) if regressed else progress].description
            if regressed or not on_track:
                sub_goal = f"Get back on track, then: {sub_goal}"
        return Observation(screenshot=render(screen, self.preset), instruction=self.task.instruction,
                           a11y=screen.a11y(), valid_actions=valid, sub_goal=sub_goal, subtasks=subtasks, info=info)

    def close(self) -> None:
        self.world = None

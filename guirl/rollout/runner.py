"""The multi-turn episode runner: any policy against any Env.

Each step: the :class:`~guirl.rollout.window.HistoryBuilder` builds the
history window, the policy answers (raw text and/or Action), text is parsed
with the runner's action format, the action is executed, and a
:class:`StepRecord` keeps the step's exact policy inputs, output (prompt,
sampled tokens) and timings. An episode ends when the environment
terminates it, the policy terminates, the step limit is reached, or the
environment fails (browser crash: recorded as a failed episode with the
reason; the next reset restarts it).

Group rollouts (G episodes of one task and seed, GRPO) are :meth:`run_group`;
many episodes in parallel over an :class:`~guirl.envs.pool.EnvPool` are
:func:`guirl.rollout.parallel.run_parallel`, which drives the same
:class:`EpisodeState` machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from guirl.actions.formats.registry import parse_action
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.envs.base import Env, Observation, StepResult
from guirl.rollout.policy import Policy, PolicyInput, PolicyOutput, as_policy
from guirl.rollout.window import HistoryBuilder, PastStep, WindowHistory


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode to run: task (passed as reset option ``task``), seed, group member."""

    task: str | None = None
    seed: int | None = None
    group: int = 0  # index of this episode in its GRPO group
    options: dict[str, Any] = field(default_factory=dict)

    def reset_options(self) -> dict[str, Any]:
        return {**self.options, **({"task": self.task} if self.task is not None else {})}


@dataclass
class StepRecord:
    """One step as it happened: inputs, output, executed action, result, timings (seconds)."""

    index: int
    inputs: PolicyInput
    output: PolicyOutput
    action: Action | None  # what was executed (None: the output did not parse)
    parse_failure: str | None = None
    reward: float = 0.0
    terminated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class Rollout:
    """A finished episode in memory (turn it into a schema Episode with a TrajectoryRecorder)."""

    spec: EpisodeSpec
    instruction: str
    steps: list[StepRecord]
    success: bool
    failure_reason: str | None
    total_reward: float
    final_observation: Observation | None = None
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    #: the task played: ``spec.task``, or the one the environment chose and reported at reset
    task: str | None = None


def default_history(policy) -> HistoryBuilder:
    """The history builder of a model policy's prompt spec; the last 3 outputs for any other policy."""
    from guirl.models.prompts import PromptSpec
    from guirl.rollout.history import history_builder

    spec = getattr(getattr(policy, "model", None), "prompt", None)
    return history_builder(spec) if isinstance(spec, PromptSpec) else WindowHistory()


class EpisodeState:
    """One episode's progress, advanced by whoever owns the environment."""

    def __init__(self, runner: EpisodeRunner, spec: EpisodeSpec, episode_info: dict[str, Any] | None = None):
        self.runner, self.spec = runner, spec
        self.episode_info = {"task": spec.task, "seed": spec.seed, "group": spec.group, **(episode_info or {})}
        self.steps: list[StepRecord] = []
        self.observation: Observation | None = None
        self.pending: StepRecord | None = None
        self.result: Rollout | None = None
        self.started = time.perf_counter()
        self.reset_s = 0.0

    def begin(self, observation: Observation, reset_s: float) -> None:
        self.observation, self.reset_s = observation, reset_s
        if self.episode_info.get("task") is None and observation.info.get("task") is not None:
            self.episode_info["task"] = str(observation.info["task"])  # the environment chose it

    def decide(self) -> Action | None:
        """Call the policy; returns the action to execute, or None (unparsable output: a no-op step)."""
        obs = self.observation
        assert obs is not None and self.pending is None
        past = [PastStep(s.index, s.inputs.screenshot, s.action, s.output.text) for s in self.steps]
        window = self.runner.history(past)
        inputs = PolicyInput(
            instruction=obs.instruction,
            screenshot=obs.screenshot,
            frame=obs.frame,
            history=window.items,
            history_images=window.images,
            history_crops=list(window.crops) or [None] * len(window.images),
            step_index=len(self.steps),
            observation=obs,
            episode=dict(self.episode_info, history_steps=window.step_indices),
        )
        start = time.perf_counter()
        output = self.runner.policy(inputs)
        policy_s = time.perf_counter() - start
        action, failure = self.runner.to_action(output, obs)
        self.pending = StepRecord(
            index=len(self.steps),
            inputs=inputs,
            output=output,
            action=action,
            parse_failure=failure,
            timings={"policy": policy_s},
        )
        return action

    def observe(self, result: StepResult | None, env_s: float) -> bool:
        """Record the pending step's outcome (``None``: nothing executed); returns whether the episode ended."""
        step, self.pending = self.pending, None
        assert step is not None
        step.timings["env"] = env_s
        if result is not None:
            obs, reward, terminated, truncated, info = result
            step.reward, step.terminated, step.info = float(reward), bool(terminated or truncated), dict(info)
            self.observation = obs
        self.steps.append(step)
        if step.terminated:
            success = bool(step.info.get("success", step.reward > 0))
            reason = None if success else _end_reason(step)
            return self._finish(success, reason)
        if step.action is not None and step.action.type is ActionType.TERMINATE:
            return self._finish(bool(step.info.get("success", False)), "the policy terminated before success")
        if len(self.steps) >= self.runner.max_steps:
            return self._finish(False, f"step limit reached ({self.runner.max_steps} steps)")
        return False

    def fail(self, reason: str) -> None:
        """End the episode as failed (environment error); a pending step is kept with the error."""
        if self.pending is not None:
            self.pending.info["env_error"] = reason
            self.steps.append(self.pending)
            self.pending = None
        self._finish(False, reason, crashed=True)

    def _finish(self, success: bool, reason: str | None, crashed: bool = False) -> bool:
        total = sum(s.reward for s in self.steps)
        self.result = Rollout(
            spec=self.spec,
            instruction=self.observation.instruction if self.observation is not None else "",
            steps=self.steps,
            success=success,
            failure_reason=reason,
            total_reward=total,
            final_observation=self.observation,
            timings={"reset": self.reset_s, "episode": time.perf_counter() - self.started},
            extra={"crashed": crashed, **{k: v for k, v in self.episode_info.items() if k == "worker"}},
            task=self.episode_info.get("task"),
        )
        return True


def _end_reason(step: StepRecord) -> str:
    reason = step.info.get("reason")
    return f"the environment ended the episode without success (reward {step.reward:g}" + (
        f", reason: {reason})" if reason else ")"
    )


class EpisodeRunner:
    """Run a policy on environments, step by step (see module docstring).

    Args:
        policy: a Policy, any callable ``(PolicyInput) -> PolicyOutput | Action | str``,
            or ``"module:callable"``.
        max_steps: step limit per episode.
        history: the history builder (default: the one a model policy's prompt spec names,
            :func:`guirl.rollout.history.history_builder`, so a model sees the history it was
            trained with; last 3 outputs without images for other policies).
        action_format: registered format used to parse text answers (e.g. ``qwen_computer_use``).
        on_episode: called with every finished Rollout (e.g. ``TrajectoryRecorder.record``).
    """

    def __init__(
        self,
        policy: Policy | Callable[[PolicyInput], Any] | str,
        max_steps: int = 10,
        history: HistoryBuilder | None = None,
        action_format: str | None = None,
        on_episode: Callable[[Rollout], Any] | None = None,
    ):
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.policy = as_policy(policy)
        self.max_steps = max_steps
        self.history = history if history is not None else default_history(self.policy)
        self.action_format = action_format
        self.on_episode = on_episode

    def to_action(self, output: PolicyOutput, obs: Observation) -> tuple[Action | None, str | None]:
        """The executable action of an output, or ``(None, why not)``."""
        action = output.action
        if action is None and output.text is not None:
            if self.action_format is None:
                return None, "the policy answered with text but the runner has no action_format to parse it"
            action = parse_action(output.text, self.action_format, obs.frame)
        if isinstance(action, ParseFailure):
            return None, action.reason
        if action is None:
            return None, "the policy returned neither an action nor text"
        return action, None

    def run_episode(self, env: Env, spec: EpisodeSpec | None = None) -> Rollout:
        """Run one episode on ``env``; environment errors end it as failed, never raise."""
        state = EpisodeState(self, spec or EpisodeSpec())
        start = time.perf_counter()
        try:
            obs = env.reset(seed=state.spec.seed, options=state.spec.reset_options() or None)
        except Exception as err:  # crash boundary: the env restarts on its next reset
            state.fail(f"reset failed: {type(err).__name__}: {err}")
            return self.finish_episode(state)
        state.begin(obs, time.perf_counter() - start)
        while state.result is None:
            action = state.decide()
            if action is None:
                state.observe(None, 0.0)
                continue
            start = time.perf_counter()
            try:
                result = env.step(action)
            except Exception as err:  # crash boundary, as above
                state.fail(f"step {len(state.steps)} failed: {type(err).__name__}: {err}")
                break
            state.observe(result, time.perf_counter() - start)
        return self.finish_episode(state)

    def run_group(self, env: Env, task: str | None, seed: int | None, group_size: int) -> list[Rollout]:
        """G episodes of the same task and seed (a GRPO group), one after another."""
        return [self.run_episode(env, EpisodeSpec(task=task, seed=seed, group=g)) for g in range(group_size)]

    def run_many(self, env: Env, specs: Iterable[EpisodeSpec]) -> list[Rollout]:
        return [self.run_episode(env, spec) for spec in specs]

    def finish_episode(self, state: EpisodeState) -> Rollout:
        """Hand a finished episode to ``on_episode`` and return its Rollout."""
        assert state.result is not None
        if self.on_episode is not None:
            self.on_episode(state.result)
        return state.result


def group_specs(tasks: Iterable[str | None], seeds: Iterable[int], group_size: int = 1) -> list[EpisodeSpec]:
    """Every (task, seed) pair, ``group_size`` times each (GRPO groups are consecutive)."""
    seeds = list(seeds)
    return [EpisodeSpec(task=t, seed=s, group=g) for t in tasks for s in seeds for g in range(group_size)]

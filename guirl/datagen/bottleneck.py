"""Reasoning-bottleneck steps (InfiGUI-R1 stage 1, docs/methods.md section 3).

A step ``s`` is a reasoning bottleneck when the base model fails given the
screenshot and the overall goal but succeeds once it is also told the step's
ground-truth sub-goal::

    S_bottleneck = { s | not correct(M(I_s, G)) and correct(M(I_s, G, g_s)) }

Here ``G`` is the episode instruction and ``g_s`` the step's ``sub_goal``
(else its step-level ``instruction``, the AndroidControl low-level
instruction, when that differs from ``G``). ``M(I_s, G, g_s)`` is the same
policy prompted with :func:`with_subgoal` - the goal, a newline and
``Current sub-goal: <g_s>`` - as its instruction. Correct means step success
under :func:`guirl.matching.step.match_action` against ``A*_t``
(``valid_actions``): type, target and value.

With ``samples = k > 1`` each condition is sampled k times and a condition is
correct by ``rule``: ``majority`` (more than half of the k samples succeed),
``any`` (at least one) or ``all``. The paper uses one greedy prediction
(``k = 1``, where the three rules agree).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from PIL import Image

from guirl.actions.types import Action, ParseFailure
from guirl.data.schema import Episode, HistoryItem, Step, StepLabel
from guirl.matching.step import match_action

#: (instruction, screenshot, history) -> one predicted action in screen pixels (or why not).
PolicyFn = Callable[[str, Image.Image, Sequence[HistoryItem]], Action | ParseFailure]
CorrectRule = Literal["majority", "any", "all"]
CORRECT_RULES = ("majority", "any", "all")
SUBGOAL_TEMPLATE = "{goal}\nCurrent sub-goal: {sub_goal}"


@runtime_checkable
class SamplingPolicy(Protocol):
    """A policy that draws k samples in one call (batched generation); :class:`SamplingModelPolicy` is one."""

    def sample(self, instruction: str, screenshot: Image.Image, history: Sequence[HistoryItem],
               num_samples: int) -> list[Action | ParseFailure]: ...


def step_goal(episode: Episode) -> str:
    """``G``: the overall goal of an episode."""
    return episode.instruction


def step_subgoal(episode: Episode, step: Step) -> str | None:
    """``g_s``: the step's sub-goal, else its step instruction when that is not the goal itself."""
    if step.sub_goal and step.sub_goal.strip():
        return step.sub_goal.strip()
    if step.instruction and step.instruction.strip() and step.instruction.strip() != episode.instruction.strip():
        return step.instruction.strip()
    return None


def with_subgoal(goal: str, sub_goal: str, template: str = SUBGOAL_TEMPLATE) -> str:
    """The instruction of ``M(I_s, G, g_s)``: the goal followed by the sub-goal."""
    return template.format(goal=goal, sub_goal=sub_goal)


def is_correct(pred: Action | ParseFailure | None, step: Step) -> bool:
    """Step success of ``pred`` (screen pixels) against the step's valid actions."""
    size = (step.screenshot.width, step.screenshot.height)
    return match_action(pred, step.valid_actions, screen_size=size, a11y=step.a11y).success


def decide(num_correct: int, num_samples: int, rule: CorrectRule) -> bool:
    """Whether a condition counts as correct from its k sample outcomes."""
    if rule == "majority":
        return 2 * num_correct > num_samples
    if rule == "any":
        return num_correct > 0
    if rule == "all":
        return num_correct == num_samples
    raise ValueError(f"unknown correctness rule {rule!r}; choose one of {CORRECT_RULES}")


def draw(policy_fn: PolicyFn | SamplingPolicy, instruction: str, screenshot: Image.Image,
         history: Sequence[HistoryItem], num_samples: int) -> list[Action | ParseFailure]:
    """``num_samples`` predictions: one batched call for a :class:`SamplingPolicy`, else k calls."""
    if isinstance(policy_fn, SamplingPolicy):
        return list(policy_fn.sample(instruction, screenshot, history, num_samples))
    return [policy_fn(instruction, screenshot, history) for _ in range(num_samples)]


def load_screenshot(root: Path, step: Step) -> Image.Image:
    path = Path(root) / step.screenshot.path
    if not path.is_file():
        raise FileNotFoundError(f"screenshot {step.screenshot.path!r} not found under {root}; "
                                "pass the directory of the episodes .jsonl as root")
    with Image.open(path) as image:
        return image.convert("RGB")


def eligible(step: Step) -> bool:
    """Steps that can be scored and trained on: they have A*_t and are not recorded mistakes."""
    return bool(step.valid_actions) and step.label is not StepLabel.ERROR


@dataclass
class BottleneckRecord:
    """Outcome of the two conditions at one step (``correct_*`` count successful samples;
    ``correct_with`` is None when the step was solved without the sub-goal, so not run)."""

    episode_id: str
    step_index: int
    correct_without: int
    correct_with: int | None
    samples: int
    bottleneck: bool


@dataclass
class BottleneckReport:
    records: list[BottleneckRecord] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def keys(self) -> set[tuple[str, int]]:
        """``(episode id, step index)`` of every bottleneck step."""
        return {(r.episode_id, r.step_index) for r in self.records if r.bottleneck}


def find_bottlenecks(
    policy_fn: PolicyFn | SamplingPolicy,
    episodes: Sequence[Episode],
    root: str | Path,
    *,
    samples: int = 1,
    rule: CorrectRule = "majority",
    template: str = SUBGOAL_TEMPLATE,
    max_steps: int | None = None,
) -> BottleneckReport:
    """Run ``M(I_s, G)`` and ``M(I_s, G, g_s)`` on every eligible step with a sub-goal.

    ``root`` is the dataset directory the screenshot paths are relative to.
    Counts: ``bottleneck/steps_seen``, ``.../no_subgoal`` (skipped: nothing
    to give), ``.../not_eligible`` (no valid actions or an ERROR label),
    ``.../checked``, ``.../solved_without_subgoal`` (the model already gets
    it), ``.../bottlenecks``, ``.../policy_calls``.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if rule not in CORRECT_RULES:
        raise ValueError(f"unknown correctness rule {rule!r}; choose one of {CORRECT_RULES}")
    counts = dict.fromkeys(("steps_seen", "not_eligible", "no_subgoal", "checked", "solved_without_subgoal",
                            "bottlenecks", "policy_calls"), 0)
    report = BottleneckReport()
    steps = ((episode, step) for episode in episodes for step in episode.steps)
    for episode, step in steps:
        if max_steps is not None and counts["checked"] >= max_steps:
            break
        counts["steps_seen"] += 1
        sub_goal = step_subgoal(episode, step)
        if not eligible(step):
            counts["not_eligible"] += 1
            continue
        if sub_goal is None:
            counts["no_subgoal"] += 1
            continue
        counts["checked"] += 1
        image = load_screenshot(Path(root), step)
        goal = step_goal(episode)
        plain = draw(policy_fn, goal, image, step.history, samples)
        n_without = sum(is_correct(p, step) for p in plain)
        counts["policy_calls"] += samples
        if decide(n_without, samples, rule):
            counts["solved_without_subgoal"] += 1
            report.records.append(BottleneckRecord(episode.id, step.index, n_without, None, samples, False))
            continue  # correct without the sub-goal: not a bottleneck, the second condition is not needed
        guided = draw(policy_fn, with_subgoal(goal, sub_goal, template), image, step.history, samples)
        n_with = sum(is_correct(p, step) for p in guided)
        counts["policy_calls"] += samples
        hit = decide(n_with, samples, rule)
        counts["bottlenecks"] += hit
        report.records.append(BottleneckRecord(episode.id, step.index, n_without, n_with, samples, hit))
    report.counts = {f"bottleneck/{k}": v for k, v in counts.items()}
    return report


class SamplingModelPolicy:
    """A guirl policy (:func:`guirl.models.load.load_policy`) as a :data:`PolicyFn`.

    Samples with :func:`guirl.models.generate.generate_actions`; every call
    uses the next seed (``seed``, ``seed + 1``, ...), so a run is
    reproducible. ``temperature=0`` is greedy. ``fmt`` / ``history_window``
    None: the policy's own prompt spec (how it was trained).
    """

    def __init__(self, policy, fmt: str | None = None, temperature: float = 0.0, max_new_tokens: int = 128,
                 seed: int = 0, history_window: int | None = None):
        self.policy, self.fmt, self.temperature = policy, fmt, temperature
        self.max_new_tokens, self.history_window = max_new_tokens, history_window
        self._next_seed = seed

    def sample(self, instruction: str, screenshot: Image.Image, history: Sequence[HistoryItem],
               num_samples: int) -> list[Action | ParseFailure]:
        from guirl.models.generate import generate_actions

        seed, self._next_seed = self._next_seed, self._next_seed + 1
        generations = generate_actions(self.policy, screenshot, instruction, history, fmt=self.fmt,
                                       num_samples=num_samples, temperature=self.temperature,
                                       max_new_tokens=self.max_new_tokens, seed=seed,
                                       history_window=self.history_window)
        return [g.action for g in generations]

    def __call__(self, instruction: str, screenshot: Image.Image,
                 history: Sequence[HistoryItem]) -> Action | ParseFailure:
        return self.sample(instruction, screenshot, history, 1)[0]

"""Run a policy over recorded steps (offline evaluation inputs).

A policy is anything :func:`guirl.rollout.policy.as_policy` accepts: a
``"module:callable"`` spec, a callable ``(PolicyInput) -> PolicyOutput |
Action | str``, or a :class:`~guirl.rollout.policy.ModelPolicy` around a
guirl model. Raw text is parsed with the given action format in
``PolicyInput.frame`` (screen pixels of the screenshot) and every action
is returned in screen pixels; garbage gives a ParseFailure, never an error.

Offline evaluation feeds the *recorded* history: a step's own ``history``
if the dataset gives one, else the previous steps' recorded actions.
``Observation.valid_actions`` carries A*_t as the replay environment does
(for oracle / scripted sanity checks; a model prompt never shows it).
``PolicyInput.episode`` holds ``seed`` and ``group`` = sample index, so a
ModelPolicy samples differently for each of the k samples of Pass@k.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from guirl.actions.formats.registry import parse_action
from guirl.actions.frames import Frame
from guirl.actions.types import Action, ParseFailure
from guirl.data.schema import Episode, HistoryItem, Step
from guirl.envs.base import Observation
from guirl.rollout.policy import Policy, PolicyInput, to_policy_output


@dataclass
class Prediction:
    action: Action | ParseFailure
    text: str | None = None


def recorded_history(episode: Episode, step: Step) -> list[HistoryItem]:
    if step.history:
        return list(step.history)
    items = []
    for prev in episode.steps[: step.index]:
        action = prev.action or (prev.valid_actions[0] if prev.valid_actions else None)
        items.append(HistoryItem(action=action, description=action.description if action else None))
    return items


def load_screenshot(root: Path, step: Step, where: str) -> Image.Image:
    path = root / step.screenshot.path
    if not path.is_file():
        raise FileNotFoundError(f"{where}: screenshot {path} is missing; pass the dataset directory with --images")
    with Image.open(path) as img:
        return img.convert("RGB")


def step_input(
    episode: Episode, step: Step, root: Path, sample: int = 0, seed: int = 0, history_steps: int | None = 3
) -> PolicyInput:
    """The PolicyInput of a recorded step; the history keeps the last ``history_steps`` items
    (nAO window, docs/methods.md section 5; None keeps all)."""
    screenshot = load_screenshot(root, step, f"episode {episode.id} step {step.index}")
    instruction = step.instruction or episode.instruction
    obs = Observation(
        screenshot=screenshot,
        instruction=instruction,
        a11y=step.a11y,
        valid_actions=list(step.valid_actions),
        sub_goal=step.sub_goal,
        info={"episode": episode.id, "goal": episode.instruction},
    )
    history = recorded_history(episode, step)
    if history_steps is not None:
        history = history[-history_steps:] if history_steps > 0 else []
    return PolicyInput(
        instruction=instruction,
        screenshot=screenshot,
        frame=Frame.screen(*screenshot.size),
        history=history,
        history_images=[None] * len(history),
        step_index=step.index,
        observation=obs,
        episode={"id": episode.id, "seed": seed, "group": sample, "task": episode.task},
    )


def predict(policy: Policy, inputs: PolicyInput, fmt: str | None) -> Prediction:
    """One policy call -> action in screen pixels of ``inputs.screenshot``."""
    out = to_policy_output(policy(inputs), getattr(policy, "__name__", "policy"))
    width, height = inputs.screenshot.size
    action = out.action
    if action is None:
        if out.text is None:
            return Prediction(ParseFailure(reason="the policy returned neither text nor an action"))
        if fmt is None:
            failure = ParseFailure(reason="text output needs an action format (--format)", raw=out.text[:200])
            return Prediction(failure, out.text)
        action = parse_action(out.text, fmt, inputs.frame)
    if action:
        screen = Frame.screen(width, height)
        if action.frame.kind == "screen" and action.frame.width is None:
            action = action.model_copy(update={"frame": screen})
        try:
            action = action.to_frame(screen)
        except ValueError as err:
            action = ParseFailure(reason=f"cannot convert to screen pixels: {err}", raw=(out.text or "")[:200])
    return Prediction(action, out.text)


def predict_steps(
    policy: Policy,
    items: list[tuple[Episode, Step]],
    root: str | Path,
    fmt: str | None = None,
    sampler: Policy | None = None,
    num_samples: int = 0,
    seed: int = 0,
    history_steps: int | None = 3,
) -> tuple[list[Prediction], list[list[Prediction]] | None]:
    """Greedy predictions with ``policy``; ``num_samples`` more per step with ``sampler``."""
    root = Path(root)
    greedy, samples = [], [] if num_samples else None
    for episode, step in items:
        greedy.append(predict(policy, step_input(episode, step, root, 0, seed, history_steps), fmt))
        if num_samples:
            pol = sampler or policy
            row = [
                predict(pol, step_input(episode, step, root, j + 1, seed, history_steps), fmt)
                for j in range(num_samples)
            ]
            samples.append(row)
    return greedy, samples

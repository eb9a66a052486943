"""SFT examples (``cfg``: an SFTConfig): a recorded step and the answer the model should write (the target action, its thought, a
privileged block's references, a given prefix), built from episodes. The collator and the trainer
(:mod:`guirl.trainers.sft`) turn them into tokens; the LiteGUI teacher's own-prefix data
(:mod:`guirl.trainers.own_prefix`) builds them too."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from guirl.actions import Action, get_format
from guirl.data.io import read_episodes
from guirl.data.schema import Episode, Step, StepLabel
from guirl.models.guidance import Guidance
from guirl.models.prompts import written_action


@dataclass
class Example:
    """One SFT sample: a recorded step and the target text the model should write."""

    episode: Episode
    step: Step
    root: Path
    target: Action
    reasoning: str | None
    guidance: list[Action] | None = None  # reference actions of the privileged block (a teacher's sample)
    guidance_style: str = "reference"  # "reference" (LiteGUI's block) or "analyzer" (ComputerSD's Guide / Avoid)
    avoid: str | None = None  # the analyzer block's Avoid line
    prefix: str | None = None  # start of the answer given as context, not in the loss (a student's own prefix)
    answer: str | None = None  # the answer after ``prefix``, instead of the one written from target / reasoning


def target_action(step: Step, supported: frozenset | None = None) -> Action | None:
    """What the model should do at ``step``: the recorded action, else the
    first of A*_t, skipping actions the output format cannot express
    (``supported`` action types); None if there is nothing to learn.

    Steps labelled ERROR (wrong actions kept as negatives) have no target.
    A box-only action is aimed at its box centre.
    """
    if step.label is StepLabel.ERROR:
        return None
    candidates = ([step.action] if step.action is not None else []) + list(step.valid_actions)
    action = next((a for a in candidates if supported is None or a.type in supported), None)
    if action is not None and action.point is None and action.box is not None:
        action = action.model_copy(update={"point": action.target_point(), "box": None})
    return action


def build_examples(paths: list[str], cfg, seed: int) -> list[Example]:
    """Every step of the episodes in ``paths``, plus direct-action copies."""
    rng = random.Random(seed)
    supported = get_format(cfg.format).supported_types
    examples = []
    for path in paths:
        root = Path(path).parent
        for episode in read_episodes(path):
            for step in episode.steps:
                target = target_action(step, supported)
                if target is None:
                    continue
                reasoning = step_thought(episode, step, cfg.thought) if cfg.with_reasoning else None
                examples.append(Example(episode, step, root, target, reasoning))
                if reasoning and rng.random() < cfg.direct_fraction:
                    examples.append(Example(episode, step, root, target, None))
                if cfg.guidance_fraction and rng.random() < cfg.guidance_fraction:
                    guided = guided_example(episode, step, root, target, reasoning, cfg, rng)
                    if guided is not None:
                        examples.append(guided)
    if not examples:
        raise ValueError(f"no trainable steps in {paths}; generate data with `guirl gen-data` first")
    return examples


def step_thought(episode: Episode, step: Step, thought: str = "recorded") -> str | None:
    """The reasoning an SFT target puts in ``<think>``: the step's recorded reasoning (``recorded``), or its
    current sub-goal (``sub_goal``: what the agent should be doing now, e.g. "Type 'lunch'"; the instruction on
    a step without one)."""
    if thought == "recorded":
        return step.reasoning
    text = step.sub_goal or step.instruction or episode.instruction
    return " ".join(text.split()) or None


def guided_example(episode, step, root, target: Action, reasoning, cfg, rng: random.Random):
    """A copy of a step with a privileged block (:mod:`guirl.models.guidance`) whose target agrees with it:
    shape ``single``: one reference drawn from A*_t, which becomes the target; ``multi``: all of A*_t in a
    shuffled order, target the recorded action. None when the step has no reference the format can write."""
    from guirl.models.guidance import references

    refs = references(step.valid_actions or ([step.action] if step.action is not None else []), cfg.format)
    if not refs:
        return None
    shape = rng.choice(cfg.guidance_shapes)
    if shape == "analyzer":
        ref = rng.choice(refs)
        single = target_action(step.model_copy(update={"action": ref, "valid_actions": [ref]}))
        named = [n.text for n in step.a11y or [] if n.text and n.box and not _holds(n.box, ref)]
        avoid = f"clicking '{rng.choice(named)}'" if named and rng.random() < 0.5 else None
        return Example(episode, step, root, single or target, reasoning, [ref], "analyzer", avoid)
    if shape == "single":
        ref = rng.choice(refs)
        single = target_action(step.model_copy(update={"action": ref, "valid_actions": [ref]}))
        return Example(episode, step, root, single or target, reasoning, [ref])
    refs = list(refs)
    rng.shuffle(refs)
    return Example(episode, step, root, target, reasoning, refs)


def _holds(box, action: Action) -> bool:
    point = action.target_point()
    return point is not None and box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def guidance_text(example: Example, fmt: str, frame) -> str | None:
    """The privileged block of a guided example, in its style."""
    if not example.guidance:
        return None
    if example.guidance_style == "analyzer":
        from guirl.judges.analyzer import analyzer_guidance

        text = analyzer_guidance(example.guidance, fmt, frame)
        return text + (f"\nAvoid: {example.avoid}" if example.avoid else "")
    return Guidance(example.guidance).text(fmt, frame)


def target_text(example: Example, fmt: str, frame) -> str:
    """The answer: ``<think>reasoning</think>`` (if any) then the formatted action (``example.answer`` when
    set: the text after a given prefix).

    Coordinates are rounded to whole numbers of the model's frame, as Qwen-VL
    models write them (pixels of the resized image, or 0-1000).
    """
    if example.answer is not None:
        return example.answer
    answer = written_action(example.target, fmt, frame)
    return f"<think>{example.reasoning}</think>{answer}" if example.reasoning else answer

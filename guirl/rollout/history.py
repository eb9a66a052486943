"""The one history and prompt of a step, for rollout, training and evaluation.

:func:`history_builder` picks the :class:`~guirl.rollout.window.HistoryBuilder`
a :class:`~guirl.models.prompts.PromptSpec` names (nA / nAO windows of
:mod:`guirl.rollout.window`, or CASC of :mod:`guirl.rollout.casc`);
:func:`window_prompt` turns a window into the step's prompt;
:func:`recorded_past` and :func:`recorded_prompt` do the same for a recorded
step (SFT, offline RL, evaluation, data construction).
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from guirl.actions.frames import Frame
from guirl.data.schema import Episode, HistoryItem, Step
from guirl.models.prompts import PromptSpec, step_prompt
from guirl.rollout.casc import CascHistory, window_captions
from guirl.rollout.window import HistoryBuilder, HistoryWindow, PastStep, WindowHistory

# -- one history for rollout, training and evaluation ------------------------------------------------------------


def history_builder(spec, store=None, rollout=None) -> HistoryBuilder:
    """The history builder a :class:`~guirl.models.prompts.PromptSpec` asks for: nA / nAO
    (:class:`~guirl.rollout.window.WindowHistory` with ``spec.history_images`` screenshots) or CASC
    (:class:`~guirl.rollout.casc.CascHistory`, every shown step with its compressed
    screenshot; ``store`` / ``rollout``: the group's shared coordinate history)."""
    casc = getattr(spec, "casc", "off")
    if casc == "off":
        return WindowHistory(spec.history_window, getattr(spec, "history_images", 0),
                             keep_outputs=getattr(spec, "history_text", "output") == "output")
    return CascHistory(spec.history_window, casc, store=store, rollout=rollout)


def shows_images(spec) -> bool:
    return getattr(spec, "history_images", 0) > 0 or getattr(spec, "casc", "off") != "off"


def recorded_past(episode, step, root, images: int = 0) -> list[PastStep]:
    """The previous steps of a recorded ``step`` as :class:`~guirl.rollout.window.PastStep` (its recorded ``history``
    when it has one, else the episode's earlier steps with their ground-truth actions); the
    screenshots of the last ``images`` entries are loaded (from ``root``), the rest stay None."""
    if step.history:
        entries = [(j, h, h.screenshot, h.action) for j, h in enumerate(step.history)]
    else:
        entries = []
        for prev in episode.steps:
            if prev.index >= step.index:
                break
            action = prev.action or (prev.valid_actions[0] if prev.valid_actions else None)
            item = HistoryItem(action=action, description=action.description if action else None)
            entries.append((prev.index, item, prev.screenshot, action))
    past = []
    for k, (index, item, ref, action) in enumerate(entries):
        image = None
        if ref is not None and k >= len(entries) - images:
            with Image.open(Path(root) / ref.path) as img:
                image = img.convert("RGB")
        past.append(PastStep(index, image, action, item.output, item=item))
    return past


def window_prompt(spec, frame: Frame, instruction: str, screenshot: Image.Image, window: HistoryWindow,
                  key: str | None = None, guidance: str | None = None, reasoning: bool | None = None):
    """The step's :class:`~guirl.models.prompts.Prompt` with ``window`` as its history (crop captions
    after cropped images): the one prompt of rollout, training and evaluation."""
    captions = window_captions(window, frame) if window.crops else None
    return step_prompt(spec, frame, instruction, screenshot, window.items, history_images=window.images,
                       guidance=guidance, reasoning=reasoning, key=key, history_captions=captions)


def recorded_prompt(spec: PromptSpec, frame_for, episode: Episode, step: Step, root: Path,
                    guidance: str | None = None, image: Image.Image | None = None):
    """(prompt, screenshot) of a recorded step; the history window comes from ``spec``; ``guidance`` adds a
    privileged block (a teacher's prompt); ``image`` reuses an already opened screenshot."""
    if image is None:
        image = Image.open(Path(root) / step.screenshot.path).convert("RGB")
    past = recorded_past(episode, step, root, images=spec.history_window if shows_images(spec) else 0)
    window = history_builder(spec)(past)
    prompt = window_prompt(spec, frame_for(*image.size), step.instruction or episode.instruction, image, window,
                           key=f"{episode.id}/{step.index}", guidance=guidance)
    return prompt, image

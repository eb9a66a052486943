"""History building: which previous steps a policy sees, and how.

The runner keeps every step of the episode and asks its one
:class:`HistoryBuilder` for the window to show at the next step. Replace the
builder to change the history scheme without touching the runner: e.g. nA
(actions only) vs nAO (actions + observations) histories of UI-S1/CCPO, or a
builder that crops history screenshots around the acted-on point (CASC,
ROADMAP item 5) while keeping their coordinate frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from PIL import Image

from guirl.actions.types import Action
from guirl.data.schema import HistoryItem


@dataclass
class PastStep:
    """What the history builder may use of one finished step."""

    index: int
    screenshot: Image.Image
    action: Action | None  # the executed action (None when the output did not parse)
    output: str | None  # the raw model output y_t, when there was one


@dataclass
class HistoryWindow:
    """The history shown at one step, oldest first.

    ``items[i]`` describes previous step ``step_indices[i]``; ``images[i]`` is
    the screenshot shown with it, or None (text-only history entry).
    """

    items: list[HistoryItem] = field(default_factory=list)
    images: list[Image.Image | None] = field(default_factory=list)
    step_indices: list[int] = field(default_factory=list)


@runtime_checkable
class HistoryBuilder(Protocol):
    def __call__(self, past: Sequence[PastStep]) -> HistoryWindow: ...


class WindowHistory:
    """The last ``steps`` steps as text (raw output, else the action), the last
    ``images`` of them with their screenshots (nAO history when ``images`` > 0,
    nA when 0). ``steps=0`` shows no history."""

    def __init__(self, steps: int = 3, images: int = 0, keep_outputs: bool = True):
        if steps < 0 or images < 0:
            raise ValueError(f"history window sizes must be >= 0, got steps={steps}, images={images}")
        if images > steps:
            raise ValueError(f"images ({images}) cannot exceed steps ({steps}): an image belongs to a shown step")
        self.steps = steps
        self.images = images
        self.keep_outputs = keep_outputs

    def __call__(self, past: Sequence[PastStep]) -> HistoryWindow:
        shown = list(past[-self.steps :]) if self.steps else []
        window = HistoryWindow()
        for position, step in enumerate(shown):
            with_image = position >= len(shown) - self.images
            window.items.append(
                HistoryItem(
                    action=step.action,
                    output=step.output if self.keep_outputs else None,
                    description=step.action.description if step.action is not None else None,
                )
            )
            window.images.append(step.screenshot if with_image else None)
            window.step_indices.append(step.index)
        return window

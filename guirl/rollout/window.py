"""History windows: which previous steps a policy sees, and how (the types and the nA / nAO builder).

The runner keeps every step of the episode and asks its one
:class:`HistoryBuilder` for the window to show at the next step. Replace the
builder to change the history scheme without touching the runner: e.g. nA
(actions only) vs nAO (actions + observations) histories of UI-S1/CCPO, or a
builder that crops history screenshots around the acted-on point (CASC,
:mod:`guirl.rollout.casc`, built on these types) while keeping their coordinate frames: a cropped
history image comes with an :class:`ImageCrop` (its box on the full screen),
so coordinates written in later turns still refer to the full screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, Point
from guirl.data.schema import HistoryItem


@dataclass
class PastStep:
    """What the history builder may use of one finished step."""

    index: int
    screenshot: Image.Image | None  # None: a recorded history entry without a screenshot
    action: Action | None  # the executed action (None when the output did not parse)
    output: str | None  # the raw model output y_t, when there was one
    item: HistoryItem | None = None  # a recorded history entry, shown as it was recorded


@dataclass(frozen=True)
class ImageCrop:
    """Where a cropped history image lies on its full screen.

    ``box`` is ``(x1, y1, x2, y2)`` in whole pixels of the full screen
    (``screen_size`` = ``(width, height)``), right/bottom edges exclusive as in
    ``PIL.Image.crop``; crop pixel ``(u, v)`` is screen pixel
    ``(x1 + u, y1 + v)``, so points map between the two exactly.
    """

    box: tuple[int, int, int, int]
    screen_size: tuple[int, int]

    def __post_init__(self) -> None:
        x1, y1, x2, y2 = self.box
        width, height = self.screen_size
        if width <= 0 or height <= 0:
            raise ValueError(f"screen size must be positive, got {width}x{height}")
        if not (0 <= x1 < x2 <= width and 0 <= y1 < y2 <= height):
            raise ValueError(f"crop box {list(self.box)} is empty or leaves the {width}x{height} screen")

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the cropped image."""
        return (self.box[2] - self.box[0], self.box[3] - self.box[1])

    @property
    def frame(self) -> Frame:
        """The full screen's pixel frame (what coordinates in the history refer to)."""
        return Frame.screen(*self.screen_size)

    @property
    def crop_frame(self) -> Frame:
        """The cropped image's own pixel frame."""
        return Frame.screen(*self.size)

    @property
    def is_whole(self) -> bool:
        return self.box == (0, 0, *self.screen_size)

    def to_crop(self, point: Point, frame: Frame | None = None) -> Point:
        """A full-screen ``point`` (in ``frame``; default screen pixels) in pixels of the crop."""
        x, y = (float(point[0]), float(point[1])) if frame is None else frame.convert_point(point, self.frame)
        return (x - self.box[0], y - self.box[1])

    def to_screen(self, point: Point, frame: Frame | None = None) -> Point:
        """A crop-pixel ``point`` on the full screen, in ``frame`` (default screen pixels)."""
        full = (float(point[0]) + self.box[0], float(point[1]) + self.box[1])
        return full if frame is None else self.frame.convert_point(full, frame)

    def contains(self, point: Point, frame: Frame | None = None) -> bool:
        """Whether a full-screen ``point`` lies in the crop (edges included)."""
        u, v = self.to_crop(point, frame)
        width, height = self.size
        return 0 <= u <= width and 0 <= v <= height


@dataclass
class HistoryWindow:
    """The history shown at one step, oldest first.

    ``items[i]`` describes previous step ``step_indices[i]``; ``images[i]`` is
    the screenshot shown with it, or None (text-only history entry).
    ``crops[i]`` says where a cropped ``images[i]`` lies on its full screen
    (None: the image is the whole screenshot, or there is none); ``crops`` is
    empty when the builder crops nothing (:class:`WindowHistory`).
    """

    items: list[HistoryItem] = field(default_factory=list)
    images: list[Image.Image | None] = field(default_factory=list)
    step_indices: list[int] = field(default_factory=list)
    crops: list[ImageCrop | None] = field(default_factory=list)

    def crop(self, position: int) -> ImageCrop | None:
        """The crop of ``images[position]`` (None: whole screenshot or no image)."""
        return self.crops[position] if self.crops else None


@runtime_checkable
class HistoryBuilder(Protocol):
    def __call__(self, past: Sequence[PastStep]) -> HistoryWindow: ...


def history_item(step: PastStep, keep_output: bool = True) -> HistoryItem:
    """How a past step appears as text: its raw output (when kept), its action and description
    (a recorded entry as it was recorded)."""
    if step.item is not None:
        return step.item if keep_output or step.item.output is None else step.item.model_copy(update={"output": None})
    return HistoryItem(
        action=step.action,
        output=step.output if keep_output else None,
        description=step.action.description if step.action is not None else None,
    )


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
            window.items.append(history_item(step, self.keep_outputs))
            window.images.append(step.screenshot if with_image else None)
            window.step_indices.append(step.index)
        return window

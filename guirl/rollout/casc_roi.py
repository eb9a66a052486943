"""CASC's region-of-interest geometry: ROI boxes, crops and action points in pixels.

The pure half of :mod:`guirl.rollout.casc` (which re-exports every name here
and documents the ROI rule and its defaults): the ROI of a set of points on a
screen, a screenshot cropped to a box with its place on the full screen kept,
and the points of an Action in pixels of a screenshot.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from PIL import Image

from guirl.actions.frames import QWEN25_FACTOR, Frame
from guirl.actions.types import Action, Point
from guirl.rollout.window import ImageCrop

PixelBox = tuple[int, int, int, int]


@dataclass(frozen=True)
class RoiParams:
    """How an ROI is built from points (paper silent; defaults in the :mod:`guirl.rollout.casc` docstring)."""

    margin: float = 0.15  # fraction of the screen's shorter side added on every side
    min_size: int = 448  # minimum ROI side in pixels (never more than the screen)
    align: int | None = QWEN25_FACTOR  # ROI sides rounded up to a multiple of this (None: no rounding)
    max_distance: float | None = None  # drop predictions farther than this fraction of the diagonal

    def __post_init__(self) -> None:
        if self.margin < 0:
            raise ValueError(f"margin must be >= 0, got {self.margin}")
        if self.min_size < 0:
            raise ValueError(f"min_size must be >= 0, got {self.min_size}")
        if self.align is not None and self.align < 1:
            raise ValueError(f"align must be a positive number of pixels or None, got {self.align}")
        if self.max_distance is not None and self.max_distance < 0:
            raise ValueError(f"max_distance must be >= 0 or None, got {self.max_distance}")


DEFAULT_ROI = RoiParams()


# -- pure geometry ------------------------------------------------------------------------------------------------
def _axis(lo: float, hi: float, size: int, pad: int, min_len: int, align: int | None) -> tuple[int, int]:
    """The integer interval ``[start, end]`` of one ROI side, containing ``[lo, hi]`` and inside ``[0, size]``."""
    lo_i, hi_i = math.floor(lo), math.ceil(hi)
    length = max(hi_i - lo_i + 2 * pad, min_len, 1)
    if align:
        length = -(-length // align) * align
    if length >= size:
        return 0, size
    start = lo_i - (length - (hi_i - lo_i)) // 2  # centred on the points (extra >= 0, so start <= lo)
    start = min(max(start, 0), size - length)  # shifted onto the screen, never shrunk
    return start, start + length


def roi_box(
    points: Iterable[Point],
    screen_size: tuple[int, int],
    margin: float = DEFAULT_ROI.margin,
    min_size: int = DEFAULT_ROI.min_size,
    align: int | None = DEFAULT_ROI.align,
) -> PixelBox:
    """The region of interest ``(x1, y1, x2, y2)`` (whole pixels) of ``points`` on a ``W x H`` screen.

    Every point (clamped to the screen) lies in the box (edges included) and the box lies in the screen.
    ``margin`` is a fraction of the screen's shorter side added around the points' bounding box,
    ``min_size`` the least side in pixels, ``align`` rounds sides up to multiples (Qwen-VL patches).
    """
    width, height = screen_size
    if width <= 0 or height <= 0:
        raise ValueError(f"screen size must be positive, got {width}x{height}")
    clamped = [(min(max(float(x), 0.0), width), min(max(float(y), 0.0), height)) for x, y in points]
    if not clamped:
        raise ValueError("an ROI needs at least one point")
    if any(math.isnan(c) for p in clamped for c in p):
        raise ValueError(f"ROI points must be numbers, got {clamped}")
    pad = math.ceil(margin * min(width, height))
    xs, ys = [p[0] for p in clamped], [p[1] for p in clamped]
    x1, x2 = _axis(min(xs), max(xs), width, pad, min_size, align)
    y1, y2 = _axis(min(ys), max(ys), height, pad, min_size, align)
    return (x1, y1, x2, y2)


def roi_from(
    annotated: Sequence[Point],
    predicted: Sequence[Point],
    screen_size: tuple[int, int],
    params: RoiParams = DEFAULT_ROI,
) -> PixelBox | None:
    """The ROI of one step from its annotated and predicted points (None: no point at all).

    With ``params.max_distance`` and at least one annotated point, predictions farther than
    ``max_distance`` x the screen diagonal from every annotated point are left out.
    """
    kept = list(predicted)
    if params.max_distance is not None and annotated:
        limit = params.max_distance * math.hypot(*screen_size)
        kept = [p for p in kept if min(math.dist(p, a) for a in annotated) <= limit]
    points = [*annotated, *kept]
    if not points:
        return None
    return roi_box(points, screen_size, params.margin, params.min_size, params.align)


@dataclass
class HistoryImage:
    """A history image and where it lies on its full screen (``crop.box`` in full-screen pixels)."""

    image: Image.Image
    crop: ImageCrop

    @property
    def box(self) -> PixelBox:
        return self.crop.box

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.crop.screen_size

    @property
    def frame(self) -> Frame:
        """The full screen's pixel frame."""
        return self.crop.frame

    def to_crop(self, point: Point, frame: Frame | None = None) -> Point:
        return self.crop.to_crop(point, frame)

    def to_screen(self, point: Point, frame: Frame | None = None) -> Point:
        return self.crop.to_screen(point, frame)


def crop_image(image: Image.Image, box: Sequence[int]) -> HistoryImage:
    """``image`` (a full screenshot) cropped to ``box`` (whole pixels ``x1, y1, x2, y2``)."""
    pixel_box = tuple(int(v) for v in box)
    if len(pixel_box) != 4 or any(int(v) != v for v in box):
        raise ValueError(f"a crop box is four whole pixel coordinates x1, y1, x2, y2, got {list(box)}")
    crop = ImageCrop(pixel_box, image.size)  # type: ignore[arg-type]  # validates the box is on the screen
    return HistoryImage(image.crop(pixel_box), crop)


def action_points(action: Action, screen_size: tuple[int, int], frame: Frame | None = None) -> list[Point]:
    """``point``, ``end_point`` and the corners of ``box`` of ``action``, in pixels of a ``W x H`` screenshot.

    ``frame`` overrides the action's own frame; a screen frame without a size is read as the
    screenshot's pixels.
    """
    return points_in_pixels(raw_points(action), frame if frame is not None else action.frame, screen_size)


def raw_points(action: Action) -> list[Point]:
    points = [p for p in (action.point, action.end_point) if p is not None]
    if action.box is not None:
        points += [action.box[:2], action.box[2:]]
    return points


def points_in_pixels(points: Iterable[Point], frame: Frame, screen_size: tuple[int, int]) -> list[Point]:
    """``points`` (in ``frame``) in pixels of a ``W x H`` screen."""
    width, height = screen_size
    if frame.kind == "screen" and frame.width is None:
        return [(float(x), float(y)) for x, y in points]
    out = []
    for point in points:
        u, v = frame.to_unit(point)
        out.append((u * width, v * height))
    return out

"""Coordinate frames and Qwen-VL's smart_resize rule.

A coordinate means nothing without its frame; every stored point says which:

- ``screen``: pixels of the original screen (``width`` x ``height``);
- ``resized``: pixels of the image the model saw after smart_resize
  (Qwen2.5-VL's absolute coordinates; ``width`` x ``height`` = resized size);
- ``relative``: ``0..scale`` on both axes regardless of size (Qwen3-VL uses
  ``scale=1000``; some of its docs say 0-999, use ``scale=999`` for those;
  ``scale=1`` is the unit square, AITW-style normalised coordinates).

Every conversion goes through the unit square, so any frame converts to any
other exactly (up to float rounding).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

#: Qwen2.5-VL: 14 px patches merged 2x2 -> 28; Qwen3-VL: 16 px patches -> 32.
QWEN25_FACTOR = 28
QWEN3_FACTOR = 32
#: transformers' Qwen2-VL / Qwen2.5-VL image processor defaults.
QWEN25_MIN_PIXELS = 56 * 56
QWEN25_MAX_PIXELS = 28 * 28 * 1280


def smart_resize(
    height: int,
    width: int,
    factor: int = QWEN25_FACTOR,
    min_pixels: int = QWEN25_MIN_PIXELS,
    max_pixels: int = QWEN25_MAX_PIXELS,
) -> tuple[int, int]:
    """Qwen-VL's resize rule: ``(height, width)`` -> multiples of ``factor``.

    Both sides are rounded to the nearest multiple of ``factor``; if the area
    leaves ``[min_pixels, max_pixels]`` the image is scaled (keeping its
    aspect ratio) to fit, flooring when shrinking and ceiling when growing.
    Matches ``transformers.models.qwen2_vl.image_processing_qwen2_vl.smart_resize``
    (a test checks it), without importing transformers.
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"smart_resize needs a positive image size, got height={height}, width={width}")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(
            f"aspect ratio of {width}x{height} is over 200, which Qwen-VL processors reject; crop the image"
        )
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


class Frame(BaseModel):
    """The coordinate frame of a point or box (see module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["screen", "resized", "relative"]
    width: int | None = None
    height: int | None = None
    scale: float | None = None

    @model_validator(mode="after")
    def _complete(self) -> Frame:
        if self.kind == "relative":
            if self.scale is None or self.scale <= 0:
                raise ValueError("a relative frame needs a positive scale (1000 for Qwen3-VL, 1 for unit)")
            if self.width is not None or self.height is not None:
                raise ValueError("a relative frame has no width/height; use kind='screen' or 'resized'")
        elif self.scale is not None:
            raise ValueError(f"a {self.kind} frame has width/height, not scale")
        elif self.width is not None and (self.width <= 0 or self.height is None or self.height <= 0):
            raise ValueError(f"{self.kind} frame size must be positive, got {self.width}x{self.height}")
        return self

    # -- constructors ---------------------------------------------------------
    @classmethod
    def screen(cls, width: int | None = None, height: int | None = None) -> Frame:
        """Original screen pixels (size may be unknown until an image is seen)."""
        return cls(kind="screen", width=width, height=height)

    @classmethod
    def resized(
        cls,
        screen_width: int,
        screen_height: int,
        factor: int = QWEN25_FACTOR,
        min_pixels: int = QWEN25_MIN_PIXELS,
        max_pixels: int = QWEN25_MAX_PIXELS,
    ) -> Frame:
        """Qwen2.5-VL absolute pixels in the smart-resized image of a screen."""
        h, w = smart_resize(screen_height, screen_width, factor, min_pixels, max_pixels)
        return cls(kind="resized", width=w, height=h)

    @classmethod
    def relative(cls, scale: float = 1000) -> Frame:
        """``0..scale`` on both axes (Qwen3-VL: 1000)."""
        return cls(kind="relative", scale=scale)

    @classmethod
    def unit(cls) -> Frame:
        return cls(kind="relative", scale=1.0)

    # -- conversion -----------------------------------------------------------
    def _size(self) -> tuple[float, float]:
        if self.kind == "relative":
            return (self.scale, self.scale)  # type: ignore[return-value]
        if self.width is None or self.height is None:
            raise ValueError(
                f"the {self.kind} frame has no size, so its coordinates cannot be converted; "
                f"build it with Frame.{self.kind}(width, height)"
            )
        return (float(self.width), float(self.height))

    def to_unit(self, point: tuple[float, float]) -> tuple[float, float]:
        sx, sy = self._size()
        return (point[0] / sx, point[1] / sy)

    def from_unit(self, point: tuple[float, float]) -> tuple[float, float]:
        sx, sy = self._size()
        return (point[0] * sx, point[1] * sy)

    def convert_point(self, point: tuple[float, float], dst: Frame) -> tuple[float, float]:
        """``point`` (in this frame) expressed in ``dst``."""
        if dst == self:
            return (float(point[0]), float(point[1]))
        return dst.from_unit(self.to_unit(point))

    def diagonal(self) -> float:
        """Length of the frame's diagonal (for normalised distances)."""
        sx, sy = self._size()
        return math.hypot(sx, sy)

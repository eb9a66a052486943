"""Helpers both AITW layouts share (:mod:`guirl.data.adapters.aitw` re-exports them).

AITW's action ids other than DUAL_POINT, normalised points and
``(y, x, height, width)`` annotation boxes read and checked, box lookup and
conversion to pixels, the x/y swap tally, and screenshot lookup that can step
over missing images. The rules are described in the ``aitw`` module docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, Box
from guirl.data.adapters._common import AdapterError, direction_from_finger, image_ref, numbers, record_error
from guirl.data.schema import ImageRef

_SIMPLE = {5: ActionType.BACK, 6: ActionType.HOME, 7: ActionType.ENTER}
_EPS = 1e-6  # containment tolerance in normalised units (AITW's test is inclusive)

Norm = tuple[float, float]  # a normalised (x, y) point
NormBox = tuple[float, float, float, float]  # a normalised (x1, y1, x2, y2) box


def non_pointer_action(kind: int, typed: Callable[[], str]) -> Action | None:
    """AITW's action ids other than DUAL_POINT (both layouts use them); None for an unknown id."""
    if kind == 3:
        return Action(type=ActionType.TYPE, text=typed())
    if kind in _SIMPLE:
        return Action(type=_SIMPLE[kind])
    if kind in (10, 11):
        return Action(type=ActionType.TERMINATE, status="success" if kind == 10 else "failure")
    return None


def normalised(value: Any, first: str, file: Path, where: str, field: str, shot: ImageRef | None) -> Norm:
    """A normalised 2-vector given ``first``-coordinate first (``"x"`` or ``"y"``), as (x, y)."""
    a, b = numbers(value, 2, file, where, field)
    x, y = (a, b) if first == "x" else (b, a)
    if not (0 <= x <= 1 and 0 <= y <= 1):
        order = "[x, y]" if first == "x" else "[y, x]"
        hint = ""
        if shot is not None and max(a, b) > 1 and min(a, b) >= 0:
            hint = f" (these look like pixels of the {shot.width}x{shot.height} screenshot)"
        raise record_error(file, where, f"field '{field}' {value!r} is not a normalised {order} in 0-1{hint}")
    return (x, y)


def boxes_yxhw(flat: Any, file: Path, where: str, field: str) -> list[NormBox]:
    """A flat list of AITW ``(y, x, height, width)`` normalised boxes as (x1, y1, x2, y2)."""
    if flat is None:
        return []
    if not isinstance(flat, list) or len(flat) % 4:
        raise record_error(file, where, f"field '{field}' must hold 4 numbers per element (y, x, height, width)")
    boxes = []
    for j in range(len(flat) // 4):
        y, x, h, w = numbers(flat[4 * j : 4 * j + 4], 4, file, where, f"{field}[{4 * j}:{4 * j + 4}]")
        if h < 0 or w < 0 or not all(-0.01 <= v <= 1.01 for v in (y, x, y + h, x + w)):
            raise record_error(
                file, where, f"field '{field}' element {j} {[y, x, h, w]!r} is not a normalised "
                "(y, x, height, width) box in 0-1"
            )
        boxes.append((x, y, x + w, y + h))
    return boxes


def _inside(p: Norm, boxes: list[NormBox]) -> NormBox | None:
    for b in boxes:
        if b[0] - _EPS <= p[0] <= b[2] + _EPS and b[1] - _EPS <= p[1] <= b[3] + _EPS:
            return b
    return None


def px_box(b: NormBox, screen: Frame) -> Box:
    unit = Frame.unit()
    x1, y1 = unit.convert_point(b[:2], screen)
    x2, y2 = unit.convert_point(b[2:], screen)
    return (x1, y1, x2, y2)


def _yxhw(b: NormBox) -> list[float]:
    return [round(v, 4) for v in (b[1], b[0], b[3] - b[1], b[2] - b[0])]


class SwapCheck:
    """Tally of taps / scrolls that fit as given vs only with x and y swapped (see :mod:`guirl.data.adapters.aitw`)."""

    def __init__(self, mode: str, file: Path, scope: str, expected: str):
        self.mode, self.file, self.scope, self.expected = mode, file, scope, expected
        self.fits = 0
        self.swapped: list[tuple[str, str]] = []

    def tap(self, point: Norm, boxes: list[NormBox], where: str) -> bool:
        """Record a tap; True when it falls in no box (flag it)."""
        if not boxes:
            return False
        if _inside(point, boxes):
            self.fits += 1
            return False
        hit = _inside((point[1], point[0]), boxes)
        if hit is not None:
            self._swapped(where, f"the tap read as (x, y) = ({point[0]:.4g}, {point[1]:.4g}) falls in no annot_position "
                          f"box, but (x, y) = ({point[1]:.4g}, {point[0]:.4g}) falls in box (y, x, h, w) = {_yxhw(hit)}")
        return True

    def scroll(self, text_dir: str, touch: Norm, lift: Norm, where: str) -> bool:
        """Record a scroll whose text names ``text_dir``; True when the finger path disagrees (flag it)."""
        if direction_from_finger(touch, lift) == text_dir:
            self.fits += 1
            return False
        swapped = direction_from_finger((touch[1], touch[0]), (lift[1], lift[0]))
        if swapped == text_dir:
            self._swapped(where, f"the finger path {touch} -> {lift} (x, y) is a '{direction_from_finger(touch, lift)}' "
                          f"scroll, the text says '{text_dir}', which the path gives with x and y swapped")
        return True

    def _swapped(self, where: str, detail: str) -> None:
        if self.mode == "step":
            raise record_error(self.file, where, f"{detail}: the coordinates look swapped; {self.expected}")
        self.swapped.append((where, detail))

    def finish(self) -> None:
        if self.mode == "off" or not self.swapped or len(self.swapped) <= self.fits:
            return
        where, detail = self.swapped[0]
        raise record_error(
            self.file, where, f"{detail}; in {self.scope}, {len(self.swapped)} taps / scrolls fit only with x and y "
            f"swapped and {self.fits} fit as given: the coordinates look swapped; {self.expected} "
            "(swap_check='off' skips this check)"
        )


def checked_image(root: Path, rel: str, file: Path, where: str, size=None, skip: bool = False) -> ImageRef | None:
    try:
        return image_ref(root, rel, file, where, size=size)
    except AdapterError as err:
        if skip and not (root / rel).is_file():
            return None
        if not (root / rel).is_file():
            raise AdapterError(f"{err} (or pass missing_images='skip' to step over missing screenshots)") from None
        raise

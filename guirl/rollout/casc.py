"""CASC: coordinate-aware spatial compression of the history (CCPO).

What it does
------------
In an nAO history (the last ``n`` actions with their screenshots, CCPO §3.1)
the screenshot of a past *coordinate* action is cropped to a region of
interest (ROI) around where the action happened; the screenshot of a past
*non-coordinate* action is dropped (MAX-COMPRESS, the paper's main setting)
or kept whole (MIN-COMPRESS, appendix A.4). The ROI of a step is built from
the step's *annotated* point(s) and the *predicted* points of the group's
rollouts at that step: with progressive rollout the G rollouts of a task
share one coordinate history (§3.2), so every rollout of the group sees the
same crop of the same past step, and more rollouts make the ROI "more
precise and estimated with higher confidence" (A.5).

A cropped history image keeps its box on the full screen
(:class:`~guirl.rollout.window.ImageCrop`): coordinates written in the
history text still refer to the full screen, and map to and from the crop
exactly (crop pixel ``(u, v)`` is screen pixel ``(x1 + u, y1 + v)``).
:func:`crop_caption` is a one-line caption a prompt builder can put next to a
cropped image ("[crop 120,840,568,1288]": the crop's corners in the frame the model writes, so a
point it reads off the crop maps back by one addition; short, since a tiny tokenizer spends a token per
digit).

Pieces
------
The first three are defined in :mod:`guirl.rollout.casc_roi` and re-exported here.

- :func:`roi_box` (pure): the ROI of a set of points on a ``W x H`` screen.
- :func:`crop_image` (pure): an image cropped to a box, as a :class:`HistoryImage`.
- :func:`action_points`: the points of an Action in pixels of a screenshot.
- :class:`CoordinateHistory`: the group's shared store, step index ->
  annotated points and each rollout's predicted points.
- :class:`CascHistory`: the :class:`~guirl.rollout.window.HistoryBuilder`.

Paper facts relied on (the CCPO paper; docs/methods.md section 5)
-----------------------------------------------------------------
- §3.1 / §4.2: nAO history, 3AO by default; base models Qwen2.5-VL (§4.3).
- §3.2: "all rollouts share the same coordinate history"; "each turn adds
  context around the annotated and predicted coordinates. This yields a
  confident ROI over the image derived from accumulated sampling."
- §3.3: coordinate actions A_wc "such as click, long-press, select and
  scroll" ("We treat scroll as a coordinate action"); non-coordinate A_nc
  "such as type, wait, open, and complete": "we remove their corresponding
  images from the trajectory".
- A.2 per dataset: AndroidControl / GUI-Odyssey A_wc = click, long press,
  scroll; AITW A_wc = click, scroll; Mind2Web A_wc = click, hover, enter,
  type, select: every Mind2Web action is a coordinate action
  (``all_coordinate=True``).
- A.4: MAX-COMPRESS "retains only visuals from coordinate-related actions,
  discarding all other historical images"; MIN-COMPRESS "compresses only
  visuals from coordinate-related actions, leaving visuals from
  non-coordinate actions unchanged".

Parameters where the paper is silent (:class:`RoiParams`)
---------------------------------------------------------
The paper gives no ROI formula, margin or minimum size. Here the ROI is the
bounding box of the points (clamped to the screen), grown by ``margin`` on
every side, widened to at least ``min_size`` pixels per side, rounded up to a
multiple of ``align`` pixels, centred on the points' box and shifted (never
shrunk) to stay on the screen; a side that would reach the screen's side is
the whole side. Defaults: ``margin=0.15`` of the screen's shorter side
(162 px on a 1080x2400 phone), ``min_size=448`` px (16 Qwen2.5-VL merged
patches), ``align=28`` (Qwen2.5-VL's 14 px patches merged 2x2; 32 for
Qwen3-VL, None for none). ``max_distance`` (default None: keep all) drops
predicted points farther than that fraction of the screen diagonal from
every annotated point, so one wild rollout does not blow the ROI up to the
whole screen. For scale: the paper's token savings (-39% at 1AO, -53% at 3AO
with MAX, A.4) imply history crops of roughly a fifth to a third of the
screen's area on average; a single point with these defaults gives a
448x448 crop (8% of a 1080x2400 screen), a spread group a larger one.

Departures and choices
----------------------
- Coordinate types (:data:`COORDINATE_TYPES`): the paper's click, long
  press, select, scroll, plus their kin in guirl's action space: double /
  triple / right / middle click, move (hover: an A_wc on Mind2Web), drag and
  swipe (the swipe is AndroidControl's scroll; both its start and end point
  enter the ROI). Mouse down/up, keys, type, wait, back, home, enter, open
  app, answer and terminate are non-coordinate unless ``all_coordinate``.
- A coordinate action with no point anywhere (a direction-only scroll, the
  AndroidControl / AITW ``scroll`` layouts) has no ROI: its image is kept
  whole (``pointless="full"``, default) or dropped (``"drop"``).
- An annotated box adds its corners, so the whole target element is in the ROI.
- Points off the screen (a wild prediction) are clamped to its edge.
- Whether a past step is a coordinate step is decided by the action the
  rollout executed at it (semi-online RL patches a wrong action with the
  expert's, so rollouts agree on it once patched).
- The store is keyed by step index: rollouts must be on the same screen at
  a given step (semi-online RL over one offline trajectory, as CCPO). For
  identical crops across the group, every rollout's prediction at step t
  must be in the store before any rollout's prompt at step t+1 is built
  (lock-step group sampling); ``freeze_on_read=True`` instead fixes a step's
  ROI the first time it is read, whatever arrives later.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from guirl.actions.frames import QWEN25_FACTOR, QWEN25_MAX_PIXELS, QWEN25_MIN_PIXELS, Frame, smart_resize
from guirl.actions.types import Action, ActionType, Point
from guirl.rollout.casc_roi import (
    DEFAULT_ROI,
    HistoryImage,
    PixelBox,
    RoiParams,
    action_points,
    crop_image,
    points_in_pixels,
    raw_points,
    roi_from,
)
from guirl.rollout.window import HistoryWindow, ImageCrop, PastStep, WindowHistory, history_item

#: Actions whose screenshot CASC crops (see the module docstring for the choice).
COORDINATE_TYPES: frozenset[ActionType] = frozenset(
    {
        ActionType.CLICK,
        ActionType.DOUBLE_CLICK,
        ActionType.TRIPLE_CLICK,
        ActionType.RIGHT_CLICK,
        ActionType.MIDDLE_CLICK,
        ActionType.LONG_PRESS,
        ActionType.SELECT,
        ActionType.SCROLL,
        ActionType.SWIPE,
        ActionType.DRAG,
        ActionType.MOVE,
    }
)

Mode = Literal["max", "min", "off"]


# -- captions and token counts of history images ------------------------------------------------------------------
def crop_caption(crop: ImageCrop, frame: Frame | None = None) -> str:
    """Which full-screen region a cropped history image shows, as its corners in ``frame`` (default
    screen pixels, the frame the model writes coordinates in): ``[crop 120,840,568,1288]``; in a
    relative frame ``[crop 111,350,526,537 of 0-1000]``."""
    x1, y1, x2, y2 = crop.box
    if frame is None or (frame.kind == "screen" and frame.width is None):
        frame = crop.frame
    a = crop.frame.convert_point((x1, y1), frame)
    b = crop.frame.convert_point((x2, y2), frame)
    corners = ",".join(str(round(c)) for c in (*a, *b))
    if frame.kind == "relative":
        scale = int(frame.scale) if float(frame.scale).is_integer() else frame.scale  # type: ignore[arg-type]
        return f"[crop {corners} of 0-{scale}]"
    return f"[crop {corners}]"


def window_captions(window: HistoryWindow, frame: Frame | None = None) -> list[str | None]:
    """One caption per history entry: :func:`crop_caption` for a cropped image, else None."""
    return [None if crop is None else crop_caption(crop, frame) for crop in (window.crops or [None] * len(window.items))]


def image_tokens(
    size: tuple[int, int],
    factor: int = QWEN25_FACTOR,
    min_pixels: int = QWEN25_MIN_PIXELS,
    max_pixels: int = QWEN25_MAX_PIXELS,
) -> int:
    """Visual tokens Qwen-VL spends on an image of ``(width, height)`` (merged patches after smart_resize)."""
    height, width = smart_resize(size[1], size[0], factor, min_pixels, max_pixels)
    return (height // factor) * (width // factor)


# -- the group's shared coordinate history -----------------------------------------------------------------------
@dataclass
class _StepPoints:
    annotated: list[tuple[Point, Frame]] = field(default_factory=list)
    predicted: dict[object, list[tuple[Point, Frame]]] = field(default_factory=dict)
    anonymous: list[tuple[Point, Frame]] = field(default_factory=list)


Target = Action | Sequence[Action] | Point | Sequence[Point]


def _points_of(target: Target, frame: Frame | None) -> list[tuple[Point, Frame]]:
    if isinstance(target, Action):
        return [(p, frame if frame is not None else target.frame) for p in raw_points(target)]
    if target and all(isinstance(a, Action) for a in target):  # several valid actions (A*_t)
        return [pair for action in target for pair in _points_of(action, frame)]  # type: ignore[arg-type]
    if frame is None:
        raise ValueError("points given without an Action need their frame (e.g. Frame.screen(1080, 2400))")
    if len(target) == 2 and all(isinstance(c, (int, float)) for c in target):
        target = [target]  # type: ignore[list-item]
    return [((float(p[0]), float(p[1])), frame) for p in target]  # type: ignore[index]


class CoordinateHistory:
    """The coordinate history one GRPO group shares (progressive rollout, CCPO §3.2).

    Step index -> the annotated point(s) of the step and the predicted points of the group's rollouts
    there, added as rollouts progress. Points keep their frames and are put in pixels of the step's
    screenshot when an ROI is built, so rollouts in any frame share one store. Predictions with a
    ``rollout`` key replace that rollout's earlier ones at the step (safe to record again); without one
    they are appended. Thread-safe.
    """

    def __init__(self, freeze_on_read: bool = False):
        self.freeze_on_read = freeze_on_read
        self._steps: dict[int, _StepPoints] = {}
        self._frozen: dict[tuple[int, tuple[int, int], RoiParams], PixelBox | None] = {}
        self._lock = threading.Lock()

    def annotate(self, step: int, target: Target, frame: Frame | None = None) -> None:
        """Set the annotated point(s) of ``step``: points (with their ``frame``), or Actions (e.g. the step's
        valid actions A*_t: each one's point, end point and box corners, in its own frame)."""
        with self._lock:
            self._steps.setdefault(step, _StepPoints()).annotated = _points_of(target, frame)

    def add_prediction(
        self,
        step: int,
        target: Target | None,
        rollout: object | None = None,
        frame: Frame | None = None,
    ) -> None:
        """Record a rollout's predicted point(s) at ``step`` (None, or an action without points: nothing)."""
        points = [] if target is None else _points_of(target, frame)
        with self._lock:
            entry = self._steps.setdefault(step, _StepPoints())
            if rollout is None:
                entry.anonymous.extend(points)
            elif points:
                entry.predicted[rollout] = points
            else:
                entry.predicted.pop(rollout, None)

    def __contains__(self, step: int) -> bool:
        return step in self._steps

    def steps(self) -> list[int]:
        return sorted(self._steps)

    def clear(self) -> None:
        with self._lock:
            self._steps.clear()
            self._frozen.clear()

    def annotated(self, step: int, screen_size: tuple[int, int]) -> list[Point]:
        """The annotated points of ``step`` in pixels of a ``W x H`` screenshot."""
        entry = self._steps.get(step)
        return [] if entry is None else _pixels(entry.annotated, screen_size)

    def predicted(self, step: int, screen_size: tuple[int, int]) -> list[Point]:
        """The group's predicted points at ``step`` in pixels of a ``W x H`` screenshot."""
        entry = self._steps.get(step)
        if entry is None:
            return []
        with self._lock:
            pairs = [p for key in sorted(entry.predicted, key=repr) for p in entry.predicted[key]] + entry.anonymous
        return _pixels(pairs, screen_size)

    def roi(
        self,
        step: int,
        screen_size: tuple[int, int],
        params: RoiParams = DEFAULT_ROI,
        extra: Sequence[Point] = (),
    ) -> PixelBox | None:
        """The ROI of ``step`` on a ``W x H`` screenshot (``extra``: more predicted pixel points); None: no point.

        With ``freeze_on_read`` the first ROI read for a step (and screen size and params) is returned
        from then on.
        """
        key = (step, tuple(screen_size), params)
        if self.freeze_on_read and key in self._frozen:
            return self._frozen[key]
        box = roi_from(self.annotated(step, screen_size), [*self.predicted(step, screen_size), *extra],
                       screen_size, params)
        if self.freeze_on_read:
            with self._lock:
                box = self._frozen.setdefault(key, box)  # type: ignore[arg-type]
        return box


def _pixels(pairs: Iterable[tuple[Point, Frame]], screen_size: tuple[int, int]) -> list[Point]:
    return [q for point, frame in pairs for q in points_in_pixels([point], frame, screen_size)]


# -- the history builder ------------------------------------------------------------------------------------------
class CascHistory:
    """nAO history with CASC-compressed screenshots (a :class:`~guirl.rollout.window.HistoryBuilder`).

    Args:
        steps: ``n`` of nAO: the last ``n`` steps are shown, each with its (compressed) screenshot.
        mode: ``"max"`` (MAX-COMPRESS: non-coordinate steps lose their image), ``"min"``
            (MIN-COMPRESS: they keep it whole) or ``"off"`` (exactly ``WindowHistory(n, n)``).
        coordinate_types: the action types whose screenshot is cropped (:data:`COORDINATE_TYPES`).
        all_coordinate: every step is a coordinate step (Mind2Web, CCPO A.2).
        store: the group's shared :class:`CoordinateHistory`; without one a step's ROI is built from
            its own executed action only.
        rollout: this rollout's key in ``store``: its own predicted points are recorded there as it
            builds its history (so the group sees them). Without a key they join its own ROI only.
        roi: ROI parameters (:class:`RoiParams`).
        pointless: the image of a coordinate step with no point anywhere: ``"full"`` or ``"drop"``.
        keep_outputs: show the raw outputs as history text (as :class:`WindowHistory`).
    """

    def __init__(
        self,
        steps: int = 3,
        mode: Mode = "max",
        *,
        coordinate_types: Iterable[ActionType] = COORDINATE_TYPES,
        all_coordinate: bool = False,
        store: CoordinateHistory | None = None,
        rollout: object | None = None,
        roi: RoiParams = DEFAULT_ROI,
        pointless: Literal["full", "drop"] = "full",
        keep_outputs: bool = True,
    ):
        if steps < 0:
            raise ValueError(f"steps (n of nAO) must be >= 0, got {steps}")
        if mode not in ("max", "min", "off"):
            raise ValueError(f"unknown CASC mode {mode!r}; choose 'max', 'min' or 'off'")
        if pointless not in ("full", "drop"):
            raise ValueError(f"pointless must be 'full' or 'drop', got {pointless!r}")
        self.steps, self.mode = steps, mode
        self.coordinate_types = frozenset(coordinate_types)
        self.all_coordinate = all_coordinate
        self.store, self.rollout = store, rollout
        self.roi, self.pointless, self.keep_outputs = roi, pointless, keep_outputs

    def for_rollout(self, rollout: object, store: CoordinateHistory | None = None) -> CascHistory:
        """The same builder for one rollout of a group (sharing ``store``, default this builder's)."""
        return CascHistory(
            self.steps, self.mode, coordinate_types=self.coordinate_types, all_coordinate=self.all_coordinate,
            store=store if store is not None else self.store, rollout=rollout, roi=self.roi,
            pointless=self.pointless, keep_outputs=self.keep_outputs,
        )

    def is_coordinate(self, step: PastStep) -> bool:
        """Whether ``step``'s screenshot is cropped (rather than dropped / kept whole)."""
        if self.all_coordinate:
            return True
        return step.action is not None and step.action.type in self.coordinate_types

    def step_roi(self, step: PastStep) -> PixelBox | None:
        """The ROI of a past coordinate step on its screenshot (None: no point to build one from)."""
        size = step.screenshot.size
        own = action_points(step.action, size) if step.action is not None else []
        if self.store is None:
            return roi_from([], own, size, self.roi)
        if self.rollout is not None:
            self.store.add_prediction(step.index, step.action, rollout=self.rollout)
            own = []
        return self.store.roi(step.index, size, self.roi, extra=own)

    def history_image(self, step: PastStep) -> HistoryImage | None:
        """What a past step shows: its cropped screenshot, the whole one, or None."""
        if step.screenshot is None:  # a recorded history entry without a screenshot
            return None
        whole = HistoryImage(step.screenshot, ImageCrop((0, 0, *step.screenshot.size), step.screenshot.size))
        if not self.is_coordinate(step):
            return whole if self.mode == "min" else None
        box = self.step_roi(step)
        if box is None:
            return whole if self.pointless == "full" else None
        return whole if box == whole.box else crop_image(step.screenshot, box)

    def __call__(self, past: Sequence[PastStep]) -> HistoryWindow:
        if self.mode == "off":
            return WindowHistory(self.steps, self.steps, self.keep_outputs)(past)
        shown = list(past[-self.steps :]) if self.steps else []
        window = HistoryWindow()
        for step in shown:
            shown_image = self.history_image(step)
            window.items.append(history_item(step, self.keep_outputs))
            window.images.append(None if shown_image is None else shown_image.image)
            window.crops.append(None if shown_image is None or shown_image.crop.is_whole else shown_image.crop)
            window.step_indices.append(step.index)
        return window

"""Coordinate frames: round trips screen <-> resized <-> relative 1000 <-> unit, and smart_resize."""

from __future__ import annotations

import random

import pytest

from guirl.actions import Action, ActionType, Frame, smart_resize
from guirl.actions.frames import QWEN3_FACTOR, QWEN25_FACTOR, QWEN25_MAX_PIXELS, QWEN25_MIN_PIXELS


def _sizes(n: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    common = [(1920, 1080), (1080, 2400), (2560, 1440), (3840, 2160), (1280, 720), (800, 600), (1170, 2532), (28, 28)]
    return common + [(rng.randint(30, 5000), rng.randint(30, 5000)) for _ in range(n)]


@pytest.mark.parametrize(("width", "height"), _sizes(60, seed=0))
def test_exact_round_trip_through_every_frame(width: int, height: int) -> None:
    screen = Frame.screen(width, height)
    chain = [Frame.resized(width, height), Frame.relative(1000), Frame.unit(), Frame.resized(width, height, factor=32)]
    rng = random.Random(width * 10_007 + height)
    for _ in range(20):
        start = (rng.uniform(0, width), rng.uniform(0, height))
        point, frame = start, screen
        for nxt in [*chain, screen]:
            point, frame = frame.convert_point(point, nxt), nxt
        assert point == pytest.approx(start, abs=1e-6)  # far within one pixel


@pytest.mark.parametrize(("width", "height"), _sizes(60, seed=1))
def test_integer_coordinates_come_back_within_one_model_unit(width: int, height: int) -> None:
    """Models write integers; rounding in frame F costs at most half a unit of F on the screen.

    E.g. 3840x2160 -> resized 1932x1092 (Qwen2.5 defaults): one resized pixel is ~1.99 screen
    pixels, so rounding moves a point by at most ~1 screen pixel per axis; relative 1000 on
    a 3840-wide screen: one unit is 3.84 px, so at most 1.92 px.
    """
    screen = Frame.screen(width, height)
    rng = random.Random(width + 7 * height)
    for model_frame in (Frame.resized(width, height), Frame.relative(1000)):
        unit_x = width / model_frame._size()[0]
        unit_y = height / model_frame._size()[1]
        for _ in range(20):
            start = (rng.uniform(0, width), rng.uniform(0, height))
            written = tuple(round(v) for v in screen.convert_point(start, model_frame))
            back = model_frame.convert_point(written, screen)
            assert abs(back[0] - start[0]) <= unit_x / 2 + 1e-9
            assert abs(back[1] - start[1]) <= unit_y / 2 + 1e-9


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (1080, 2400), (1000, 1000), (1366, 768)])
def test_screen_pixels_survive_resized_within_one_pixel(width: int, height: int) -> None:
    """For screens the resized image does not shrink much, integer screen pixels round-trip within 1 px."""
    screen, resized = Frame.screen(width, height), Frame.resized(width, height)
    for x in range(0, width, 37):
        y = (x * 7) % height
        written = tuple(round(v) for v in screen.convert_point((x, y), resized))
        back = resized.convert_point(written, screen)
        assert abs(back[0] - x) <= 1 and abs(back[1] - y) <= 1


def test_hand_computed_resize_and_conversion() -> None:
    # 1920x1080, factor 28: round(1080/28)=39 -> 1092, round(1920/28)=69 -> 1932; 1092*1932 = 2,109,744
    # > 28*28*1280 = 1,003,520, so beta = sqrt(1920*1080/1003520) = 1.4377; floor(1080/1.4377/28)=26 -> 728,
    # floor(1920/1.4377/28)=47 -> 1316.
    assert smart_resize(1080, 1920) == (728, 1316)
    frame = Frame.resized(1920, 1080)
    assert (frame.width, frame.height) == (1316, 728)
    # (960, 540) is the screen centre -> (658, 364) resized -> (500, 500) relative 1000.
    assert Frame.screen(1920, 1080).convert_point((960, 540), frame) == pytest.approx((658, 364))
    assert frame.convert_point((658, 364), Frame.relative(1000)) == pytest.approx((500, 500))


def test_action_to_frame_converts_every_coordinate() -> None:
    screen, rel = Frame.screen(2000, 1000), Frame.relative(1000)
    action = Action(type=ActionType.DRAG, point=(200, 100), end_point=(1000, 500), box=(0, 0, 2000, 1000), frame=screen)
    moved = action.to_frame(rel)
    assert moved.point == pytest.approx((100, 100))
    assert moved.end_point == pytest.approx((500, 500))
    assert moved.box == pytest.approx((0, 0, 1000, 1000))
    assert moved.to_frame(screen).point == pytest.approx(action.point)


def test_sizeless_frames_refuse_to_convert_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="no size"):
        Frame(kind="resized").convert_point((1, 2), Frame.unit())


def _transformers_smart_resize():
    """The ``smart_resize`` the installed transformers' public ``Qwen2VLImageProcessor`` resizes with.

    Found through the public class (whatever module it lives in), never skipped: transformers is a
    dependency of guirl, so a moved or renamed function must fail this parity check, not hide it.
    """
    import inspect

    import transformers

    processor_module = inspect.getmodule(transformers.Qwen2VLImageProcessor)
    fn = getattr(processor_module, "smart_resize", None)
    if fn is None:
        pytest.fail(
            f"transformers {transformers.__version__}: no smart_resize next to Qwen2VLImageProcessor "
            f"({processor_module.__name__}); find where it moved and update this parity check",
            pytrace=False,
        )
    return fn


@pytest.mark.parametrize("factor", [14, QWEN25_FACTOR, QWEN3_FACTOR])
@pytest.mark.parametrize(
    ("min_pixels", "max_pixels"),
    [(QWEN25_MIN_PIXELS, QWEN25_MAX_PIXELS), (56 * 56, 14 * 14 * 4 * 1280), (256 * 28 * 28, 6400 * 28 * 28), (4, 10**9)],
)
def test_smart_resize_matches_transformers(factor: int, min_pixels: int, max_pixels: int) -> None:
    hf_smart_resize = _transformers_smart_resize()
    rng = random.Random(factor * 31 + min_pixels)
    sizes = _sizes(150, seed=factor) + [(rng.randint(1, 60), rng.randint(1, 60)) for _ in range(40)]
    for width, height in sizes:
        if max(width, height) / min(width, height) > 200:
            continue
        expected = hf_smart_resize(height, width, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
        assert smart_resize(height, width, factor, min_pixels, max_pixels) == tuple(expected), (width, height)


@pytest.mark.parametrize("patch", [14, 16])  # Qwen2.5-VL, Qwen3-VL
def test_smart_resize_matches_the_public_image_processor(patch: int) -> None:
    """End to end through transformers' public API: the grid the processor returns for an image is
    guirl's smart_resize of its size (so the function checked above is the one the processor uses)."""
    import transformers
    from PIL import Image

    min_pixels, max_pixels = 56 * 56, 28 * 28 * 1280
    processor = transformers.Qwen2VLImageProcessor(
        patch_size=patch, merge_size=2, size={"shortest_edge": min_pixels, "longest_edge": max_pixels}
    )
    for width, height in [(1920, 1080), (1080, 2400), (37, 53), (3000, 20)]:
        grid = processor(images=[Image.new("RGB", (width, height))], return_tensors="pt")["image_grid_thw"][0]
        _, grid_h, grid_w = (int(v) for v in grid)
        expected = smart_resize(height, width, patch * 2, min_pixels, max_pixels)
        assert (grid_h * patch, grid_w * patch) == expected, (width, height)


def test_smart_resize_rejects_what_transformers_rejects() -> None:
    hf_smart_resize = _transformers_smart_resize()
    with pytest.raises(ValueError):
        hf_smart_resize(10, 2500)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2500)
    with pytest.raises(ValueError, match="positive"):
        smart_resize(0, 100)

"""CASC (coordinate-aware spatial compression): ROI geometry, crops and the history builder."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType
from guirl.models.prompts import build_messages
from guirl.rollout.casc import (
    COORDINATE_TYPES,
    CascHistory,
    CoordinateHistory,
    RoiParams,
    action_points,
    crop_caption,
    crop_image,
    image_tokens,
    roi_from,
    window_captions,
)
from guirl.rollout.casc_roi import roi_box
from guirl.rollout.window import ImageCrop, PastStep, WindowHistory

PHONE = (1080, 2400)
PHONE_FRAME = Frame.screen(*PHONE)


def click(x: float, y: float, frame: Frame = PHONE_FRAME) -> Action:
    return Action(type=ActionType.CLICK, point=(x, y), frame=frame)


def typed(text: str = "hello") -> Action:
    return Action(type=ActionType.TYPE, text=text)


def screen(index: int, size: tuple[int, int] = PHONE) -> Image.Image:
    """A screenshot whose pixels tell their own position (and the step in blue)."""
    image = Image.new("RGB", size)
    image.putdata([(x % 256, y % 256, index) for y in range(size[1]) for x in range(size[0])])
    return image


_SCREENS: dict[int, Image.Image] = {}


def phone_screen(index: int) -> Image.Image:
    if index not in _SCREENS:
        _SCREENS[index] = Image.new("RGB", PHONE, (index, 0, 0))
    return _SCREENS[index]


def past(actions: list[Action | None]) -> list[PastStep]:
    return [PastStep(i, phone_screen(i), a, f"output {i}") for i, a in enumerate(actions)]


# -- ROI properties -------------------------------------------------------------------------------------------------
sizes = st.tuples(st.integers(1, 3000), st.integers(1, 3000))
params = st.builds(
    RoiParams,
    margin=st.floats(0, 0.5),
    min_size=st.integers(0, 1200),
    align=st.one_of(st.none(), st.integers(1, 64)),
)


@st.composite
def screen_and_points(draw, max_points: int = 12):
    width, height = draw(sizes)
    point = st.tuples(st.floats(0, width, allow_nan=False), st.floats(0, height, allow_nan=False))
    return (width, height), draw(st.lists(point, min_size=1, max_size=max_points))


def inside(point, box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


@given(screen_and_points(), params)
def test_roi_holds_every_point_and_stays_on_the_screen(case, p):
    size, points = case
    box = roi_box(points, size, p.margin, p.min_size, p.align)
    assert all(isinstance(v, int) for v in box)
    assert 0 <= box[0] < box[2] <= size[0] and 0 <= box[1] < box[3] <= size[1]
    assert all(inside(q, box) for q in points)
    for side, full in ((box[2] - box[0], size[0]), (box[3] - box[1], size[1])):
        assert side >= min(p.min_size, full)  # the minimum size, unless the screen is smaller
        if p.align and side < full:
            assert side % p.align == 0  # a whole number of patches unless it is the whole side


@given(sizes, st.lists(st.tuples(st.floats(-5000, 8000), st.floats(-5000, 8000)), min_size=1, max_size=6))
def test_points_off_the_screen_are_clamped_into_the_roi(size, points):
    box = roi_box(points, size)
    clamped = [(min(max(x, 0), size[0]), min(max(y, 0), size[1])) for x, y in points]
    assert all(inside(q, box) for q in clamped)
    assert 0 <= box[0] < box[2] <= size[0] and 0 <= box[1] < box[3] <= size[1]


@given(screen_and_points(max_points=4), st.data())
def test_point_to_crop_and_back_is_exact(case, data):
    size, points = case
    crop = ImageCrop(roi_box(points, size), size)
    point = data.draw(st.tuples(st.floats(0, size[0]), st.floats(0, size[1])))
    back = crop.to_screen(crop.to_crop(point))
    assert back == pytest.approx(point, abs=1e-9)
    # and through model frames (relative 0-1000, Qwen2.5-VL resized pixels)
    for frame in (Frame.relative(1000), Frame.resized(*size) if min(size) >= 28 else Frame.unit()):
        in_frame = crop.frame.convert_point(point, frame)
        assert crop.to_screen(crop.to_crop(in_frame, frame), frame) == pytest.approx(in_frame, rel=1e-9, abs=1e-9)
    # crop pixels are screen pixels shifted by the box corner
    u, v = crop.to_crop(point)
    assert (u, v) == pytest.approx((point[0] - crop.box[0], point[1] - crop.box[1]))


@settings(max_examples=40, deadline=None)
@given(st.tuples(st.integers(1, 300), st.integers(1, 300)), st.data())
def test_crop_corners_map_to_the_crop_box(size, data):
    point = st.tuples(st.floats(0, size[0]), st.floats(0, size[1]))
    points = data.draw(st.lists(point, min_size=1, max_size=4))
    p = data.draw(params)
    box = roi_box(points, size, p.margin, p.min_size, p.align)
    shown = crop_image(screen(0, size), box)
    assert shown.image.size == shown.crop.size == (box[2] - box[0], box[3] - box[1])
    assert shown.to_screen((0, 0)) == (box[0], box[1])
    assert shown.to_screen(shown.image.size) == (box[2], box[3])
    # the pixel at crop (u, v) is the screen's pixel at to_screen((u, v))
    u = data.draw(st.integers(0, shown.image.width - 1))
    v = data.draw(st.integers(0, shown.image.height - 1))
    x, y = shown.to_screen((u, v))
    assert shown.image.getpixel((u, v)) == (int(x) % 256, int(y) % 256, 0)


def test_roi_of_one_click_on_a_phone():
    box = roi_box([(540, 1200)], PHONE)  # margin 162 px each side -> 324 < 448 minimum
    assert box == (316, 976, 764, 1424)
    assert roi_box([(0, 0)], PHONE) == (0, 0, 448, 448)  # shifted onto the screen, not shrunk
    assert roi_box([(1080, 2400)], PHONE) == (632, 1952, 1080, 2400)
    assert roi_box([(10, 10), (1070, 100)], PHONE)[::2] == (0, 1080)  # wider than the screen allows: whole width


def test_roi_parameters_are_validated():
    with pytest.raises(ValueError, match="margin"):
        RoiParams(margin=-0.1)
    with pytest.raises(ValueError, match="align"):
        RoiParams(align=0)
    with pytest.raises(ValueError, match="at least one point"):
        roi_box([], PHONE)
    with pytest.raises(ValueError, match="leaves"):
        crop_image(phone_screen(0), (0, 0, 2000, 10))
    with pytest.raises(ValueError, match="mode"):
        CascHistory(3, "medium")  # type: ignore[arg-type]


def test_far_predictions_can_be_left_out():
    annotated, predicted = [(540, 1200)], [(560, 1210), (1000, 100)]
    wide = roi_from(annotated, predicted, PHONE)
    tight = roi_from(annotated, predicted, PHONE, RoiParams(max_distance=0.1))
    assert tight == roi_box(annotated + predicted[:1], PHONE)
    assert (wide[2] - wide[0]) * (wide[3] - wide[1]) > (tight[2] - tight[0]) * (tight[3] - tight[1])
    assert roi_from([], [], PHONE) is None


def test_action_points_follow_the_action_frame():
    rel = Action(type=ActionType.CLICK, point=(500, 250), frame=Frame.relative(1000))
    assert action_points(rel, PHONE) == [(540.0, 600.0)]
    resized = Frame.resized(*PHONE)
    pt = PHONE_FRAME.convert_point((108, 240), resized)
    assert action_points(click(*pt, resized), PHONE) == [pytest.approx((108, 240))]
    sizeless = Action(type=ActionType.CLICK, point=(7, 9), frame=Frame.screen())
    assert action_points(sizeless, PHONE) == [(7.0, 9.0)]
    swipe = Action(type=ActionType.SWIPE, point=(100, 2000), end_point=(100, 500), frame=PHONE_FRAME)
    assert action_points(swipe, PHONE) == [(100.0, 2000.0), (100.0, 500.0)]
    boxed = Action(type=ActionType.CLICK, box=(10, 20, 30, 40), frame=PHONE_FRAME)
    assert action_points(boxed, PHONE) == [(10.0, 20.0), (30.0, 40.0)]


def test_caption_names_the_full_screen_region():
    crop = ImageCrop((316, 976, 764, 1424), PHONE)
    assert crop_caption(crop) == "[crop 316,976,764,1424]"
    assert crop_caption(crop, Frame.relative(1000)) == "[crop 293,407,707,593 of 0-1000]"
    resized = Frame.resized(*PHONE)  # the corners in the resized image the model sees (and writes points in)
    x1, y1 = crop.frame.convert_point((316, 976), resized)
    assert crop_caption(crop, resized).startswith(f"[crop {round(x1)},{round(y1)},")


# -- the history builder --------------------------------------------------------------------------------------------
ACTIONS = [click(100, 300), typed(), click(900, 2000), Action(type=ActionType.WAIT, amount=1.0)]


def test_max_compress_drops_non_coordinate_images():
    window = CascHistory(4, "max")(past(ACTIONS))
    assert window.step_indices == [0, 1, 2, 3]
    assert window.images[1] is None and window.images[3] is None
    assert window.crops[1] is None and window.crops[3] is None
    for i, point in ((0, (100, 300)), (2, (900, 2000))):
        assert window.images[i] is not None and window.images[i].size == window.crops[i].size
        assert window.crops[i].contains(point)
        assert window.images[i].size[0] * window.images[i].size[1] < PHONE[0] * PHONE[1]
        assert window.images[i].getpixel((0, 0)) == (i, 0, 0)  # the step's own screenshot
    assert [c is not None for c in window_captions(window)] == [True, False, True, False]


def test_min_compress_keeps_non_coordinate_images_whole():
    steps = past(ACTIONS)
    window = CascHistory(4, "min")(steps)
    assert window.images[1] is steps[1].screenshot and window.images[3] is steps[3].screenshot
    assert window.crops[1] is None and window.crops[3] is None
    assert window.crops[0] is not None and window.crops[2] is not None


@pytest.mark.parametrize("n", [0, 1, 3, 5])
def test_off_is_the_plain_nao_window(n):
    steps = past(ACTIONS + [None])
    plain = WindowHistory(steps=n, images=n)(steps)
    off = CascHistory(n, "off")(steps)
    assert off == plain
    assert off.crop(0) is None if off.items else True
    assert CascHistory(n, "max")(steps).items == plain.items  # CASC changes images only


def test_window_is_the_last_n_steps():
    window = CascHistory(2, "max")(past(ACTIONS))
    assert window.step_indices == [2, 3]
    assert CascHistory(0, "max")(past(ACTIONS)).items == []


def test_pointless_coordinate_steps():
    scroll = Action(type=ActionType.SCROLL, direction="down")
    steps = past([scroll])
    assert CascHistory(1)(steps).images == [steps[0].screenshot]
    assert CascHistory(1, pointless="drop")(steps).images == [None]
    assert ActionType.SCROLL in COORDINATE_TYPES and ActionType.TYPE not in COORDINATE_TYPES


def test_all_coordinate_crops_every_step_around_its_annotation():
    store = CoordinateHistory()
    store.annotate(0, Action(type=ActionType.TYPE, text="shoes", box=(400, 600, 700, 660), frame=PHONE_FRAME))
    window = CascHistory(1, all_coordinate=True, store=store)(past([typed("shoes")]))
    assert window.crops[0] is not None and window.crops[0].contains((400, 600)) and window.crops[0].contains((700, 660))
    assert CascHistory(1, store=store)(past([typed("shoes")])).images == [None]  # not a coordinate step by default


def test_a_group_sees_one_crop_per_past_step():
    annotated = click(540, 1200)
    predictions = [click(520, 1180), click(700, 1500), click(300, 900), click(560, 1250)]
    store = CoordinateHistory()
    store.annotate(0, annotated)
    # lock-step sampling: every rollout's step-0 prediction joins the store before step 1 is prompted
    for g, action in enumerate(predictions):
        store.add_prediction(0, action, rollout=g)
    builder = CascHistory(3, "max", store=store)
    windows = [builder.for_rollout(g)([PastStep(0, phone_screen(0), a, None)]) for g, a in enumerate(predictions)]
    boxes = {w.crops[0].box for w in windows}
    assert len(boxes) == 1
    (box,) = boxes
    assert all(inside(p, box) for a in [annotated, *predictions] for p in action_points(a, PHONE))
    assert len({w.images[0].tobytes() for w in windows}) == 1
    # alone, each rollout would crop around its own point only
    alone = {CascHistory(3)([PastStep(0, phone_screen(0), a, None)]).crops[0].box for a in predictions}
    assert len(alone) > 1
    # the builders recorded their own predictions (keyed, so recording again changes nothing)
    assert len(store.predicted(0, PHONE)) == len(predictions)


def test_rollout_builders_record_their_points_for_the_group():
    store = CoordinateHistory()
    builders = [CascHistory(3, store=store, rollout=g) for g in range(2)]
    builders[0]([PastStep(0, phone_screen(0), click(100, 100), None)])
    late = builders[1]([PastStep(0, phone_screen(0), click(600, 900), None)])
    again = builders[0]([PastStep(0, phone_screen(0), click(100, 100), None)])
    assert again.crops[0] == late.crops[0]  # both points are in the store now
    assert late.crops[0].contains((100, 100)) and late.crops[0].contains((600, 900))


def test_freeze_on_read_fixes_a_steps_roi():
    store = CoordinateHistory(freeze_on_read=True)
    store.annotate(0, click(540, 1200))
    first = store.roi(0, PHONE)
    store.add_prediction(0, click(50, 50), rollout="late")
    assert store.roi(0, PHONE) == first
    assert CoordinateHistory().roi(0, PHONE) is None


def test_points_without_an_action_need_a_frame():
    store = CoordinateHistory()
    store.annotate(1, (0.5, 0.5), frame=Frame.unit())
    store.add_prediction(1, [(10, 10), (20, 20)], frame=PHONE_FRAME)
    assert store.annotated(1, PHONE) == [(540.0, 1200.0)]
    assert store.predicted(1, PHONE) == [(10.0, 10.0), (20.0, 20.0)]
    with pytest.raises(ValueError, match="frame"):
        store.annotate(2, (1, 2))
    store.annotate(3, [click(10, 20), Action(type=ActionType.CLICK, point=(0.5, 0.5), frame=Frame.unit())])
    assert store.annotated(3, PHONE) == [(10.0, 20.0), (540.0, 1200.0)]  # several valid actions, own frames


def test_image_token_savings_on_a_phone_screen():
    """3AO on a 1080x2400 phone: click, type, click. MAX keeps two 448x448 crops of the three screenshots."""
    steps = past([click(540, 1200), typed(), click(200, 400)])
    full = WindowHistory(3, 3)(steps)
    for mode, kept in (("max", 2), ("min", 3)):
        window = CascHistory(3, mode)(steps)
        shown = [im for im in window.images if im is not None]
        assert len(shown) == kept
        area = sum(im.width * im.height for im in shown)
        full_area = sum(im.width * im.height for im in full.images)
        tokens = sum(image_tokens(im.size) for im in shown)
        full_tokens = sum(image_tokens(im.size) for im in full.images)
        if mode == "max":
            assert area == 2 * 448 * 448 and area / full_area < 0.06
            assert tokens == 2 * 16 * 16 and tokens / full_tokens < 0.15
        else:
            assert area < full_area and tokens < full_tokens
    assert image_tokens(PHONE) > 1000  # the whole screen, within Qwen2.5-VL's default max_pixels


def test_prompt_builder_takes_the_window():
    steps = past(ACTIONS)
    window = CascHistory(3, "max")(steps)
    messages, images = build_messages("do it", phone_screen(9), window.items, history_images=window.images)
    assert len(images) == 1 + sum(im is not None for im in window.images)
    assert images[-1] is phone_screen(9)
    assert math.prod(images[0].size) < math.prod(PHONE)

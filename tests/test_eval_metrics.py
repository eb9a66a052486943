"""Metrics on hand-built cases; the working is in the comments.

Includes the edge cases on which the public evaluators disagree: a point on
the box edge, a point just outside the box, point-only targets at various
distances, and a11y candidate boxes (smallest vs any containing box).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.schema import A11yNode, Episode, ImageRef, Step
from guirl.eval.grounding import evaluate_grounding
from guirl.eval.mind2web import evaluate_mind2web, f1_operation_string, operation_string
from guirl.eval.offline import evaluate_offline
from guirl.eval.stats import paired_difference, pass_at_k, success_rate, wilson_interval
from guirl.matching.rules import MATCH_RULES, get_rule, point_matches
from guirl.matching.step import match_action
from guirl.matching.text import anls_match, guilibra_f1, levenshtein, token_f1

SCREEN = (1000, 2000)
BOX = (100.0, 100.0, 200.0, 200.0)


def hit(point, rule, box=BOX, target=None, a11y=None):
    return point_matches(point, target_box=box, target_point=target, screen_size=SCREEN, rule=rule, a11y=a11y)


# -- point-in-box rules -----------------------------------------------------------------------


def test_point_on_edge_inclusive_vs_exclusive():
    # x = 200 is the right edge: SeeClick/ScreenSpot use <=, GUI-Libra uses <
    assert hit((200, 150), "inclusive") is True
    assert hit((200, 150), "exclusive") is False
    assert hit((200, 150), "guilibra") is False


def test_edge_is_exact_for_awkward_floats():
    # centre + half-width = (0.78 + 0.85)/2 + (0.85 - 0.78)/2 = 0.8499999999999999 in floats:
    # an unscaled box must not go through that arithmetic, or the edge point x = 0.85 would miss
    box = (0.78, 0.1, 0.85, 0.7)
    assert point_matches((0.85, 0.5), target_box=box, target_point=None, screen_size=(1, 1))


def test_point_just_outside_box_enlargement():
    # x = 205 is 5 px right of the box. Box 100x100 centred (150,150):
    # x1.2 -> half-width 60 -> [90, 210]: infigui hits. AITW adds 140%: width 240 -> [30, 270]
    assert hit((205, 150), "inclusive") is False
    assert hit((205, 150), "infigui") is True
    assert hit((205, 150), "aitw") is True
    # x = 215: outside [90, 210] but inside [30, 270]; x = 275: outside both
    # (and |dx| = 125 px = 0.125 of W, dy = 0: within the 0.14 radius only if a target point were given)
    assert hit((215, 150), "infigui") is False
    assert hit((215, 150), "aitw") is True
    assert hit((275, 150), "aitw") is False


@pytest.mark.parametrize(
    ("offset", "expected"),
    [
        # screen 1000 x 2000. infigui: |d| <= 0.04 * max(W,H) = 80 px.
        # guilibra: (dx/1000)^2 + (dy/2000)^2 < 0.05^2. aitw: same form, < 0.14^2.
        ((40, 0), {"infigui": True, "guilibra": True, "aitw": True}),  # guilibra: 0.04 < 0.05
        ((60, 0), {"infigui": True, "guilibra": False, "aitw": True}),  # guilibra: 0.06; infigui 60 <= 80
        ((0, 70), {"infigui": True, "guilibra": True, "aitw": True}),  # dy/H = 0.035
        ((0, 110), {"infigui": False, "guilibra": False, "aitw": True}),  # 110 > 80; 0.055 > 0.05; < 0.14
        ((140, 0), {"infigui": False, "guilibra": False, "aitw": True}),  # 0.14 <= 0.14 (AITW's <=)
        ((150, 0), {"infigui": False, "guilibra": False, "aitw": False}),  # 0.15 > 0.14
    ],
)
def test_point_only_targets_distance_rules(offset, expected):
    target = (500.0, 1000.0)
    pred = (target[0] + offset[0], target[1] + offset[1])
    for rule, want in expected.items():
        assert hit(pred, rule, box=None, target=target) is want, rule
    # without a tolerance a point target only matches itself
    assert hit(pred, "inclusive", box=None, target=target) is False
    assert hit(target, "inclusive", box=None, target=target) is True


def test_a11y_smallest_box_vs_any_box():
    # target point (150,150) lies in a button (100..200) inside a container (0..1000 x 0..1000)
    nodes = [
        A11yNode(id="container", role="list", box=(0, 0, 1000, 1000)),
        A11yNode(id="button", role="button", box=BOX),
    ]
    # infigui takes the smallest box holding the target: the button; (500, 500) is outside
    # its x1.2 box and 495 px from the point (> 80): miss.
    assert hit((500, 500), "infigui", box=None, target=(150, 150), a11y=nodes) is False
    assert hit((205, 150), "infigui", box=None, target=(150, 150), a11y=nodes) is True
    # aitw accepts any annotation box holding both points: the container does -> hit
    assert hit((500, 500), "aitw", box=None, target=(150, 150), a11y=nodes) is True


def test_unknown_rule_lists_names():
    with pytest.raises(KeyError, match="known rules"):
        get_rule("nearest")
    assert set(MATCH_RULES) == {"inclusive", "exclusive", "guilibra", "infigui", "infigui_resized", "uis1", "aitw",
                                "odyssey", "uir1"}


def test_infigui_radius_in_resized_pixels():
    # InfiGUI-R1's check_click is called with the resized size: 1080 x 2400 screen resized to 1092 x 2408, the
    # prediction (153.86, 237.69) in resized px = (152.17, 236.90) screen px, target point (71, 288):
    # screen px: 95.91 <= 0.04 * 2400 = 96 -> infigui hits; resized px: 96.77 > 0.04 * 2408 = 96.32 -> miss
    phone, resized = Frame.screen(1080, 2400), Frame(kind="resized", width=1092, height=2408)
    pred = Action(type=ActionType.CLICK, point=(153.86, 237.69), frame=resized)
    gold = [Action(type=ActionType.CLICK, point=(71, 288), frame=phone)]
    assert match_action(pred, gold, screen_size=(1080, 2400), rule="infigui").success is True
    assert match_action(pred, gold, screen_size=(1080, 2400), rule="infigui_resized").success is False
    p = resized.convert_point((153.86, 237.69), phone)
    kw = {"target_box": None, "target_point": (71.0, 288.0), "screen_size": (1080, 2400), "rule": "infigui_resized"}
    assert point_matches(p, **kw, pred_size=(1092, 2408)) is False
    assert point_matches(p, **kw) is True  # no prediction size: screen pixels, as infigui
    # a prediction written in screen pixels: its image is the screen, the two rules agree
    near = Action(type=ActionType.CLICK, point=(71, 384), frame=phone)  # 96 px below: 96 <= 96
    assert match_action(near, gold, screen_size=(1080, 2400), rule="infigui_resized").success is True


def test_aitw_grown_box_is_clamped_like_aitw():
    # AITW _resize_annotation_bounding_boxes on a 1000 x 2000 screen, box x 100..200, y 100..200:
    # normalised top = 0.05, h = 0.05 -> top' = max(0, 0.05 - 0.7*0.05) = 0.015, h' = 2.4*0.05 = 0.12
    #   -> y 30..270 px (centred, no clamp in y);
    # left = 0.1, w = 0.1 -> left' = max(0, 0.1 - 0.07) = 0.03, w' = 0.24 -> x 30..270 px.
    assert hit((150, 269), "aitw") is True
    # Box x 10..110 (left = 0.01, w = 0.1): left' = max(0, 0.01 - 0.07) = 0, w' = 0.24 -> x 0..240 px,
    # where a centred 2.4x box would end at 60 + 120 = 180 px: x = 230 hits under AITW only.
    # (dx = 230 - 60 = 170 px = 0.17 > 0.14, so no target point could rescue it either.)
    box = (10.0, 100.0, 110.0, 200.0)
    assert hit((230, 150), "aitw", box=box) is True
    assert hit((241, 150), "aitw", box=box) is False
    # the same clamp applies to a11y candidates of a point-only target (target (60, 150) in the box)
    nodes = [A11yNode(id="b", role="button", box=box)]
    assert hit((230, 150), "aitw", box=None, target=(60.0, 150.0), a11y=nodes) is True


def test_uis1_distance_is_normalised_without_aspect():
    # UI-S1 check_click: norm((dx/W, dy/H)) <= 0.04; screen 1000 x 2000, target (500, 1000):
    # dx = 50 px -> 0.05 > 0.04: miss (infigui: 50 <= 0.04 * 2000 = 80 px: hit)
    # dy = 70 px -> 0.035 <= 0.04: hit under both
    target = (500.0, 1000.0)
    assert hit((550, 1000), "uis1", box=None, target=target) is False
    assert hit((550, 1000), "infigui", box=None, target=target) is True
    assert hit((500, 1070), "uis1", box=None, target=target) is True
    # boxes: 1.2x about the centre as infigui -> BOX becomes 90..210
    assert hit((205, 150), "uis1") is True and hit((215, 150), "uis1") is False


def test_odyssey_box_is_not_enlarged():
    # GUI-Odyssey click_matching: sam2_bbox as given (edges count) or normalised distance <= 0.14.
    # (205, 150) is 5 px outside BOX: odyssey misses where aitw (box x2.4) hits; no target point here.
    assert hit((200, 150), "odyssey") is True
    assert hit((205, 150), "odyssey") is False and hit((205, 150), "aitw") is True
    # with the target point (150, 150): dx = 55 px = 0.055 <= 0.14 -> hit
    assert hit((205, 150), "odyssey", target=(150.0, 150.0)) is True


# -- statistics -------------------------------------------------------------------------------


def test_wilson_interval_hand_computed():
    # z = 1.95996, p = 0.8, n = 10: z^2/n = 0.38415, denom = 1.38415
    # centre = (0.8 + 0.19207) / 1.38415 = 0.71674
    # half = z/denom * sqrt(0.8*0.2/10 + z^2/400) = 1.41600 * sqrt(0.016 + 0.0096037) = 0.22658
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    # 0 of 10: centre = 0.19207 / 1.38415 = 0.13877, half = 1.41600 * sqrt(0 + 0.0096037) = 0.13877
    # -> (0, 0.27754): the lower end touches 0 exactly
    low, high = wilson_interval(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert success_rate(3, 4)["rate"] == 0.75
    with pytest.raises(ValueError, match="successes <= n"):
        wilson_interval(5, 4)


def test_paired_difference_hand_computed():
    # differences 1, 1, 0, 0, -1: mean 0.2, sample sd sqrt(2.8 / 4) = 0.83666, half 1.959964 * 0.83666 / sqrt(5)
    p = paired_difference([0, 0, 1, 0, 1], [1, 1, 1, 0, 0])
    assert p["diff"] == pytest.approx(0.2) and p["n"] == 5
    assert p["high"] - p["diff"] == pytest.approx(1.959964 * (2.8 / 4) ** 0.5 / 5**0.5, rel=1e-6)
    assert p["low"] == pytest.approx(0.2 - (p["high"] - 0.2))
    assert paired_difference([1], [1]) == {"diff": 0.0, "low": 0.0, "high": 0.0, "n": 1}
    with pytest.raises(ValueError, match="equal, non-empty"):
        paired_difference([1, 0], [1])


def test_pass_at_k_estimator():
    # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(4, 0, 4) == 0.0 and pass_at_k(4, 1, 4) == 1.0


# -- text ---------------------------------------------------------------------------------------


def test_token_f1_and_guilibra_f1():
    # {type,new,york} vs {type,new,york,city}: P = 1, R = 3/4 -> F1 = 2*0.75/1.75 = 6/7
    assert token_f1("TYPE new york", "TYPE new york city") == pytest.approx(6 / 7)
    assert token_f1("", "") == 1.0 and token_f1("CLICK", "") == 0.0
    # GUI-Libra: one word each side and a substring -> 1; MindAct-style F1 says 0
    assert guilibra_f1("york", "newyork") == 1.0 and token_f1("york", "newyork") == 0.0
    assert guilibra_f1("[down]", "down") == 1.0
    # ANLS: "hello wrld" vs "hello world": 1 edit, 1 - 1/11 = 0.91 >= 0.5; "cat" vs "dog": 1 - 3/3 = 0
    assert anls_match("hello wrld", "hello world") and not anls_match("cat", "dog")
    assert anls_match("york", "new york")  # substring
    assert levenshtein("kitten", "sitting") == 3
    # MindAct drops punctuation tokens: {"new", "york", "-"} vs {"new", "york"} -> 1 once "-" goes
    # (kept: P = 2/3, R = 1 -> F1 = 0.8); case kept with lower=False: "York" != "york"
    assert token_f1("new - york", "new york") == pytest.approx(0.8)
    assert token_f1("new - york", "new york", drop_punctuation=True) == 1.0
    assert token_f1("New York", "new york", lower=False) == 0.0


# -- offline step metrics -----------------------------------------------------------------------


def _step(index, valid, a11y=None, size=(100, 200)):
    return Step(
        index=index,
        screenshot=ImageRef(path=f"s{index}.png", width=size[0], height=size[1]),
        valid_actions=valid,
        a11y=a11y,
    )


SCREEN_FRAME = Frame.screen(100, 200)


def test_match_action_frames_and_values():
    gold = [Action(type=ActionType.CLICK, box=(10, 20, 50, 40), frame=SCREEN_FRAME)]
    # relative 0-1000 point (300, 150) on 100x200 -> (30, 30) px: inside the box
    pred = Action(type=ActionType.CLICK, point=(300, 150), frame=Frame.relative(1000))
    m = match_action(pred, gold, screen_size=(100, 200))
    assert (m.type_match, m.grounded, m.success) == (True, True, True)
    # a ParseFailure scores zero everywhere and does not raise
    m = match_action(ParseFailure(reason="garbage"), gold, screen_size=(100, 200))
    assert (m.type_match, m.grounded, m.success, m.needs_point) == (False, False, False, True)
    typed = [Action(type=ActionType.TYPE, text="Hello  World")]
    assert match_action(Action(type=ActionType.TYPE, text="hello world"), typed, screen_size=(100, 200)).success
    partial = Action(type=ActionType.TYPE, text="hello")
    assert not match_action(partial, typed, screen_size=(100, 200)).success  # exact rule
    # GUI-Libra F1: {hello} vs {hello, world}: P=1, R=1/2 -> F1 = 2/3 >= 0.5
    assert match_action(partial, typed, screen_size=(100, 200), value_rule="f1").success
    # ANLS keeps case (as GUI-Odyssey does): "hello" is not in "Hello  World", and
    # 1 - levenshtein/12 = 1 - 8/12 < 0.5 -> no match; "Hello" is a substring -> match
    assert not match_action(partial, typed, screen_size=(100, 200), value_rule="anls").success
    cased = Action(type=ActionType.TYPE, text="Hello")
    assert match_action(cased, typed, screen_size=(100, 200), value_rule="anls").success
    # swipe and scroll are one type (both carry the content direction); direction must agree
    scroll = [Action(type=ActionType.SCROLL, direction="down")]
    assert match_action(Action(type=ActionType.SWIPE, direction="down"), scroll, screen_size=(1, 1)).success
    assert not match_action(Action(type=ActionType.SWIPE, direction="down"), scroll, screen_size=(1, 1),
                            merge_scroll_swipe=False).type_match
    assert not match_action(Action(type=ActionType.SCROLL, direction="up"), scroll, screen_size=(1, 1)).success


def test_value_and_direction_rules_of_other_evaluators():
    typed = [Action(type=ActionType.TYPE, text="New York")]
    size = (100, 200)
    # InfiGUI-R1 / UI-S1 check_text: lower + strip, containment either way
    # "york" in "new york" -> match; " NEW YORK CITY " contains "new york" -> match; "boston" -> no
    for text, want in (("york", True), (" NEW YORK CITY ", True), ("boston", False), ("", True)):
        m = match_action(Action(type=ActionType.TYPE, text=text), typed, screen_size=size, value_rule="substring")
        assert m.success is want, text
    # AITW check_actions_match compares only the type of a TYPE action
    assert match_action(Action(type=ActionType.TYPE, text="boston"), typed, screen_size=size, value_rule="none").success
    with pytest.raises(ValueError, match="value_rule"):
        match_action(Action(type=ActionType.TYPE, text="x"), typed, screen_size=size, value_rule="fuzzy")
    # scroll: AITW compares the main axis only (up matches down, not left); UI-S1 accepts any swipe
    scroll = [Action(type=ActionType.SCROLL, direction="down")]
    up, left = Action(type=ActionType.SCROLL, direction="up"), Action(type=ActionType.SCROLL, direction="left")
    assert match_action(up, scroll, screen_size=size, direction_rule="axis").success
    assert not match_action(left, scroll, screen_size=size, direction_rule="axis").success
    assert match_action(left, scroll, screen_size=size, direction_rule="any").success
    assert not match_action(up, scroll, screen_size=size).success  # default: the direction must agree
    with pytest.raises(ValueError, match="direction_rule"):
        match_action(up, scroll, screen_size=size, direction_rule="diagonal")


def test_evaluate_offline_tm_gr_sr_and_pass_at_k():
    click = Action(type=ActionType.CLICK, box=(10, 20, 50, 40), frame=SCREEN_FRAME)
    steps = [
        ("ep1", _step(0, [click])),
        ("ep1", _step(1, [Action(type=ActionType.TYPE, text="abc")])),
        ("ep2", _step(0, [click, Action(type=ActionType.BACK)])),  # two valid actions
        ("ep2", _step(1, [click])),
    ]
    inside = Action(type=ActionType.CLICK, point=(30, 30), frame=SCREEN_FRAME)
    outside = Action(type=ActionType.CLICK, point=(90, 190), frame=SCREEN_FRAME)
    greedy = [
        inside,  # TM, grounded, success
        Action(type=ActionType.TYPE, text="abd"),  # TM only
        Action(type=ActionType.BACK),  # matches the 2nd valid action: TM + success, not grounded
        outside,  # TM, not grounded
    ]
    res = evaluate_offline(steps, greedy)
    m = res.metrics
    assert m["offline/type_match"] == 1.0  # 4/4
    # pointed steps: 0, 2, 3 (step 2 has a click among its valid actions); grounded: step 0 only -> 1/3
    assert m["offline/grounding_rate"] == pytest.approx(1 / 3)
    assert m["offline/step_success"] == 0.5  # steps 0 and 2
    assert m["offline/episode_success"] == 0.0  # ep1 fails step 1, ep2 fails step 1
    # UI-S1 "Average Progress": steps before the first failure / steps: ep1 1/2, ep2 1/2 -> 0.5
    assert m["offline/episode_progress"] == pytest.approx(0.5)
    assert res.by_type["click"]["n"] == 3
    # Pass@k: 2 samples per step; successes per step c = [1, 0, 2, 1]
    # pass@2 with n=2: [1, 0, 1, 1] -> 0.75; pass@1 estimator: c/n = [0.5, 0, 1, 0.5] -> 0.5
    samples = [[inside, outside], [greedy[1], greedy[1]], [greedy[2], inside], [outside, inside]]
    assert evaluate_offline(steps, greedy, samples).metrics["offline/pass@2"] == pytest.approx(0.75)
    assert evaluate_offline(steps, greedy, samples, k=1).metrics["offline/pass@1"] == pytest.approx(0.5)


# -- grounding -------------------------------------------------------------------------------------


def _sample(i, platform, etype, box):
    step = _step(0, [Action(type=ActionType.CLICK, box=box, frame=SCREEN_FRAME)])
    step.extra.update(platform=platform, element_type=etype)
    return Episode(id=f"s{i}", instruction="x", steps=[step], platform=platform)


def test_grounding_breakdown():
    samples = [
        _sample(0, "mobile", "text", (0, 0, 10, 10)),
        _sample(1, "mobile", "icon", (0, 0, 10, 10)),
        _sample(2, "web", "icon", (0, 0, 10, 10)),
    ]
    preds = [
        Action(type=ActionType.CLICK, point=(5, 5), frame=SCREEN_FRAME),  # hit
        Action(type=ActionType.CLICK, point=(50, 50), frame=SCREEN_FRAME),  # miss
        Action(type=ActionType.CLICK, box=(0, 0, 8, 8), frame=SCREEN_FRAME),  # box centre (4,4): hit
    ]
    res = evaluate_grounding(samples, preds)
    assert res.metrics["grounding/accuracy"] == pytest.approx(2 / 3)
    assert res.breakdown["platform"]["mobile"]["accuracy"] == 0.5  # 1 of 2
    assert res.breakdown["element_type"]["icon"]["accuracy"] == 0.5  # samples 1 (miss), 2 (hit)
    assert res.metrics["grounding/unparsed"] == 0.0
    unparsed = evaluate_grounding(samples, [None, ParseFailure(reason="x"), Action(type=ActionType.BACK)])
    # all three stay in the denominator (ScreenSpot-Pro's wrong_format): 0/3, 3 unparsed
    assert unparsed.metrics["grounding/accuracy"] == 0.0 and unparsed.metrics["grounding/unparsed"] == 3.0
    assert set(res.breakdown) == {"platform", "element_type", "group", "application"}


# -- Mind2Web ------------------------------------------------------------------------------------


def test_mind2web_macro_vs_micro():
    box = (0, 0, 10, 10)
    click_step = _step(0, [Action(type=ActionType.CLICK, box=box, frame=SCREEN_FRAME)])
    type_step = _step(0, [Action(type=ActionType.TYPE, box=box, text="new york city", frame=SCREEN_FRAME)])
    good = Action(type=ActionType.CLICK, point=(5, 5), frame=SCREEN_FRAME)
    bad = Action(type=ActionType.CLICK, point=(50, 50), frame=SCREEN_FRAME)
    steps = [("A", click_step), ("B", click_step), ("B", click_step), ("B", type_step)]
    preds = [good, good, bad, Action(type=ActionType.TYPE, point=(5, 5), text="new york", frame=SCREEN_FRAME)]
    m = evaluate_mind2web(steps, preds)
    # element: A = [1] -> 1; B = [1, 0, 1] -> 2/3; macro = (1 + 2/3)/2 = 5/6; micro = 3/4
    assert m["mind2web/element_accuracy"] == pytest.approx(5 / 6)
    assert m["mind2web/element_accuracy_micro"] == pytest.approx(3 / 4)
    # op F1 of the last step: "TYPE new york" vs "TYPE new york city" = 6/7; others 1
    # B mean = (1 + 1 + 6/7)/3 = 20/21; macro = (1 + 20/21)/2 = 41/42
    assert m["mind2web/operation_f1"] == pytest.approx(41 / 42)
    # step SR: A [1]; B [1, 0, 0] -> macro (1 + 1/3)/2 = 2/3; task SR: A yes, B no -> 0.5
    assert m["mind2web/step_success"] == pytest.approx(2 / 3)
    assert m["mind2web/task_success"] == 0.5
    assert operation_string(Action(type=ActionType.SELECT, text="2")) == "SELECT 2"
    # SeeClick's printed "Operation F1" averages per gold operation: CLICK steps [1, 1, 1] -> 1,
    # TYPE steps [6/7] -> 6/7; mean = (1 + 6/7)/2 = 13/14
    assert m["mind2web/operation_f1_by_op"] == pytest.approx(13 / 14)


def test_mind2web_op_f1_uses_seeclick_ids():
    # SeeClick writes the operation as its id: gold SELECT "Select a state" -> "2 select a state".
    # A predicted SELECT "a state" -> "2 a state": P = 3/3, R = 3/4 -> F1 = 6/7. Spelling the
    # operation as the word SELECT would make the value word "select" count as the operation (F1 = 1).
    box = (0, 0, 10, 10)
    step = _step(0, [Action(type=ActionType.SELECT, box=box, text="Select a state", frame=SCREEN_FRAME)])
    pred = Action(type=ActionType.SELECT, point=(5, 5), text="a state", frame=SCREEN_FRAME)
    m = evaluate_mind2web([("A", step)], [pred])
    assert m["mind2web/operation_f1"] == pytest.approx(6 / 7)
    assert m["mind2web/step_success"] == 0.0  # element right, F1 < 1
    assert f1_operation_string(Action(type=ActionType.CLICK, text="ignored")) == "4"


# -- properties ----------------------------------------------------------------------------------


coord = st.floats(min_value=0, max_value=1000, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(x1=coord, y1=coord, w=coord, h=coord, px=coord, py=coord)
def test_box_rules_are_nested(x1, y1, w, h, px, py):
    """For box targets: exclusive hits are inclusive hits, which are infigui (x1.2) hits,
    which are aitw (x2.4) hits - each rule only widens the previous one."""
    box = (x1, y1, x1 + w, y1 + h)
    chain = [hit((px, py), rule, box=box) for rule in ("exclusive", "inclusive", "infigui", "aitw")]
    assert chain == sorted(chain)  # False... then True...: never a hit followed by a miss


def test_uir1_rule_is_a_strict_radius_of_the_shorter_side():
    from guirl.matching.rules import point_matches

    # 1080 x 2400: radius 0.14 * 1080 = 151.2 px, the same across and down (no box)
    kw = {"target_box": None, "target_point": (500.0, 1000.0), "screen_size": (1080, 2400), "rule": "uir1"}
    assert point_matches((651.0, 1000.0), **kw) and point_matches((500.0, 1151.0), **kw)
    assert not point_matches((500.0, 1151.2), **kw) and not point_matches((652.0, 1000.0), **kw)
    # odyssey's normalised 0.14 reaches 336 px down on the same screen
    assert point_matches((500.0, 1300.0), **{**kw, "rule": "odyssey"})
    assert not point_matches((500.0, 1300.0), **kw)

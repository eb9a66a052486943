"""Metrics on hand-built cases; the working is in the comments.

Includes the edge cases on which the public evaluators disagree: a point on
the box edge, a point just outside the box, point-only targets at various
distances, and a11y candidate boxes (smallest vs any containing box).
"""

from __future__ import annotations

import pytest

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.data.schema import A11yNode, Episode, ImageRef, Step
from guirl.eval.grounding import evaluate_grounding
from guirl.eval.matching import MATCH_RULES, get_rule, point_matches
from guirl.eval.mind2web import evaluate_mind2web, operation_string
from guirl.eval.offline import evaluate_offline, match_action
from guirl.eval.stats import pass_at_k, success_rate, wilson_interval
from guirl.eval.text import anls_match, guilibra_f1, levenshtein, token_f1

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
    assert set(MATCH_RULES) == {"inclusive", "exclusive", "guilibra", "infigui", "aitw"}


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
    assert evaluate_grounding(samples, [None, ParseFailure(reason="x"), None]).metrics["grounding/accuracy"] == 0.0


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


# -- properties ----------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

coord = st.floats(min_value=0, max_value=1000, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(x1=coord, y1=coord, w=coord, h=coord, px=coord, py=coord)
def test_box_rules_are_nested(x1, y1, w, h, px, py):
    """For box targets: exclusive hits are inclusive hits, which are infigui (x1.2) hits,
    which are aitw (x2.4) hits - each rule only widens the previous one."""
    box = (x1, y1, x1 + w, y1 + h)
    chain = [hit((px, py), rule, box=box) for rule in ("exclusive", "inclusive", "infigui", "aitw")]
    assert chain == sorted(chain)  # False... then True...: never a hit followed by a miss

"""``uis1_step(mode="code")``: the UI-S1 authors' ``gui_traj.py`` reward, against the default (paper) mode.

Every expected number is derived by walking the authors' code by hand
(X-PLUG/MobileAgent ``UI-S1/verl/utils/reward_score/gui_traj.py``
``gui_action_match_compute_score``; ``x/data/agent/json.py``
``JsonFormat.parse_response``; ``x/data/text.py`` ``parse_tags``;
``gui_utils/utils.py`` ``norm_coordinate`` / ``check_response_match`` /
``check_text`` / ``check_click`` / ``predict_direction``). Score =
``0.1 format + 0.9 action``; format = 1 iff the ``<think>`` block is non-empty
(set only after the ``<action>`` text decoded); action = 1.0 / 0.5 / 0.1, 0
where matching raises. The screen is 1000 x 1000 and the model writes in it,
so both sides are divided by 1000 (``norm_coordinate``).
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import guirl.rewards.uis1
from guirl.actions import Action, Frame, ParseFailure
from guirl.rewards import make_reward, uis1_action_score
from guirl.rewards.uis1 import code_action_score, parse_uis1_code
from guirl.rewards.uis1_code import authors_action

SCREEN = Frame.screen(1000, 1000)
CODE = make_reward("uis1_step", mode="code")
PAPER = make_reward("uis1_step")
CLICK = Action(type="click", point=(200, 150), box=(100, 100, 300, 200), frame=SCREEN)


def out(action, think: str | None = "tap") -> str:
    body = action if isinstance(action, str) else json.dumps(action)
    return ("" if think is None else f"<think>{think}</think>\n") + f"<action>\n{body}\n</action>"


def both(text: str, gt: Action) -> tuple[float, float]:
    """(code mode, paper mode) scores of one completion."""
    kw = {"valid_actions": [[gt]], "output_frame": [SCREEN]}
    return CODE([text], **kw)[0], PAPER([text], **kw)[0]


def approx(pair):
    return pytest.approx(pair, abs=1e-12)


# -- 1. system_button: one type, the button its parameter ---------------------------


def test_system_button_is_one_type_with_a_button_parameter():
    # gt Home -> check_options {"action": "system_button", "button": "Home"}; pred Back:
    # branch 'system_button': pred action == 'system_button' -> type True, 'home' != 'back' -> 0.5
    # -> 0.1 * 1 + 0.9 * 0.5 = 0.55. Paper: BACK vs HOME are two guirl types -> 0.1 -> 0.19
    back = out({"action": "system_button", "button": "Back"})
    assert both(back, Action(type="home")) == approx((0.55, 0.19))
    # button compared lower-cased and stripped: "home " == "Home" -> 1.0 both ways
    assert both(out({"action": "system_button", "button": "home "}), Action(type="home")) == approx((1.0, 1.0))
    # Menu: guirl's KEY menu is the authors' system_button Menu
    menu = out({"action": "system_button", "button": "Menu"})
    assert both(menu, Action(type="key", keys=("menu",))) == approx((1.0, 1.0))
    assert both(back, Action(type="key", keys=("menu",))) == approx((0.55, 0.19))
    # no button: pred_action['button'] raises KeyError -> action 0, format kept -> 0.1
    # (paper: guirl's parser rejects a system_button without a button -> 0)
    assert both(out({"action": "system_button"}), Action(type="home")) == approx((0.1, 0.0))
    # on Actions: type-only level 0.5 in code mode, wrong type 0.1 in paper mode
    assert uis1_action_score(Action(type="back"), Action(type="home"), mode="code") == 0.5
    assert uis1_action_score(Action(type="back"), Action(type="home")) == 0.1


# -- 2. action names compared exactly ------------------------------------------------


def test_action_names_are_compared_exactly():
    # click branch: pred_action['action'] == 'click' is False for "Click" / "tap" -> (False, False)
    # -> action 0.1 -> 0.1 + 0.09 = 0.19. Paper: names normalised, (200, 150) in the box -> 1.0
    for name in ("Click", "tap", "CLICK"):
        assert both(out({"action": name, "coordinate": [200, 150]}), CLICK) == approx((0.19, 1.0))
    assert both(out({"action": "click", "coordinate": [200, 150]}), CLICK) == approx((1.0, 1.0))


# -- 3. type / answer / key ground truths expect a predicted `type` ---------------------


def test_answer_and_key_ground_truths_expect_a_predicted_type():
    answer = Action(type="answer", text="42")
    # branch ['type', 'answer', 'key']: pred 'type' -> type True; check_text('42', '42') -> 1.0
    # paper: TYPE vs ANSWER are different types -> 0.19
    assert both(out({"action": "type", "text": "42"}), answer) == approx((1.0, 0.19))
    # pred 'answer' for an answer: pred_action['action'] == 'type' is False -> 0.1 -> 0.19 (paper: 1.0)
    assert both(out({"action": "answer", "text": "42"}), answer) == approx((0.19, 1.0))
    # text substring either way, case-insensitive: "the answer is 42" contains "42" -> 1.0;
    # paper: exact after normalisation -> 0.5 -> 0.55 (and ANSWER type needed -> here TYPE: 0.19)
    assert both(out({"action": "answer", "text": "The answer is 42"}), answer) == approx((0.19, 0.55))
    assert both(out({"action": "type", "text": "The answer is 42"}), answer) == approx((1.0, 0.19))
    # an empty text is a substring of every text ('' in '42') -> 1.0
    assert both(out({"action": "type", "text": ""}), answer)[0] == pytest.approx(1.0)
    # key: gt {"action": "key", "text": "volume_up"}; pred type "VOLUME_UP" -> 1.0; pred key -> 0.19
    key = Action(type="key", keys=("volumeup",))
    assert authors_action(key, ground_truth=True) == {"action": "key", "text": "volume_up"}
    assert both(out({"action": "type", "text": "VOLUME_UP"}), key) == approx((1.0, 0.19))
    assert both(out({"action": "key", "text": "volume_up"}), key) == approx((0.19, 1.0))
    # a non-string text: 42 .lower() raises AttributeError -> action 0 -> 0.1
    assert both(out({"action": "type", "text": 42}), answer)[0] == pytest.approx(0.1)


# -- 4. parsing: first <action> block, plain json.loads ------------------------------------


def test_parser_is_plain_json_loads_of_the_action_block():
    good = '{"action": "click", "coordinate": [200, 150]}'
    # '}}' / trailing text inside <action>: json.loads raises inside parse_response, before the
    # format score is set -> 0.0. Paper: guirl's parser decodes the first JSON value -> 1.0
    assert both(out(good + "}"), CLICK) == approx((0.0, 1.0))
    assert both(out(good + " then wait"), CLICK) == approx((0.0, 1.0))
    # <tool_call> wrapper, no <action> block: parse_tags gives None, json.loads(None) raises -> 0.0
    assert both("<think>tap</think><tool_call>" + good + "</tool_call>", CLICK) == approx((0.0, 1.0))
    # a <tool_call> inside <action>: not JSON -> 0.0
    assert both(out("<tool_call>" + good + "</tool_call>"), CLICK) == approx((0.0, 1.0))
    # no tags at all: 0.0 (paper reads the bare object)
    assert both(good, CLICK) == approx((0.0, 1.0))
    # a JSON list decodes: format 1; norm_coordinate passes ('coordinate' not in the list);
    # pred_action['action'] raises TypeError -> action 0 -> 0.1. Paper: the object inside -> 1.0
    assert both(out("[" + good + "]"), CLICK) == approx((0.1, 1.0))
    # a JSON number: 'candidate_bbox' in 5 raises -> 0.1; a JSON string: 'coordinate' not in it,
    # then "click"['action'] raises -> 0.1; both unreadable for guirl -> 0
    assert both(out("5"), CLICK) == approx((0.1, 0.0))
    assert both(out('"click"'), CLICK) == approx((0.1, 0.0))
    # text after </action> is outside the block: fine (first block only)
    assert both(out(good) + " done <action>{}</action>", CLICK) == approx((1.0, 1.0))
    # the helper: None where parse_response raises
    assert parse_uis1_code("<action>" + good + "}}</action>") is None
    assert parse_uis1_code("<think> a </think><action>" + good + "</action>").think == "a"


# -- 5. format credit for decodable JSON with unusable fields ---------------------------------


def test_format_credit_for_decodable_json_with_unusable_fields():
    typed = Action(type="type", text="hello")
    # {"action": "click"} vs gt click: format 1; click branch: pred_action['coordinate'] raises KeyError
    # -> action 0 -> 0.1. Paper: guirl's parser rejects a click without a point -> 0.0
    assert both(out({"action": "click"}), CLICK) == approx((0.1, 0.0))
    # ... vs gt type: pred 'click' != 'type' -> (False, False) -> action 0.1 -> 0.19
    assert both(out({"action": "click"}), typed) == approx((0.19, 0.0))
    # a coordinate as a string: norm_coordinate "2" / 1000 raises TypeError -> 0.1
    assert both(out({"action": "click", "coordinate": "200,150"}), CLICK) == approx((0.1, 0.0))
    # no "action" key: pred_action['action'] raises KeyError -> 0.1
    assert both(out({"coordinate": [200, 150]}), CLICK)[0] == pytest.approx(0.1)
    # format = non-empty <think>: empty or missing block -> 0.9 for a full match (paper: 1.0)
    good = {"action": "click", "coordinate": [200, 150]}
    assert both(out(good, think="  "), CLICK) == approx((0.9, 1.0))
    assert both(out(good, think=None), CLICK) == approx((0.9, 1.0))


# -- click geometry, swipe, wait / terminate, other types --------------------------------------


def test_click_geometry_by_hand():
    # enlarge_bbox of (0.1, 0.1, 0.3, 0.2): centre (0.2, 0.15), size 0.24 x 0.12 -> [0.08, 0.32] x [0.09, 0.21]
    assert both(out({"action": "click", "coordinate": [315, 150]}), CLICK) == approx((1.0, 0.55))
    # 0.33 > 0.32, and 0.13 from the point > 0.04 -> type only -> 0.55
    assert both(out({"action": "click", "coordinate": [330, 150]}), CLICK) == approx((0.55, 0.55))
    # point only: |(0.23, 0.15) - (0.2, 0.15)| = 0.03 <= 0.04 -> 1.0; 0.05 -> 0.55
    point = Action(type="click", point=(200, 150), frame=SCREEN)
    assert both(out({"action": "click", "coordinate": [230, 150]}), point) == approx((1.0, 1.0))
    assert both(out({"action": "click", "coordinate": [250, 150]}), point) == approx((0.55, 0.55))
    # box only (guirl's case; the authors' data always has a point): the enlarged box decides
    box = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    assert both(out({"action": "click", "coordinate": [315, 150]}), box) == approx((1.0, 0.55))
    assert both(out({"action": "click", "coordinate": [330, 150]}), box) == approx((0.55, 0.55))
    # long_press vs click: exact names -> 0.19 both ways
    assert both(out({"action": "long_press", "coordinate": [200, 150], "time": 2}), CLICK) == approx((0.19, 0.19))
    # the prediction is divided by the output frame's size: relative 0-1000 on this 1000 px screen
    rel = {"valid_actions": [[CLICK]], "output_frame": [Frame.relative(1000)]}
    assert CODE([out({"action": "click", "coordinate": [315, 150]})], **rel) == pytest.approx([1.0])


def test_swipe_directions_by_hand():
    finger_down = out({"action": "swipe", "coordinate": [500, 300], "coordinate2": [500, 700]})
    finger_up = out({"action": "swipe", "coordinate": [500, 700], "coordinate2": [500, 300]})
    finger_right = out({"action": "swipe", "coordinate": [300, 500], "coordinate2": [700, 500]})
    # gt direction "up" (guirl: content up = finger down) -> their field "up" -> swapped to "down";
    # predict_direction(finger down) = "down" -> 1.0; finger up -> 0.55
    up = Action(type="swipe", direction="up")
    assert authors_action(up, ground_truth=True) == {"action": "swipe", "direction": "up"}
    assert both(finger_down, up) == approx((1.0, 1.0))
    assert both(finger_up, up) == approx((0.55, 0.55))
    # horizontal: guirl content "left" = finger right; their field is the finger's ("right"), not swapped
    left = Action(type="swipe", direction="left")
    assert authors_action(left, ground_truth=True)["direction"] == "right"
    assert both(finger_right, left) == approx((1.0, 1.0))
    # their evaluation record: action_content finger path 1800 -> 600, check {"direction": "down"}
    # (the guirl adapter: content "down" plus the path). TrajDataset (rl_dataset.py) replaces the
    # check by a copy of action_content, so the path is compared: predict_direction = "up", swapped
    # to "down"; the path the record shows -> 0.55, the opposite finger movement -> 1.0
    tall_screen = Frame.screen(1080, 2400)
    ev = Action(type="swipe", direction="down", point=(540, 1800), end_point=(540, 600), frame=tall_screen)
    assert authors_action(ev, ground_truth=True) == {
        "action": "swipe",
        "coordinate": [0.5, 0.75],
        "coordinate2": [0.5, 0.25],
    }
    tall = {"valid_actions": [[ev]] * 2, "output_frame": [tall_screen] * 2}
    as_shown = out({"action": "swipe", "coordinate": [540, 1800], "coordinate2": [540, 600]})
    opposite = out({"action": "swipe", "coordinate": [540, 600], "coordinate2": [540, 1800]})
    assert CODE([as_shown, opposite], **tall) == approx([0.55, 1.0])
    # paper: strict checks the start and end points (0.04) and the direction: as shown -> 1.0
    assert PAPER([as_shown, opposite], **tall) == approx([1.0, 0.55])
    # gt given by its end points only (their RL data's check = a copy of the action): the finger
    # goes down, predict_direction = "down", swapped to "up": the identical prediction -> 0.55,
    # the opposite one -> 1.0 (reproduced; paper: the same finger movement is the full match)
    path = Action(type="swipe", point=(500, 300), end_point=(500, 700), frame=SCREEN)
    assert both(finger_down, path) == approx((0.55, 1.0))
    assert both(finger_up, path) == approx((1.0, 0.55))
    # a direction-only prediction: pred_action['coordinate'] raises KeyError -> 0.1 (paper: 1.0)
    assert both(out({"action": "swipe", "direction": "down"}), up) == approx((0.1, 1.0))


def test_wait_terminate_and_other_types():
    # wait / terminate: same name -> (True, True) whatever the status
    done = Action(type="terminate", status="success")
    assert both(out({"action": "terminate", "status": "failure"}), done) == approx((1.0, 0.55))
    assert both(out({"action": "wait", "time": 5}), Action(type="wait", amount=2)) == approx((1.0, 1.0))
    # open: pred 'open', text substring: "pcloud" in "pcloud app" -> 1.0 (paper: exact text -> 0.55)
    app = Action(type="open_app", text="pCloud App")
    assert both(out({"action": "open", "text": "pcloud"}), app) == approx((1.0, 0.55))
    # a ground-truth name outside their branches (guirl's scroll): the final `return False, False`
    # -> 0.1 for any dict prediction -> 0.19
    scroll = Action(type="scroll", direction="down")
    assert CODE(
        [out({"action": "swipe", "coordinate": [1, 2], "coordinate2": [1, 9]})],
        valid_actions=[[scroll]],
        output_frame=[SCREEN],
    ) == [pytest.approx(0.19)]


def test_max_over_valid_actions_and_components():
    # A*_t = {Back, Home}: pred Home -> max(0.5, 1.0) = 1.0; components are format and action
    res = CODE.score(
        [out({"action": "system_button", "button": "Home"})],
        valid_actions=[[Action(type="back"), Action(type="home")]],
        output_frame=[SCREEN],
    )
    assert res.scores == [1.0] and res.components == {"format": [1.0], "action": [1.0]}


def test_action_score_api_and_errors():
    gt = Action(type="click", point=(200, 150), frame=SCREEN)
    # a raw decoded prediction needs its frame; an Action is written as the authors' JSON
    raw = {"action": "click", "coordinate": [230, 150]}
    assert code_action_score(raw, gt, pred_frame=SCREEN) == 1.0
    assert uis1_action_score(raw, gt, mode="code", pred_frame=SCREEN) == 1.0
    assert uis1_action_score(Action(type="click", point=(230, 150), frame=SCREEN), gt, mode="code") == 1.0
    assert uis1_action_score(ParseFailure(reason="x"), gt, mode="code") == 0.0
    with pytest.raises(ValueError, match="pred_frame"):
        code_action_score(raw, gt)
    with pytest.raises(ValueError, match="distance"):
        uis1_action_score(raw, gt, mode="code", coordinate_reward="distance", pred_frame=SCREEN)
    with pytest.raises(ValueError, match="mode"):
        uis1_action_score(Action(type="back"), gt, mode="authors")
    with pytest.raises(TypeError, match="paper"):
        uis1_action_score(raw, gt)
    with pytest.raises(ValueError, match="fmt"):
        make_reward("uis1_step", mode="code", fmt="qwen_mobile_use")
    with pytest.raises(ValueError, match="distance"):
        make_reward("uis1_step", mode="code", coordinate_reward="distance")
    with pytest.raises(ValueError, match="mode"):
        make_reward("uis1_step", mode="strict")


def test_module_doctests():
    result = doctest.testmod(guirl.rewards.uis1)
    assert result.attempted > 0 and result.failed == 0


VALID = [CLICK, Action(type="type", text="hello"), Action(type="home"), Action(type="swipe", direction="up")]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["action", "coordinate", "coordinate2", "text", "button", "candidate_bbox"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=json_values,
    name=st.sampled_from(["click", "type", "system_button", "swipe", "Click", "answer"]),
    junk=st.text(max_size=20),
)
def test_code_mode_never_raises_and_stays_in_range(value, name, junk):
    body = {"action": name, "coordinate": value, "coordinate2": value, "text": value, "button": value}
    # a raw check (authors_check column) built from the same values, with an annotation
    check = {"action": name, "coordinate": value, "candidate_bbox": value, "text": value, "annotation": value}
    for text in (out(body), out(json.dumps(value)), junk, out(junk)):
        for score in CODE([text] * 4, valid_actions=[[a] for a in VALID], output_frame=[SCREEN] * 4):
            assert 0.0 <= score <= 1.0
        for raw_check in (check, {**check, "annotation": "HARMFUL"}, value):
            scores = CODE([text], valid_actions=[[VALID[0]]], output_frame=[SCREEN], authors_check=[raw_check])
            assert 0.0 <= scores[0] <= 1.0


# -- the step's own check (authors_check column, issue 29) -------------------------------------------------------
# gui_traj.py scores the check_options it is given, as written. guirl's AndroidControl reader keeps them as the
# authors_check column; without it the check is rebuilt from the valid guirl Actions the reader makes. Each case:
# (the authors' score on the check, guirl's score on the reader's Actions of the same check).


def check_and_actions(check: dict, completion: str, size=(1000, 1000)) -> tuple[float, float]:
    from guirl.data.adapters.androidcontrol_actions import mobile_use_actions

    screen = Frame.screen(*size)
    valid = mobile_use_actions(check, {}, size, "uis1", Path("eval.jsonl"), "step 0")
    kw = {"valid_actions": [valid], "output_frame": [screen]}
    return CODE([completion], **kw, authors_check=[check], screen_size=[size])[0], CODE([completion], **kw)[0]


def on_check(check: dict, completion: str, size=(1000, 1000)) -> float:
    screen = Frame.screen(*size)
    kw = {"valid_actions": [[Action(type="wait")]], "output_frame": [screen], "screen_size": [size]}
    return CODE([completion], **kw, authors_check=[check])[0]


def test_click_with_a_list_of_boxes_is_not_normalised():
    # norm_coordinate normalises candidate_bbox only when len(...) == 4 (one flat box): [[67, 616, 361, 830]] has
    # length 1 and stays in pixels, so the unit click (0.081, 0.626) is in no box; the point (0.214, 0.723) is 0.165
    # away (> 0.04) -> type only -> 0.1 + 0.9 * 0.5 = 0.55. guirl's reader normalises the box: inside -> 1.0
    check = {"action": "click", "coordinate": [214, 723], "candidate_bbox": [[67, 616, 361, 830]]}
    pred = out({"action": "click", "coordinate": [81, 626]})
    assert check_and_actions(check, pred) == approx((0.55, 1.0))
    # one flat box (TrajDataset's `bbox` copied as candidate_bbox) is normalised: inside -> 1.0
    assert on_check({**check, "candidate_bbox": [67, 616, 361, 830]}, pred) == pytest.approx(1.0)


def test_open_with_candidate_boxes_wants_a_predicted_open():
    # check_response_match, 'open' branch: pred action 'click' != 'open' -> (False, False) -> 0.1 -> 0.19.
    # guirl's reader adds a click on the icon as a valid action (its evaluator's rule): inside -> 1.0
    check = {"action": "open", "text": "Gmail", "candidate_bbox": [[13, 79, 167, 230]]}
    assert check_and_actions(check, out({"action": "click", "coordinate": [90, 154]})) == approx((0.19, 1.0))
    assert check_and_actions(check, out({"action": "open", "text": "gmail"})) == approx((1.0, 1.0))


def test_swipe_with_path_and_direction_reads_the_direction():
    # 'direction' in the check is read first: "down" -> swapped to "up"; the predicted finger path
    # [500, 500] -> [500, 250] goes up -> full match -> 1.0. guirl's Action keeps the path, which the authors'
    # code would read as finger "up" -> swapped "down" != "up" -> 0.55
    path = {"coordinate": [500, 500], "coordinate2": [500, 250]}
    check = {"action": "swipe", **path, "direction": "down"}
    assert check_and_actions(check, out({"action": "swipe", **path})) == approx((1.0, 0.55))
    # direction "right" (left / right are not swapped) with a finger path going down: "down" != "right" -> 0.55
    right = {"action": "swipe", "coordinate": [500, 500], "coordinate2": [500, 750], "direction": "right"}
    assert on_check(right, out({"action": "swipe", "coordinate": [500, 500], "coordinate2": [500, 750]})) == (
        pytest.approx(0.55))
    # guirl's reader keeps that record and reads the path (content moves up: the finger goes down)
    from guirl.data.adapters.androidcontrol_actions import mobile_use_actions

    (action, *_) = mobile_use_actions(right, {}, (1000, 1000), "uis1", Path("eval.jsonl"), "step 0")
    assert action.direction == "up" and action.end_point == (500, 750)


def test_harmful_and_neutral_annotations():
    exact = out({"action": "click", "coordinate": [500, 500]})
    click = {"action": "click", "coordinate": [500, 500]}
    # HARMFUL (a negative example): action 1 - 1.0 = 0 -> 0.1 * 1 + 0.9 * 0 = 0.1; guirl's Action carries no
    # annotation -> 1.0. NEUTRAL: action 0.5 whatever the match -> 0.55
    assert check_and_actions({**click, "annotation": "HARMFUL"}, exact) == approx((0.1, 1.0))
    assert check_and_actions({**click, "annotation": "NEUTRAL"}, exact) == approx((0.55, 1.0))
    # GOOD, or no annotation (their lookup raises after the score is set): the score stands
    assert on_check({**click, "annotation": "GOOD"}, exact) == pytest.approx(1.0)
    assert on_check(click, exact) == pytest.approx(1.0)
    # HARMFUL and a wrong type: 1 - 0.1 = 0.9 -> 0.1 + 0.81 = 0.91; a miss of the same type: 1 - 0.5 -> 0.55
    harmful = {**click, "annotation": "HARMFUL"}
    assert on_check(harmful, out({"action": "system_button", "button": "Back"})) == pytest.approx(0.91)
    assert on_check(harmful, out({"action": "click", "coordinate": [900, 900]})) == pytest.approx(0.55)
    # where matching raises (a click without a coordinate) the annotation is never reached: action 0 -> 0.1;
    # an output that does not parse scores 0
    assert on_check(harmful, out({"action": "click"})) == pytest.approx(0.1)
    assert on_check(harmful, "no action here") == 0.0


@pytest.mark.parametrize(("key", "guirl_name", "guirl"),
                         [("backspace", "del", 0.55), ("volumeup", "volume_up", 0.55), ("esc", "escape", 1.0)])
def test_key_names_as_the_authors_keep_them(key, guirl_name, guirl):
    # a key check wants a predicted 'type' whose text contains / is contained in the check's text, as written:
    # "backspace" vs "backspace" -> 1.0. guirl writes its key as the adb name: "del" / "volume_up" are no
    # substring of the prediction -> 0.55 ("esc" is one of "escape", so that rewrite happens to pass)
    check = {"action": "key", "text": key}
    assert authors_action(Action(type="key", keys=(key,)), ground_truth=True)["text"] == guirl_name
    assert check_and_actions(check, out({"action": "type", "text": key})) == approx((1.0, guirl))


def test_reader_keeps_the_check_and_the_training_annotation(tmp_path):
    from PIL import Image

    from guirl.data.adapters import load_public
    from guirl.rewards import columns_for, reward_columns

    for t in range(2):
        Image.new("RGB", (108, 240)).save(tmp_path / f"9_{t}.png")
    check = {"action": "click", "coordinate": [54, 120], "candidate_bbox": [[40, 100, 70, 140]]}
    evaluation = {"goal": "g", "episode_id": 9, "steps": [
        {"action_content": {"action": "click", "coordinate": [54, 120]}, "check_options": check,
         "screenshot": "/datasets/AndroidControl/images/9_0.png"}]}
    # the training layout: no check_options; TrajDataset copies action_content, adds the step's annotation and
    # the content's bbox (here flat) as candidate_bbox
    training = {"goal": "g", "episode_id": 9, "steps": [
        {"action_content": {"action": "click", "coordinate": [54, 120], "bbox": [40, 100, 70, 140]},
         "annotation": "HARMFUL", "screenshot": "/datasets/AndroidControl/images/9_1.png"}]}
    data = tmp_path / "steps.jsonl"
    data.write_text(json.dumps(evaluation) + "\n" + json.dumps(training) + "\n")
    ep_eval, ep_train = load_public("androidcontrol", data, image_dir=tmp_path)
    assert ep_eval.steps[0].extra["authors_check"] == check
    assert ep_train.steps[0].extra["authors_check"] == {
        "action": "click", "coordinate": [54, 120], "bbox": [40, 100, 70, 140], "annotation": "HARMFUL",
        "candidate_bbox": [40, 100, 70, 140]}
    steps = [(ep_eval, ep_eval.steps[0]), (ep_train, ep_train.steps[0])]
    columns = columns_for([reward_columns(s, e, Frame.screen(108, 240)) for e, s in steps], group_size=1)
    exact = out({"action": "click", "coordinate": [54, 120]})
    # the evaluation check: a full match -> 1.0; the HARMFUL training step: 1 - 1.0 -> 0.1
    assert CODE([exact, exact], **columns) == approx([1.0, 0.1])

"""GUI-Libra partially verifiable reward: name normalisation, F1 >= 0.5, point/box rules, format rules."""

from __future__ import annotations

import json

import pytest

from guirl.actions import Action, Frame
from guirl.matching.text import guilibra_f1
from guirl.rewards import as_action, guilibra_accuracy, make_reward

SCREEN = Frame.screen(1000, 1000)


def answer(action_type: str, value="None", point="none", think: str | None = "I should act") -> str:
    body = json.dumps({"action_type": action_type, "action_description": "d", "value": value, "point_2d": point})
    return (f"<think>{think}</think>" if think is not None else "") + f"<answer>{body}</answer>"


def test_guilibra_f1_by_hand():
    # GUI-Libra's calculate_f1_score: lower-cased word sets, brackets dropped.
    # pred {hello, world}, ref {hello, world, foo}: P = 1, R = 2/3 -> F1 = 2 * (2/3) / (5/3) = 0.8
    assert guilibra_f1("Hello world", "hello world foo") == pytest.approx(0.8)
    # one word against three: no substring rule; P = 1, R = 1/3 -> F1 = 0.5
    assert guilibra_f1("foo", "hello world foo") == pytest.approx(0.5)
    # two single words: a substring either way is a full match; brackets are dropped first
    assert guilibra_f1("york", "newyork") == 1.0 and guilibra_f1("[Down]", "down") == 1.0
    # sets, not bags: repeated words count once -> {a} vs {a, b}: P = 1, R = 1/2 -> 2/3
    assert guilibra_f1("a a a", "a b") == pytest.approx(2 / 3)
    assert guilibra_f1("bar baz", "hello world") == 0.0
    # an empty side scores 0, even when both are empty
    assert guilibra_f1("", "") == 0.0 and guilibra_f1("x", "") == 0.0 and guilibra_f1(None, "x") == 0.0


def test_value_threshold_uses_guilibra_f1():
    reward = make_reward("guilibra", fmt="guilibra")
    three, four = Action(type="type", text="hello world foo"), Action(type="type", text="hello world foo bar")
    out = reward.score([answer("Write", value="foo")] * 2, valid_actions=[[three], [four]], output_frame=[SCREEN] * 2)
    # one of three words: F1 0.5 passes the >= 0.5 threshold; one of four: F1 0.4 does not
    assert out.components["accuracy"] == [1.0, 0.0]


def test_name_normalisation_of_ground_truth():
    # GUI-Libra spellings of the ground truth are normalised through guirl.actions.names
    assert as_action({"type": "LongPress", "point": [1, 2]}).type.value == "long_press"
    assert as_action({"type": "Write", "text": "a"}).type.value == "type"
    assert as_action({"type": "press_back"}).type.value == "back"
    scroll = as_action({"type": "SCROLL_UP"})
    assert scroll.type.value == "scroll" and scroll.direction == "up"


def test_accuracy_rules_on_actions():
    gt_box = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    gt_point = Action(type="long_press", point=(200, 150), frame=SCREEN)
    assert guilibra_accuracy(Action(type="click", point=(150, 150), frame=SCREEN), gt_box) == 1.0
    assert guilibra_accuracy(Action(type="click", point=(350, 150), frame=SCREEN), gt_box) == 0.0
    # point rule: (0.03)^2 = 0.0009 < 0.0025 -> 1; (0.06)^2 = 0.0036 -> 0
    assert guilibra_accuracy(Action(type="long_press", point=(230, 150), frame=SCREEN), gt_point) == 1.0
    assert guilibra_accuracy(Action(type="long_press", point=(260, 150), frame=SCREEN), gt_point) == 0.0
    assert guilibra_accuracy(Action(type="scroll", direction="down"), Action(type="scroll", direction="down")) == 1.0
    assert guilibra_accuracy(Action(type="scroll", direction="up"), Action(type="scroll", direction="down")) == 0.0
    assert guilibra_accuracy(Action(type="back"), Action(type="back")) == 1.0  # other types: type only
    assert guilibra_accuracy(Action(type="home"), Action(type="back")) == 0.0


def test_reward_on_text():
    reward = make_reward("guilibra", fmt="guilibra")
    gt_click = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    gt_write = Action(type="type", text="hello world foo")
    completions = [
        answer("Click", point=[150, 150]),  # 0.1 * 1 + 0.9 * 1 = 1.0
        answer("Click", point=[150, 150], think=None),  # reasoning sample without <think>: format 0 -> 0.9
        answer("Click", point=[350, 150]),  # outside the box: 0.1
        answer("Write", value="hello world"),  # F1 0.8 >= 0.5 -> 1.0
        answer("Write", value="bar baz"),  # F1 0 -> 0.1
        answer("type", value="hello world foo"),  # the name "type" normalises to write -> 1.0
        "<think>x</think> click the button",  # unparsable: 0
    ]
    valid = [[gt_click]] * 3 + [[gt_write]] * 3 + [[gt_click]]
    out = reward.score(completions, valid_actions=valid, output_frame=[SCREEN] * 7)
    assert out.scores == pytest.approx([1.0, 0.9, 0.1, 1.0, 0.1, 1.0, 0.0])


def test_grounding_samples_must_not_reason():
    reward = make_reward("guilibra")
    gt = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    out = reward.score(
        [answer("Click", point=[150, 150]), answer("Click", point=[150, 150], think=None)],
        valid_actions=[[gt]] * 2,
        output_frame=[SCREEN] * 2,
        is_grounding=[True, True],
    )
    assert out.scores == pytest.approx([0.9, 1.0])  # a grounding sample with <think> loses the format point


def test_multi_solution_and_frame_checks():
    reward = make_reward("guilibra")
    valid = [
        [
            Action(type="click", box=(800, 800, 900, 900), frame=SCREEN),
            Action(type="click", box=(100, 100, 300, 200), frame=SCREEN),
        ]
    ]
    assert reward([answer("Click", point=[150, 150])], valid_actions=valid, output_frame=[SCREEN]) == pytest.approx(
        [1.0]
    )
    # the guilibra format writes Qwen2.5-VL resized pixels: without a sized output_frame the reward says so
    with pytest.raises(ValueError, match="output_frame"):
        reward([answer("Click", point=[150, 150])], valid_actions=valid)
    with pytest.raises(ValueError, match="without a size"):
        reward(["x"], valid_actions=[[Action(type="click", point=(1, 2), frame=Frame.screen())]], output_frame=[SCREEN])


def test_paper_format_rule():
    reward = make_reward("guilibra")  # format_rule="paper": the authors' structural check, repair included
    lenient = make_reward("guilibra", format_rule="parse")
    gt = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    body = '{"action_type": "Click", "action_description": "d", "value": "None", "point_2d": [150, 150]}'
    completions = [
        f"<think>t</think><answer>{body}</answer>",  # well formed: 0.1 + 0.9 = 1.0
        f"Sure! <think>t</think><answer>{body}</answer>",  # text before the structure: format 0 -> 0.9
        f"<think>t</think><answer>{body}</answer> done",  # text after it: format 0 -> 0.9
        '<think>t</think><answer>{"action_type": "Click", "point_2d": [150, 150]}</answer>',  # keys missing -> 0.9
        '<think>t</think><answer>{"action_type": "Click", "action_description": "d", "value": "None", '
        '"point_2d": [150.5, 150]}</answer>',  # point_2d must be integers -> 0.9
        # not JSON (trailing comma) but all four fields readable one by one: format 1 -> 1.0
        '<think>t</think><answer>{"action_type": "Click", "action_description": "d", "value": "None", '
        '"point_2d": [150, 150],}</answer>',
    ]
    out = reward.score(completions, valid_actions=[[gt]] * 6, output_frame=[SCREEN] * 6)
    assert out.components["format"] == [1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert out.scores == pytest.approx([1.0, 0.9, 0.9, 0.9, 0.9, 1.0])
    # the lenient rule only asks that guirl's parser reads an action
    assert lenient.score(completions[:3], valid_actions=[[gt]] * 3, output_frame=[SCREEN] * 3).scores == pytest.approx(
        [1.0, 1.0, 1.0]
    )
    with pytest.raises(ValueError, match="format_rule"):
        make_reward("guilibra", format_rule="loose")


def test_point_on_the_box_edge_is_outside():
    gt = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)
    # the authors test x1 < x < x2 and y1 < y < y2: the edge itself does not count
    assert guilibra_accuracy(Action(type="click", point=(100, 150), frame=SCREEN), gt) == 0.0
    assert guilibra_accuracy(Action(type="click", point=(101, 150), frame=SCREEN), gt) == 1.0


CLICK_BOX = Action(type="click", box=(100, 100, 300, 200), frame=SCREEN)


def raw_answer(body: str, think: str | None = "t") -> str:
    return (f"<think>{think}</think>" if think is not None else "") + f"<answer>{body}</answer>"


def both_rules(completions, valid):
    n = len(completions)
    columns = {"valid_actions": [[v] for v in valid], "output_frame": [SCREEN] * n}
    paper = make_reward("guilibra", format_rule="paper").score(completions, **columns).scores
    authors = make_reward("guilibra", format_rule="authors").score(completions, **columns).scores
    return paper, authors


def test_answer_tags_required_and_integer_points_as_the_authors_read_them():
    fields = '"action_description": "d", "value": "None"'
    completions = [
        # JSON but no <answer> tags: before 0.9 (any JSON object was read); now nothing is read -> 0 in both
        f'<think>t</think>{{"action_type": "Click", {fields}, "point_2d": [150, 150]}}',
        # float point: format 0 in both; paper reads the point (0.9), the authors' integer regex does not:
        # their extract_coord gives (0, 0), outside the box -> 0
        raw_answer(f'{{"action_type": "Click", {fields}, "point_2d": [150.5, 150]}}'),
        # a space before the colon: valid JSON, format 1; the authors' "action_type":\s*" regex misses it ->
        # type "no action" -> 0.1; paper reads the JSON -> 1.0
        raw_answer(f'{{"action_type" : "Click", {fields}, "point_2d": [150, 150]}}'),
        # trailing comma: not JSON. Paper repairs field by field (format 1 -> 1.0); the authors' repair never
        # runs (re.error in extract_coord) -> format 0, their regexes still read the action -> 0.9
        raw_answer(f'{{"action_type": "Click", {fields}, "point_2d": [150, 150],}}'),
    ]
    paper, authors = both_rules(completions, [CLICK_BOX] * 4)
    assert paper == pytest.approx([0.0, 0.9, 1.0, 1.0])
    assert authors == pytest.approx([0.0, 0.0, 0.1, 0.9])


def test_prediction_names_and_values_as_the_authors_score_them():
    cases = [
        (answer("type", value="hello world"), Action(type="type", text="hello world")),  # authors: "type" != "write"
        (answer("Write", value="hello world"), Action(type="type", text="hello world")),  # lower-cased: "write"
        # authors: "long_press" is not "longpress" (only the ground truth's name is mapped)
        (answer("long_press", point=[150, 150]), Action(type="long_press", box=CLICK_BOX.box, frame=SCREEN)),
        # KeyboardPress: the authors score its type only, any value; paper needs a readable key
        (answer("KeyboardPress", value=""), Action(type="key", keys=("enter",))),
        (answer("KeyboardPress", value="ctrl+c"), Action(type="key", keys=("enter",))),  # type only in both
        (answer("Write", value=""), Action(type="type", text="hello")),  # F1("", "hello") = 0; paper: unreadable
        # direction words: authors F1 of the whole value vs "down": {scroll, down} P 1/2 R 1 -> 2/3 (hit);
        # {scroll, the, list, down} P 1/4 -> F1 0.4 (miss); paper reads the direction word -> hit
        (answer("Scroll", value="scroll down"), Action(type="scroll", direction="down")),
        (answer("Scroll", value="scroll the list down"), Action(type="scroll", direction="down")),
        # swipe values are finger directions: a content-down swipe is a finger-up swipe, in both rules
        (answer("Swipe", value="up"), Action(type="swipe", direction="down")),
        (answer("Swipe", value="down"), Action(type="swipe", direction="down")),
    ]
    paper, authors = both_rules([c for c, _ in cases], [g for _, g in cases])
    assert paper == pytest.approx([1.0, 1.0, 1.0, 0.1, 1.0, 0.1, 1.0, 1.0, 1.0, 0.1])
    assert authors == pytest.approx([0.1, 1.0, 0.1, 1.0, 1.0, 0.1, 1.0, 0.1, 1.0, 0.1])


def test_ground_truth_with_both_box_and_point():
    # box (100, 100, 300, 200) and point (500, 500), unit frame: (0.1..0.3, 0.1..0.2) and (0.5, 0.5)
    gt = Action(type="click", box=(100, 100, 300, 200), point=(500, 500), frame=SCREEN)
    # (510, 500): outside the box, (0.01)^2 = 0.0001 < 0.05^2 from the point. Paper: a hit on either -> 1.0;
    # authors (gt_bbox read first, the point never): miss -> 0.1. Inside the box: 1.0 in both.
    paper, authors = both_rules([answer("Click", point=[510, 500]), answer("Click", point=[150, 150])], [gt, gt])
    assert paper == pytest.approx([1.0, 1.0]) and authors == pytest.approx([0.1, 1.0])
    assert guilibra_accuracy(Action(type="click", point=(510, 500), frame=SCREEN), gt) == 1.0


# -- format_rule="authors" on the step's own ground_truth record (issue 29) ------------------------------------
# r1gui.py reads the record itself (gt_input_text, gt_bbox / 1000, the image size of the prediction); guirl's
# GUI-Libra reader keeps that record as the authors_check column. Each case: the authors' score with the record,
# then guirl's reading of the same step without it (the bare Action the reader makes), which differs.


def record_columns(tmp_path, ground_truth: dict, output_frame: Frame) -> dict:
    """The reward columns of one GUI-Libra record read by guirl's adapter (image size from the record)."""
    from guirl.data.adapters.guilibra import load_guilibra
    from guirl.rewards import reward_columns

    (tmp_path / "s.png").write_bytes(b"x")  # the reader checks the file exists; the record gives its size
    data = tmp_path / "rl.jsonl"
    data.write_text(json.dumps({"images": ["s.png"], "problem": "do it", "ground_truth": ground_truth}) + "\n")
    (episode,) = load_guilibra(data)
    columns = reward_columns(episode.steps[0], episode, output_frame)
    return {name: [value] for name, value in columns.items()}


AUTHORS = make_reward("guilibra", format_rule="authors")
PHONE = {"image_width": 1080, "image_height": 2400}


def authors_with_and_without_record(tmp_path, ground_truth, completion, output_frame=SCREEN):
    columns = record_columns(tmp_path, ground_truth, output_frame)
    assert columns["authors_check"] == [ground_truth]
    with_record = AUTHORS([completion], **columns)[0]
    without = AUTHORS([completion], **{k: v for k, v in columns.items() if k != "authors_check"})[0]
    return with_record, without


def test_authors_write_target_none(tmp_path):
    # gt_input_text "None" -> "none"; predicted value "None" -> "none": one token each, equal -> F1 1 -> 1.0.
    # guirl's reader keeps no text for "None": against the bare Action the reference is "" -> F1 0 -> 0.1
    gt = {"gt_action": "Write", "gt_input_text": "None", "gt_bbox": [-100, -100], **PHONE}
    assert authors_with_and_without_record(tmp_path, gt, answer("Write", value="None")) == pytest.approx((1.0, 0.1))


@pytest.mark.parametrize(("word", "guirl"), [("infeasible", 0.1), ("done", 0.1), ("complete", 0.1), ("fail", 1.0)])
def test_authors_terminate_status_words(tmp_path, word, guirl):
    # the record's word against the predicted word: F1 1 -> 1.0. guirl's reader turns the word into a
    # success / failure status first: "infeasible" vs "failure", "done" / "complete" vs "success" share no
    # token -> 0.1 ("fail" vs "failure" happens to pass the one-token substring rule -> 1.0)
    gt = {"gt_action": "Terminate", "gt_input_text": word, "gt_bbox": [-100, -100], **PHONE}
    got = authors_with_and_without_record(tmp_path, gt, answer("Terminate", value=word))
    assert got == pytest.approx((1.0, guirl))


@pytest.mark.parametrize("coordinates", [{}, {"gt_bbox": "none"}])
def test_authors_terminate_without_coordinates(tmp_path, coordinates):
    # no gt_bbox / gt_point_2d: r1gui raises ValueError("No ground truth coordinates found."); gt_bbox "none":
    # "n" / 1000 raises TypeError. Both inside its try: accuracy 0, format kept -> 0.1 (guirl's Action: 1.0)
    gt = {"gt_action": "Terminate", "gt_input_text": "success", **coordinates, **PHONE}
    assert authors_with_and_without_record(tmp_path, gt, answer("Terminate", value="success")) == pytest.approx(
        (0.1, 1.0)
    )


def test_authors_point_on_the_box_edge_in_their_arithmetic(tmp_path):
    # 1440x3120 screenshot resized to 1400x3024; gt_bbox [30, 315, 60, 375] / 1000 -> x1 = 0.03 exactly;
    # Click [42, 1043] / (1400, 3024) -> x = 0.03: 0.03 < 0.03 is False -> miss -> 0.1. guirl's reader stores the
    # box in screen pixels (43.2 px), which comes back as 0.029999999999999995 < 0.03 -> inside -> 1.0
    gt = {"gt_action": "Click", "gt_input_text": "None", "gt_bbox": [30, 315, 60, 375], "image_width": 1440,
          "image_height": 3120, "image_width_new": 1400, "image_height_new": 3024}
    resized = Frame(kind="resized", width=1400, height=3024)
    got = authors_with_and_without_record(tmp_path, gt, answer("Click", point=[42, 1043]), resized)
    assert got == pytest.approx((0.1, 1.0))
    # one pixel further in, 43 / 1400 = 0.0307 > 0.03: a hit for both
    assert authors_with_and_without_record(tmp_path, gt, answer("Click", point=[43, 1043]), resized) == pytest.approx(
        (1.0, 1.0)
    )


def test_authors_record_rules_by_hand():
    from guirl.rewards.guilibra import authors_record_accuracy, read_authors_answer

    click = read_authors_answer(answer("Click", point=[540, 1200]))
    base = {"gt_action": "click", "gt_input_text": "", **PHONE}
    # gt_point_2d is read as given (0-1): (0.5, 0.5) vs (0.5, 0.5) -> distance 0 < 0.05^2 -> 1
    assert authors_record_accuracy(click, {**base, "gt_point_2d": [0.5, 0.5]}) == 1.0
    # gt_bbox of two numbers is a point in 0-1000: (500, 500) -> (0.5, 0.5) -> 1
    assert authors_record_accuracy(click, {**base, "gt_bbox": [500, 500]}) == 1.0
    # no gt_input_text: KeyError before any comparison -> 0, even for a matching click
    assert authors_record_accuracy(click, {k: v for k, v in base.items() if k != "gt_input_text"} | {
        "gt_bbox": [500, 500]}) == 0.0
    # gt_point_2d "none" on a click: len("none") == 4, then "n" < 0.5 raises TypeError -> 0
    assert authors_record_accuracy(click, {**base, "gt_point_2d": "none"}) == 0.0
    # ground-truth names renamed as the code does: long_press -> longpress, type -> write
    press = read_authors_answer(answer("LongPress", point=[540, 1200]))
    assert authors_record_accuracy(press, {**base, "gt_action": "long_press", "gt_bbox": [500, 500]}) == 1.0
    # escapes in gt_input_text are decoded after lower-casing: "Caf\\u00e9" -> "café"; the prediction's value is
    # taken as written, so "café" matches it and the JSON escape of the same text does not
    fields = '"action_type": "Write", "action_description": "d", "point_2d": "none"'
    gt_type = {"gt_action": "type", "gt_input_text": "Caf\\u00e9", "gt_bbox": [-100, -100], **PHONE}
    plain = read_authors_answer(raw_answer(f'{{{fields}, "value": "café"}}'))
    escaped = read_authors_answer(answer("Write", value="café"))  # json.dumps writes "caf\\u00e9"
    assert authors_record_accuracy(plain, gt_type) == 1.0 and authors_record_accuracy(escaped, gt_type) == 0.0

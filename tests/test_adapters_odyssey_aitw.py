"""GUI-Odyssey (v1 and latest) and AITW (TFRecord export and SeeClick's conversion) adapters.

Fixtures are written here into ``tmp_path`` following the public layouts
(OpenGVLab/GUI-Odyssey ``introduction.md``; njucckevin/SeeClick
``agent_tasks/aitw_test.py`` / ``action_matching.py``), on 108 x 192 PNGs.
Each expected value is worked out by hand in the comment next to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from guirl.actions.types import Action, ActionType
from guirl.data.adapters import AdapterError, load_public
from guirl.data.adapters.aitw import load_aitw
from guirl.data.adapters.odyssey import load_gui_odyssey
from guirl.matching.step import match_action

W, H = 108, 192


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (W, H), "white").save(path)


def _json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def _approx(value):
    return pytest.approx(value, abs=0.5)


# -- GUI-Odyssey -------------------------------------------------------------------------------


def _odyssey_v1(root: Path, steps: list[dict] | None = None) -> Path:
    steps = steps or [
        {"step": 0, "screenshot": "ep1_0.png", "action": "CLICK", "info": [[500, 250], [502, 251]], "ps": ""},
        {"step": 1, "screenshot": "ep1_1.png", "action": "LONG_PRESS", "info": [[250, 500], [250, 500]], "ps": ""},
        {"step": 2, "screenshot": "ep1_2.png", "action": "SCROLL", "info": [[500, 800], [500, 200]], "ps": ""},
        {"step": 3, "screenshot": "ep1_3.png", "action": "SCROLL", "info": [[800, 500], [200, 500]], "ps": ""},
        {"step": 4, "screenshot": "ep1_4.png", "action": "TEXT", "info": "hello", "ps": ""},
        {"step": 5, "screenshot": "ep1_5.png", "action": "CLICK", "info": "KEY_HOME", "ps": ""},
        {"step": 6, "screenshot": "ep1_6.png", "action": "CLICK", "info": "KEY_BACK", "ps": ""},
        {"step": 7, "screenshot": "ep1_7.png", "action": "CLICK", "info": "KEY_APPSELECT", "ps": ""},
        {"step": 8, "screenshot": "ep1_8.png", "action": "INCOMPLETE", "info": "", "ps": "not possible"},
    ]
    for s in steps:
        _png(root / "screenshots" / s["screenshot"])
    rec = {
        "episode_id": "ep1",
        "device_info": {"product": "x", "release_version": "14", "sdk_version": "34", "h": 2400, "w": 1080,
                        "device_name": "Pixel 7 Pro"},
        "task_info": {"category": "Multi_Apps", "app": ["Chrome", "Keep"], "meta_task": "Find {} and note it",
                      "task": "Find the weather and note it", "instruction": "Use Chrome to find the weather"},
        "step_length": len(steps),
        "steps": steps,
    }
    return _json(root / "annotations" / "ep1.json", rec)


def test_odyssey_v1_two_point_clicks_and_every_action(tmp_path):
    _odyssey_v1(tmp_path)
    (ep,) = load_public("gui_odyssey", tmp_path / "annotations")  # the annotations/ directory; ../screenshots
    acts = [s.valid_actions[0] for s in ep.steps]
    assert [a.type for a in acts] == [
        ActionType.CLICK, ActionType.LONG_PRESS, ActionType.SCROLL, ActionType.SCROLL, ActionType.TYPE,
        ActionType.HOME, ActionType.BACK, ActionType.KEY, ActionType.TERMINATE]
    # CLICK info [[500, 250], [502, 251]]: the first point, /1000 * (108, 192) = (54, 48); the pair is kept
    assert acts[0].point == _approx((54, 48)) and acts[0].box is None
    assert ep.steps[0].extra["info"] == [[500, 250], [502, 251]]
    # LONG_PRESS [[250, 500], ...] -> (27, 96)
    assert acts[1].point == _approx((27, 96))
    # finger (500, 800) -> (500, 200): y 153.6 -> 38.4 px, finger up -> content below -> "down"
    assert acts[2].direction == "down"
    assert acts[2].point == _approx((54, 153.6)) and acts[2].end_point == _approx((54, 38.4))
    # finger (800, 500) -> (200, 500): moves left -> content from the right -> "right"
    assert acts[3].direction == "right" and acts[3].point == _approx((86.4, 96))
    assert acts[4].text == "hello"
    assert acts[7].keys == ("app_switch",)
    assert acts[8].status == "failure"
    assert [s.screenshot.path for s in ep.steps][:2] == ["ep1_0.png", "ep1_1.png"]
    assert [s.instruction for s in ep.steps] == [None] * 9 and ep.steps[0].sub_goal is None
    assert ep.instruction == "Use Chrome to find the weather" and ep.task == "Multi_Apps"
    assert ep.extra["match_rule"] == "odyssey" and ep.extra["apps"] == ["Chrome", "Keep"]
    assert ep.extra["device"] == "Pixel 7 Pro"


def _odyssey_v2(root: Path) -> Path:
    steps = [
        {"step": 0, "screenshot": "ep2_0.png", "action": "CLICK", "info": [[500, 250]], "ps": "",
         "sam2_bbox": [400, 200, 600, 300], "low_level_instruction": "Tap the search bar",
         "description": "A home screen", "intention": "Open search", "context": "Nothing done yet"},
        {"step": 1, "screenshot": "ep2_1.png", "action": "SCROLL", "info": [[500, 200], [500, 800]], "ps": "",
         "sam2_bbox": [], "low_level_instruction": "Scroll up to the top"},
        {"step": 2, "screenshot": "ep2_2.png", "action": "CLICK", "info": [[100, 900]], "ps": "",
         "sam2_bbox": [400, 200, 600, 300], "low_level_instruction": "Tap the dock icon"},
        {"step": 3, "screenshot": "ep2_3.png", "action": "COMPLETE", "info": "", "ps": "",
         "sam2_bbox": [], "low_level_instruction": "Finish"},
    ]
    for s in steps:
        _png(root / "screenshots" / s["screenshot"])
    rec = {"episode_id": "ep2", "device_info": {"h": 2400, "w": 1080, "device_name": "Pixel Fold"},
           "task_info": {"category": "Web_Shopping", "app": ["Amazon"], "task": "t", "instruction": "Buy socks"},
           "step_length": 4, "steps": steps}
    return _json(root / "annotations" / "ep2.json", rec)


def test_odyssey_v2_sam2_box_and_levels(tmp_path):
    path = _odyssey_v2(tmp_path)
    (high,) = load_public("gui_odyssey", path)
    (low,) = load_public("gui_odyssey", path, level="low")
    click = high.steps[0].valid_actions[0]
    # sam2_bbox [400, 200, 600, 300] (x1, y1, x2, y2 in 0-1000) -> [43.2, 38.4, 64.8, 57.6] px; point (54, 48)
    assert click.box == _approx((43.2, 38.4, 64.8, 57.6)) and click.point == _approx((54, 48))
    assert high.steps[1].valid_actions[0].box is None and high.steps[1].valid_actions[0].direction == "up"
    # the step-2 point (10.8, 172.8) is outside its box: kept, flagged
    assert high.steps[2].extra["point_outside_box"] is True and "point_outside_box" not in high.steps[0].extra
    assert [s.instruction for s in high.steps] == [None] * 4
    assert [s.sub_goal for s in high.steps][:2] == ["Tap the search bar", "Scroll up to the top"]
    assert [s.instruction for s in low.steps] == ["Tap the search bar", "Scroll up to the top", "Tap the dock icon",
                                                  "Finish"]
    assert high.steps[0].extra["intention"] == "Open search" and high.extra["level"] == "high"
    assert low.extra["level"] == "low"
    # the odyssey rule reads valid_actions[0].box and .point: (64, 56) is inside the box, and
    # sqrt((10/108)^2 + (8/192)^2) = 0.10 from the point; (100, 48) is outside the box, 0.43 away
    kwargs = {"screen_size": (W, H), "rule": "odyssey"}
    frame = click.frame
    assert match_action(Action(type=ActionType.CLICK, point=(64, 56), frame=frame), [click], **kwargs).success
    assert not match_action(Action(type=ActionType.CLICK, point=(100, 48), frame=frame), [click], **kwargs).success


def test_odyssey_box_only_hit_needs_the_box(tmp_path):
    path = _odyssey_v2(tmp_path)
    (ep,) = load_gui_odyssey(path)
    click = ep.steps[0].valid_actions[0]  # point (54, 48), box [43.2, 38.4, 64.8, 57.6]
    kwargs = {"screen_size": (W, H), "rule": "odyssey"}
    # widen the box so a point far from the target is inside it: (100, 48) is 46 px = 0.43 away
    wide = click.model_copy(update={"box": (0.0, 0.0, 108.0, 60.0)})
    pred = Action(type=ActionType.CLICK, point=(100, 48), frame=click.frame)
    assert match_action(pred, [wide], **kwargs).success
    assert not match_action(pred, [click.model_copy(update={"box": None})], **kwargs).success


def test_odyssey_bad_inputs_name_file_and_record(tmp_path):
    path = _odyssey_v1(tmp_path)
    rec = json.loads(path.read_text())
    cases = [
        ({"screenshot": "nope.png"}, r"episode ep1 step 0: image 'nope.png' not found"),
        ({"action": "FLY"}, r"episode ep1 step 0: unknown action 'FLY'"),
        ({"info": [[1, 2], [3, 4], [5, 6]]}, r"episode ep1 step 0: CLICK needs info \[\[x, y\]\] or"),
        ({"info": [[500]]}, r"episode ep1 step 0: field 'info' must be a list of 2 numbers"),
        ({"info": [[500, 250]], "sam2_bbox": [1, 2, 3]}, r"step 0: field 'sam2_bbox' must be a list of 4 numbers"),
        ({"info": [[500, 250]], "sam2_bbox": [0.4, 0.2, 0.6, 0.3, 0.1]}, r"'sam2_bbox' must be a list of 4"),
        ({"info": [[500, 250]], "sam2_bbox": [432, 384, 648, 2000]}, r"'sam2_bbox' .* outside the 0-1000"),
        ({"info": [[500, 250]], "sam2_bbox": [400, 200, 100, 50]}, r"'sam2_bbox' .* x2 < x1"),
        ({"info": [[500, 250]], "low_level_instruction": 3}, r"'low_level_instruction' must be str"),
    ]
    for change, msg in cases:
        bad = json.loads(json.dumps(rec))
        bad["steps"][0].update(change)
        bad_path = _json(tmp_path / "bad" / "annotations" / "ep1.json", bad)
        with pytest.raises(AdapterError, match=msg) as err:
            load_gui_odyssey(bad_path, image_dir=tmp_path / "screenshots")
        assert str(bad_path) in str(err.value)
    with pytest.raises(AdapterError, match=r"ep1\.json: episode ep1 step 0: level 'low' needs a low_level_instruction"):
        load_gui_odyssey(path, level="low")
    with pytest.raises(AdapterError, match=r"ep1\.json: episode ep1: field 'steps' must be list"):
        load_gui_odyssey(_json(tmp_path / "b2" / "ep1.json", {**rec, "steps": {"0": {}}}))
    with pytest.raises(AdapterError, match=r"all_annot\.json: record 0: .*looks like an index"):
        load_gui_odyssey(_json(tmp_path / "all_annot.json", [{"episode_id": "ep1", "step_length": 9}]))
    with pytest.raises(AdapterError, match="holds no episode .json"):
        load_gui_odyssey(tmp_path / "screenshots")
    with pytest.raises(ValueError, match="level must be one of"):
        load_gui_odyssey(path, level="mid")


# -- AITW, SeeClick's conversion ---------------------------------------------------------------

BOX = [0.2, 0.1, 0.1, 0.8]  # (y, x, h, w): x 0.1..0.9, y 0.2..0.3 -> [10.8, 38.4, 97.2, 57.6] px


def _sc_step(ep_id: str, step: int, subset: str, type_id: int, text: str, touch=(-1.0, -1.0), lift=(-1.0, -1.0),
             typed: str = "", annot=(), goal: str = "search for hotels", name: str | None = None) -> dict:
    return {"img_filename": name or f"{subset}/{ep_id}_{step}", "goal": goal, "ep_id": ep_id, "step": step,
            "action_type_id": type_id, "action_type_text": text, "touch": list(touch), "lift": list(lift),
            "type_text": typed, "annot_position": list(annot)}


def _seeclick_file(root: Path, data: dict, name: str = "aitw_data_test.json") -> Path:
    for episodes in data.values():
        for ep in episodes:
            for s in ep:
                if isinstance(s, dict) and "img_filename" in s:
                    _png(root / "aitw_images" / f"{s['img_filename']}.png")
    return _json(root / name, data)


def _seeclick_data() -> dict:
    g = "general"
    general = [
        _sc_step("100", 0, g, 4, "click", (0.5, 0.25), (0.5, 0.26), annot=BOX + [0.5, 0.5, 0.1, 0.1]),
        _sc_step("100", 1, g, 4, "scroll down", (0.5, 0.8), (0.5, 0.2)),
        _sc_step("100", 2, g, 3, "type", typed="hotels near me"),
        _sc_step("100", 3, g, 4, "scroll left", (0.2, 0.5), (0.8, 0.5)),
        _sc_step("100", 4, g, 7, "press enter"),
        _sc_step("100", 5, g, 5, "press back"),
        _sc_step("100", 6, g, 6, "press home"),
        _sc_step("100", 7, g, 10, "status task complete"),
    ]
    single = [_sc_step("200", 0, "single", 4, "scroll up", (0.5, 0.2), (0.5, 0.8),
                       name="single/200.1-3.Open the app. tap it_0", goal="open the app"),
              _sc_step("200", 1, "single", 4, "scroll right", (0.8, 0.5), (0.2, 0.5), name="single/200_1",
                       goal="open the app"),
              _sc_step("200", 2, "single", 11, "status task impossible", name="single/200_2", goal="open the app")]
    return {"general": [general], "single": [single]}


def test_seeclick_layout_every_action(tmp_path):
    _seeclick_file(tmp_path, _seeclick_data())
    eps = load_public("aitw", tmp_path / "aitw_data_test.json")  # detected as SeeClick's layout
    gen, sing = eps
    acts = [s.valid_actions[0] for s in gen.steps]
    assert [a.type for a in acts] == [
        ActionType.CLICK, ActionType.SCROLL, ActionType.TYPE, ActionType.SCROLL, ActionType.ENTER,
        ActionType.BACK, ActionType.HOME, ActionType.TERMINATE]
    # touch [x, y] = [0.5, 0.25] x-first on 108 x 192 -> (54, 48)
    assert acts[0].point == _approx((54, 48)) and acts[0].frame.width == W
    # "scroll down": finger (0.5, 0.8) -> (0.5, 0.2), moving up -> content below -> guirl "down" (kept)
    assert acts[1].direction == "down"
    assert acts[1].point == _approx((54, 153.6)) and acts[1].end_point == _approx((54, 38.4))
    assert acts[2].text == "hotels near me"
    # "scroll left": finger (0.2, 0.5) -> (0.8, 0.5), moving right -> content from the left -> "left"
    assert acts[3].direction == "left" and acts[3].point == _approx((21.6, 96))
    assert acts[7].status == "success"
    # annot_position (y, x, h, w) [0.2, 0.1, 0.1, 0.8] -> [10.8, 38.4, 97.2, 57.6]; [0.5, 0.5, 0.1, 0.1] ->
    # [54, 96, 64.8, 115.2]
    boxes = [n.box for n in gen.steps[0].a11y]
    assert boxes[0] == _approx((10.8, 38.4, 97.2, 57.6)) and boxes[1] == _approx((54, 96, 64.8, 115.2))
    assert gen.steps[0].screenshot.path == "aitw_images/general/100_0.png"  # '.png' appended, next to the file
    assert (gen.steps[0].screenshot.width, gen.steps[0].screenshot.height) == (W, H)
    assert [s.instruction for s in gen.steps] == [None] * 8 and gen.instruction == "search for hotels"
    assert gen.id == "aitw_100" and gen.task == "general" and gen.extra["subset"] == "general"
    assert gen.extra["split"] == "test" and gen.extra["layout"] == "seeclick" and gen.extra["match_rule"] == "aitw"
    assert gen.extra["taps_outside_boxes"] == 0 and gen.extra["scrolls_finger_disagrees"] == 0
    assert gen.steps[3].extra["step"] == 3 and "skipped_missing_images" not in gen.extra
    sacts = [s.valid_actions[0] for s in sing.steps]
    # "scroll up": finger (0.5, 0.2) -> (0.5, 0.8) moves down -> content above -> "up"; "scroll right" -> "right"
    assert [a.direction for a in sacts[:2]] == ["up", "right"] and sacts[2].status == "failure"
    assert sing.steps[0].screenshot.path == "aitw_images/single/200.1-3.Open the app. tap it_0.png"
    assert sing.task == "single" and sing.instruction == "open the app"


def test_seeclick_tap_matches_under_aitw_rule(tmp_path):
    _seeclick_file(tmp_path, _seeclick_data())
    step = load_aitw(tmp_path / "aitw_data_test.json")[0].steps[0]
    gold = step.valid_actions
    kwargs = {"screen_size": (W, H), "rule": "aitw", "a11y": step.a11y}
    # (95, 56) is inside the target's annotation box [10.8, 38.4, 97.2, 57.6] but 41 px = 0.38 from (54, 48)
    assert match_action(Action(type=ActionType.CLICK, point=(95, 56), frame=gold[0].frame), gold, **kwargs).success
    assert not match_action(Action(type=ActionType.CLICK, point=(95, 150), frame=gold[0].frame), gold,
                            **kwargs).success


def test_seeclick_directory_of_splits_and_explicit_images(tmp_path):
    data = _seeclick_data()
    _seeclick_file(tmp_path, data, "aitw_data_test.json")
    _seeclick_file(tmp_path, {"install": [[_sc_step("300", 0, "install", 6, "press home")]]},
                   "aitw_data_train.json")
    eps = load_public("aitw", tmp_path)
    assert [(e.id, e.extra["split"], e.task) for e in eps] == [
        ("aitw_100", "test", "general"), ("aitw_200", "test", "single"), ("aitw_300", "train", "install")]
    (ep,) = load_aitw(tmp_path / "aitw_data_train.json", image_dir=tmp_path / "aitw_images")
    assert ep.steps[0].screenshot.path == "install/300_0.png"  # relative to the given image directory


def test_seeclick_xy_swap_is_caught(tmp_path):
    data = _seeclick_data()
    for step in data["general"][0]:  # the subset converted y-first: every touch / lift swapped
        step["touch"], step["lift"] = step["touch"][::-1], step["lift"][::-1]
    # the tap (x, y) = (0.25, 0.5) is in no box, (0.5, 0.25) is; the scrolls' paths turn horizontal
    path = _seeclick_file(tmp_path, data)
    with pytest.raises(AdapterError) as err:
        load_aitw(path)
    msg = str(err.value)
    assert str(path) in msg and "subset general episode 0 (ep_id 100) step 0" in msg
    assert "falls in no annot_position box, but (x, y) = (0.5, 0.25)" in msg and "look swapped" in msg
    assert "x-first [x, y]" in msg and "in subset general, 3 taps / scrolls fit only with x and y swapped and 0" in msg
    # scrolls written y-first: "scroll up" finger (0.5, 0.2) -> (0.5, 0.8) becomes (0.2, 0.5) -> (0.8, 0.5),
    # read x-first a "left" scroll, which the text's "up" is with x and y swapped; "scroll right" likewise
    data = _seeclick_data()
    for step in data["single"][0]:
        step["touch"], step["lift"] = step["touch"][::-1], step["lift"][::-1]
    path = _seeclick_file(tmp_path / "s", data)
    with pytest.raises(AdapterError, match=r"subset single episode 0 \(ep_id 200\) step 0: the finger path "
                       r"\(0.2, 0.5\) -> \(0.8, 0.5\) \(x, y\) is a 'left' scroll, the text says 'up'"):
        load_aitw(path)


def test_seeclick_single_misfit_is_flagged_not_refused(tmp_path):
    data = _seeclick_data()
    g = data["general"][0]
    # two more taps in their boxes, then one whose swapped point only is in a box: 1 swapped vs 3 fitting
    g.insert(1, _sc_step("100", 8, "general", 4, "click", (0.5, 0.22), (0.5, 0.22), annot=BOX))
    g.insert(1, _sc_step("100", 9, "general", 4, "click", (0.55, 0.55), (0.55, 0.55), annot=[0.5, 0.5, 0.1, 0.1]))
    g.insert(1, _sc_step("100", 10, "general", 4, "click", (0.25, 0.5), (0.25, 0.5), annot=BOX))
    path = _seeclick_file(tmp_path, data)
    ep = load_aitw(path)[0]
    assert ep.steps[1].extra["outside_boxes"] is True and ep.extra["taps_outside_boxes"] == 1
    assert ep.steps[1].valid_actions[0].point == _approx((27, 96))  # kept as given
    with pytest.raises(AdapterError, match=r"subset general episode 0 \(ep_id 100\) step 1: .*look swapped"):
        load_aitw(path, swap_check="step")
    for step in data["general"][0]:  # swap every touch / lift: steps 0, 8 and both scrolls now fit only swapped,
        step["touch"], step["lift"] = step["touch"][::-1], step["lift"][::-1]  # step 10 and symmetric 9 fit
    path = _seeclick_file(tmp_path / "m", data)
    with pytest.raises(AdapterError, match=r"episode 0 \(ep_id 100\) step 0: .*in subset general, 4 taps / "
                       r"scrolls fit only with x and y swapped and 2 fit as given"):
        load_aitw(path)
    assert len(load_aitw(path, swap_check="off")) == 2


def test_seeclick_bad_inputs_name_file_subset_episode_step(tmp_path):
    def check(change, msg, where="subset general episode 0 (ep_id 100) step 0"):
        data = _seeclick_data()
        change(data)
        path = _seeclick_file(tmp_path / f"c{check.n}", data)
        check.n += 1
        with pytest.raises(AdapterError) as err:
            load_aitw(path)
        text = str(err.value)
        assert str(path) in text and where in text and msg in text, text

    check.n = 0
    check(lambda d: d["general"][0][0].update(action_type_id=9), "unknown action_type_id 9")
    check(lambda d: d["general"][0][0].update(action_type_text="long press"), "action_type_text 'long press'")
    check(lambda d: d["general"][0][0].update(touch=[0.5, 0.2, 0.1]), "field 'touch' must be a list of 2 numbers")
    check(lambda d: d["general"][0][0].update(touch=[54, 48], lift=[54, 48]),
          "not a normalised [x, y] in 0-1 (these look like pixels of the 108x192 screenshot)")
    check(lambda d: d["general"][0][0].update(annot_position=[0.1, 0.2, 0.3]), "4 numbers per element")
    check(lambda d: d["general"][0][0].update(annot_position=[10, 20, 5, 5]), "element 0 [10.0, 20.0, 5.0, 5.0]")
    check(lambda d: d["general"][0][1].update(ep_id="999"), "ep_id '999' differs from the episode's '100'",
          "subset general episode 0 (ep_id 100) step 1")
    check(lambda d: d["general"][0][2].pop("type_text"), "field 'type_text' is missing",
          "subset general episode 0 (ep_id 100) step 2")
    check(lambda d: d["general"][0].__setitem__(1, "step"), "expected a JSON object",
          "subset general episode 0 (ep_id 100) step 1")
    check(lambda d: d["general"].__setitem__(0, {"ep_id": "1"}), "must be a non-empty list of step objects",
          "subset general episode 0")
    check(lambda d: d.__setitem__("single", {"x": 1}), "must be a list of episodes", "subset single")


def test_seeclick_missing_image_error_or_skip(tmp_path):
    path = _seeclick_file(tmp_path, _seeclick_data())
    (tmp_path / "aitw_images" / "general" / "100_2.png").unlink()
    with pytest.raises(AdapterError) as err:
        load_aitw(path)
    msg = str(err.value)
    assert str(path) in msg and "subset general episode 0 (ep_id 100) step 2: image 'aitw_images/general/100_2.png'" \
        " not found" in msg and "missing_images='skip'" in msg
    gen, sing = load_aitw(path, missing_images="skip")
    # SeeClick's aitw_test.py steps over a missing screenshot; the skip is counted
    assert len(gen.steps) == 7 and gen.extra["skipped_missing_images"] == 1 and [s.index for s in gen.steps] == list(
        range(7))
    assert gen.steps[2].valid_actions[0].direction == "left" and sing.extra["skipped_missing_images"] == 0
    for f in (tmp_path / "aitw_images" / "single").iterdir():
        f.unlink()
    (gen,) = load_aitw(path, missing_images="skip")  # the single episode lost every step: dropped, counted
    assert gen.extra["skipped_empty_episodes"] == 1 and gen.extra["skipped_missing_images"] == 1
    data = _seeclick_data()
    data["single"].append(_seeclick_data()["single"][0])
    path = _seeclick_file(tmp_path / "two", data)
    for f in (tmp_path / "two" / "aitw_images" / "single").glob("200_*.png"):
        f.unlink()
    eps = load_aitw(path, missing_images="skip")
    assert [e.task for e in eps] == ["general", "single", "single"]  # step 0 of each single episode remains
    assert eps[1].extra["skipped_missing_images"] == 2


def test_aitw_layout_forced_and_unknown_shape(tmp_path):
    path = _seeclick_file(tmp_path, _seeclick_data())
    with pytest.raises(AdapterError, match=r"aitw_data_test\.json: record 0: field 'episode_id' is missing"):
        load_aitw(path, layout="tfrecord")
    odd = _json(tmp_path / "odd.json", [{"foo": 1}])
    with pytest.raises(AdapterError, match=r"odd\.json: cannot tell the AITW layout .*layout='seeclick'"):
        load_aitw(odd)
    with pytest.raises(AdapterError, match=r"odd\.json: SeeClick's AITW file is one JSON object"):
        load_aitw(_json(tmp_path / "odd.json", [{"foo": 1}, {"bar": 2}]), layout="seeclick")
    with pytest.raises(ValueError, match="layout must be one of"):
        load_aitw(path, layout="yx")
    with pytest.raises(AdapterError, match="holds no aitw_data"):
        load_aitw(tmp_path / "aitw_images" / "general")


# -- AITW, TFRecord export -----------------------------------------------------------------------


def _tf_rec(step: int, action: int, touch=(-1, -1), lift=(-1, -1), positions=(), text: str = "") -> dict:
    return {"episode_id": "e9", "step_id": step, "goal_info": "open settings", "image/path": f"img/e9_{step}.png",
            "image/width": W, "image/height": H, "results/action_type": action, "results/yx_touch": list(touch),
            "results/yx_lift": list(lift), "results/type_action": text,
            "image/ui_annotations_positions": list(positions), "image/ui_annotations_text": ["Wi-Fi"][: len(positions) // 4],
            "image/ui_annotations_ui_types": ["TEXT"][: len(positions) // 4]}


def test_tfrecord_layout_y_first_and_swap_check(tmp_path):
    recs = [_tf_rec(1, 4, (0.8, 0.5), (0.2, 0.5)), _tf_rec(0, 4, (0.25, 0.5), (0.25, 0.5), BOX),
            _tf_rec(2, 3, text="wifi"), _tf_rec(3, 11)]
    for r in recs:
        _png(tmp_path / r["image/path"])
    path = tmp_path / "steps.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs))
    (ep,) = load_aitw(path)
    acts = [s.valid_actions[0] for s in ep.steps]  # ordered by step_id
    # yx_touch [0.25, 0.5] -> (x, y) = (0.5, 0.25) -> (54, 48), inside the Wi-Fi box [10.8, 38.4, 97.2, 57.6]
    assert acts[0].type is ActionType.CLICK and acts[0].point == _approx((54, 48))
    assert ep.steps[0].a11y[0].box == _approx((10.8, 38.4, 97.2, 57.6)) and ep.steps[0].a11y[0].text == "Wi-Fi"
    # [y, x] (0.8, 0.5) -> (0.2, 0.5): finger up -> "down"
    assert acts[1].direction == "down" and acts[1].point == _approx((54, 153.6))
    assert acts[2].text == "wifi" and acts[3].status == "failure"
    assert ep.steps[0].screenshot.path == "img/e9_0.png" and ep.extra["layout"] == "tfrecord"
    assert ep.extra["taps_outside_boxes"] == 0
    recs[1]["results/yx_touch"] = recs[1]["results/yx_lift"] = [0.5, 0.25]  # x-first given to the y-first reader
    path.write_text("\n".join(json.dumps(r) for r in recs))
    with pytest.raises(AdapterError, match=r"steps\.jsonl: record 1 \(episode e9 step 0\): .*look swapped; AITW's "
                       r"TFRecord layout has touch / lift \[y, x\]"):
        load_aitw(path)
    recs[1]["results/action_type"] = 8
    path.write_text("\n".join(json.dumps(r) for r in recs))
    with pytest.raises(AdapterError, match=r"record 1 \(episode e9 step 0\): unknown results/action_type 8"):
        load_aitw(path)

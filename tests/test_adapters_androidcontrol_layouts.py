"""AndroidControl in the papers' layouts: UI-S1, InfiGUI-R1, UI-R1 (and the TFRecord export).

Fixtures are written into ``tmp_path`` following each public layout as its
code reads it (see :mod:`guirl.data.adapters.androidcontrol`); screens are
108 x 240 pixels (a 1080 x 2400 phone at 1/10). Each test states the
conversion worked out by hand, in particular each layout's swipe
convention -> guirl's (the direction the content view moves towards).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from PIL import Image

from guirl.actions.types import Action, ActionType
from guirl.data.adapters import AdapterError, load_public
from guirl.matching.step import match_action

W, H = 108, 240
FIX = Path(__file__).parent / "fixtures" / "datasets"


def _png(path: Path, size: tuple[int, int] = (W, H)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (230, 230, 240)).save(path)


def _write(path: Path, data) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in data))
    else:
        path.write_text(json.dumps(data))
    return path


def _approx(point):
    return pytest.approx(point, abs=0.5)


# -- UI-S1: android_control_evaluation_std.jsonl ------------------------------------------------


def _uis1_record() -> dict:
    shot = "/datasets/AndroidControl/images/77_{}.png"  # absolute paths of the authors' machine
    steps = [
        ({"action": "system_button", "button": "Back"}, None, "go back"),
        ({"action": "click", "coordinate": [54, 227]},
         {"candidate_bbox": [[45, 221, 62, 233], [0, 47, 108, 233]]}, "click on create tab"),
        ({"action": "swipe", "coordinate": [54.0, 180.0], "coordinate2": [54.0, 60.0]},
         {"direction": "down"}, "Swipe up to view the details"),
        ({"action": "swipe", "coordinate": [27.0, 120.0], "coordinate2": [81.0, 120.0]},
         {"direction": "right"}, "Swipe left to view upcoming phases"),
        ({"action": "type", "text": "Sculpture art"}, None, "type Sculpture art"),
        ({"action": "open", "text": "pCloud"}, {"candidate_bbox": [[56, 23, 77, 50]]}, "open pCloud App"),
        ({"action": "wait", "time": 2}, None, "wait"),
        ({"action": "long_press", "coordinate": [10, 20], "time": 1}, {"candidate_bbox": []}, "press the photo"),
    ]
    out = []
    for t, (content, check_extra, instruction) in enumerate(steps):
        check = {k: v for k, v in content.items() if k not in ("coordinate2", "time") or content["action"] == "wait"}
        if content["action"] == "swipe":
            check = {"action": "swipe"}
        check.update(check_extra or {})
        out.append({"action_content": content, "screenshot": shot.format(t), "step_instruction": instruction,
                    "check_options": check})
    out[1]["thought"] = "The create tab is at the bottom."
    return {"goal": "Publish my sculpture art", "is_successful": True, "steps": out, "episode_id": 77}


def _uis1_dir(tmp_path: Path, records=None) -> Path:
    for t in range(8):
        _png(tmp_path / "images" / f"77_{t}.png")
    return _write(tmp_path / "android_control_evaluation_std.jsonl", records or [_uis1_record()])


def test_uis1_steps_points_boxes_and_swipes(tmp_path):
    path = _uis1_dir(tmp_path)
    (ep,) = load_public("androidcontrol", path)
    assert ep.id == "androidcontrol_77" and ep.instruction == "Publish my sculpture art"
    assert ep.extra == {"level": "high", "layout": "uis1", "match_rule": "uis1", "is_successful": True}
    assert [s.screenshot.path for s in ep.steps] == [f"images/77_{t}.png" for t in range(8)]  # found by file name
    assert all((s.screenshot.width, s.screenshot.height) == (W, H) for s in ep.steps)  # read from the image
    assert [s.instruction for s in ep.steps] == [None] * 8
    back, click, vswipe, hswipe, typed, opened, wait, press = (s.valid_actions for s in ep.steps)
    assert [a.type for a in back] == [ActionType.BACK]
    # every candidate box is an accepted region: one valid action per box, each with the point
    assert [a.type for a in click] == [ActionType.CLICK, ActionType.CLICK]
    assert all(a.point == _approx((54, 227)) for a in click)
    assert [a.box for a in click] == [(45, 221, 62, 233), (0, 47, 108, 233)]
    assert click[0].frame.width == W and click[0].frame.height == H
    # finger (54,180) -> (54,60) moves up: content below shows -> "down" (check_options direction "down" agrees)
    (v,) = vswipe
    assert v.type is ActionType.SWIPE and v.direction == "down"
    assert v.point == _approx((54, 180)) and v.end_point == _approx((54, 60))
    # finger (27,120) -> (81,120) moves right: content moves left -> "left"; UI-S1 writes this path for its
    # check direction "right" (it flips only up/down: "the down up is wrong in gt, left right is ok")
    (h,) = hswipe
    assert h.direction == "left" and h.point == _approx((27, 120)) and h.end_point == _approx((81, 120))
    assert typed[0].type is ActionType.TYPE and typed[0].text == "Sculpture art" and typed[0].point is None
    # open: the app, or a click on its icon, scored against the centre of the first box (66.5, 36.5)
    assert [a.type for a in opened] == [ActionType.OPEN_APP, ActionType.CLICK] and opened[0].text == "pCloud"
    assert opened[1].box == (56, 23, 77, 50) and opened[1].point == _approx((66.5, 36.5))
    assert wait[0].type is ActionType.WAIT and wait[0].amount == 2
    (lp,) = press  # empty candidate_bbox: only the distance to the point counts
    assert lp.type is ActionType.LONG_PRESS and lp.point == _approx((10, 20)) and lp.box is None and lp.amount == 1
    assert ep.steps[1].reasoning == "The create tab is at the bottom."
    assert ep.steps[2].sub_goal == "Swipe up to view the details"
    assert all(s.action == s.valid_actions[0] for s in ep.steps)


def test_uis1_low_level_and_match_rule(tmp_path):
    path = _uis1_dir(tmp_path)
    (ep,) = load_public("androidcontrol_low", path)
    assert ep.steps[1].instruction == "click on create tab" and ep.steps[5].instruction == "open pCloud App"
    step = ep.steps[1]
    kwargs = {"screen_size": (W, H), "rule": "uis1"}
    # (100, 60) is in the second candidate box only, far from the point (54, 227): a hit thanks to that box
    hit = Action(type=ActionType.CLICK, point=(100, 60), frame=step.valid_actions[0].frame)
    assert match_action(hit, step.valid_actions, **kwargs).success
    miss = Action(type=ActionType.CLICK, point=(100, 20), frame=step.valid_actions[0].frame)
    assert not match_action(miss, step.valid_actions, **kwargs).success
    # a click on the open step's icon counts as the open
    icon = Action(type=ActionType.CLICK, point=(60, 30), frame=step.valid_actions[0].frame)
    assert match_action(icon, ep.steps[5].valid_actions, **kwargs).success


def test_uis1_training_layout_without_check_options(tmp_path):
    # android_control_train_example.jsonl: no check_options, 'bbox' in action_content, terminate, no episode_id
    _png(tmp_path / "images" / "0_0.png")
    _png(tmp_path / "images" / "0_1.png")
    rec = {"goal": "Open Zoho", "is_successful": True, "steps": [
        {"action_content": {"action": "click", "coordinate": [54.0, 38.9], "bbox": [36, 32, 69, 46]},
         "screenshot": "/datasets/AndroidControl/images/0_0.png", "action_description": "Tap Zoho"},
        {"action_content": {"action": "terminate", "status": "success"},
         "screenshot": "/datasets/AndroidControl/images/0_1.png"}]}
    (ep,) = load_public("androidcontrol", _write(tmp_path / "train.jsonl", [rec]), image_dir=tmp_path)
    click, done = (s.valid_actions for s in ep.steps)
    assert ep.id == "androidcontrol_0"  # no episode_id: the record index
    assert click[0].box == (36, 32, 69, 46) and click[0].point == _approx((54, 38.9))
    assert click[0].description == "Tap Zoho"
    assert done[0].type is ActionType.TERMINATE and done[0].status == "success"
    with pytest.raises(AdapterError, match=r"train\.jsonl: record 0 \(episode 0\) step 0: low level needs"):
        load_public("androidcontrol_low", tmp_path / "train.jsonl", image_dir=tmp_path)


# -- InfiGUI-R1: android_control_test.json ------------------------------------------------------


def _infigui_record() -> dict:
    checks = [
        {"action": "click", "candidate_bbox": [[20, 30, 60, 50]], "coordinate": [40, 40]},
        {"action": "swipe", "direction": "down"},
        {"action": "swipe", "direction": "left"},
        {"action": "open", "text": "Maps"},
        {"action": "system_button", "button": "Home"},
        {"action": "type", "text": "Moody Gardens"},
    ]
    pams = [
        {"action": "click", "coordinate": [40, 40]},
        {"action": "swipe", "coordinate": [54, 180], "coordinate2": [54, 60]},
        {"action": "swipe", "coordinate": [81, 120], "coordinate2": [27, 120]},
        {"action": "open", "text": "Maps"},
        {"action": "system_button", "button": "Home"},
        {"action": "type", "text": "Moody Gardens"},
    ]
    return {
        "episode": {"episode_id": 5, "goal": "Get directions to Moody Gardens",
                    "step_instructions": [f"instruction {t}" for t in range(6)],
                    "screenshot_paths": [f"5/5_{t}.png" for t in range(7)]},
        "step_pams": pams, "step_check_pams": checks, "width": W, "height": H,
    }


def _infigui_dir(tmp_path: Path, records=None) -> Path:
    for t in range(7):
        _png(tmp_path / "5" / f"5_{t}.png")
    return _write(tmp_path / "android_control_test.json", records or [_infigui_record()])


def test_infigui_steps_and_finger_direction(tmp_path):
    path = _infigui_dir(tmp_path)
    (ep,) = load_public("androidcontrol", path)
    assert ep.id == "androidcontrol_5" and ep.instruction == "Get directions to Moody Gardens"
    assert ep.extra["layout"] == "infigui" and ep.extra["match_rule"] == "infigui"
    assert [s.screenshot.path for s in ep.steps] == [f"5/5_{t}.png" for t in range(6)]  # 7 paths, 6 steps
    assert (ep.steps[0].screenshot.width, ep.steps[0].screenshot.height) == (W, H)  # the record's width / height
    click, down, left, opened, home, typed = (s.valid_actions for s in ep.steps)
    assert click[0].type is ActionType.CLICK and click[0].point == _approx((40, 40))
    assert click[0].box == (20, 30, 60, 50)
    # evaluate_android_control.py: predict_direction(finger path) == direction -> a finger direction;
    # finger down shows the content above -> guirl "up"; finger left -> content "right"
    assert down[0].type is ActionType.SWIPE and down[0].direction == "up" and down[0].point is None
    assert left[0].direction == "right"
    assert opened == [Action(type=ActionType.OPEN_APP, text="Maps")]  # no candidate_bbox: no click alternative
    assert home[0].type is ActionType.HOME
    assert typed[0].type is ActionType.TYPE and typed[0].text == "Moody Gardens"
    assert ep.steps[1].extra["step_pam"] == {"action": "swipe", "coordinate": [54, 180], "coordinate2": [54, 60]}
    assert [s.instruction for s in ep.steps] == [None] * 6
    (low,) = load_public("androidcontrol_low", path)
    assert [s.instruction for s in low.steps] == [f"instruction {t}" for t in range(6)]


def test_infigui_step_count_mismatch(tmp_path):
    rec = _infigui_record()
    rec["step_pams"] = rec["step_pams"][:5]
    path = _infigui_dir(tmp_path, [rec])
    with pytest.raises(AdapterError, match=r"android_control_test\.json: record 0 \(episode 5\): 6 step_check_pams / "
                       r"5 step_pams"):
        load_public("androidcontrol", path)


# -- UI-R1: ac_test.json ------------------------------------------------------------------------


def _uir1_records() -> list[dict]:
    return [
        {"image": "episode_140-screenshot_0.png", "gt": {"action_type": "open_app", "app_name": "PocketBook"},
         "task": "open the PocketBook app."},
        {"image": "episode_140-screenshot_2.png", "gt": {"action_type": "click", "x": 103, "y": 21},
         "task": "Click on the more options icon."},
        {"image": "episode_140-screenshot_3.png", "gt": {"action_type": "scroll", "direction": "left"},
         "task": "Swipe right to view the size"},
        {"image": "episode_140-screenshot_4.png", "gt": {"action_type": "input_text", "text": "natalie"},
         "task": "Type natalie"},
        {"image": "episode_662-screenshot_0.png", "gt": {"action_type": "navigate_back"}, "task": "Go back"},
    ]


def _uir1_dir(tmp_path: Path, records=None) -> Path:
    records = records or _uir1_records()
    for r in records:
        _png(tmp_path / "images" / r["image"])
    return _write(tmp_path / "ac_test.json", records)


def test_uir1_one_step_episodes(tmp_path):
    path = _uir1_dir(tmp_path)
    eps = load_public("androidcontrol", path)
    assert [e.id for e in eps] == ["androidcontrol_140_step0", "androidcontrol_140_step2", "androidcontrol_140_step3",
                                   "androidcontrol_140_step4", "androidcontrol_662_step0"]
    assert all(len(e.steps) == 1 for e in eps)  # no episode field, no goal: one Episode per step
    assert eps[1].extra == {"level": "high", "layout": "uir1", "match_rule": "uir1", "episode_id": "140", "step": 2}
    assert eps[0].steps[0].screenshot.path == "images/episode_140-screenshot_0.png"
    opened, click, scroll, typed, back = (e.steps[0].valid_actions[0] for e in eps)
    assert opened.type is ActionType.OPEN_APP and opened.text == "PocketBook"
    assert click.type is ActionType.CLICK and click.point == _approx((103, 21)) and click.frame.width == W
    # UI-R1 never reads 'direction': AndroidControl's own value, kept as the content direction
    assert scroll.type is ActionType.SCROLL and scroll.direction == "left"
    assert typed.type is ActionType.TYPE and typed.text == "natalie"
    assert back.type is ActionType.BACK
    assert eps[1].instruction == "Click on the more options icon." and eps[1].steps[0].instruction is None
    low = load_public("androidcontrol_low", path)
    assert [e.steps[0].instruction for e in low] == [r["task"] for r in _uir1_records()]


# -- TFRecord export still the default; directories; forcing a layout ----------------------------


def test_tfrecord_default_and_directory(tmp_path):
    (ep,) = load_public("androidcontrol", FIX / "androidcontrol")  # the fixture directory: episodes.jsonl
    assert ep.id == "androidcontrol_7" and ep.extra["layout"] == "tfrecord"
    assert ep.steps[1].valid_actions[0].direction == "down"
    (flipped,) = load_public("androidcontrol", FIX / "androidcontrol" / "episodes.jsonl", flip_scroll=True)
    assert flipped.steps[1].valid_actions[0].direction == "up"
    # a directory with the export and an unrelated JSON (AndroidControl's splits.json) reads the export only
    rec = json.loads((FIX / "androidcontrol" / "episodes.jsonl").read_text())
    _write(tmp_path / "export.jsonl", [rec])
    _write(tmp_path / "splits.json", {"train": [1], "test": [7]})
    (ep2,) = load_public("androidcontrol", tmp_path, image_dir=FIX / "androidcontrol")
    assert ep2 == ep.model_copy(update={"source": "androidcontrol:export.jsonl"})


def test_directory_of_each_layout(tmp_path):
    for name, make in (("uis1", _uis1_dir), ("infigui", _infigui_dir), ("uir1", _uir1_dir)):
        root = tmp_path / name
        root.mkdir()
        make(root)
        eps = load_public("androidcontrol", root)
        assert {e.extra["layout"] for e in eps} == {name}
    with pytest.raises(AdapterError, match=r"empty: no AndroidControl annotation file: expected "
                       r"android_control_evaluation_std\.jsonl, android_control_test\.json, ac_test\.json"):
        (tmp_path / "empty").mkdir()
        load_public("androidcontrol", tmp_path / "empty")


def test_forced_layout_names_missing_fields(tmp_path):
    path = _uis1_dir(tmp_path)
    with pytest.raises(AdapterError, match=r"record 0: field 'episode' is missing"):
        load_public("androidcontrol", path, layout="infigui")
    (ep,) = load_public("androidcontrol", path, layout="uis1")
    assert ep.extra["layout"] == "uis1"
    with pytest.raises(ValueError, match="layout must be one of"):
        load_public("androidcontrol", path, layout="qwen")
    with pytest.raises(AdapterError, match=r"flip_scroll applies to the TFRecord export; .* 'uis1' layout"):
        load_public("androidcontrol", path, flip_scroll=True)


# -- bad input: AdapterError naming file and record ----------------------------------------------


def test_missing_image_named(tmp_path):
    rec = _uis1_record()
    rec["steps"][3]["screenshot"] = "/datasets/AndroidControl/images/nope.png"
    path = _uis1_dir(tmp_path, [rec])
    with pytest.raises(AdapterError, match=r"android_control_evaluation_std\.jsonl: record 0 \(episode 77\) step 3: "
                       r"image '/datasets/AndroidControl/images/nope\.png' not found"):
        load_public("androidcontrol", path)
    rec = _infigui_record()
    rec["episode"]["screenshot_paths"][2] = "5/missing.png"
    path = _infigui_dir(tmp_path / "i", [rec])
    with pytest.raises(AdapterError, match=r"record 0 \(episode 5\) step 2: image '5/missing\.png' not found"):
        load_public("androidcontrol", path)
    recs = _uir1_records()
    path = _uir1_dir(tmp_path / "r", recs)
    (tmp_path / "r" / "images" / recs[1]["image"]).unlink()
    with pytest.raises(AdapterError, match=r"ac_test\.json: record 1 \(episode_140-screenshot_2\.png\): image"):
        load_public("androidcontrol", path)


def test_unknown_action_types(tmp_path):
    rec = _uis1_record()
    rec["steps"][4]["action_content"]["action"] = rec["steps"][4]["check_options"]["action"] = "fly"
    with pytest.raises(AdapterError, match=r"record 0 \(episode 77\) step 4: unknown action 'fly'; the mobile_use"):
        load_public("androidcontrol", _uis1_dir(tmp_path, [rec]))
    rec = _infigui_record()
    rec["step_check_pams"][4] = rec["step_pams"][4] = {"action": "system_button", "button": "Power"}
    with pytest.raises(AdapterError, match=r"record 0 \(episode 5\) step 4: system_button 'Power' is not one of"):
        load_public("androidcontrol", _infigui_dir(tmp_path / "i", [rec]))
    recs = _uir1_records()
    recs[2]["gt"] = {"action_type": "teleport"}
    with pytest.raises(AdapterError, match=r"record 2 \(episode_140-screenshot_3\.png\): unknown action_type "
                       r"'teleport'; AndroidControl has"):
        load_public("androidcontrol", _uir1_dir(tmp_path / "r", recs))


def test_unrecognised_layout_lists_layouts(tmp_path):
    path = _write(tmp_path / "odd.jsonl", [{"task_id": 1, "frames": []}])
    with pytest.raises(AdapterError) as err:
        load_public("androidcontrol", path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: record 0: not an AndroidControl record")
    assert "['frames', 'task_id']" in msg
    for layout, field in (("tfrecord", "'screenshots'"), ("uis1", "'check_options'"), ("infigui", "'step_check_pams'"),
                          ("uir1", "'gt'")):
        assert f"'{layout}' = " in msg and field in msg
    assert "Convert the data" in msg
    mixed = _write(tmp_path / "mixed.json", [_infigui_record(), _uir1_records()[0]])
    with pytest.raises(AdapterError, match=r"mixed\.json: record 1: is in the 'uir1' layout but the records before"):
        load_public("androidcontrol", mixed, image_dir=tmp_path)


def test_point_outside_its_image(tmp_path):
    rec = _uis1_record()
    rec["steps"][1]["check_options"]["coordinate"] = [540, 2273]  # pixels of the full-size phone, image is 108x240
    with pytest.raises(AdapterError, match=r"record 0 \(episode 77\) step 1: coordinate \(540, 2273\) is outside "
                       r"the 108x240 screenshot"):
        load_public("androidcontrol", _uis1_dir(tmp_path, [rec]))
    rec = _infigui_record()
    rec["step_check_pams"][0]["coordinate"] = [400, 400]  # pixels of the phone, not of the 108x240 'width' x 'height'
    with pytest.raises(AdapterError, match=r"record 0 \(episode 5\) step 0: coordinate \(400, 400\) is outside"):
        load_public("androidcontrol", _infigui_dir(tmp_path / "i", [rec]))
    recs = _uir1_records()
    recs[1]["gt"]["x"] = 1027
    with pytest.raises(AdapterError, match=r"record 1 \(episode_140-screenshot_2\.png\): click point 'x', 'y' "
                       r"\(1027, 21\) is outside the 108x240"):
        load_public("androidcontrol", _uir1_dir(tmp_path / "r", recs))
    tf = json.loads((FIX / "androidcontrol" / "episodes.jsonl").read_text())
    tf["actions"][2] = {"action_type": "click", "x": 54, "y": 1000}
    path = _write(tmp_path / "ac.jsonl", [tf])
    with pytest.raises(AdapterError, match=r"ac\.jsonl: record 0 \(episode 7\) step 2: click point .* outside"):
        load_public("androidcontrol", path, image_dir=FIX / "androidcontrol")


def test_uis1_swipe_direction_disagreeing_with_path(tmp_path):
    rec = _uis1_record()
    rec["steps"][2]["check_options"]["direction"] = "up"  # path: finger up -> "down"
    (episode,) = load_public("androidcontrol", _uis1_dir(tmp_path, [rec]))
    step = episode.steps[2]
    assert step.valid_actions[0].direction == "down"  # guirl reads the path
    assert step.extra["authors_check"]["direction"] == "up"  # the authors' scoring mode reads the direction


def _mutations():
    def uis1(f):
        return ("uis1", f)

    def infigui(f):
        return ("infigui", f)

    return [
        uis1(lambda r: r.update(steps=[5])),
        uis1(lambda r: r.update(steps="none")),
        uis1(lambda r: r["steps"][1].update(check_options="click")),
        uis1(lambda r: r["steps"][1]["check_options"].update(candidate_bbox=[45, 221, 62, 233])),
        uis1(lambda r: r["steps"][1]["check_options"].update(candidate_bbox=[[45, 221, 62]])),
        uis1(lambda r: r["steps"][1]["check_options"].update(candidate_bbox=[[62, 221, 45, 233]])),
        uis1(lambda r: r["steps"][1]["check_options"].update(coordinate="54,227")),
        uis1(lambda r: (r["steps"][1]["check_options"].pop("coordinate"), r["steps"][1]["action_content"].clear())),
        uis1(lambda r: r["steps"][2]["action_content"].update(coordinate2=None)),
        uis1(lambda r: r["steps"][2]["check_options"].update(direction="north")),
        uis1(lambda r: r["steps"][3]["check_options"].update(action="click")),
        uis1(lambda r: r["steps"][6]["check_options"].update(time="2s")),
        uis1(lambda r: r["steps"][0].update(step_instruction=3)),
        uis1(lambda r: r["steps"][0].update(screenshot=None)),
        uis1(lambda r: r.update(goal=None)),
        infigui(lambda r: r.update(width="108")),
        infigui(lambda r: r.update(height=0)),
        infigui(lambda r: r["episode"].update(screenshot_paths=[1, 2, 3, 4, 5, 6, 7])),
        infigui(lambda r: r["episode"]["step_instructions"].__setitem__(0, None)),
        infigui(lambda r: r["step_check_pams"].__setitem__(1, {"action": "swipe"})),
        infigui(lambda r: r["step_check_pams"].__setitem__(0, "click")),
        infigui(lambda r: r.update(episode=[])),
    ]


@pytest.mark.parametrize("layout,mutate", _mutations())
def test_malformed_records_raise_adapter_error(tmp_path, layout, mutate):
    rec = copy.deepcopy(_uis1_record() if layout == "uis1" else _infigui_record())
    mutate(rec)
    path = (_uis1_dir if layout == "uis1" else _infigui_dir)(tmp_path, [rec])
    with pytest.raises(AdapterError, match=rf"{path.name}: record 0"):
        load_public("androidcontrol", path)


def test_null_fields_are_absent(tmp_path):
    # a Hugging Face / parquet row has every field of every row, null where a step has none
    keys = ("action", "candidate_bbox", "coordinate", "coordinate2", "direction", "text", "button", "time")
    rec = _uis1_record()
    for step in rec["steps"]:
        step["check_options"] = {k: step["check_options"].get(k) for k in keys}
        step["action_content"] = {k: step["action_content"].get(k) for k in keys}
        step["thought"] = step.get("thought")
    (ep,) = load_public("androidcontrol", _uis1_dir(tmp_path, [rec]))
    (expected,) = load_public("androidcontrol", _uis1_dir(tmp_path / "plain"))
    assert [s.valid_actions for s in ep.steps] == [s.valid_actions for s in expected.steps]

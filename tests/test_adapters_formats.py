"""Adapters on hand-written fixtures of every public layout (tests/fixtures/datasets).

Each test states the conversion worked out by hand: source layout ->
screen-pixel [x1, y1, x2, y2] boxes / (x, y) points, and source scroll
convention -> guirl's (direction the content view moves towards).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guirl.actions.types import ActionType
from guirl.data.adapters import ADAPTERS, AdapterError, load_public
from guirl.data.io import read_episodes, write_episodes

FIX = Path(__file__).parent / "fixtures" / "datasets"


def test_screenspot_v1_xywh_boxes():
    eps = load_public("screenspot", FIX / "screenspot" / "screenspot_mobile.json")
    assert [e.platform for e in eps] == ["mobile", "mobile"]
    step = eps[0].steps[0]
    # bbox [x, y, w, h] = [10, 38, 88, 16] -> [10, 38, 10+88, 38+16] = [10, 38, 98, 54]
    assert step.valid_actions[0].box == (10, 38, 98, 54)
    assert (step.screenshot.width, step.screenshot.height) == (108, 192)  # read from the image
    assert step.extra["element_type"] == "text" and step.extra["data_source"] == "android"
    assert eps[1].steps[0].valid_actions[0].box == (40, 100, 60, 120)  # [40,100,20,20]
    assert eps[1].instruction == "tap the search icon"


def test_screenspot_v2_platform_from_file_name():
    eps = load_public("screenspot_v2", FIX / "screenspot" / "screenspot_web_v2.json",
                      image_dir=FIX / "screenspot" / "screenspot_imgs")
    assert eps[0].platform == "web" and eps[0].id.startswith("screenspot_v2_web")
    assert eps[0].steps[0].valid_actions[0].box == (0, 0, 108, 19)  # [0,0,108,19] xywh


def test_screenspot_pro_xyxy_boxes_and_groups():
    eps = load_public("screenspot_pro", FIX / "screenspot_pro" / "annotations" / "vscode_macos.json")
    step = eps[0].steps[0]
    assert step.valid_actions[0].box == (20, 30, 120, 50)  # already [x1, y1, x2, y2]
    assert step.extra == {"platform": "macos", "element_type": "icon", "group": "Dev", "application": "vscode"}
    assert (step.screenshot.width, step.screenshot.height) == (256, 160)  # from img_size


def test_androidcontrol_high_and_low_levels():
    high = load_public("androidcontrol", FIX / "androidcontrol" / "episodes.jsonl")
    low = load_public("androidcontrol_low", FIX / "androidcontrol" / "episodes.jsonl")
    (ep,) = high
    assert ep.id == "androidcontrol_7" and len(ep.steps) == 3  # 4 screenshots, 3 actions
    acts = [s.valid_actions[0] for s in ep.steps]
    assert acts[0].type is ActionType.OPEN_APP and acts[0].text == "Settings"
    # android_world scroll "down" = finger centre -> top = content below shown = guirl "down"
    assert acts[1].type is ActionType.SCROLL and acts[1].direction == "down"
    assert acts[2].point == (54, 100) and acts[2].frame.width == 108
    assert [s.instruction for s in ep.steps] == [None, None, None]
    assert low[0].steps[1].instruction == "Scroll down to see more options"
    flipped = load_public("androidcontrol", FIX / "androidcontrol" / "episodes.jsonl", flip_scroll=True)
    assert flipped[0].steps[1].valid_actions[0].direction == "up"  # every direction reversed (the finger reading InfiGUI-R1's evaluator applies)


def test_androidcontrol_type_action(tmp_path):
    rec = json.loads((FIX / "androidcontrol" / "episodes.jsonl").read_text())
    rec["actions"][2] = {"action_type": "type", "x": 20, "y": 30, "text": "wifi"}
    (ep,) = load_public("androidcontrol", _write(tmp_path, "ac.jsonl", [rec]), image_dir=FIX / "androidcontrol")
    typed = ep.steps[2].valid_actions[0]
    assert typed.type is ActionType.TYPE and typed.point == (20, 30) and typed.text == "wifi"


def test_androidcontrol_ui_elements_and_infigui_rule():
    from guirl.actions.types import Action
    from guirl.matching.step import match_action

    (ep,) = load_public("androidcontrol", FIX / "androidcontrol" / "episodes.jsonl")
    step = ep.steps[2]
    assert [n.text for n in step.a11y] == ["", "", "Network & internet"]
    assert step.a11y[2].box == (10, 90, 100, 110) and step.a11y[2].role == "android.widget.TextView"
    # target (54, 100); smallest box holding it = the TextView [10, 90, 100, 110];
    # x1.2 about its centre (55, 100) -> [1, 88, 109, 112]. (105, 111) is inside that box
    # and hypot(51, 11) = 52 px from the target (> 0.04 * 240 = 9.6 px): a hit only thanks to the a11y box
    click = Action(type=ActionType.CLICK, point=(105, 111), frame=step.valid_actions[0].frame)
    kwargs = {"screen_size": (108, 240), "rule": "infigui"}
    assert match_action(click, step.valid_actions, a11y=step.a11y, **kwargs).success
    assert not match_action(click, step.valid_actions, a11y=None, **kwargs).success
    # (54, 125) is in the LinearLayout but outside the TextView's x1.2 box, and 25 px away: a miss
    near = Action(type=ActionType.CLICK, point=(54, 125), frame=step.valid_actions[0].frame)
    assert not match_action(near, step.valid_actions, a11y=step.a11y, **kwargs).success


def test_gui_odyssey_relative_1000_and_finger_scroll():
    (ep,) = load_public("gui_odyssey", FIX / "gui_odyssey" / "annotations")
    acts = [s.valid_actions[0] for s in ep.steps]
    # [500, 250] on 0-1000 of a 100x200 screen -> (50, 50) pixels
    assert acts[0].type is ActionType.CLICK and acts[0].point == pytest.approx((50, 50))
    # finger (500,800) -> (500,200): y 160 -> 40 px, finger moves up -> content shows below -> "down"
    assert acts[1].direction == "down"
    assert acts[1].point == pytest.approx((50, 160)) and acts[1].end_point == pytest.approx((50, 40))
    assert acts[2].type is ActionType.TYPE and acts[2].text == "hello"
    assert acts[3].type is ActionType.TERMINATE and acts[3].status == "success"
    assert ep.extra["match_rule"] == "odyssey" and ep.task == "General_Tool"


def test_aitw_y_first_normalised_and_step_order():
    (ep,) = load_public("aitw", FIX / "aitw" / "steps.jsonl")
    acts = [s.valid_actions[0] for s in ep.steps]  # records came as steps 0, 2, 1
    # touch [y, x] = [0.25, 0.5] on 100x200 -> (x, y) = (50, 50); lift 0.01 away -> a tap
    assert acts[0].type is ActionType.CLICK and acts[0].point == pytest.approx((50, 50))
    # touch y 0.8 -> lift y 0.2: finger moves up; AITW calls it "scroll down"; guirl "down"
    assert acts[1].type is ActionType.SCROLL and acts[1].direction == "down"
    assert acts[2].type is ActionType.TERMINATE and acts[2].status == "success"
    # annotation [y, x, h, w] = [0.2, 0.1, 0.1, 0.8] -> x 10..90, y 40..60 px
    node = ep.steps[0].a11y[0]
    assert node.box == pytest.approx((10, 40, 90, 60)) and node.text == "Search"


def test_multimodal_mind2web_rows_grouped_in_order():
    (ep,) = load_public("multimodal_mind2web", FIX / "mind2web" / "rows.jsonl")
    first, second = ep.steps  # target_action_index "0" then "1"
    # bounding_box_rect "10,10,50,20" (x,y,w,h) -> [10, 10, 60, 30]; two positive candidates
    assert [a.box for a in first.valid_actions] == [(10, 10, 60, 30), (70, 10, 120, 30)]
    assert first.valid_actions[0].type is ActionType.CLICK
    assert second.valid_actions[0].type is ActionType.TYPE and second.valid_actions[0].text == "new york"
    assert ep.platform == "web" and ep.task == "Travel"


def test_mind2web_task_json_with_screenshot_pattern():
    (ep,) = load_public("mind2web", FIX / "mind2web" / "tasks.json")
    (step,) = ep.steps
    assert step.screenshot.path == "m2/u1.png"
    assert step.valid_actions[0].type is ActionType.SELECT and step.valid_actions[0].box == (5, 5, 35, 15)


def test_guilibra_steps():
    eps = load_public("guilibra", FIX / "guilibra" / "steps.jsonl")
    click, swipe, typed = (e.steps[0].valid_actions[0] for e in eps)
    # gt_bbox [100,100,500,200] on 0-1000 of 100x200 -> [10, 20, 50, 40] px
    assert click.box == pytest.approx((10, 20, 50, 40))
    # GUI-Libra Swipe "up" is a finger direction (android_world's inverse of scroll) -> content "down"
    assert swipe.type is ActionType.SWIPE and swipe.direction == "down"
    # gt_point_2d [0.5, 0.5] normalised -> (50, 100) px
    assert typed.type is ActionType.TYPE and typed.point == pytest.approx((50, 100)) and typed.text == "hello world"
    assert eps[0].steps[0].history[0].description == "Opened the app"


def test_adapted_episodes_round_trip_through_io(tmp_path):
    eps = load_public("screenspot", FIX / "screenspot" / "screenspot_mobile.json")
    out = FIX / "screenspot" / "screenspot_imgs"
    write_episodes(tmp_path / "episodes.jsonl", eps)
    back = read_episodes(tmp_path / "episodes.jsonl", check_images=False)
    assert back == eps and (out / back[0].steps[0].screenshot.path).is_file()


def test_unknown_format_lists_known():
    with pytest.raises(KeyError, match="known formats:.*screenspot_pro"):
        load_public("screenspot_v9", FIX)
    assert len(ADAPTERS) == 11


# -- malformed records: the message names file, record and problem ---------------------------


def _write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(r) for r in data) + "\n")
    else:
        path.write_text(json.dumps(data))
    return path


def test_screenspot_bad_bbox_names_file_record_problem(tmp_path):
    recs = json.loads((FIX / "screenspot" / "screenspot_mobile.json").read_text())
    recs[1]["bbox"] = [40, 100, 20]
    path = _write(tmp_path, "screenspot_mobile.json", recs)
    with pytest.raises(AdapterError) as err:
        load_public("screenspot", path, image_dir=FIX / "screenspot" / "screenspot_imgs")
    msg = str(err.value)
    assert str(path) in msg and "record 1 (mobile_1.png)" in msg and "'bbox' must be a list of 4 numbers" in msg


def test_screenspot_pro_xywh_box_is_caught(tmp_path):
    recs = json.loads((FIX / "screenspot_pro" / "annotations" / "vscode_macos.json").read_text())
    recs[0]["bbox"] = [200, 30, 50, 20]  # an [x, y, w, h] box given to the [x1, y1, x2, y2] reader
    path = _write(tmp_path, "pro.json", recs)
    with pytest.raises(AdapterError, match=r"pro\.json: record 0 \(id vscode_macos_0\): .*x2 < x1"):
        load_public("screenspot_pro", path, image_dir=FIX / "screenspot_pro" / "images")


def test_missing_image_is_named(tmp_path):
    recs = json.loads((FIX / "screenspot" / "screenspot_mobile.json").read_text())
    recs[0]["img_filename"] = "nope.png"
    path = _write(tmp_path, "screenspot_mobile.json", recs)
    with pytest.raises(AdapterError, match=r"record 0 \(nope.png\): image 'nope.png' not found"):
        load_public("screenspot", path, image_dir=FIX / "screenspot" / "screenspot_imgs")


def test_androidcontrol_unknown_action_and_count_mismatch(tmp_path):
    rec = json.loads((FIX / "androidcontrol" / "episodes.jsonl").read_text())
    bad = dict(rec, actions=[*rec["actions"][:2], {"action_type": "fly"}])
    path = _write(tmp_path, "ac.jsonl", [bad])
    with pytest.raises(AdapterError, match=r"ac\.jsonl: record 0 \(episode 7\) step 2: unknown action_type 'fly'"):
        load_public("androidcontrol", path, image_dir=FIX / "androidcontrol")
    short = dict(rec, screenshots=rec["screenshots"][:2])
    path = _write(tmp_path, "ac2.jsonl", [short])
    with pytest.raises(AdapterError, match=r"record 0 \(episode 7\): 2 screenshots / 4 widths"):
        load_public("androidcontrol", path, image_dir=FIX / "androidcontrol")


def test_androidcontrol_bad_ui_element(tmp_path):
    rec = json.loads((FIX / "androidcontrol" / "episodes.jsonl").read_text())
    rec["ui_elements"][2][1]["bbox_pixels"] = {"x_min": 0, "x_max": 108}
    path = _write(tmp_path, "ac.jsonl", [rec])
    with pytest.raises(AdapterError, match=r"record 0 \(episode 7\) step 2 ui_elements\[1\]: bbox_pixels needs"):
        load_public("androidcontrol", path, image_dir=FIX / "androidcontrol")


def test_odyssey_point_out_of_range(tmp_path):
    rec = json.loads((FIX / "gui_odyssey" / "annotations" / "od1.json").read_text())
    rec["steps"][0]["info"] = [[1500, 250]]
    path = _write(tmp_path, "od1.json", rec)
    with pytest.raises(AdapterError, match=r"od1\.json: episode od1 step 0: .*outside the 0-1000"):
        load_public("gui_odyssey", path, image_dir=FIX / "gui_odyssey" / "screenshots")


def test_aitw_bad_annotation_positions(tmp_path):
    lines = [json.loads(x) for x in (FIX / "aitw" / "steps.jsonl").read_text().splitlines()]
    lines[0]["image/ui_annotations_positions"] = [0.1, 0.2, 0.3]
    path = _write(tmp_path, "aitw.jsonl", lines)
    with pytest.raises(AdapterError, match=r"record 0 \(episode e1 step 0\): .*4 numbers per element"):
        load_public("aitw", path, image_dir=FIX / "aitw")


def test_mind2web_bad_rect_and_guilibra_bad_action(tmp_path):
    rows = [json.loads(x) for x in (FIX / "mind2web" / "rows.jsonl").read_text().splitlines()]
    rows[0]["pos_candidates"] = ['{"tag": "input", "attributes": "{\\"bounding_box_rect\\": \\"a,b,c,d\\"}"}']
    path = _write(tmp_path, "rows.jsonl", rows)
    with pytest.raises(AdapterError, match=r"record 0 \(annotation m1\) action 1 pos_candidates\[0\]: bounding_box_rect"):
        load_public("mind2web", path, image_dir=FIX / "mind2web")
    recs = [json.loads(x) for x in (FIX / "guilibra" / "steps.jsonl").read_text().splitlines()]
    recs[2]["ground_truth"]["gt_action"] = "teleport"
    path = _write(tmp_path, "g.jsonl", recs)
    with pytest.raises(AdapterError, match=r"g\.jsonl: record 2 \(id g2\): gt_action 'teleport'"):
        load_public("guilibra", path, image_dir=FIX / "guilibra")


def test_invalid_json_names_line(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"episode_id": 1}\n{not json\n')
    with pytest.raises(AdapterError, match=r"broken\.jsonl: line 2: not valid JSON"):
        load_public("androidcontrol", path)


# -- fidelity to the published layouts (see each adapter's docstring for the reference) --------


def test_screenspot_v2_release_layout_default_image_dir(tmp_path):
    # OS-Copilot/ScreenSpot-v2: screenspot_mobile_v2.json next to screenspotv2_image/ (no image_dir given)
    (tmp_path / "screenspotv2_image").mkdir()
    src = FIX / "screenspot" / "screenspot_imgs" / "mobile_0.png"
    (tmp_path / "screenspotv2_image" / "m.png").write_bytes(src.read_bytes())
    rec = {"img_filename": "m.png", "bbox": [10, 38, 88, 16], "instruction": "open settings", "data_type": "text",
           "data_source": "android"}
    (ep,) = load_public("screenspot_v2", _write(tmp_path, "screenspot_mobile_v2.json", [rec]))
    # platform from the file name; [x, y, w, h] = [10, 38, 88, 16] -> [10, 38, 98, 54]
    assert ep.platform == "mobile" and ep.steps[0].valid_actions[0].box == (10, 38, 98, 54)
    assert (ep.steps[0].screenshot.width, ep.steps[0].screenshot.height) == (108, 192)


def test_screenspot_pro_group_is_optional(tmp_path):
    recs = json.loads((FIX / "screenspot_pro" / "annotations" / "vscode_macos.json").read_text())
    del recs[1]["group"]  # eval_screenspot_pro.py reads sample["group"] only "if 'group' in sample"
    path = _write(tmp_path, "vscode_macos.json", recs)
    eps = load_public("screenspot_pro", path, image_dir=FIX / "screenspot_pro" / "images")
    assert [e.steps[0].extra["group"] for e in eps] == ["Dev", ""]
    assert eps[1].steps[0].valid_actions[0].box == (130, 100, 250, 140)  # [x1, y1, x2, y2] kept


def _odyssey_step(tmp_path, step: dict):
    rec = json.loads((FIX / "gui_odyssey" / "annotations" / "od1.json").read_text())
    rec["steps"] = [dict(rec["steps"][0], **step)]
    (ep,) = load_public("gui_odyssey", _write(tmp_path, "od.json", rec), image_dir=FIX / "gui_odyssey" / "screenshots")
    return ep.steps[0].valid_actions[0]


def test_odyssey_scroll_axis_decided_in_relative_units(tmp_path):
    # finger (500,500) -> (300,350) on 0-1000: dx=-200, dy=-150 -> horizontal (format_converter.py: "SCROLL: LEFT");
    # finger left shows content on the right -> guirl "right". In pixels of the 100x200 screen the path is
    # (50,100) -> (30,70): dx=-20, dy=-30 would wrongly look vertical.
    act = _odyssey_step(tmp_path, {"action": "SCROLL", "info": [[500, 500], [300, 350]]})
    assert act.type is ActionType.SCROLL and act.direction == "right"
    assert act.point == pytest.approx((50, 100)) and act.end_point == pytest.approx((30, 70))


def test_odyssey_special_keys_and_incomplete(tmp_path):
    # format_converter.py reads KEY_* infos on CLICK and LONG_PRESS alike
    assert _odyssey_step(tmp_path, {"action": "LONG_PRESS", "info": "KEY_APPSELECT"}).keys == ("app_switch",)
    assert _odyssey_step(tmp_path, {"action": "CLICK", "info": "KEY_BACK"}).type is ActionType.BACK
    # INCOMPLETE is GUI-Odyssey's "IMPOSSIBLE" -> terminate with failure
    assert _odyssey_step(tmp_path, {"action": "INCOMPLETE", "info": ""}).status == "failure"


def test_aitw_swipe_axis_and_tap_threshold_on_normalised_values(tmp_path):
    base = json.loads((FIX / "aitw" / "steps.jsonl").read_text().splitlines()[0])
    swipe = dict(base, **{"results/yx_touch": [0.5, 0.5], "results/yx_lift": [0.35, 0.3]})
    tap = dict(base, step_id=1, **{"results/yx_touch": [0.5, 0.5], "results/yx_lift": [0.535, 0.5]})
    typed = dict(base, step_id=2, **{"results/action_type": 3, "results/type_action": "hotels"})
    (ep,) = load_public("aitw", _write(tmp_path, "a.jsonl", [swipe, tap, typed]), image_dir=FIX / "aitw")
    s, t, ty = (st.valid_actions[0] for st in ep.steps)
    # (y, x) deltas (-0.15, -0.2): |dx| > |dy| -> horizontal main axis (action_matching's argmax on [y, x]);
    # finger left -> content "right". Pixels on 100x200: touch (50,100) lift (30,70).
    assert s.type is ActionType.SCROLL and s.direction == "right"
    assert s.point == pytest.approx((50, 100)) and s.end_point == pytest.approx((30, 70))
    # |(0.035, 0)| = 0.035 <= 0.04 -> a tap at the touch point (50, 100)
    assert t.type is ActionType.CLICK and t.point == pytest.approx((50, 100))
    assert ty.type is ActionType.TYPE and ty.text == "hotels"


def test_mind2web_action_without_positive_candidate(tmp_path):
    rows = [json.loads(x) for x in (FIX / "mind2web" / "rows.jsonl").read_text().splitlines()]
    rows[0]["pos_candidates"] = []  # action "a1" (index 1): target not in the cleaned DOM
    path = _write(tmp_path, "rows.jsonl", rows)
    msg = r"record 0 \(annotation m1\) action 1: no pos_candidates.*missing_target='skip'"
    with pytest.raises(AdapterError, match=msg):
        load_public("multimodal_mind2web", path, image_dir=FIX / "mind2web")
    (ep,) = load_public("multimodal_mind2web", path, image_dir=FIX / "mind2web", missing_target="skip")
    assert [s.extra["action_uid"] for s in ep.steps] == ["a0"] and ep.extra["skipped_action_uids"] == ["a1"]
    with pytest.raises(ValueError, match="missing_target must be one of"):
        load_public("mind2web", path, missing_target="keep")


def test_guilibra_rl_release_layout():
    # GUI-Libra-81K-RL rows: 'context' prompt, 'images' as paths or {"path"}, gt_bbox in 0-1000 (4 or 2 values)
    click, press, scroll = (e.steps[0] for e in load_public("guilibra", FIX / "guilibra" / "rl_rows.jsonl"))
    # gt_bbox [200, 100, 600, 300] / 1000 * (100, 200) -> [20, 20, 60, 60] px
    assert click.valid_actions[0].box == pytest.approx((20, 20, 60, 60))
    assert click.extra["resized"] == [112, 224] and click.extra["is_grounding"] is True
    assert (click.screenshot.width, click.screenshot.height) == (100, 200)  # image_width / image_height
    assert "Interaction History" in click.extra["prompt"]
    # gt_bbox [250, 500] is a point: (250/1000*100, 500/1000*200) = (25, 100)
    lp = press.valid_actions[0]
    assert lp.type is ActionType.LONG_PRESS and lp.point == pytest.approx((25, 100))
    assert press.screenshot.path == "images/g_0.png"
    # [-100, -100] = no coordinates; Scroll value is already the content direction
    s = scroll.valid_actions[0]
    assert s.type is ActionType.SCROLL and s.direction == "down" and s.point is None and s.box is None
    eps = load_public("guilibra", FIX / "guilibra" / "rl_rows.jsonl")
    assert [e.instruction for e in eps] == [
        "Open the settings menu", "Select the first message", "Show the items further down the list"]


def test_guilibra_point_2d_scale_is_checked(tmp_path):
    rec = json.loads((FIX / "guilibra" / "steps.jsonl").read_text().splitlines()[2])
    rec["ground_truth"]["gt_point_2d"] = [500, 250]  # 0-1000 values given where r1gui.py reads 0-1
    path = _write(tmp_path, "g.jsonl", [rec])
    msg = r"g\.jsonl: record 0 \(id g2\): gt_point_2d \[500, 250\] is read as normalised"
    with pytest.raises(AdapterError, match=msg):
        load_public("guilibra", path, image_dir=FIX / "guilibra")

"""Mind2Web (SeeClick's release, Multimodal-Mind2Web rows) and ScreenSpot release folders.

Fixtures are written into tmp_path following the public layouts:
SeeClick ``data/mind2web_data_test_*.json`` (njucckevin/SeeClick) with
``{annotation_id}-{action_uid}.jpg`` crops; ScreenSpot v1
(``screenspot_{platform}.json`` + ``screenspot_imgs/``), v2
(``screenspot_{platform}_v2.json`` + ``screenspotv2_image/``) and Pro
(``annotations/<app>_<os>.json`` + ``images/``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from guirl.actions.types import ActionType
from guirl.data.adapters import AdapterError, load_public
from guirl.data.adapters.mind2web import load_mind2web
from guirl.data.adapters.screenspot import default_image_root, load_screenspot, load_screenspot_pro


def _img(path: Path, size: tuple[int, int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 200, 200)).save(path)
    return path


def _write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in data) + "\n")
    else:
        path.write_text(json.dumps(data))
    return path


# -- Mind2Web as converted by SeeClick -------------------------------------------------------

ANN = "8f6261cf"


def _cand(rect: str, tag: str = "button") -> dict:
    return {"tag": tag, "attributes": json.dumps({"backend_node_id": "1", "bounding_box_rect": rect})}


def _seeclick_task() -> dict:
    # shapes as in SeeClick's data/mind2web_data_test_task.json: 'bbox' is {x, y, width, height} on the
    # cropped screenshot, while the candidate's bounding_box_rect is full-page (y 1701 on a long page)
    return {
        "website": "seatgeek", "domain": "Entertainment", "subdomain": "Event", "annotation_id": ANN,
        "confirmed_task": "Find events in New York",
        "action_reprs": ["[button] Change Location -> CLICK", "[searchbox] Search -> TYPE: New York"],
        "actions": [
            {"action_uid": "u0", "operation": {"original_op": "CLICK", "value": "", "op": "CLICK"},
             "pos_candidates": [_cand("60,1701,146.5,34")], "bbox": {"x": 60.0, "y": 63.0, "width": 146.5, "height": 34.0}},
            {"action_uid": "u1", "operation": {"original_op": "TYPE", "value": "New York", "op": "TYPE"},
             "pos_candidates": [], "bbox": {"x": 24.0, "y": 100.0, "width": 100.0, "height": 26.0}},
            {"action_uid": "u2", "operation": {"original_op": "CLICK", "value": "", "op": "CLICK"},
             "pos_candidates": []},  # no bbox: SeeClick skips it ("action not found"); no image on disk
            {"action_uid": "u3", "operation": {"original_op": "HOVER", "value": "", "op": "CLICK"},
             "pos_candidates": [_cand("10,2000,20,20", "div")], "bbox": [10, 20, 20, 20]},
        ],
    }


def _seeclick_dir(tmp_path: Path, task: dict | None = None) -> tuple[Path, Path]:
    task = task or _seeclick_task()
    data = _write(tmp_path / "data" / "mind2web_data_test_task.json", [task])
    imgs = tmp_path / "mind2web_imgs"
    for uid in ("u0", "u1", "u3"):
        _img(imgs / f"{ANN}-{uid}.jpg", (320, 180))
    return data, imgs


def test_seeclick_layout_reads_cropped_bbox_and_default_name(tmp_path):
    data, imgs = _seeclick_dir(tmp_path)
    (ep,) = load_public("mind2web", data, image_dir=imgs, missing_target="skip")
    assert ep.id == f"mind2web_{ANN}" and ep.instruction == "Find events in New York"
    assert ep.extra["layout"] == "seeclick" and ep.extra["skipped_action_uids"] == ["u2"]
    assert ep.platform == "web" and ep.task == "Entertainment" and ep.extra["website"] == "seatgeek"
    click, typed, hover = ep.steps
    assert [s.index for s in ep.steps] == [0, 1, 2]
    assert [s.extra["action_uid"] for s in ep.steps] == ["u0", "u1", "u3"]
    # screenshot name {annotation_id}-{action_uid}.jpg (mind2web_process.py), size from the image
    assert click.screenshot.path == f"{ANN}-u0.jpg" and (click.screenshot.width, click.screenshot.height) == (320, 180)
    # bbox {x 60, y 63, w 146.5, h 34} -> [60, 63, 206.5, 97]; not the page rect at y 1701
    (a,) = click.valid_actions
    assert a.type is ActionType.CLICK and a.box == (60, 63, 206.5, 97) and a.text is None
    assert a.description == "button" and a.frame.width == 320 and a.frame.height == 180
    # TYPE with value; empty pos_candidates do not matter when bbox is there
    (t,) = typed.valid_actions
    assert t.type is ActionType.TYPE and t.text == "New York" and t.box == (24, 100, 124, 126)
    # HOVER (op CLICK) -> click; a 4-number bbox list is [x, y, w, h] too
    (h,) = hover.valid_actions
    assert h.type is ActionType.CLICK and h.box == (10, 20, 30, 40) and h.description == "div"


def test_seeclick_missing_bbox_is_an_error_by_default(tmp_path):
    data, imgs = _seeclick_dir(tmp_path)
    msg = rf"mind2web_data_test_task\.json: record 0 \(annotation {ANN}\) action 2: no 'bbox'.*u2.*missing_target='skip'"
    with pytest.raises(AdapterError, match=msg):
        load_mind2web(data, image_dir=imgs)


def test_seeclick_box_in_page_coordinates_is_caught(tmp_path):
    task = _seeclick_task()
    task["actions"][0]["bbox"] = {"x": 60.0, "y": 1201.0, "width": 146.5, "height": 34.0}  # page y on a 180 px crop
    data, imgs = _seeclick_dir(tmp_path, task)
    with pytest.raises(AdapterError) as err:
        load_mind2web(data, image_dir=imgs, missing_target="skip")
    msg = str(err.value)
    assert str(data) in msg and f"record 0 (annotation {ANN}) action 0" in msg and "u0" in msg
    assert "lies outside its 320x180 screenshot" in msg and "page coordinates of an uncropped" in msg


def test_reading_the_page_rect_against_crops_is_caught(tmp_path):
    # the old behaviour: bounding_box_rect (y 1701) read against SeeClick's 180 px crop
    data, imgs = _seeclick_dir(tmp_path)
    with pytest.raises(AdapterError, match=r"action 0: action_uid u0: box \[60.0, 1701.0, 206.5, 1735.0\].*outside"):
        load_mind2web(data, image_dir=imgs, layout="tasks", missing_target="skip",
                      screenshot_pattern="{annotation_id}-{action_uid}.jpg")


def test_seeclick_skipped_step_needs_no_image_but_kept_step_does(tmp_path):
    data, imgs = _seeclick_dir(tmp_path)
    (imgs / f"{ANN}-u1.jpg").unlink()
    with pytest.raises(AdapterError, match=rf"record 0 \(annotation {ANN}\) action 1: image '{ANN}-u1\.jpg' not found"):
        load_mind2web(data, image_dir=imgs, missing_target="skip")


def test_seeclick_unknown_op_and_bad_bbox(tmp_path):
    task = _seeclick_task()
    task["actions"][1]["operation"]["op"] = "DRAG"
    data, imgs = _seeclick_dir(tmp_path, task)
    with pytest.raises(AdapterError, match=rf"record 0 \(annotation {ANN}\) action 1: operation op 'DRAG' is not one of"):
        load_mind2web(data, image_dir=imgs, missing_target="skip")
    task = _seeclick_task()
    task["actions"][0]["bbox"] = {"x": 1, "y": 2, "w": 3, "h": 4}
    data, imgs = _seeclick_dir(tmp_path, task)
    with pytest.raises(AdapterError, match=r"action 0: field 'bbox' .* lacks \['width', 'height'\]"):
        load_mind2web(data, image_dir=imgs, missing_target="skip")
    task["actions"][0]["bbox"] = {"x": "1", "y": 2, "width": 3, "height": 4}
    data, imgs = _seeclick_dir(tmp_path, task)
    with pytest.raises(AdapterError, match=r"action 0: field 'bbox' must be a list of 4 numbers"):
        load_mind2web(data, image_dir=imgs, missing_target="skip")


def test_seeclick_default_image_dir_is_the_file_folder(tmp_path):
    data, imgs = _seeclick_dir(tmp_path)
    with pytest.raises(AdapterError, match=r"image '8f6261cf-u0\.jpg' not found under .*data"):
        load_mind2web(data, missing_target="skip")


def test_layout_keyword_is_checked(tmp_path):
    data, imgs = _seeclick_dir(tmp_path)
    with pytest.raises(AdapterError, match=r"record 0 \(annotation 8f6261cf\): has an 'actions' list.*layout='tasks'"):
        load_mind2web(data, image_dir=imgs, layout="rows")
    with pytest.raises(ValueError, match="layout must be one of"):
        load_mind2web(data, layout="hf")


# -- Multimodal-Mind2Web rows (HF rows: 'screenshot' already a relative path) -------------------


def _row(uid: str, index: int, op: str, value: str, cands: list[dict], shot: str | None) -> dict:
    row = {"annotation_id": "m1", "action_uid": uid, "confirmed_task": "Book a flight", "website": "united",
           "domain": "Travel", "subdomain": "Airlines",
           "operation": json.dumps({"op": op, "original_op": op, "value": value}),
           "pos_candidates": [json.dumps(c) for c in cands], "neg_candidates": [],
           "target_action_index": str(index)}
    if shot is not None:
        row["screenshot"] = shot
    return row


def test_multimodal_rows_full_page_boxes_and_skip_without_image(tmp_path):
    _img(tmp_path / "images" / "m1_0.png", (200, 1500))  # full-page screenshot: tall
    _img(tmp_path / "images" / "m1_2.png", (200, 1500))
    rows = [
        _row("a2", 2, "SELECT", "2 adults", [_cand("10,1200,50,20", "select")], "images/m1_2.png"),
        _row("a1", 1, "CLICK", "", [], "images/m1_1.png"),  # no target; its image is absent
        _row("a0", 0, "CLICK", "", [_cand("10,10,50,20"), _cand("70,10,50,20", "span")], "images/m1_0.png"),
    ]
    data = _write(tmp_path / "rows.jsonl", rows)
    (ep,) = load_mind2web(data, missing_target="skip")
    assert ep.extra["layout"] == "rows" and ep.extra["skipped_action_uids"] == ["a1"]
    first, second = ep.steps
    assert first.screenshot.path == "images/m1_0.png" and [a.box for a in first.valid_actions] == [
        (10, 10, 60, 30), (70, 10, 120, 30)]
    # bounding_box_rect "10,1200,50,20" page pixels on the 1500 px page -> [10, 1200, 60, 1220]
    (sel,) = second.valid_actions
    assert sel.type is ActionType.SELECT and sel.text == "2 adults" and sel.box == (10, 1200, 60, 1220)
    assert ep.instruction == "Book a flight" and [s.index for s in ep.steps] == [0, 1]


def test_multimodal_rows_errors(tmp_path):
    _img(tmp_path / "m1_0.png", (200, 180))
    rows = [_row("a0", 0, "CLICK", "", [_cand("10,1200,50,20")], "m1_0.png")]  # page rect on a cropped image
    with pytest.raises(AdapterError, match=r"rows\.jsonl: record 0 \(annotation m1\) action 0: action_uid a0: box.*needs the full-page"):
        load_mind2web(_write(tmp_path / "rows.jsonl", rows))
    rows[0]["target_action_index"] = "first"
    with pytest.raises(AdapterError, match=r"record 0 \(annotation m1\): field 'target_action_index' must be an integer"):
        load_mind2web(_write(tmp_path / "rows.jsonl", rows))
    with pytest.raises(AdapterError, match=r"empty\.json: file: holds no records"):
        load_mind2web(_write(tmp_path / "empty.json", []))


# -- ScreenSpot release folders ---------------------------------------------------------------


def _ss_rec(img: str, bbox: list, instruction: str, source: str, kind: str = "text") -> dict:
    return {"img_filename": img, "bbox": bbox, "instruction": instruction, "data_type": kind, "data_source": source}


def _screenspot_v1(folder: Path, image_folder: str = "screenspot_imgs", suffix: str = "") -> Path:
    for name, source, size in (("mobile", "ios", (108, 192)), ("desktop", "macos", (256, 160)), ("web", "shop", (200, 120))):
        _img(folder / image_folder / f"{name}_0.png", size)
        _write(folder / f"screenspot_{name}{suffix}.json", [
            _ss_rec(f"{name}_0.png", [10, 20, 30, 40], f"open {name}", source),
            _ss_rec(f"{name}_0.png", [0, 0, 5, 5], f"close {name}", source, "icon"),
        ])
    return folder


def test_screenspot_v1_folder_loads_every_platform(tmp_path):
    folder = _screenspot_v1(tmp_path / "ScreenSpot")
    eps = load_public("screenspot", folder)  # no platform= needed
    assert sorted({e.platform for e in eps}) == ["desktop", "mobile", "web"] and len(eps) == 6
    by_id = {e.id: e for e in eps}
    ep = by_id["screenspot_v1_mobile_0"]
    step = ep.steps[0]
    # [x, y, w, h] = [10, 20, 30, 40] -> [10, 20, 40, 60]
    assert step.valid_actions[0].type is ActionType.CLICK and step.valid_actions[0].box == (10, 20, 40, 60)
    assert ep.instruction == "open mobile" and step.screenshot.path == "mobile_0.png"
    assert (step.screenshot.width, step.screenshot.height) == (108, 192)
    assert step.extra == {"platform": "mobile", "element_type": "text", "data_source": "ios"}
    assert by_id["screenspot_v1_web_1"].steps[0].extra["element_type"] == "icon"
    assert default_image_root(folder, "v1") == folder / "screenspot_imgs"
    only_web = load_screenspot(folder, platform="web")
    assert {e.platform for e in only_web} == {"web"} and len(only_web) == 2


def test_screenspot_v2_folder_with_its_image_dir_and_v1_files_beside(tmp_path):
    folder = _screenspot_v1(tmp_path / "ScreenSpot-v2", image_folder="screenspotv2_image", suffix="_v2")
    _write(folder / "screenspot_mobile.json", [_ss_rec("x.png", [0, 0, 1, 1], "v1 sample", "ios")])  # not v2
    eps = load_public("screenspot_v2", folder)
    assert len(eps) == 6 and all(e.id.startswith("screenspot_v2_") for e in eps)
    assert {e.steps[0].screenshot.path for e in eps} == {"mobile_0.png", "desktop_0.png", "web_0.png"}
    assert default_image_root(folder, "v2") == folder / "screenspotv2_image"
    # the pipeline's default image root for a folder matches what the loader read against
    from guirl.eval.pipeline import load_data

    eps2, root = load_data(None, "screenspot_v2", str(folder), None)
    assert eps2 == eps and (root / eps[0].steps[0].screenshot.path).is_file()


def test_screenspot_platform_from_data_source_when_the_name_says_nothing(tmp_path):
    _img(tmp_path / "screenspot_imgs" / "a.png", (100, 100))
    recs = [_ss_rec("a.png", [1, 1, 10, 10], "tap", "android"), _ss_rec("a.png", [1, 1, 10, 10], "go", "Gitlab")]
    eps = load_screenspot(_write(tmp_path / "test.json", recs))
    assert [e.platform for e in eps] == ["mobile", "web"] and eps[0].id == "screenspot_v1_test_0"
    recs[1]["data_source"] = "tv"
    with pytest.raises(AdapterError, match=r"test\.json: record 1 \(a\.png\): cannot tell the platform.*'tv'"):
        load_screenspot(_write(tmp_path / "test.json", recs))


def test_screenspot_errors_name_file_and_record(tmp_path):
    folder = _screenspot_v1(tmp_path / "ss")
    recs = json.loads((folder / "screenspot_web.json").read_text())
    recs[1]["bbox"] = [10, 500, 20, 20]  # below the 120 px image
    _write(folder / "screenspot_web.json", recs)
    with pytest.raises(AdapterError, match=r"screenspot_web\.json: record 1 \(web_0\.png\): field 'bbox'.*outside its 200x120"):
        load_public("screenspot", folder)
    recs[1] = dict(recs[0], img_filename="missing.png")
    _write(folder / "screenspot_web.json", recs)
    with pytest.raises(AdapterError, match=r"screenspot_web\.json: record 1 \(missing\.png\): image 'missing\.png' not found"):
        load_public("screenspot", folder)


def test_screenspot_empty_or_wrong_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(AdapterError, match=r"empty: no ScreenSpot v1 annotation files .* holds nothing"):
        load_public("screenspot", tmp_path / "empty")
    with pytest.raises(AdapterError, match=r"empty: no ScreenSpot-Pro annotation files"):
        load_public("screenspot_pro", tmp_path / "empty")
    v2 = _screenspot_v1(tmp_path / "v2", suffix="_v2")
    with pytest.raises(AdapterError, match=r"holds v2 files: use the screenspot_v2 format"):
        load_public("screenspot", v2)
    (tmp_path / "pro" / "annotations").mkdir(parents=True)
    with pytest.raises(AdapterError, match=r"no ScreenSpot v1 annotation files.*ScreenSpot-Pro"):
        load_public("screenspot", tmp_path / "pro")


def _pro_rec(i: int, app: str, os_: str, bbox: list, size: list) -> dict:
    return {"id": f"{app}_{os_}_{i}", "img_filename": f"{app}_{os_}/shot_{i}.png", "bbox": bbox,
            "instruction": f"press the {app} button", "application": app, "platform": os_, "img_size": size,
            "ui_type": "icon", "group": "Dev"}


def _pro_release(root: Path) -> Path:
    for app, os_ in (("vscode", "macos"), ("excel", "windows")):
        _img(root / "images" / f"{app}_{os_}" / "shot_0.png", (256, 160))
        _write(root / "annotations" / f"{app}_{os_}.json", [_pro_rec(0, app, os_, [20, 30, 120, 50], [256, 160])])
    return root


def test_screenspot_pro_release_root_and_annotations_folder(tmp_path):
    root = _pro_release(tmp_path / "ScreenSpot-Pro")
    eps = load_public("screenspot_pro", root)
    assert [e.id for e in eps] == ["screenspot_pro_excel_windows_0", "screenspot_pro_vscode_macos_0"]
    step = eps[1].steps[0]
    assert step.valid_actions[0].box == (20, 30, 120, 50)  # already [x1, y1, x2, y2]
    assert step.screenshot.path == "vscode_macos/shot_0.png" and eps[1].instruction == "press the vscode button"
    assert step.extra == {"platform": "macos", "element_type": "icon", "group": "Dev", "application": "vscode"}
    assert load_screenspot_pro(root / "annotations") == eps
    assert default_image_root(root, "pro") == root / "images"
    assert default_image_root(root / "annotations", "pro") == root / "images"
    assert default_image_root(root / "annotations" / "vscode_macos.json", "pro") == root / "images"


def test_screenspot_pro_errors(tmp_path):
    root = _pro_release(tmp_path / "pro")
    _write(root / "annotations" / "excel_windows.json", [_pro_rec(0, "excel", "windows", [20, 30, 300, 50], [256, 160])])
    with pytest.raises(AdapterError, match=r"excel_windows\.json: record 0 \(id excel_windows_0\): field 'bbox'.*exceeds img_size"):
        load_public("screenspot_pro", root)
    (root / "images" / "excel_windows" / "shot_0.png").unlink()
    _write(root / "annotations" / "excel_windows.json", [_pro_rec(0, "excel", "windows", [20, 30, 120, 50], [256, 160])])
    with pytest.raises(AdapterError, match=r"record 0 \(id excel_windows_0\): image 'excel_windows/shot_0\.png' not found"):
        load_public("screenspot_pro", root)


def test_screenspot_hf_rows_normalised_xyxy(tmp_path):
    # rootsautomation/ScreenSpot rows after load_public wrote the embedded image: 'image' is a relative path,
    # bbox normalised [x1, y1, x2, y2] (GUI-Actor README: [0.9479, 0.1444, 0.9938, 0.2074] "close this window")
    _img(tmp_path / "images" / "test" / "0_image.png", (200, 100))
    rows = [{"img_filename": "pc_1.png", "bbox": [0.9, 0.1, 1.0, 0.3], "instruction": "close this window",
             "data_type": "icon", "data_source": "windows", "image": "images/test/0_image.png"}]
    (ep,) = load_screenspot(_write(tmp_path / "test.jsonl", rows), image_dir=tmp_path)
    step = ep.steps[0]
    # x 0.9..1.0 of 200 px -> 180..200; y 0.1..0.3 of 100 px -> 10..30
    assert step.valid_actions[0].box == pytest.approx((180, 10, 200, 30))
    assert step.screenshot.path == "images/test/0_image.png" and ep.platform == "desktop"
    assert ep.instruction == "close this window" and step.extra["element_type"] == "icon"
    rows[0]["bbox"] = [180, 10, 20, 20]  # pixel [x, y, w, h] in an HF row
    with pytest.raises(AdapterError, match=r"test\.jsonl: record 0 \(images/test/0_image\.png\): field 'bbox'.*normalised"):
        load_screenspot(_write(tmp_path / "test.jsonl", rows), image_dir=tmp_path)
    rows[0]["image"] = {"bytes": "...", "path": None}
    with pytest.raises(AdapterError, match=r"record 0: field 'image' must be an image path"):
        load_screenspot(_write(tmp_path / "test.jsonl", rows), image_dir=tmp_path)

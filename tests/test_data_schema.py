"""Trajectory schema: round trips and the errors users see for broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from guirl.actions import Action, ActionType, Frame
from guirl.data import (
    A11yNode,
    DataError,
    Episode,
    EpisodeWriter,
    HistoryItem,
    ImageRef,
    Step,
    StepLabel,
    Subtask,
    read_episodes,
    write_episodes,
)
from guirl.data.hf import dataset_to_episodes, episodes_to_dataset, steps_to_dataset


def _episode(tmp_path: Path, n_steps: int = 2) -> Episode:
    frame = Frame.screen(320, 240)
    steps = []
    for i in range(n_steps):
        img = f"images/ep0_{i}.png"
        (tmp_path / "images").mkdir(exist_ok=True)
        Image.new("RGB", (320, 240), (i * 40, 100, 200)).save(tmp_path / img)
        steps.append(
            Step(
                index=i,
                screenshot=ImageRef(path=img, width=320, height=240),
                history=[HistoryItem(action=Action(type=ActionType.WAIT), description="waited")] * i,
                valid_actions=[
                    Action(type=ActionType.CLICK, box=(10, 20, 60, 50), frame=frame),
                    Action(type=ActionType.KEY, keys=("ctrl", "s")),
                ],
                a11y=[
                    A11yNode(id="0", role="window", box=(0, 0, 320, 240)),
                    A11yNode(id="1", role="button", text="Save", box=(10, 20, 60, 50), parent="0"),
                ],
                sub_goal="save the file",
                subtasks=[Subtask(description="open menu", status="done"), Subtask(description="save")],
                label=StepLabel.CORRECT if i == 0 else StepLabel.ERROR_ESCAPE,
                timings={"policy": 0.5},
            )
        )
    return Episode(id="ep0", instruction="Save the document", steps=steps, source="test", platform="desktop")


def test_jsonl_round_trip_is_exact(tmp_path):
    ep = _episode(tmp_path)
    assert write_episodes(tmp_path / "episodes.jsonl", [ep, ep.model_copy(update={"id": "ep1"})]) == 2
    back = read_episodes(tmp_path / "episodes.jsonl")
    assert back[0] == ep
    assert [e.id for e in back] == ["ep0", "ep1"]


def test_writer_appends_and_hf_views_round_trip(tmp_path):
    ep = _episode(tmp_path)
    with EpisodeWriter(tmp_path / "runs.jsonl") as w:
        w.write(ep)
        w.write(ep.model_copy(update={"id": "second"}))
    episodes = read_episodes(tmp_path / "runs.jsonl")
    ds = episodes_to_dataset(episodes)
    assert ds.column_names[:2] == ["id", "instruction"]
    assert dataset_to_episodes(ds) == episodes
    # a datasets operation keeps records intact
    assert dataset_to_episodes(ds.filter(lambda r: r["id"] == "second"))[0].steps == ep.steps
    steps = steps_to_dataset(episodes, tmp_path)
    assert len(steps) == 4
    assert steps[1]["image"].size == (320, 240)
    assert json.loads(steps[0]["valid_actions_json"])[1]["keys"] == ["ctrl", "s"]


def _write_raw(tmp_path: Path, record: dict) -> Path:
    path = tmp_path / "broken.jsonl"
    good = _episode(tmp_path).model_dump(mode="json")
    path.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n")
    return path


def test_missing_image_names_line_field_and_fix(tmp_path):
    rec = _episode(tmp_path).model_dump(mode="json")
    rec["steps"][1]["screenshot"]["path"] = "images/nope.png"
    with pytest.raises(DataError) as err:
        read_episodes(_write_raw(tmp_path, rec))
    msg = str(err.value)
    assert "broken.jsonl:2" in msg
    assert "steps.1.screenshot.path" in msg
    assert "images/nope.png" in msg and "relative to the directory" in msg


def test_bad_box_names_field_and_expected_layout(tmp_path):
    rec = _episode(tmp_path).model_dump(mode="json")
    rec["steps"][0]["valid_actions"][0]["box"] = [60, 20, 10, 50]  # x2 < x1: an [x, y, w, h] box?
    with pytest.raises(DataError) as err:
        read_episodes(_write_raw(tmp_path, rec))
    msg = str(err.value)
    assert "broken.jsonl:2" in msg
    assert "steps.0.valid_actions.0.box" in msg
    assert "[x1, y1, x2, y2]" in msg and "xywh_to_xyxy" in msg


def test_unknown_action_type_lists_choices(tmp_path):
    rec = _episode(tmp_path).model_dump(mode="json")
    rec["steps"][1]["valid_actions"][1]["type"] = "clik"
    with pytest.raises(DataError) as err:
        read_episodes(_write_raw(tmp_path, rec))
    msg = str(err.value)
    assert "steps.1.valid_actions.1.type" in msg
    assert "'clik'" in msg and "'double_click'" in msg  # the valid names are listed


def test_missing_field_unknown_field_and_torn_line(tmp_path):
    rec = _episode(tmp_path).model_dump(mode="json")
    del rec["instruction"]
    rec["steps"][0]["screenshoot"] = {}
    with pytest.raises(DataError) as err:
        read_episodes(_write_raw(tmp_path, rec))
    msg = str(err.value)
    assert "field 'instruction': required field is missing" in msg
    assert "field 'steps.0.screenshoot': unknown field" in msg

    path = tmp_path / "torn.jsonl"
    path.write_text(_episode(tmp_path).model_dump_json() + "\n" + '{"id": "x", "instr')
    with pytest.raises(DataError, match=r"torn.jsonl:2: not valid JSON"):
        read_episodes(path)
    with pytest.raises(DataError, match="no such file"):
        read_episodes(tmp_path / "absent.jsonl")


def test_frames_are_recorded_per_action(tmp_path):
    ep = _episode(tmp_path)
    write_episodes(tmp_path / "e.jsonl", [ep])
    act = read_episodes(tmp_path / "e.jsonl")[0].steps[0].valid_actions[0]
    assert act.frame == Frame.screen(320, 240)
    # convert to Qwen3-VL's relative frame and back: exact
    rel = act.to_frame(Frame.relative(1000))
    assert rel.box == pytest.approx((31.25, 83.333333, 187.5, 208.333333))
    assert rel.to_frame(Frame.screen(320, 240)).box == pytest.approx(act.box)

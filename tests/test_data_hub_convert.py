"""Hugging Face layouts (parquet / arrow / saved datasets / hub names), `guirl data convert|inspect`,
and the command line's one-line errors for bad dataset input.

Fixtures are written here: a Multimodal-Mind2Web-shaped parquet (one row per action, `operation` and
`pos_candidates` as JSON strings, the screenshot embedded), as `osunlp/Multimodal-Mind2Web` lays it out.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from PIL import Image
from test_adapters_odyssey_aitw import _seeclick_data, _seeclick_file

from guirl.cli import main
from guirl.data.adapters import AdapterError, adapter_options, load_public, open_public
from guirl.data.adapters.hub import HubError, is_hf_source
from guirl.data.convert import export_dataset, export_hub
from guirl.data.io import read_episodes
from guirl.eval.inspect import summarize

FIX = Path(__file__).parent / "fixtures" / "datasets"


def _png(w: int, h: int, colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), colour).save(buf, "PNG")
    return buf.getvalue()


def _mm2w_rows(n_tasks: int = 2) -> list[dict]:
    rows = []
    for a in range(n_tasks):
        for t in range(2):
            op = {"op": "CLICK", "original_op": "CLICK", "value": ""} if t == 0 else \
                {"op": "TYPE", "original_op": "TYPE", "value": f"milk {a}"}
            rect = f"{10 + a},{20 + t},30,40"  # x, y, w, h in screenshot pixels
            rows.append({
                "annotation_id": f"ann{a}", "action_uid": f"u{a}{t}", "confirmed_task": f"buy milk {a}",
                "website": "shop", "domain": "Shopping", "subdomain": "grocery",
                "operation": json.dumps(op),
                "pos_candidates": [json.dumps({"tag": "button", "attributes": json.dumps({"bounding_box_rect": rect})})],
                "target_action_index": str(t), "raw_html": "<html>" + "x" * 500, "cleaned_html": "<html></html>",
                "screenshot": {"bytes": _png(120, 90, (40 * t, 10 * a, 0)), "path": None},
            })
    return rows


def _mm2w_dataset(rows: list[dict]) -> datasets.Dataset:
    feats = {k: datasets.Value("string") for k in rows[0] if k not in ("pos_candidates", "screenshot")}
    feats["pos_candidates"] = datasets.List(datasets.Value("string"))
    feats["screenshot"] = datasets.Image()
    return datasets.Dataset.from_list(rows, features=datasets.Features(feats))


@pytest.fixture
def hub_repo(tmp_path: Path) -> Path:
    """A dataset directory as the Hub lays out parquet shards: data/<split>-0000N-of-0000M.parquet."""
    repo = tmp_path / "Multimodal-Mind2Web"
    (repo / "data").mkdir(parents=True)
    rows = _mm2w_rows()
    _mm2w_dataset(rows[:2]).to_parquet(str(repo / "data" / "test_task-00000-of-00002.parquet"))
    _mm2w_dataset(rows[2:]).to_parquet(str(repo / "data" / "test_task-00001-of-00002.parquet"))
    _mm2w_dataset(rows[:2]).to_parquet(str(repo / "data" / "train-00000-of-00001.parquet"))
    return repo


def test_hub_directory_splits_shards_and_embedded_images(hub_repo, tmp_path):
    eps, root = open_public("multimodal_mind2web", hub_repo, image_dir=tmp_path / "imgs", split="test_task")
    assert root == tmp_path / "imgs"
    assert [e.id for e in eps] == ["mind2web_ann0", "mind2web_ann1"]  # both shards of the split, grouped by task
    click, typed = eps[1].steps
    assert click.valid_actions[0].box == (11, 20, 41, 60)  # "11,20,30,40" = [x, y, w, h]
    assert typed.valid_actions[0].text == "milk 1" and typed.valid_actions[0].type.value == "type"
    assert click.screenshot.path == "images/test_task/0000002_screenshot.png"
    assert (click.screenshot.width, click.screenshot.height) == (120, 90)
    with Image.open(root / typed.screenshot.path) as img:  # the embedded bytes, written once
        assert img.getpixel((0, 0)) == (40, 10, 0)
    assert eps[0].extra["split"] == "test_task" and eps[0].source.endswith(f"@{hub_repo}[test_task]")
    every = load_public("multimodal_mind2web", hub_repo, image_dir=tmp_path / "imgs")
    assert sorted(e.id for e in every) == ["mind2web_ann0@test_task", "mind2web_ann0@train", "mind2web_ann1@test_task"]


def test_single_parquet_file_and_saved_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("GUIRL_CACHE", str(tmp_path / "cache"))
    ds = _mm2w_dataset(_mm2w_rows(1))
    ds.to_parquet(str(tmp_path / "rows.parquet"))
    datasets.DatasetDict({"test": ds}).save_to_disk(str(tmp_path / "saved"))
    for src in (tmp_path / "rows.parquet", tmp_path / "saved"):
        assert is_hf_source(src)
        (ep,), root = open_public("multimodal_mind2web", src)
        assert root.is_relative_to(tmp_path / "cache" / "hf")  # default image root: the cache
        assert [s.valid_actions[0].box for s in ep.steps] == [(10, 20, 40, 60), (10, 21, 40, 61)]
        assert all((root / s.screenshot.path).is_file() for s in ep.steps)
    assert not is_hf_source(FIX / "mind2web" / "rows.jsonl") and not is_hf_source(FIX / "gui_odyssey")


def test_errors_name_the_split_and_the_row(tmp_path):
    rows = _mm2w_rows(1)
    rows[1]["operation"] = json.dumps({"op": "HOVER_AND_DANCE", "value": ""})
    _mm2w_dataset(rows).to_parquet(str(tmp_path / "bad.parquet"))
    with pytest.raises(AdapterError, match=r"bad\.parquet\[bad\]: record 1 .*HOVER_AND_DANCE"):
        load_public("multimodal_mind2web", tmp_path / "bad.parquet", image_dir=tmp_path / "i")
    with pytest.raises(HubError, match=r"has no split 'dev'; its splits are \['bad'\]"):
        load_public("multimodal_mind2web", tmp_path / "bad.parquet", image_dir=tmp_path / "i", split="dev")
    with pytest.raises(ValueError, match="has no option 'pattern'; its options are"):
        load_public("mind2web", tmp_path / "bad.parquet", pattern="x")
    assert "missing_target" in adapter_options("mind2web") and "image_dir" not in adapter_options("mind2web")


def test_hub_name_without_network_says_how_to_download(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "GUIRL_CACHE": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "guirl", "data", "inspect", "--dataset-format", "multimodal_mind2web",
         "--data", "osunlp/Multimodal-Mind2Web", "--out", str(tmp_path / "o")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "huggingface-cli download --repo-type dataset osunlp/Multimodal-Mind2Web --local-dir DIR" in proc.stderr


def test_convert_round_trip_guirl_and_hf(hub_repo, tmp_path):
    eps, root = open_public("multimodal_mind2web", hub_repo, image_dir=tmp_path / "imgs", split="test_task")
    path = export_dataset(eps, root, tmp_path / "guirl")
    back = read_episodes(path)  # validates every image reference
    assert [e.model_dump(exclude={"steps"}) for e in back] == [e.model_dump(exclude={"steps"}) for e in eps]
    assert [s.valid_actions for e in back for s in e.steps] == [s.valid_actions for e in eps for s in e.steps]
    export_dataset(eps, root, tmp_path / "guirl")  # a re-run over its own output is allowed
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "episodes.jsonl").write_text("a user's file\n")
    with pytest.raises(ValueError, match="was not written by `guirl data convert`"):
        export_dataset(eps, root, tmp_path / "mine")
    assert (tmp_path / "mine" / "episodes.jsonl").read_text() == "a user's file\n"

    parquet = export_hub(back, path.parent, tmp_path / "hf")
    again, root2 = open_public("guirl_hf", tmp_path / "hf", image_dir=tmp_path / "imgs2")
    assert [s.valid_actions for e in again for s in e.steps] == [s.valid_actions for e in eps for s in e.steps]
    for a, b in zip((s for e in again for s in e.steps), (s for e in eps for s in e.steps), strict=True):
        assert (root2 / a.screenshot.path).read_bytes() == (root / b.screenshot.path).read_bytes()
    assert parquet.name == "train-00000-of-00001.parquet"


def test_inspect_summary_and_drawing(tmp_path, capsys):
    out = tmp_path / "ins"
    code = main(["data", "inspect", "--dataset-format", "gui_odyssey", "--data", str(FIX / "gui_odyssey" / "annotations"),
                 "--out", str(out), "--draw", "4"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 4 and summary["action_types"] == {"click": 1, "scroll": 1, "type": 1, "terminate": 1}
    assert summary["scroll_directions"] == {"down": 1} and summary["missing_images"] == 0
    assert summary["coordinates"]["outside_image"] == 0
    with Image.open(out / "inspect.png") as img:
        assert img.width >= 600 and img.height > 300


def test_inspect_flags_coordinates_outside_the_image(tmp_path):
    (ep,) = load_public("gui_odyssey", FIX / "gui_odyssey" / "annotations")
    step = ep.steps[0]
    bad = step.model_copy(update={"valid_actions": [step.valid_actions[0].model_copy(update={"point": (50, 900)})]})
    summary = summarize([ep.model_copy(update={"steps": [bad]})])
    assert summary["coordinates"]["outside_image"] == 1
    assert "(50.0, 900.0) on 100x200" in summary["coordinates"]["outside_examples"][0]


def _cli_error(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    odyssey = json.loads((FIX / "gui_odyssey" / "annotations" / "od1.json").read_text())
    parquet = tmp_path / "rows.parquet"
    _mm2w_dataset(_mm2w_rows(1)).to_parquet(str(parquet))
    (tmp_path / "as.json").write_bytes(parquet.read_bytes())
    text = (FIX / "mind2web" / "rows.jsonl").read_text()
    (tmp_path / "torn.jsonl").write_text(text[: len(text) // 2])
    odyssey["steps"][0]["screenshot"] = "nowhere.png"
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / "od.json").write_text(json.dumps(odyssey))
    base = ["data", "inspect", "--out", str(tmp_path / "o")]
    err = _cli_error([*base, "--dataset-format", "mind2web", "--data", str(tmp_path / "as.json")], capsys)
    assert "is a Parquet file, not JSON" in err
    err = _cli_error([*base, "--dataset-format", "multimodal_mind2web", "--data", str(tmp_path / "torn.jsonl")], capsys)
    assert "torn.jsonl: line" in err and "not valid JSON" in err and "at at" not in err
    err = _cli_error([*base, "--dataset-format", "gui_odyssey", "--data", str(tmp_path / "ann"),
                      "--images", str(FIX / "gui_odyssey" / "screenshots")], capsys)
    assert "od.json" in err and "'nowhere.png' not found" in err and "--images" in err
    err = _cli_error([*base, "--dataset-format", "gui_odyssey", "--data", str(FIX / "gui_odyssey" / "annotations"),
                      "--adapter-arg", "colour=red"], capsys)
    assert "format 'gui_odyssey' has no option 'colour'; its options are" in err
    err = _cli_error([*base, "--dataset-format", "mind2web", "--data", str(FIX / "mind2web"),
                      "--split", "test"], capsys)
    assert "drop --split" in err
    odyssey["steps"][0]["screenshot"] = "od1_0.png"
    odyssey["steps"][1]["action"] = "DANCE"
    (tmp_path / "ann" / "od.json").write_text(json.dumps(odyssey))
    err = _cli_error([*base, "--dataset-format", "gui_odyssey", "--data", str(tmp_path / "ann"),
                      "--images", str(FIX / "gui_odyssey" / "screenshots")], capsys)
    assert "od.json" in err and "step 1" in err and "unknown action 'DANCE'" in err
    data = _seeclick_data()
    for step in data["general"][0]:  # the subset written y-first
        step["touch"], step["lift"] = step["touch"][::-1], step["lift"][::-1]
    err = _cli_error([*base, "--dataset-format", "aitw", "--data", str(_seeclick_file(tmp_path / "aitw", data))],
                     capsys)
    assert "aitw_data_test.json" in err and "step 0" in err and "look swapped" in err

"""`guirl eval grounding` and `guirl eval offline` end to end on every public layout.

Each layout's fixture is written by the adapter tests' writers (which follow the public layouts);
here the whole command runs on it with two trivial policies: the oracle (the first valid action,
which must score 1.0 under the dataset's own matching rule: the adapter's coordinates, boxes and
directions agree with the scoring) and a centre click (a real, low score).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_adapters_androidcontrol_layouts import _infigui_dir, _uir1_dir, _uis1_dir
from test_adapters_mind2web_screenspot import _pro_release, _screenspot_v1, _seeclick_dir
from test_adapters_odyssey_aitw import _odyssey_v1, _odyssey_v2, _seeclick_data, _seeclick_file
from test_data_hub_convert import _mm2w_dataset, _mm2w_rows

from guirl.cli import main

FIX = Path(__file__).parent / "fixtures" / "datasets"


def _mm2w_parquet(tmp: Path) -> list[str]:
    (tmp / "mm2w" / "data").mkdir(parents=True)
    _mm2w_dataset(_mm2w_rows()).to_parquet(str(tmp / "mm2w" / "data" / "test_task-00000-of-00001.parquet"))
    return ["--dataset-format", "multimodal_mind2web", "--data", str(tmp / "mm2w"), "--images", str(tmp / "imgs")]


def _seeclick_m2w(tmp: Path) -> list[str]:
    data, imgs = _seeclick_dir(tmp)
    return ["--dataset-format", "mind2web", "--data", str(data), "--images", str(imgs),
            "--adapter-arg", "missing_target=skip"]


LAYOUTS = {
    "screenspot_v1_dir": lambda t: ["--dataset-format", "screenspot", "--data", str(_screenspot_v1(t / "ss"))],
    "screenspot_v2_dir": lambda t: ["--dataset-format", "screenspot_v2", "--data",
                                    str(_screenspot_v1(t / "ss2", "screenspotv2_image", "_v2"))],
    "screenspot_pro_dir": lambda t: ["--dataset-format", "screenspot_pro", "--data", str(_pro_release(t / "pro"))],
    "mind2web_seeclick": _seeclick_m2w,
    "multimodal_mind2web_parquet": _mm2w_parquet,
    "mind2web_tasks": lambda t: ["--dataset-format", "mind2web", "--data", str(FIX / "mind2web" / "tasks.json")],
    "gui_odyssey_v1": lambda t: ["--dataset-format", "gui_odyssey", "--data", str(_odyssey_v1(t).parent)],
    "gui_odyssey_v2_low": lambda t: ["--dataset-format", "gui_odyssey", "--data", str(_odyssey_v2(t).parent),
                                     "--adapter-arg", "level=low"],
    "aitw_seeclick": lambda t: ["--dataset-format", "aitw", "--data", str(_seeclick_file(t, _seeclick_data()))],
    "aitw_tfrecord": lambda t: ["--dataset-format", "aitw", "--data", str(FIX / "aitw" / "steps.jsonl")],
    "androidcontrol_tfrecord": lambda t: ["--dataset-format", "androidcontrol_low", "--data",
                                          str(FIX / "androidcontrol" / "episodes.jsonl")],
    "androidcontrol_uis1": lambda t: ["--dataset-format", "androidcontrol", "--data", str(_uis1_dir(t))],
    "androidcontrol_infigui_low": lambda t: ["--dataset-format", "androidcontrol_low", "--data",
                                             str(_infigui_dir(t))],
    "androidcontrol_uir1_dir": lambda t: ["--dataset-format", "androidcontrol", "--data", str(_uir1_dir(t).parent)],
    "guilibra": lambda t: ["--dataset-format", "guilibra", "--data", str(FIX / "guilibra" / "steps.jsonl")],
}


def _run(argv: list[str], out: Path) -> dict:
    assert main(argv + ["--out", str(out)]) == 0
    return json.loads((out / "results.json").read_text())


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_eval_runs_on_every_layout(layout, tmp_path, monkeypatch):
    monkeypatch.setenv("GUIRL_CACHE", str(tmp_path / "cache"))
    data = LAYOUTS[layout](tmp_path)
    offline = _run(["eval", "offline", *data, "--policy", "guirl.eval.baselines:oracle"], tmp_path / "off")
    metrics = offline["metrics"]
    assert metrics["offline/steps"] > 0
    assert metrics["offline/step_success"] == 1.0, metrics  # the adapter's targets pass its own rule
    assert metrics["offline/type_match"] == 1.0
    grounding = _run(["eval", "grounding", *data, "--policy", "guirl.eval.baselines:oracle"], tmp_path / "gr")
    if grounding["metrics"].get("grounding/samples", 0):
        assert grounding["metrics"]["grounding/accuracy"] == 1.0
    centre = _run(["eval", "grounding", *data, "--policy", "guirl.eval.baselines:centre_click"], tmp_path / "c")
    assert 0.0 <= centre["metrics"].get("grounding/accuracy", 0.0) <= 1.0
    assert (tmp_path / "c" / "report.html").is_file()

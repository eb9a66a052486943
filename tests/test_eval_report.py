"""The HTML report: drawing, curves, rendering; and in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from browser_check import require_debian_chromium
from PIL import Image

from guirl.actions.frames import Frame
from guirl.actions.types import Action, ActionType, ParseFailure
from guirl.eval import report as report_module
from guirl.eval.report import (
    GOLD,
    PRED,
    ReportData,
    StepView,
    draw_actions,
    read_curves,
    render_report,
    rolling_mean,
    smoothing_window,
)

SCREEN = Frame.screen(100, 200)
GOLD_CLICK = Action(type=ActionType.CLICK, box=(10, 20, 50, 40), frame=SCREEN)
PRED_CLICK = Action(type=ActionType.CLICK, point=(30, 30), frame=SCREEN)


def test_draw_actions_marks_gold_and_prediction():
    img = draw_actions(Image.new("RGB", (100, 200), "white"), [GOLD_CLICK], PRED_CLICK)
    # longer side 200 -> 360: scale 1.8. Gold box -> [18, 36, 90, 72]; its left edge at x = 18
    assert img.size == (180, 360)
    assert img.getpixel((18, 60)) == GOLD
    # prediction (30, 30) -> (54, 54): the centre of the red cross-hair
    assert img.getpixel((54, 54)) == PRED
    # relative-frame predictions are converted: (300, 150)/1000 of 100x200 = (30, 30) px again
    rel = Action(type=ActionType.CLICK, point=(300, 150), frame=Frame.relative(1000))
    assert draw_actions(Image.new("RGB", (100, 200), "white"), [], rel).getpixel((54, 54)) == PRED


def test_read_curves_both_layouts(tmp_path):
    path = tmp_path / "metrics.jsonl"
    rows = [{"step": 1, "losses/total": 2.0, "rewards/mean": 0.1}, {"step": 2, "losses/total": 1.5},
            {"step": 3, "tag": "rewards/mean", "value": 0.4}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert read_curves(path) == {"losses/total": [(1.0, 2.0), (2.0, 1.5)], "rewards/mean": [(1.0, 0.1), (3.0, 0.4)]}
    path.write_text('{"loss": 1}\n')
    with pytest.raises(ValueError, match=r"metrics.jsonl:1: each line needs a 'step'"):
        read_curves(path)


def test_read_curves_from_tensorboard_log(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    with SummaryWriter(log_dir=str(tmp_path / "tb")) as writer:
        for step, loss in [(0, 1.0), (5, 0.5), (10, 0.25)]:
            writer.add_scalar("losses/total", loss, step)
    assert read_curves(tmp_path / "tb") == {"losses/total": [(0.0, 1.0), (5.0, 0.5), (10.0, 0.25)]}
    with pytest.raises(ValueError, match="no such metrics file"):
        read_curves(tmp_path / "missing.jsonl")


def test_rolling_mean_is_trailing_and_starts_at_the_first_value():
    assert rolling_mean([4.0, 2.0, 3.0, 1.0, 0.0, 2.0], 3) == pytest.approx([4.0, 3.0, 3.0, 2.0, 4 / 3, 1.0])
    assert rolling_mean([1.0, 5.0], 1) == [1.0, 5.0]  # a window of one point is the raw curve
    assert rolling_mean([1.0, 2.0], 10) == [1.0, 1.5]  # a window longer than the curve: the running mean
    assert rolling_mean([], 3) == []
    with pytest.raises(ValueError, match="at least 1 point"):
        rolling_mean([1.0], 0)
    assert [smoothing_window(n) for n in (1, 6, 100, 256, 10_000)] == [2, 2, 10, 25, 50]


def _curve_data(html: str) -> dict[str, dict]:
    """group -> the JSON series the report embeds beside each training-curve chart."""
    found = re.findall(r'<script type="application/json" class="curve-data" data-group="([^"]+)">(.*?)</script>',
                       html, flags=re.S)
    return {group: json.loads(text) for group, text in found}


def test_report_draws_a_rolling_mean_beside_the_raw_points(tmp_path, monkeypatch):
    # a hand-made metrics list: rows of scalars and TensorBoard-style rows, out of step order
    rows = [{"step": 2, "losses/total": 3.0}, {"step": 0, "losses/total": 4.0}, {"step": 1, "losses/total": 2.0},
            {"step": 3, "losses/total": 1.0}, {"step": 5, "losses/total": 2.0}, {"step": 4, "losses/total": 0.0},
            {"step": 3, "tag": "rewards/mean", "value": 0.6}, {"step": 1, "tag": "rewards/mean", "value": 0.2},
            {"step": 2, "tag": "rewards/mean", "value": 0.4}, {"step": 0, "tag": "rewards/mean", "value": 0.0}]
    curves = tmp_path / "metrics.jsonl"
    curves.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    legends = {}
    draw = report_module._fig_url

    def keep_legend(fig):  # the chart is a PNG: read its legend before it is drawn
        ax = fig.axes[0]
        legend = ax.get_legend()
        legends[ax.get_title()] = (legend.get_title().get_text(), [t.get_text() for t in legend.get_texts()])
        return draw(fig)

    monkeypatch.setattr(report_module, "_fig_url", keep_legend)
    html = render_report(ReportData("curves", {}, curves_file=curves, curve_window=3), tmp_path / "r.html").read_text()
    data = _curve_data(html)
    assert set(data) == {"losses", "rewards"} and html.count('<img alt="losses"') == 1
    losses = data["losses"]
    assert losses["window"] == 3
    assert losses["series"]["losses/total"]["step"] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert losses["series"]["losses/total"]["raw"] == [4.0, 2.0, 3.0, 1.0, 0.0, 2.0]
    assert losses["series"]["losses/total"]["smoothed"] == pytest.approx([4.0, 3.0, 3.0, 2.0, 4 / 3, 1.0])
    rewards = data["rewards"]["series"]["rewards/mean"]
    assert rewards["raw"] == [0.0, 0.2, 0.4, 0.6]
    assert rewards["smoothed"] == pytest.approx([0.0, 0.1, 0.2, 0.4])
    assert legends["losses"] == ("lines: rolling mean, window 3 points", ["losses/total", "dots: raw values"])
    assert legends["rewards"][0] == "lines: rolling mean, window 3 points"
    assert "trailing rolling mean" in html

    # without a window the report picks one from the curve's length (6 points: 2) and says so
    legends.clear()
    html = render_report(ReportData("curves", {}, curves_file=curves), tmp_path / "auto.html").read_text()
    losses = _curve_data(html)["losses"]
    assert losses["window"] == 2 and legends["losses"][0] == "lines: rolling mean, window 2 points"
    assert losses["series"]["losses/total"]["smoothed"] == pytest.approx([4.0, 3.0, 2.5, 2.0, 0.5, 1.0])


def _report(tmp_path: Path) -> Path:
    curves = tmp_path / "metrics.jsonl"
    curves.write_text("\n".join(json.dumps({"step": s, "losses/total": 2 / (s + 1), "rewards/mean": s / 10})
                                for s in range(10)))
    shot = Image.new("RGB", (100, 200), (235, 235, 240))
    data = ReportData(
        title="guirl test report",
        metrics={"grounding/accuracy": 0.5, "grounding/samples": 2.0},
        breakdowns={"accuracy by platform": {"mobile": 1.0, "web": 0.0}},
        tables={"Accuracy by category": [{"category": "mobile", "accuracy": 1.0, "n": 1},
                                         {"category": "web", "accuracy": 0.0, "n": 1}]},
        trajectories={
            "ep1: open the menu": [StepView("step 0", shot, [GOLD_CLICK], PRED_CLICK, True),
                                   StepView("step 1", shot, [GOLD_CLICK], ParseFailure(reason="garbage"), False)],
        },
        curves_file=curves,
    )
    return render_report(data, tmp_path / "report.html")


def test_render_report_is_self_contained(tmp_path):
    html = _report(tmp_path).read_text()
    assert "<title>guirl test report</title>" in html
    # images: 1 bar chart + 2 curve charts (losses, rewards) + 2 step screenshots, all inline
    assert html.count('src="data:image/png;base64,') == 5
    assert "unparsable: garbage" in html and "src=\"http" not in html
    assert "(1 correct)" in html.replace("2 steps, ", "")


@pytest.mark.browser
def test_report_renders_in_headless_chromium(tmp_path):
    require_debian_chromium()  # a skip, or a failure under GUIRL_REQUIRE_BROWSER=1
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    path = _report(tmp_path)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1100,1400"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        driver.get(path.as_uri())
        assert driver.title == "guirl test report"
        assert driver.find_element(By.ID, "title").text == "guirl test report"
        cells = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "table.metrics td")]
        assert cells == ["accuracy", "0.5000", "samples", "2"]
        assert len(driver.find_elements(By.CSS_SELECTOR, "table.breakdown tr")) == 3  # header + 2 rows
        # every inline image decoded (naturalWidth > 0): 1 bar chart, 2 curves, 2 screenshots
        widths = driver.execute_script("return [...document.images].map(i => i.complete ? i.naturalWidth : 0)")
        assert len(widths) == 5 and all(w > 0 for w in widths)
        assert driver.find_element(By.CSS_SELECTOR, "details.episode").get_attribute("open") is not None
        assert "wrong" in driver.find_element(By.ID, "trajectories").text
        assert driver.save_screenshot(str(tmp_path / "report.png"))
    finally:
        driver.quit()

"""Self-contained HTML evaluation report (jinja2 template, images inline).

Sections: summary tables of the metrics, per-category bar charts
(matplotlib), training curves read from a metrics JSONL file, and a
trajectory viewer showing each screenshot with the valid actions (green)
and the prediction (red: point, box, drag/swipe arrow) drawn on it. Every
image is embedded as a base64 PNG, so the one ``.html`` file is the report.

Training curves come from a metrics JSONL file - one JSON object per line,
either ``{"step": 10, "losses/total": 0.5, "rewards/mean": 0.2}`` (a row of
scalars) or TensorBoard-style ``{"step": 10, "tag": "losses/total",
"value": 0.5}`` - or from a TensorBoard log directory / event file (read
with tensorboard's ``EventAccumulator``). Each curve is drawn as its raw
points with a trailing rolling mean through them (:func:`rolling_mean`; the
window, in logged points, is stated in the chart's legend and chosen by
:func:`smoothing_window` unless ``ReportData.curve_window`` sets it); the
series behind every chart are embedded as JSON (``script.curve-data``).
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from jinja2 import Environment, FileSystemLoader, select_autoescape  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from guirl.actions.frames import Frame  # noqa: E402
from guirl.actions.types import Action, ParseFailure  # noqa: E402

TEMPLATES = Path(__file__).parent  # report.html.jinja ships beside this module (package data)
GOLD, PRED = (22, 163, 74), (220, 38, 38)


@dataclass
class StepView:
    """One step of the trajectory viewer."""

    title: str
    image: Image.Image
    valid_actions: list[Action]
    predicted: Action | ParseFailure | None
    correct: bool | None = None
    note: str = ""


@dataclass
class ReportData:
    title: str
    metrics: dict[str, float]
    breakdowns: dict[str, dict[str, float]] = field(default_factory=dict)  # chart -> category -> value
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    trajectories: dict[str, list[StepView]] = field(default_factory=dict)  # episode -> steps
    curves_file: str | Path | None = None
    curve_window: int | None = None  # rolling-mean window of the training curves, in logged points (None: auto)
    notes: list[str] = field(default_factory=list)


# -- images ------------------------------------------------------------------------------------


def png_data_url(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def describe(action: Action | ParseFailure | None) -> str:
    if action is None:
        return "(none)"
    if not action:
        return f"unparsable: {action.reason}"
    parts = [action.type.value]
    if action.point is not None:
        parts.append(f"({action.point[0]:.0f}, {action.point[1]:.0f})")
    if action.box is not None:
        parts.append("[" + ", ".join(f"{v:.0f}" for v in action.box) + "]")
    for name in ("text", "direction", "status"):
        value = getattr(action, name)
        if value:
            parts.append(f"{name}={value!r}")
    if action.keys:
        parts.append("+".join(action.keys))
    return " ".join(parts)


def _screen(action: Action, size: tuple[int, int]) -> Action | None:
    screen = Frame.screen(*size)
    if action.frame.kind == "screen" and action.frame.width is None:
        return action.model_copy(update={"frame": screen})
    try:
        return action.to_frame(screen)
    except ValueError:
        return None


def draw_actions(
    image: Image.Image, valid: list[Action], predicted: Action | ParseFailure | None, max_side: int = 360
) -> Image.Image:
    """``image`` scaled so its longer side is ``max_side``, with the valid
    actions in green and the prediction in red."""
    size = image.size
    scale = max_side / max(size)
    out = image.convert("RGB").resize((max(1, round(size[0] * scale)), max(1, round(size[1] * scale))))
    draw = ImageDraw.Draw(out)
    radius = max(3, round(max(out.size) / 60))
    for action, colour in [*((a, GOLD) for a in valid), *([(predicted, PRED)] if predicted else [])]:
        a = _screen(action, size)
        if a is None:
            continue
        if a.box is not None:
            draw.rectangle([v * scale for v in a.box], outline=colour, width=max(2, radius // 2))
        if a.direction is not None and a.point is None:
            _arrow(draw, out.size, a.direction, colour)
        if a.point is not None:
            x, y = a.point[0] * scale, a.point[1] * scale
            draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=colour, width=2)
            draw.line([x - radius, y, x + radius, y], fill=colour, width=1)
            draw.line([x, y - radius, x, y + radius], fill=colour, width=1)
            if a.end_point is not None:
                ex, ey = a.end_point[0] * scale, a.end_point[1] * scale
                draw.line([x, y, ex, ey], fill=colour, width=2)
                draw.ellipse([ex - 2, ey - 2, ex + 2, ey + 2], fill=colour)
    return out


def _arrow(draw: ImageDraw.ImageDraw, size: tuple[int, int], direction: str, colour) -> None:
    """An arrow from the image centre pointing where the content view moves (guirl's direction)."""
    cx, cy = size[0] / 2, size[1] / 2
    length = min(size) / 4
    dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[direction]
    tip = (cx + dx * length, cy + dy * length)
    draw.line([cx, cy, *tip], fill=colour, width=3)
    head = length / 4
    for side in (-1, 1):  # two strokes of the arrow head
        end = (tip[0] - dx * head + dy * head * side, tip[1] - dy * head + dx * head * side)
        draw.line([*tip, *end], fill=colour, width=3)


# -- charts ------------------------------------------------------------------------------------


def bar_chart(title: str, values: dict[str, float]) -> str:
    fig, ax = plt.subplots(figsize=(max(3.5, 0.6 * len(values) + 1.5), 2.6), dpi=90)
    names = list(values)
    ax.bar(names, [values[n] for n in names], color="#2563eb")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(0, 1.15 * max(1.0, *values.values()))  # headroom for the value labels
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    for i, n in enumerate(names):
        ax.text(i, values[n], f"{values[n]:.2f}", ha="center", va="bottom", fontsize=7)
    return _fig_url(fig)


def read_tensorboard(path: Path) -> dict[str, list[tuple[float, float]]]:
    """Scalars of a TensorBoard log (a run directory or an ``events.out.tfevents.*`` file)."""
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        raise ValueError(f"{path} is a TensorBoard log; install tensorboard to read it, or pass a metrics JSONL") from None
    acc = EventAccumulator(str(path))
    acc.Reload()
    return {tag: [(float(e.step), float(e.value)) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def read_curves(path: str | Path) -> dict[str, list[tuple[float, float]]]:
    """``tag -> [(step, value)]`` from a metrics JSONL file or a TensorBoard log (see module doc)."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: no such metrics file; pass a metrics JSONL or a TensorBoard run directory")
    if path.is_dir() or path.name.startswith("events.out.tfevents"):
        return read_tensorboard(path)
    curves: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{path}:{lineno}: not valid JSON ({err.msg}); expected one metrics object per line"
            ) from None
        if not isinstance(row, dict) or "step" not in row:
            raise ValueError(f"{path}:{lineno}: each line needs a 'step' and scalar metrics")
        items = [(row["tag"], row["value"])] if "tag" in row and "value" in row else row.items()
        for tag, value in items:
            if tag in ("step", "tag", "value", "time", "wall_time"):
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                curves[str(tag)].append((float(row["step"]), float(value)))
    return dict(curves)


def smoothing_window(n: int) -> int:
    """The rolling-mean window for a curve of ``n`` logged points: a tenth of them, at least 2 and at most 50."""
    return max(2, min(50, n // 10))


def rolling_mean(values: list[float], window: int) -> list[float]:
    """Trailing rolling mean: point ``i`` is the mean of ``values[i - window + 1 .. i]`` (of the ``i + 1`` values
    so far while fewer than ``window`` exist), so the curve starts at the first value and lags the raw one."""
    if window < 1:
        raise ValueError(f"the rolling-mean window must be at least 1 point, got {window}")
    return [math.fsum(values[max(0, i - window + 1) : i + 1]) / min(i + 1, window) for i in range(len(values))]


def curve_charts(curves: dict[str, list[tuple[float, float]]], window: int | None = None) -> list[dict[str, Any]]:
    """One line chart per metric namespace (``losses/...``, ``rewards/...``): each metric's raw points and
    their rolling mean (``window`` points; None: :func:`smoothing_window` of the namespace's longest curve).
    Each chart is ``{"name", "url", "data": {"window", "series": {tag: {"step", "raw", "smoothed"}}}}``."""
    groups: dict[str, list[str]] = defaultdict(list)
    for tag in sorted(curves):
        groups[tag.split("/", 1)[0] if "/" in tag else "metrics"].append(tag)
    charts = []
    for group, tags in groups.items():
        w = window if window is not None else smoothing_window(max(len(curves[tag]) for tag in tags))
        fig, ax = plt.subplots(figsize=(4.8, 2.8), dpi=90)
        series: dict[str, dict[str, list[float]]] = {}
        for i, tag in enumerate(tags):
            points = sorted(curves[tag])
            steps, raw = [p[0] for p in points], [p[1] for p in points]
            smoothed = rolling_mean(raw, w)
            series[tag] = {"step": steps, "raw": raw, "smoothed": smoothed}
            colour = f"C{i % 10}"
            ax.plot(steps, raw, linestyle="none", marker="o", markersize=2.5, alpha=0.35, color=colour)
            ax.plot(steps, smoothed, color=colour, linewidth=1.6, label=tag)
        handles, labels = ax.get_legend_handles_labels()
        handles.append(plt.Line2D([], [], linestyle="none", marker="o", markersize=3, alpha=0.5, color="grey"))
        labels.append("dots: raw values")
        ax.set_xlabel("step", fontsize=8)
        ax.set_title(group, fontsize=10)
        ax.legend(handles, labels, fontsize=7, title=f"lines: rolling mean, window {w} points", title_fontsize=7)
        ax.grid(alpha=0.3)
        charts.append({"name": group, "url": _fig_url(fig), "data": {"window": w, "series": series}})
    return charts


def _fig_url(fig) -> str:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


# -- rendering -----------------------------------------------------------------------------------


def _metric_groups(metrics: dict[str, float]) -> dict[str, list[tuple[str, str]]]:
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key, value in metrics.items():
        group, _, name = key.partition("/") if "/" in key else ("metrics", "", key)
        shown = f"{value:.4f}" if isinstance(value, float) and not value.is_integer() else f"{value:g}"
        groups[group].append((name, shown))
    return dict(groups)


def render_report(data: ReportData, out: str | Path) -> Path:
    """Write the report to ``out`` (an ``.html`` file); returns the path."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "jinja"]))
    trajectories = {
        ep: [
            {
                "title": s.title,
                "image": png_data_url(draw_actions(s.image, s.valid_actions, s.predicted)),
                "valid": [describe(a) for a in s.valid_actions],
                "predicted": describe(s.predicted),
                "correct": s.correct,
                "note": s.note,
            }
            for s in steps
        ]
        for ep, steps in data.trajectories.items()
    }
    html = env.get_template("report.html.jinja").render(
        title=data.title,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        metric_groups=_metric_groups(data.metrics),
        charts=[(name, bar_chart(name, values)) for name, values in data.breakdowns.items() if values],
        tables=data.tables,
        curves=curve_charts(read_curves(data.curves_file), data.curve_window) if data.curves_file else [],
        trajectories=trajectories,
        notes=data.notes,
        metrics_json=json.dumps(data.metrics, indent=1, sort_keys=True),
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out

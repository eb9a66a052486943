"""What a loaded dataset holds, before anyone trains on it (``guirl data inspect``).

:func:`summarize` counts episodes, steps, action types, scroll directions,
image sizes and multi-solution steps, gives the range of every target point
and box as a fraction of its image (a conversion that lands outside
``[0, 1]`` is wrong) and lists what the adapter skipped.
:func:`contact_sheet` draws a few steps with their targets (green, as the
report draws them) and a caption, so a human can see that points sit on
their elements.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from guirl.actions.types import Action
from guirl.data.schema import Episode, Step
from guirl.eval.report import describe, draw_actions
from guirl.matching.step import in_screen


def targets(step: Step) -> list[Action]:
    """The step's ground truth: A*_t, else the recorded action."""
    return list(step.valid_actions) or ([step.action] if step.action is not None else [])


def _in_screen(action: Action, step: Step) -> Action | None:
    try:
        return in_screen(action, step.screenshot.width, step.screenshot.height)
    except ValueError:  # a frame that cannot map onto this screen
        return None


def summarize(episodes: list[Episode], root: Path | None = None) -> dict[str, Any]:
    """Counts, image sizes, coordinate ranges (fractions of the image) and skipped records."""
    types: Counter[str] = Counter()
    directions: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    platforms: Counter[str] = Counter(ep.platform for ep in episodes)
    fx: list[float] = []
    fy: list[float] = []
    outside: list[str] = []
    multi = missing = steps = 0
    skipped: Counter[str] = Counter()
    for ep in episodes:
        for key, value in ep.extra.items():
            if key.startswith("skipped"):
                skipped[key] += len(value) if isinstance(value, (list, dict)) else int(value)
        for step in ep.steps:
            steps += 1
            w, h = step.screenshot.width, step.screenshot.height
            sizes[f"{w}x{h}"] += 1
            if root is not None and not (root / step.screenshot.path).is_file():
                missing += 1
            acts = targets(step)
            multi += len(acts) > 1
            if acts:
                types[acts[0].type.value] += 1
            for a in acts:
                if a.direction:
                    directions[a.direction] += 1
                s = _in_screen(a, step)
                if s is None:
                    continue
                pts = [p for p in (s.point, s.end_point) if p is not None]
                if s.box is not None:
                    pts += [(s.box[0], s.box[1]), (s.box[2], s.box[3])]
                for x, y in pts:
                    fx.append(x / w)
                    fy.append(y / h)
                    if not (-1e-6 <= x <= w + 1e-6 and -1e-6 <= y <= h + 1e-6) and len(outside) < 10:
                        outside.append(f"episode {ep.id} step {step.index}: ({x:.1f}, {y:.1f}) on {w}x{h}")
    n_out = sum(not (-1e-6 <= x <= 1 + 1e-6 and -1e-6 <= y <= 1 + 1e-6) for x, y in zip(fx, fy, strict=True))
    return {
        "episodes": len(episodes),
        "steps": steps,
        "platforms": dict(platforms),
        "action_types": dict(types.most_common()),
        "scroll_directions": dict(directions.most_common()),
        "multi_solution_steps": multi,
        "image_sizes": dict(sizes.most_common(8)),
        "distinct_image_sizes": len(sizes),
        "coordinates": {
            "values": len(fx),
            "x_fraction": [round(min(fx), 4), round(max(fx), 4)] if fx else None,
            "y_fraction": [round(min(fy), 4), round(max(fy), 4)] if fy else None,
            "outside_image": n_out,
            "outside_examples": outside,
        },
        "missing_images": missing if root is not None else None,
        "skipped": dict(skipped),
    }


def pick_steps(episodes: list[Episode], n: int) -> list[tuple[Episode, Step]]:
    """``n`` steps spread evenly over the dataset (the first, the last and between)."""
    flat = [(ep, st) for ep in episodes for st in ep.steps]
    if n <= 0 or not flat:
        return []
    if n >= len(flat):
        return flat
    return [flat[round(i * (len(flat) - 1) / max(1, n - 1))] for i in range(n)]


def contact_sheet(episodes: list[Episode], root: Path, n: int = 6, tile: int = 300, columns: int = 3) -> Image.Image:
    """``n`` steps drawn with their targets, a caption under each, in one image."""
    picked = pick_steps(episodes, n)
    if not picked:
        raise ValueError("no steps to draw")
    caption_h = 64
    columns = min(columns, len(picked))
    rows = -(-len(picked) // columns)
    sheet = Image.new("RGB", (columns * tile, rows * (tile + caption_h)), "white")
    draw = ImageDraw.Draw(sheet)
    for k, (ep, step) in enumerate(picked):
        x0, y0 = (k % columns) * tile, (k // columns) * (tile + caption_h)
        with Image.open(root / step.screenshot.path) as img:
            drawn = draw_actions(img, targets(step), None, max_side=tile - 8)
        sheet.paste(drawn, (x0 + (tile - drawn.width) // 2, y0 + 4))
        text = f"{ep.id} #{step.index}: {step.instruction or ep.instruction}"
        acts = targets(step)
        lines = textwrap.wrap(text, 48)[:2] + textwrap.wrap(describe(acts[0]) if acts else "(no target)", 48)[:2]
        draw.multiline_text((x0 + 4, y0 + tile), "\n".join(lines), fill="black", spacing=2)
    return sheet

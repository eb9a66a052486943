"""The two `guirl data inspect` drawings in docs/eval.md.

Writes small datasets in two public layouts with the adapter tests' writers
(AndroidControl as UI-S1 stores it; AITW as SeeClick converted it), paints
their annotated elements onto the blank screenshots so the drawing shows
what the targets sit on, runs `guirl data inspect` on each and copies the
drawing to docs/images/. Run from the repository root:

    python scripts/inspect_figures.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_adapters_androidcontrol_layouts import _uis1_dir  # noqa: E402
from test_adapters_odyssey_aitw import _seeclick_data, _seeclick_file  # noqa: E402

from guirl.cli import main  # noqa: E402
from guirl.data.adapters import open_public  # noqa: E402


def paint_elements(fmt: str, data: Path) -> None:
    """Draw every annotated box (targets and a11y nodes) onto its screenshot."""
    episodes, root = open_public(fmt, data)
    for ep in episodes:
        for step in ep.steps:
            boxes = [a.box for a in step.valid_actions if a.box is not None]
            boxes += [n.box for n in step.a11y or [] if n.box is not None]
            path = root / step.screenshot.path
            with Image.open(path) as img:
                img = img.convert("RGB")
            draw = ImageDraw.Draw(img)
            draw.rectangle([0, 0, img.width, 12], fill=(60, 90, 160))  # a status bar, for scale
            for box in boxes:
                draw.rectangle(box, fill=(225, 225, 235), outline=(120, 120, 140))
            img.save(path)


def main_() -> int:
    out = ROOT / "docs" / "images"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        jobs = {
            "inspect_uis1.png": ("androidcontrol_low", _uis1_dir(tmp / "uis1")),
            "inspect_aitw_seeclick.png": ("aitw", _seeclick_file(tmp / "aitw", _seeclick_data())),
        }
        for name, (fmt, data) in jobs.items():
            paint_elements(fmt, data)
            code = main(["data", "inspect", "--dataset-format", fmt, "--data", str(data), "--draw", "6",
                         "--out", str(tmp / name)])
            if code:
                return code
            shutil.copyfile(tmp / name / "inspect.png", out / name)
            print(f"wrote {out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())

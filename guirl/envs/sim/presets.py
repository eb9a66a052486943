"""UI scale presets: screen size and the size of everything drawn on it.

``coarse`` keeps every task family readable after the screenshot is shrunk to
about 256x256: every control is 72 px tall on a 512 px screen, so 36 px at
the tiny models' input, more than one merged 32-px vision token (the tiny
models' measurements found targets of about 40 px or more learnable); few
widgets are shown at a time and lists scroll. ``realistic`` draws dense layouts at native
resolutions (1280x800 desktop/web, 540x1200 phone); ``hd`` at 1920x1200 and
1080x2400.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

DOMAINS = ("desktop", "web", "mobile")


@dataclass(frozen=True)
class Preset:
    """Geometry of one screen kind."""

    name: str
    width: int
    height: int
    font: int  # body text size in pixels
    row: int  # height of a list row / button row
    pad: int  # outer margin and spacing
    icon: int  # app / file icon size
    max_rows: int  # most list rows shown at once (lists scroll beyond)
    control: int  # height of buttons, fields, tabs, bars: anything one clicks

    @property
    def taskbar(self) -> int:
        return 2 * self.pad

    @property
    def title_font(self) -> int:
        return int(self.font * 1.25)


_PRESETS: dict[tuple[str, str], Preset] = {
    ("coarse", "desktop"): Preset("coarse", 512, 512, 26, 84, 10, 72, 3, 72),
    ("coarse", "web"): Preset("coarse", 512, 512, 26, 84, 10, 72, 3, 72),
    ("coarse", "mobile"): Preset("coarse", 384, 512, 26, 84, 10, 76, 3, 72),
    ("realistic", "desktop"): Preset("realistic", 1280, 800, 14, 30, 8, 48, 14, 24),
    ("realistic", "web"): Preset("realistic", 1280, 800, 14, 30, 8, 48, 12, 24),
    ("realistic", "mobile"): Preset("realistic", 540, 1200, 22, 72, 16, 96, 11, 56),
    ("hd", "desktop"): Preset("hd", 1920, 1200, 20, 44, 12, 72, 16, 36),
    ("hd", "web"): Preset("hd", 1920, 1200, 20, 44, 12, 72, 14, 36),
    ("hd", "mobile"): Preset("hd", 1080, 2400, 44, 144, 32, 192, 11, 112),
}

PRESET_NAMES = ("coarse", "realistic", "hd")


def get_preset(name: str, domain: str, size: tuple[int, int] | None = None) -> Preset:
    """The preset ``name`` for ``domain``, optionally at another screen ``size`` (w, h)."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown sim domain {domain!r}; choose one of {list(DOMAINS)}")
    if (name, domain) not in _PRESETS:
        raise ValueError(f"unknown sim preset {name!r}; choose one of {list(PRESET_NAMES)}")
    preset = _PRESETS[(name, domain)]
    if size is not None:
        width, height = int(size[0]), int(size[1])
        if width < 200 or height < 200:
            raise ValueError(f"screen size {size} is too small for the sim world; use at least 200x200")
        preset = replace(preset, width=width, height=height)
    return preset

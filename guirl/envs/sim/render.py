"""Drawing screens with Pillow.

Fonts come from ``ImageFont.load_default(size=...)`` (Pillow's bundled
scalable font; nothing is downloaded or read from the system). Each domain
has its own palette so desktop, web and phone screens look different. Text
metrics and fonts are cached; each step draws one fresh image (cheaper than
caching and copying full-screen images).
"""

from __future__ import annotations

from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from guirl.envs.sim.presets import Preset
from guirl.envs.sim.widgets import Screen, Widget

THEMES = {
    "desktop": {"bg": (46, 84, 120), "window": (236, 238, 242), "bar": (58, 64, 78), "bar_text": (240, 240, 240),
                "accent": (52, 120, 214), "button": (222, 226, 234), "text": (20, 24, 32)},
    "web": {"bg": (222, 225, 230), "window": (255, 255, 255), "bar": (242, 243, 245), "bar_text": (30, 30, 30),
            "accent": (26, 115, 232), "button": (26, 115, 232), "text": (32, 33, 36)},
    "mobile": {"bg": (250, 247, 252), "window": (250, 247, 252), "bar": (103, 80, 164), "bar_text": (255, 255, 255),
               "accent": (103, 80, 164), "button": (232, 222, 248), "text": (28, 27, 31)},
}
FILE_COLORS = {"txt": (90, 120, 200), "py": (60, 140, 90), "pdf": (200, 60, 50), "png": (150, 90, 190),
               "jpg": (150, 90, 190), "mp3": (230, 150, 40), "zip": (120, 120, 120)}
ICON_COLORS = ((66, 133, 244), (219, 68, 55), (244, 180, 0), (15, 157, 88), (171, 71, 188), (0, 172, 193),
               (255, 112, 67), (92, 107, 192))


@lru_cache(maxsize=32)
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


class Canvas(ImageDraw.ImageDraw):
    """An ImageDraw that also keeps its image, so cached text masks can be pasted onto it."""

    def __init__(self, image: Image.Image):
        super().__init__(image)
        self.image = image


def render(screen: Screen, preset: Preset) -> Image.Image:
    """Draw ``screen`` into a new RGB image of the preset's size."""
    image = Image.new("RGB", (screen.width, screen.height), THEMES[screen.theme]["bg"])
    draw = Canvas(image)
    colors = THEMES[screen.theme]
    for widget in screen.widgets:
        _draw(draw, widget, preset, colors)
    return image


@lru_cache(maxsize=8192)
def _text_mask(text: str, size: int) -> tuple[Image.Image, int, int, float]:
    """The anti-aliased glyphs of ``text`` as an L mask, its offset from the left-middle anchor, its advance."""
    f = font(size)
    left, top, right, bottom = f.getbbox(text, anchor="lm")
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=f, fill=255, anchor="lm")
    return mask, left, top, f.getlength(text)


@lru_cache(maxsize=8192)
def _fitted(text: str, size: int, width: float) -> str:
    """``text`` cut (with "..") to fit ``width`` pixels."""
    f = font(size)
    if f.getlength(text) <= width:
        return text
    while text and f.getlength(text + "..") > width:
        text = text[:-1]
    return text + ".."


def _text(draw: Canvas, box, text: str, size: int, fill, align: str = "left", pad: int = 0) -> None:
    """Draw ``text`` left-aligned or centred in ``box``, vertically centred, cut to fit."""
    if not text:
        return
    x1, y1, x2, y2 = box
    text = _fitted(text, size, x2 - x1 - 2 * pad)
    mask, left, top, advance = _text_mask(text, size)
    x = x1 + pad if align == "left" else x1 + (x2 - x1 - advance) / 2
    draw.image.paste(fill, (round(x) + left, round((y1 + y2) / 2) + top), mask)


Draw = Canvas


def _draw(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    painter = _PAINTERS.get(w.style) or (_nav_button if w.style.startswith("nav_") else _plain_text)
    painter(draw, w, p, c)


def _ink(w: Widget, c: dict) -> tuple[int, int, int]:
    return c["text"] if w.enabled else (150, 150, 150)


def _nothing(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """Containers that the background already shows."""


def _page(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    draw.rectangle(w.box, fill=c["window"])


def _plain_text(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    if w.text:
        _text(draw, w.box, w.text, p.font, _ink(w, c))


def _panel(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """Windows, dialogs (with a shadow and a title bar) and pop-up lists."""
    x1, y1, x2, y2 = w.box
    if w.style == "dialog":
        draw.rectangle((x1 + 6, y1 + 6, x2 + 6, y2 + 6), fill=(60, 60, 60))
    fill = (255, 255, 255) if w.style == "popup" else c["window"]
    draw.rectangle(w.box, fill=fill, outline=(90, 90, 100), width=2)
    if w.style == "dialog":
        draw.rectangle((x1, y1, x2, y1 + p.control), fill=c["bar"])
        _text(draw, (x1, y1, x2 - p.control, y1 + p.control), w.text, p.title_font, c["bar_text"], pad=p.pad)


def _bar(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    x1, y1, x2, y2 = w.box
    draw.rectangle(w.box, fill=(30, 34, 44) if w.style == "taskbar" else c["bar"])
    if w.style == "appbar":
        _text(draw, (x1 + (y2 - y1), y1, x2, y2), w.text, p.title_font, c["bar_text"], pad=p.pad)
    elif w.style != "taskbar":
        _text(draw, w.box, w.text, p.font, c["bar_text"], pad=p.pad)


def _glyph_button(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """A close cross or a back arrow."""
    x1, y1, x2, y2 = w.box
    m = (y2 - y1) // 4
    width = max(2, m // 3)
    if w.style == "close":
        draw.rectangle(w.box, fill=(200, 60, 60))
        draw.line((x1 + m, y1 + m, x2 - m, y2 - m), fill=c["bar_text"], width=width)
        draw.line((x1 + m, y2 - m, x2 - m, y1 + m), fill=c["bar_text"], width=width)
        return
    cy = (y1 + y2) // 2
    draw.line((x1 + m, cy, x2 - m, cy), fill=c["bar_text"], width=width)
    draw.line((x1 + m, cy, x1 + 2 * m, cy - m), fill=c["bar_text"], width=width)
    draw.line((x1 + m, cy, x1 + 2 * m, cy + m), fill=c["bar_text"], width=width)


def _app_icon(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    x1, y1, x2, y2 = w.box
    size = min(p.icon, x2 - x1, y2 - y1 - p.font - p.pad)
    ix = (x1 + x2 - size) // 2
    color = ICON_COLORS[sum(ord(ch) * (i + 1) for i, ch in enumerate(w.text)) % len(ICON_COLORS)]
    if w.focused:
        draw.rectangle(w.box, fill=(120, 160, 220))
    draw.rounded_rectangle((ix, y1, ix + size, y1 + size), radius=size // 4, fill=color)
    _text(draw, (ix, y1, ix + size, y1 + size), w.text[0], int(size * 0.5), (255, 255, 255), align="center")
    label = (0, 0, 0) if c is THEMES["mobile"] else (255, 255, 255)
    _text(draw, (x1, y1 + size, x2, y2), w.text, p.font, label, align="center")


def _row(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """List rows, folder and file items, sidebar links, menu entries and options."""
    x1, y1, x2, y2 = w.box
    if w.focused or w.checked:
        draw.rectangle(w.box, fill=(200, 220, 250))
    elif w.style in ("menubar", "side"):
        draw.rectangle(w.box, fill=(225, 228, 235))
    x = x1 + p.pad // 2
    if w.style in ("folder", "file"):
        s = int((y2 - y1) * 0.6)
        iy = (y1 + y2 - s) // 2
        if w.style == "folder":
            draw.rectangle((x, iy + s // 6, x + s, iy + s), fill=(230, 180, 60))
            draw.rectangle((x, iy, x + s // 2, iy + s // 6), fill=(230, 180, 60))
        else:
            draw.rectangle((x, iy, x + int(s * 0.8), iy + s), fill=(255, 255, 255), outline=(120, 120, 130))
            band = FILE_COLORS.get(w.text.rsplit(".", 1)[-1], (150, 150, 160))
            draw.rectangle((x, iy + s - s // 3, x + int(s * 0.8), iy + s), fill=band)
        x += s + p.pad
    if w.style == "row":
        draw.line((x1, y2, x2, y2), fill=(220, 215, 225))
    _text(draw, (x, y1, x2, y2), w.text, p.font, _ink(w, c))
    if w.style in ("option", "row") and w.value:
        _text(draw, (x2 - p.font * 6, y1, x2, y2), w.value, int(p.font * 0.8), (110, 110, 120))


def _textarea(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    x1, y1, x2, _ = w.box
    draw.rectangle(w.box, fill=(255, 255, 255), outline=c["accent"] if w.focused else (150, 150, 160))
    line = (w.value or "") + ("|" if w.focused else "")
    _text(draw, (x1, y1 + p.pad, x2, y1 + p.pad + int(p.font * 1.4)), line, p.font, _ink(w, c), pad=p.pad)


def _field(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """Text fields (placeholder = label when empty) and drop-downs (with an arrow)."""
    _, y1, x2, y2 = w.box
    draw.rectangle(w.box, fill=(255, 255, 255), outline=c["accent"] if w.focused else (150, 150, 160),
                   width=2 if w.focused else 1)
    if not w.value and w.style == "field" and w.role == "textbox":
        _text(draw, w.box, w.text, p.font, (160, 160, 165), pad=p.pad // 2)
    else:
        _text(draw, w.box, (w.value or "") + ("|" if w.focused else ""), p.font, _ink(w, c), pad=p.pad // 2)
    if w.style == "combo":
        m = (y2 - y1) // 3
        draw.polygon(((x2 - 3 * m, y1 + m), (x2 - m, y1 + m), (x2 - 2 * m, y2 - m)), fill=(80, 80, 90))


def _toggle(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """Checkboxes, radio buttons and switches."""
    x1, y1, x2, y2 = w.box
    s = int((y2 - y1) * 0.6)
    iy = (y1 + y2 - s) // 2
    on = bool(w.checked)
    if w.style == "switch":
        x0 = x2 - int(s * 1.8)
        draw.rounded_rectangle((x0, iy, x2, iy + s), radius=s // 2, fill=c["accent"] if on else (180, 180, 185))
        knob = x2 - s if on else x0
        draw.ellipse((knob + 2, iy + 2, knob + s - 2, iy + s - 2), fill=(255, 255, 255))
        _text(draw, (x1, y1, x0, y2), w.text, p.font, _ink(w, c))
        return
    if w.style == "checkbox":
        draw.rectangle((x1, iy, x1 + s, iy + s), fill=c["accent"] if on else (255, 255, 255), outline=(90, 90, 100),
                       width=2)
        if on:
            draw.line((x1 + s // 5, iy + s // 2, x1 + s // 2, iy + 4 * s // 5, x1 + 4 * s // 5, iy + s // 5),
                      fill=(255, 255, 255), width=max(2, s // 6))
    else:
        draw.ellipse((x1, iy, x1 + s, iy + s), outline=(90, 90, 100), width=2, fill=(255, 255, 255))
        if on:
            draw.ellipse((x1 + s // 4, iy + s // 4, x1 + 3 * s // 4, iy + 3 * s // 4), fill=c["accent"])
    _text(draw, (x1 + s + p.pad // 2, y1, x2, y2), w.text, p.font, _ink(w, c))


def _tab(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    x1, _, x2, y2 = w.box
    draw.rectangle(w.box, fill=(255, 255, 255) if w.focused else (205, 210, 218), outline=(150, 150, 160))
    if w.focused and w.style == "tab":
        draw.rectangle((x1, y2 - 4, x2, y2), fill=c["accent"])
    _text(draw, w.box, w.text, p.font, _ink(w, c), align="center", pad=2)


def _fab(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    _, y1, _, y2 = w.box
    draw.rounded_rectangle(w.box, radius=(y2 - y1) // 3, fill=c["accent"])
    _text(draw, w.box, "+", int((y2 - y1) * 0.6), (255, 255, 255), align="center")


def _button(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    _, y1, _, y2 = w.box
    primary = w.style == "button"  # "nav" buttons (browser Back) stay grey
    fill = (230, 230, 230) if not w.enabled else c["button"] if primary else (225, 228, 234)
    draw.rounded_rectangle(w.box, radius=max(2, (y2 - y1) // 5), fill=fill, outline=(120, 125, 140))
    white = primary and c is THEMES["web"] and w.enabled
    _text(draw, w.box, w.text, p.font, (255, 255, 255) if white else _ink(w, c), align="center", pad=2)


def _nav_button(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    """The phone's Back / Home / Recents buttons."""
    x1, y1, x2, y2 = w.box
    draw.rectangle(w.box, fill=(240, 237, 244))
    cx, cy, m = (x1 + x2) // 2, (y1 + y2) // 2, (y2 - y1) // 4
    if w.text == "Back":
        draw.polygon(((cx + m, cy - m), (cx + m, cy + m), (cx - m, cy)), outline=(60, 60, 60), width=2)
    elif w.text == "Home":
        draw.ellipse((cx - m, cy - m, cx + m, cy + m), outline=(60, 60, 60), width=2)
    else:
        draw.rectangle((cx - m, cy - m, cx + m, cy + m), outline=(60, 60, 60), width=2)


def _link(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    x1, _, x2, y2 = w.box
    _text(draw, w.box, w.text, p.font, (26, 13, 171))
    length = min(font(p.font).getlength(w.text), x2 - x1)
    draw.line((x1, y2 - 4, x1 + length, y2 - 4), fill=(26, 13, 171), width=1)


def _prose(draw: Draw, w: Widget, p: Preset, c: dict) -> None:
    size = p.title_font if w.style == "heading" else p.font
    _text(draw, w.box, w.text, size, (200, 30, 30) if w.style == "error" else _ink(w, c))


_PAINTERS = {
    **dict.fromkeys(("wallpaper", "browser", "phone", "list"), _nothing), "page": _page, "": _plain_text,
    **dict.fromkeys(("window", "dialog", "popup"), _panel),
    **dict.fromkeys(("titlebar", "taskbar", "statusbar", "appbar"), _bar),
    **dict.fromkeys(("close", "arrow"), _glyph_button), "app_icon": _app_icon,
    **dict.fromkeys(("folder", "file", "row", "side", "option", "menubar"), _row),
    "textarea": _textarea, **dict.fromkeys(("field", "combo"), _field),
    **dict.fromkeys(("checkbox", "radio", "switch"), _toggle),
    **dict.fromkeys(("tab", "btab"), _tab), "fab": _fab, **dict.fromkeys(("button", "nav"), _button),
    "link": _link, **dict.fromkeys(("heading", "body", "error"), _prose),
}

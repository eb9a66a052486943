"""Spatial description of a screen from its accessibility tree (InfiGUI-R1 stage 1).

InfiGUI-R1 (docs/methods.md section 3, "spatial reasoning distillation") extracts
the relevant structure of a screen from its a11y tree - element type, text,
coordinates, hierarchy - drops irrelevant attributes and elements, and has a
strong MLLM (Qwen2.5-VL-32B) compress the result into a concise text
description ``D_spatial`` that a reasoning teacher reads.

Departure: here the description is built by rules, deterministically
(:func:`describe_elements`); a Judge (any ``guirl.judges`` model, e.g. an
OpenAI-compatible server) can optionally rewrite it into prose
(:func:`compress_with_judge`), falling back to the rule text when the judge's
answer is unusable.

Relevance filter (``relevance="relevant"``): a node is *visible* when its box
has positive width and height and overlaps the screen. Visible nodes are kept
when they are interactive (:data:`INTERACTIVE_ROLES`; disabled ones too,
marked, since a greyed-out button matters), or are enabled and carry text
(labels, static text), or are labelled (non-empty text) ancestors of a kept
node: the containers that give the hierarchy. Dropped: invisible nodes,
disabled non-interactive nodes (decoration) and unlabelled containers; a
node whose parent was dropped hangs under its nearest kept ancestor.
``relevance="all"`` keeps every visible node.

Example line (``coords="box"``, screen pixels, indent 2)::

    Screen 512x512; coordinates are screen pixels [x1, y1, x2, y2], origin top left.
    [0] window "Desktop" [0, 0, 512, 512]
      [2] icon "Settings" [318, 10, 462, 128] (focused)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from guirl.actions.frames import Frame
from guirl.data.schema import A11yNode
from guirl.judges.base import Judge, JudgeRequest

#: Roles a user acts on (sim widgets, MiniWoB ARIA-like roles, Android classes lower-cased).
INTERACTIVE_ROLES = frozenset({
    "button", "checkbox", "combobox", "icon", "imagebutton", "input", "link", "listbox", "listitem", "menuitem",
    "option", "radio", "radiobutton", "searchbox", "select", "slider", "spinbutton", "switch", "tab", "textarea",
    "textbox", "textfield", "edittext", "toggle", "togglebutton",
})

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class SpatialOptions:
    """How :func:`describe_elements` writes a screen."""

    coords: Literal["box", "center"] = "box"
    """``box``: ``[x1, y1, x2, y2]``; ``center``: ``(x, y)`` of the box centre."""
    frame: Literal["screen", "relative"] = "screen"
    """``screen``: pixels of the screenshot; ``relative``: ``0..scale`` on both axes (Qwen3-VL style)."""
    scale: float = 1000
    """Scale of the relative frame."""
    max_elements: int | None = 60
    """Most elements written (None = all); interactive ones are kept first, then labelled, then containers."""
    relevance: Literal["relevant", "all"] = "relevant"
    """``relevant``: the filter of the module docstring; ``all``: every visible node."""
    indent: int = 2
    """Spaces per hierarchy level (0 = flat list)."""
    states: bool = True
    """Write focused / checked / value / disabled after the box."""
    max_text: int = 60
    """Longest element text written; longer text is cut with an ellipsis."""

    def __post_init__(self) -> None:
        if self.coords not in ("box", "center"):
            raise ValueError(f"coords must be 'box' or 'center', got {self.coords!r}")
        if self.frame not in ("screen", "relative"):
            raise ValueError(f"frame must be 'screen' or 'relative', got {self.frame!r}")
        if self.relevance not in ("relevant", "all"):
            raise ValueError(f"relevance must be 'relevant' or 'all', got {self.relevance!r}")
        if self.max_elements is not None and self.max_elements < 1:
            raise ValueError(f"max_elements must be >= 1 or None, got {self.max_elements}")
        if self.scale <= 0 or self.indent < 0 or self.max_text < 4:
            raise ValueError("scale must be > 0, indent >= 0 and max_text >= 4")

    def output_frame(self, width: int, height: int) -> Frame:
        return Frame.screen(width, height) if self.frame == "screen" else Frame.relative(self.scale)


@dataclass(frozen=True)
class SpatialElement:
    """One kept node: its number in the description, hierarchy depth and box in the output frame."""

    number: int
    node: A11yNode
    depth: int
    box: Box


def is_interactive(node: A11yNode) -> bool:
    return node.role.lower() in INTERACTIVE_ROLES


def _visible(box: Box, width: int, height: int) -> bool:
    x1, y1, x2, y2 = box
    return x2 > x1 and y2 > y1 and x2 > 0 and y2 > 0 and x1 < width and y1 < height


def _in_frame(box: Box, source: Frame, target: Frame) -> Box:
    x1, y1 = source.convert_point(box[:2], target)
    x2, y2 = source.convert_point(box[2:], target)
    return (x1, y1, x2, y2)


def _priority(node: A11yNode) -> int:
    """0 interactive, 1 labelled, 2 container: the order in which the element budget is spent."""
    if is_interactive(node):
        return 0
    return 1 if node.text.strip() else 2


def select_elements(
    nodes: Sequence[A11yNode],
    screen_size: tuple[int, int],
    source_frame: Frame | None = None,
    options: SpatialOptions = SpatialOptions(),
) -> tuple[list[SpatialElement], int]:
    """The nodes a description keeps (document order) and how many relevant ones the budget cut.

    ``nodes`` boxes are in ``source_frame`` (default: screen pixels of
    ``screen_size``); returned boxes are in ``options.output_frame``.
    """
    width, height = screen_size
    if width <= 0 or height <= 0:
        raise ValueError(f"screen_size must be positive, got {screen_size}")
    screen = Frame.screen(width, height)
    source = source_frame or screen
    if source.kind == "screen" and source.width is None:
        source = screen
    by_id = {n.id: n for n in nodes}
    screen_boxes = {n.id: _in_frame(n.box, source, screen) for n in nodes}
    visible = [n for n in nodes if _visible(screen_boxes[n.id], width, height)]

    def ancestors(node: A11yNode) -> list[str]:
        chain, seen, parent = [], {node.id}, node.parent
        while parent is not None and parent in by_id and parent not in seen:
            chain.append(parent)
            seen.add(parent)
            parent = by_id[parent].parent
        return chain

    if options.relevance == "all":
        relevant = visible
    else:
        core = {n.id for n in visible if is_interactive(n) or (n.text.strip() and n.enabled)}
        needed = set(core)
        for n in visible:
            if n.id in core:
                needed.update(a for a in ancestors(n) if by_id[a].text.strip())
        relevant = [n for n in visible if n.id in needed]
    chosen = relevant
    if options.max_elements is not None and len(relevant) > options.max_elements:
        ranked = sorted(range(len(relevant)), key=lambda i: (_priority(relevant[i]), i))
        keep = set(ranked[: options.max_elements])
        chosen = [n for i, n in enumerate(relevant) if i in keep]
    kept_ids = {n.id for n in chosen}
    out_frame = options.output_frame(width, height)
    depth: dict[str, int] = {}
    elements = []
    for number, node in enumerate(chosen):
        parent = next((a for a in ancestors(node) if a in kept_ids), None)
        depth[node.id] = depth.get(parent, -1) + 1 if parent is not None else 0
        box = _in_frame(screen_boxes[node.id], screen, out_frame)
        elements.append(SpatialElement(number, node, depth[node.id], box))
    return elements, len(relevant) - len(chosen)


def _num(value: float) -> str:
    return str(round(value))


def _quote(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return '"' + text.replace('"', "'") + '"'


def element_line(element: SpatialElement, options: SpatialOptions) -> str:
    """``[n] role "text" [x1, y1, x2, y2] (states)`` for one element."""
    node, box = element.node, element.box
    parts = [f"[{element.number}]", node.role]
    if node.text.strip():
        parts.append(_quote(node.text, options.max_text))
    if options.coords == "box":
        parts.append("[" + ", ".join(_num(v) for v in box) + "]")
    else:
        parts.append(f"({_num((box[0] + box[2]) / 2)}, {_num((box[1] + box[3]) / 2)})")
    if options.states:
        states = []
        if node.focused:
            states.append("focused")
        if node.checked is not None:
            states.append("checked" if node.checked else "unchecked")
        if node.value:
            states.append(f"value={_quote(node.value, options.max_text)}")
        if not node.enabled:
            states.append("disabled")
        if states:
            parts.append("(" + ", ".join(states) + ")")
    return " " * (options.indent * element.depth) + " ".join(parts)


def frame_sentence(screen_size: tuple[int, int], options: SpatialOptions) -> str:
    width, height = screen_size
    shape = "[x1, y1, x2, y2]" if options.coords == "box" else "(x, y) centres"
    if options.frame == "screen":
        return f"Screen {width}x{height}; coordinates are screen pixels {shape}, origin top left."
    scale = _num(options.scale)
    return f"Screen {width}x{height}; coordinates are relative {shape} from 0 to {scale}, origin top left."


def describe_elements(
    nodes: Sequence[A11yNode],
    screen_size: tuple[int, int],
    source_frame: Frame | None = None,
    options: SpatialOptions = SpatialOptions(),
) -> str:
    """The rule-based spatial description ``D_spatial`` of one screen (deterministic)."""
    elements, cut = select_elements(nodes, screen_size, source_frame, options)
    lines = [frame_sentence(screen_size, options)]
    lines += [element_line(e, options) for e in elements]
    if not elements:
        lines.append("(no visible elements)")
    if cut:
        lines.append(f"... {cut} more elements not listed")
    return "\n".join(lines)


def region_name(box: Box, screen_size: tuple[int, int]) -> str:
    """Where a box's centre lies on a 3x3 grid: ``top left``, ``centre``, ``bottom right``..."""
    width, height = screen_size
    cx, cy = (box[0] + box[2]) / 2 / width, (box[1] + box[3]) / 2 / height
    row = "top" if cy < 1 / 3 else "bottom" if cy >= 2 / 3 else "middle"
    col = "left" if cx < 1 / 3 else "right" if cx >= 2 / 3 else "centre"
    if row == "middle":
        return "centre" if col == "centre" else f"middle {col}"
    return row if col == "centre" else f"{row} {col}"


COMPRESS_PROMPT = (
    "Below is a list of the elements of a GUI screen (role, text, coordinates, states; indentation = nesting). "
    "Rewrite it as a concise description of the page: its layout, every element relevant to the goal with its "
    "coordinates (keep the numbers exactly as given), and what state the screen is in.\n"
    "Goal: {goal}\n\nElements:\n{description}\n\n"
    'Answer with one JSON object: {{"description": "..."}}'
)


def compress_with_judge(judge: Judge, description: str, goal: str, images: Sequence = ()) -> tuple[str, bool]:
    """InfiGUI-R1's model compression of the rule description; returns ``(text, used_judge)``.

    A judge answer without a non-empty string ``description`` falls back to
    the rule text (``used_judge=False``), never raises.
    """
    request = JudgeRequest(role="spatial", prompt=COMPRESS_PROMPT.format(goal=goal, description=description),
                           images=list(images), fields={"description": description, "goal": goal})
    result = judge(request)
    text = result.verdict.get("description") if result.ok and isinstance(result.verdict, dict) else None
    if isinstance(text, str) and text.strip():
        return text.strip(), True
    return description, False

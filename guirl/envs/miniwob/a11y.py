"""An accessibility-like tree from MiniWoB's DOM snapshot (``core.getDOMInfo``).

MiniWoB's page script reports every visible element with its tag, viewport
box, text (leaves), value (inputs; ``checked`` for checkboxes and radios),
focus and a reference number. Each becomes an :class:`A11yNode` with an
ARIA-like role; boxes are in the page's CSS pixels, which equal screenshot
pixels (device scale factor 1, screenshot cropped at the page origin).
Elements entirely outside the screenshot are left out, with their subtrees;
the others' boxes are clipped to the screenshot (so a box centre is visible).
"""

from __future__ import annotations

from typing import Any

from guirl.data.schema import A11yNode

#: MiniWoB tag (inputs carry their type, ``input_checkbox``) -> role.
ROLES = {
    "button": "button",
    "input_button": "button",
    "input_submit": "button",
    "input_reset": "button",
    "input_text": "textbox",
    "input_password": "textbox",
    "input_email": "textbox",
    "input_number": "spinbutton",
    "input_search": "searchbox",
    "input_tel": "textbox",
    "input_url": "textbox",
    "input_date": "textbox",
    "textarea": "textbox",
    "input_checkbox": "checkbox",
    "input_radio": "radio",
    "input_range": "slider",
    "select": "combobox",
    "option": "option",
    "a": "link",
    "label": "label",
    "img": "img",
    "svg": "graphics",
    "canvas": "canvas",
    "table": "table",
    "tr": "row",
    "td": "cell",
    "th": "columnheader",
    "ul": "list",
    "ol": "list",
    "li": "listitem",
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "h4": "heading",
    "t": "text",  # a text node between elements
    "p": "paragraph",
    "form": "form",
}


def role_of(tag: str) -> str:
    """ARIA-like role of a MiniWoB tag; other tags keep their name (``div``, ``span``)."""
    return ROLES.get(tag, tag)


def dom_to_a11y(root: dict[str, Any], width: int, height: int) -> list[A11yNode]:
    """Flatten a ``core.getDOMInfo()`` tree into nodes (parents before children)."""
    nodes: list[A11yNode] = []
    stack: list[tuple[dict[str, Any], str | None]] = [(root, None)]
    while stack:
        element, parent = stack.pop()
        x1, y1 = float(element["left"]), float(element["top"])
        x2, y2 = x1 + float(element["width"]), y1 + float(element["height"])
        if x2 <= 0 or y2 <= 0 or x1 >= width or y1 >= height:
            continue  # off screen
        x1, y1, x2, y2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(width)), min(y2, float(height))
        node_id = str(element["ref"])
        tag = str(element["tag"]).lower()
        value = element.get("value")
        children = element.get("children", [])
        text = element.get("text")
        if children and all(str(c["tag"]).lower() == "t" for c in children):
            text = " ".join(str(c.get("text", "")) for c in children)  # miniwob.dom does the same
            children = []
        nodes.append(
            A11yNode(
                id=node_id,
                role=role_of(tag),
                text=str(text or ""),
                box=(x1, y1, x2, y2),
                parent=parent,
                focused=bool(element.get("focused", False)),
                checked=bool(value) if isinstance(value, bool) else None,
                value=None if value is None or isinstance(value, bool) else str(value),
            )
        )
        stack.extend((child, node_id) for child in reversed(children))
    return nodes


def find_nodes(nodes: list[A11yNode], role: str | None = None, text: str | None = None) -> list[A11yNode]:
    """Nodes with ``role`` and (stripped, exact) ``text``, in page order."""
    return [
        n for n in nodes if (role is None or n.role == role) and (text is None or n.text.strip() == text.strip())
    ]


def centre(node: A11yNode) -> tuple[float, float]:
    x1, y1, x2, y2 = node.box
    return ((x1 + x2) / 2, (y1 + y2) / 2)

"""An accessibility-like tree from MiniWoB's DOM snapshot (``core.getDOMInfo``).

MiniWoB's page script reports every visible element with its tag, viewport
box, text (leaves), value (inputs; ``checked`` for checkboxes and radios),
focus and a reference number. Each becomes an :class:`A11yNode` with an
ARIA-like role; boxes are in the page's CSS pixels, which equal screenshot
pixels (device scale factor 1, screenshot cropped at the page origin).
The observation script (:data:`CLIP_JS`, run after ``core.getDOMInfo``)
clips every box to the screenshot and to the visible rectangles of its
scrolling / overflow-clipping ancestors, and hit-tests the clipped box's
centre with ``document.elementFromPoint``: elements clipped away entirely
are left out (their visible descendants hang from the nearest kept
ancestor), and an element covered at its centre by another one is kept with
``visible=False``. CSS classes are kept in ``classes``.

Node ids are MiniWoB's element refs (stable within an episode; text runs
get negative ones); an id seen twice in one tree gets a ``.N`` suffix, so
ids are unique and parent links consistent in every observation.
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


#: JavaScript run on ``dom = core.getDOMInfo()`` with the screenshot size as
#: ``W``, ``H``: adds ``clip`` (the visible part of the box, or null),
#: ``hit`` (the clipped box's centre hit-tests to the element or a
#: descendant) and ``label`` (aria-label, title or alt) to every node and
#: turns ``classes`` into a plain string.
CLIP_JS = """
(function (dom, W, H) {
  function meet(a, b) {
    return [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
  }
  function clipsChildren(el) {
    if (!el || el === document.body || el === document.documentElement) return false;
    if (!(el.clientWidth > 0 || el.clientHeight > 0)) return false;  // inline, svg shapes: no box of their own
    var style = getComputedStyle(el);
    return style.overflowX !== 'visible' || style.overflowY !== 'visible';
  }
  function walk(node, el, clip) {
    var box = meet([node.left, node.top, node.left + node.width, node.top + node.height], clip);
    if (box[2] > box[0] && box[3] > box[1]) {
      node.clip = box;
      var hit = document.elementFromPoint((box[0] + box[2]) / 2, (box[1] + box[3]) / 2);
      node.hit = !!(hit && el && (hit === el || el.contains(hit)));
    } else {
      node.clip = null;
      node.hit = false;
    }
    var c = node.classes;
    node.classes = typeof c === 'string' ? c : (c && typeof c.baseVal === 'string' ? c.baseVal : '');
    if (node.tag !== 't' && el && el.getAttribute) {
      node.label = el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt') || '';
    }
    if (node.tag === 't' || !node.children) return;
    var inner = clip;
    if (clipsChildren(el)) {
      var r = el.getBoundingClientRect(), x = r.left + el.clientLeft, y = r.top + el.clientTop;
      inner = meet(clip, [x, y, x + el.clientWidth, y + el.clientHeight]);
    }
    node.children.forEach(function (child) {
      if (child.tag === 't') { walk(child, el, inner); return; }  // a text run of this element
      var childEl = core.previousDOMInfo[child.ref];
      var fixed = childEl && getComputedStyle(childEl).position === 'fixed';
      walk(child, childEl, fixed ? [0, 0, W, H] : inner);
    });
  }
  walk(dom, core.previousDOMInfo[dom.ref] || document.body, [0, 0, W, H]);
  return dom;
})
"""


#: JavaScript expression: ``[utterance, utterance with icons]`` of the task's
#: query (``#query``): MiniWoB's utterance is the query's text, which drops
#: an element with no text (``click-menu-2``: "click on the item with the
#: <span class="ui-icon ui-icon-disk"></span> icon"); the second keeps such an
#: element where it stands, written as its tag with the attributes that name
#: an element of the page outside the query (``<span class="ui-icon
#: ui-icon-disk">``: class names, aria-label, title, alt), when it has any.
#: Both are null without a query.
QUERY_JS = """
(function () {
  var query = document.getElementById('query');
  if (!query) return [null, null];
  function onPage(selector) {  // an element outside the query matches
    return Array.prototype.some.call(document.querySelectorAll(selector), function (el) { return !query.contains(el); });
  }
  function render(node) {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1) return '';
    if (/\\S/.test(node.textContent)) return Array.prototype.map.call(node.childNodes, render).join('');
    var c = node.className, attrs = '';
    c = (typeof c === 'string' ? c : (c && c.baseVal) || '').split(/\\s+/).filter(function (name) {
      return name && onPage('.' + CSS.escape(name));
    });
    if (c.length) attrs += ' class="' + c.join(' ') + '"';
    ['aria-label', 'title', 'alt'].forEach(function (name) {
      var v = (node.getAttribute(name) || '').trim();
      if (v && onPage('[' + name + '="' + CSS.escape(v) + '"]')) attrs += ' ' + name + '="' + v + '"';
    });
    return attrs ? ' <' + node.tagName.toLowerCase() + attrs + '> ' : node.textContent;
  }
  return [query.textContent.replace(/\\s+/g, ' ').trim(), render(query).replace(/\\s+/g, ' ').trim()];
})()
"""


def dom_to_a11y(root: dict[str, Any], width: int, height: int) -> list[A11yNode]:
    """Flatten a ``core.getDOMInfo()`` tree into nodes (parents before children).

    Nodes with ``clip`` (from :data:`CLIP_JS`) use it as their box and are
    left out where it is null; without it the box is clipped to the
    screenshot. A left-out node's children hang from its nearest kept
    ancestor.
    """
    nodes: list[A11yNode] = []
    seen: set[str] = set()
    stack: list[tuple[dict[str, Any], str | None]] = [(root, None)]
    while stack:
        element, parent = stack.pop()
        children = element.get("children", [])
        if "clip" in element:
            clip = element["clip"]
            x1, y1, x2, y2 = (float(v) for v in clip) if clip else (0.0, 0.0, 0.0, 0.0)
        else:
            x1, y1 = float(element["left"]), float(element["top"])
            x2, y2 = x1 + float(element["width"]), y1 + float(element["height"])
        x1, y1, x2, y2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(width)), min(y2, float(height))
        if x2 <= x1 or y2 <= y1:  # off screen or clipped away: its children may still show
            stack.extend((child, parent) for child in reversed(children))
            continue
        node_id = _unique(str(element["ref"]), seen)
        tag = str(element["tag"]).lower()
        value = element.get("value")
        text = element.get("text")
        if children and all(str(c["tag"]).lower() == "t" for c in children):
            text = " ".join(str(c.get("text", "")) for c in children)  # miniwob.dom does the same
            children = []
        classes = element.get("classes")
        classes = tuple(str(classes).split()) if isinstance(classes, str) and classes.strip() else None
        hit = element.get("hit")
        label = str(element.get("label") or "").strip() or None
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
                classes=classes,
                label=label,
                visible=bool(hit) if hit is not None else None,
            )
        )
        stack.extend((child, node_id) for child in reversed(children))
    return nodes


def _unique(node_id: str, seen: set[str]) -> str:
    """``node_id``, or ``node_id.N`` for the N-th repeat of it in one tree."""
    candidate, n = node_id, 1
    while candidate in seen:
        candidate, n = f"{node_id}.{n}", n + 1
    seen.add(candidate)
    return candidate


def find_nodes(nodes: list[A11yNode], role: str | None = None, text: str | None = None) -> list[A11yNode]:
    """Nodes with ``role`` and (stripped, exact) ``text``, in page order."""
    return [
        n for n in nodes if (role is None or n.role == role) and (text is None or n.text.strip() == text.strip())
    ]


def centre(node: A11yNode) -> tuple[float, float]:
    x1, y1, x2, y2 = node.box
    return ((x1 + x2) / 2, (y1 + y2) / 2)

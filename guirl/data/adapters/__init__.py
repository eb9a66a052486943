"""Adapters from public dataset layouts into guirl's Episode / Step schema.

Every adapter documents the box layout and the scroll / swipe direction
convention it reads, and writes screen-pixel coordinates and guirl's one
direction convention (the direction the content view moves towards, see
:class:`guirl.actions.types.Action`). Malformed records raise
:class:`AdapterError` (a :class:`guirl.data.io.DataError`) naming the file,
the record and the problem. Where a dataset's evaluator decides a swipe's
main axis in its own normalised units (AITW, GUI-Odyssey), so does the
adapter.

============================  =========================================  ==============================
adapter                       boxes / points read                        scroll / swipe convention read
============================  =========================================  ==============================
``screenspot``, ``_v2``       [x, y, w, h] pixels                        none
``screenspot_pro``            [x1, y1, x2, y2] pixels                    none
``androidcontrol``(``_low``)  (x, y) pixels                              content direction (kept)
``gui_odyssey``               (x, y) relative 0-1000                     finger path (reversed)
``aitw``                      [y, x] / [y, x, h, w] normalised 0-1       finger path (reversed)
``mind2web``                  "x,y,w,h" pixels                           none
``guilibra``                  [x1,y1,x2,y2] / [x,y] 0-1000; (x,y) 0-1    Scroll kept, Swipe reversed
============================  =========================================  ==============================
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from guirl.data.adapters._common import AdapterError
from guirl.data.adapters.aitw import load_aitw
from guirl.data.adapters.androidcontrol import load_androidcontrol
from guirl.data.adapters.guilibra import load_guilibra
from guirl.data.adapters.mind2web import load_mind2web
from guirl.data.adapters.odyssey import load_gui_odyssey
from guirl.data.adapters.screenspot import load_screenspot, load_screenspot_pro, load_screenspot_v2
from guirl.data.schema import Episode

ADAPTERS: dict[str, Callable[..., list[Episode]]] = {
    "screenspot": load_screenspot,
    "screenspot_v2": load_screenspot_v2,
    "screenspot_pro": load_screenspot_pro,
    "androidcontrol": partial(load_androidcontrol, level="high"),
    "androidcontrol_low": partial(load_androidcontrol, level="low"),
    "gui_odyssey": load_gui_odyssey,
    "aitw": load_aitw,
    "mind2web": load_mind2web,
    "multimodal_mind2web": load_mind2web,
    "guilibra": load_guilibra,
}


def load_public(name: str, path: str | Path, **kwargs) -> list[Episode]:
    """Read ``path`` in public format ``name`` (see :data:`ADAPTERS`)."""
    try:
        loader = ADAPTERS[name]
    except KeyError:
        raise KeyError(f"unknown dataset format {name!r}; known formats: {sorted(ADAPTERS)}") from None
    return loader(path, **kwargs)


__all__ = [
    "ADAPTERS",
    "AdapterError",
    "load_aitw",
    "load_androidcontrol",
    "load_gui_odyssey",
    "load_guilibra",
    "load_mind2web",
    "load_public",
    "load_screenspot",
    "load_screenspot_pro",
    "load_screenspot_v2",
]

"""Adapters from public dataset layouts into guirl's Episode / Step schema.

Every adapter documents the box layout and the scroll / swipe direction
convention it reads, and writes screen-pixel coordinates and guirl's one
direction convention (the direction the content view moves towards, see
:class:`guirl.actions.types.Action`). Malformed records raise
:class:`AdapterError` (a :class:`guirl.data.io.DataError`) naming the file,
the record and the problem. Where a dataset's evaluator decides a swipe's
main axis in its own normalised units (AITW, GUI-Odyssey), so does the
adapter.

===============================  ==========================================  ================================
format (layouts)                 boxes / points read                         scroll / swipe convention read
===============================  ==========================================  ================================
``screenspot``, ``_v2``          [x, y, w, h] px; HF rows: [x1,y1,x2,y2] 0-1  none
``screenspot_pro``               [x1, y1, x2, y2] px                         none
``androidcontrol``(``_low``):
  ``tfrecord``                   (x, y) px                                   content direction, kept
  ``uis1``                       (x, y) px; ``candidate_bbox`` xyxy px        from the finger path (reversed)
  ``infigui``                    (x, y) px; check boxes xyxy px              finger direction (reversed)
  ``uir1``                       (x, y) px                                   AndroidControl's own, kept
``gui_odyssey`` (v1, v2)         (x, y), ``sam2_bbox`` relative 0-1000        finger path (reversed)
``aitw``: ``tfrecord``           [y, x] / [y, x, h, w] normalised 0-1        finger path (reversed)
  ``seeclick``                   touch/lift [x, y] 0-1; boxes [y, x, h, w]   text = content direction, kept
``mind2web``: ``seeclick``       ``bbox`` [x, y, w, h] px of the crop        none
  ``rows``, ``tasks``            "x,y,w,h" px of the page                    none
``guilibra``                     [x1,y1,x2,y2] / [x,y] 0-1000; (x,y) 0-1     Scroll kept, Swipe reversed
``guirl_hf``                     guirl's own (``guirl data convert --to hf``)  guirl's own
===============================  ==========================================  ================================

Every format also reads its Hugging Face layout (parquet / arrow / saved
dataset / Hub name, :mod:`guirl.data.adapters.hub`) through
:func:`open_public`.
"""

from __future__ import annotations

import inspect
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
from guirl.data.convert import load_guirl_hf
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
    "guirl_hf": load_guirl_hf,
}


#: columns of a dataset's Hub layout no adapter reads and too large to keep in memory (HTML pages).
_UNREAD_COLUMNS = {"mind2web": ("raw_html", "cleaned_html"), "multimodal_mind2web": ("raw_html", "cleaned_html")}


def _loader(name: str) -> Callable[..., list[Episode]]:
    try:
        return ADAPTERS[name]
    except KeyError:
        raise KeyError(f"unknown dataset format {name!r}; known formats: {sorted(ADAPTERS)}") from None


def adapter_options(name: str) -> list[str]:
    """The keyword options of format ``name``'s loader (beyond the path and ``image_dir``)."""
    loader = _loader(name)
    fixed = set(loader.keywords) if isinstance(loader, partial) else set()
    func = loader.func if isinstance(loader, partial) else loader
    params = list(inspect.signature(func).parameters.values())[1:]  # the first is the path
    return [p.name for p in params if p.name not in fixed and p.name != "image_dir"
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _check_options(name: str, kwargs: dict) -> None:
    known = adapter_options(name)
    unknown = sorted(set(kwargs) - set(known))
    if unknown:
        raise ValueError(
            f"dataset format {name!r} has no option {', '.join(map(repr, unknown))}; "
            f"its options are {known or 'none'}"
        )


def default_image_root(name: str, path: str | Path) -> Path:
    """Where format ``name``'s screenshots are when ``--images`` is not given (the release layouts)."""
    from guirl.data.adapters import screenspot

    data = Path(path)
    versions = {"screenspot": "v1", "screenspot_v2": "v2", "screenspot_pro": "pro"}
    if name in versions:
        return screenspot.default_image_root(data, versions[name])
    base = data if data.is_dir() else data.parent
    return {"gui_odyssey": base.parent / "screenshots"}.get(name, base)


def open_public(
    name: str, path: str | Path, image_dir: str | Path | None = None, split: str | None = None, **kwargs
) -> tuple[list[Episode], Path]:
    """Read ``path`` in public format ``name`` -> ``(episodes, image root)``.

    ``path`` is the release's annotation file or directory, or its Hugging
    Face layout (a parquet / arrow file or directory, a saved dataset, or a
    Hub name; :mod:`guirl.data.adapters.hub`), of which ``split`` picks one
    split (default: all). Screenshot paths of the episodes are relative to
    the returned root. ``kwargs`` are the format's options
    (:func:`adapter_options`); an unknown one is refused, naming the known.
    """
    from guirl.data.adapters import hub
    from guirl.data.adapters._common import row_source

    loader = _loader(name)
    _check_options(name, kwargs)
    if not hub.is_hf_source(path):
        if split is not None:
            raise ValueError(f"{path}: split {split!r} applies to Hugging Face layouts (parquet / arrow / hub); "
                             "this is an annotation file or directory: drop --split")
        if image_dir is not None:
            kwargs["image_dir"] = image_dir
        episodes = loader(path, **kwargs)
        return episodes, Path(image_dir) if image_dir is not None else default_image_root(name, path)
    episodes = []
    parts = hub.splits(path, image_dir, split)
    drop = _UNREAD_COLUMNS.get(name, ())
    for part in parts:
        pseudo = part.image_root / f"{part.name}.rows"  # the file name the adapter sees and names in errors
        try:
            with row_source(pseudo, lambda part=part: hub.iter_rows(part, drop)):
                got = loader(pseudo, image_dir=part.image_root, **kwargs)
        except AdapterError as err:
            raise AdapterError(str(err).replace(str(pseudo), part.label)) from None
        for ep in got:
            if len(parts) > 1:
                ep = ep.model_copy(update={"id": f"{ep.id}@{part.name}"})
            episodes.append(ep.model_copy(update={"source": f"{ep.source}@{part.label}", "extra": {**ep.extra, "split": part.name}}))
    return episodes, parts[0].image_root if parts else Path(image_dir or ".")


def load_public(name: str, path: str | Path, **kwargs) -> list[Episode]:
    """Read ``path`` in public format ``name`` (see :data:`ADAPTERS` and :func:`open_public`)."""
    return open_public(name, path, **kwargs)[0]


__all__ = [
    "ADAPTERS",
    "AdapterError",
    "load_aitw",
    "load_androidcontrol",
    "load_gui_odyssey",
    "load_guilibra",
    "load_mind2web",
    "adapter_options",
    "default_image_root",
    "load_public",
    "open_public",
    "load_screenspot",
    "load_screenspot_pro",
    "load_screenspot_v2",
]

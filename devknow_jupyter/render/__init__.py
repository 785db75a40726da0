"""Rendering of results: Markdown → sanitized HTML, static views, ipywidgets views, and our stylesheet.

* :mod:`.markdown`: :func:`render_markdown`, :func:`sanitize_html`, :func:`safe_markdown` (no widgets).
* :mod:`.static`: HTML / Markdown / plain-text views of each result type (the static twin).
* :mod:`.widgets`: :class:`HitList`, :class:`HitView`, :class:`DocumentView`, :class:`DocumentsView`,
  :class:`AnswerView`: one anywidget model per output, with ``esm/results.js`` (imports ipywidgets, anywidget).
* :mod:`.style`: the CSS, scoped to ``.devknow`` and following JupyterLab's theme variables.

Names are imported on first use, so ``import devknow_jupyter.render`` loads neither markdown, pygments,
nh3 nor ipywidgets.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "AnswerView",
    "DocumentView",
    "DocumentsView",
    "HitList",
    "HitView",
    "RenderedMarkdown",
    "render_markdown",
    "safe_markdown",
    "sanitize_html",
    "style_block",
    "view_for",
]

_LAZY = {
    "RenderedMarkdown": ".markdown",
    "render_markdown": ".markdown",
    "safe_markdown": ".markdown",
    "sanitize_html": ".markdown",
    "style_block": ".style",
    "AnswerView": ".widgets",
    "DocumentView": ".widgets",
    "DocumentsView": ".widgets",
    "HitList": ".widgets",
    "HitView": ".widgets",
    "view_for": ".views",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'devknow_jupyter.render' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

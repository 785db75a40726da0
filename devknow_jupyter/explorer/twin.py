"""The explorer's static twin: what it shows now, as text/plain, text/markdown and sanitized text/html.

A saved notebook keeps no live widget: nbviewer, GitHub, a notebook reopened without its kernel and
frontends without the widget manager show the twin instead. It holds the visit shown (the page, the
hits, or the answer) rendered by the same static views as ``%devget``, ``%devsearch`` and ``%%devask``.
"""

from __future__ import annotations

import html
from typing import Any

from ..models import name_to_uri
from .history import HistoryEntry
from .view import MAX_HITS

#: The class on the twin's HTML (the live explorer's stylesheet hides an output holding it).
TWIN_CLASS = "dkx-twin"
_NOTHING = "The documentation explorer (nothing shown yet; run the cell in a live notebook to use it)."


def twin_bundle(entry: HistoryEntry | None, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The static mimebundle (plain text, Markdown, HTML) of the visit ``entry``; a short line for None."""

    def wanted(mime: str) -> bool:
        return (include is None or mime in include) and not (exclude and mime in exclude)

    if entry is None:
        parts = {
            "text/plain": _NOTHING,
            "text/markdown": f"*{_NOTHING}*",
            "text/html": f'<div class="devknow"><p class="devknow-placeholder">{html.escape(_NOTHING)}</p></div>',
        }
    else:
        result = entry.result[:MAX_HITS] if entry.kind == "search" else entry.result
        parts = _static_bundle(result)
        shown = name_to_uri(entry.key) if entry.kind == "document" else entry.label()
        heading = f"Documentation explorer · {shown}"
        parts["text/plain"] = f"{heading}\n\n{parts.get('text/plain', '')}".rstrip()
    bundle = {mime: data for mime, data in parts.items() if wanted(mime)}
    if "text/html" in bundle:
        bundle["text/html"] = f'<div class="{TWIN_CLASS}">{bundle["text/html"]}</div>'
    return bundle


def _static_bundle(result: Any) -> dict[str, Any]:
    from ..display import mimebundle

    # Static views only: the explorer is the live view, the twin must not build more widgets.
    bundle = mimebundle(result, widgets=False) or {}
    return {mime: bundle[mime] for mime in ("text/plain", "text/markdown", "text/html") if mime in bundle}

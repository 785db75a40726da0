"""The HTML the panel shows for each result: each result type's view's fragment (sanitized on the server)."""

from __future__ import annotations

from typing import Any

from ..render.views import view_for

__all__ = ["html_for"]


def html_for(obj: Any, number: int | None = None) -> str:
    """Inner HTML for a hit, a results header, a page or an answer (the panel adds the stylesheet once)."""
    view = view_for(obj)
    if view is None:
        raise TypeError(f"no view for {type(obj).__name__}")
    return view.fragment(obj, number)

"""The display settings: one object that the renderer reads and every front end writes.

:data:`options` is the one :class:`DisplayOptions` of the process. ``devknow_jupyter.display.options`` is
this same object, and ``%config DevKnowMagics.widgets`` / ``max_results`` write into it. It lives here,
below the renderer, so that ``render/`` never reaches up into the display layer for a setting.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["DisplayOptions", "options", "using"]

_FLAGS = ("widgets", "widgets_outside_kernel", "raw", "remote_images")
_COUNTS = ("plain_chars", "toc_min_headings", "preview_chars")


@dataclass
class DisplayOptions:
    """Settings for how results display; change the shared :data:`options` or use :func:`using`.

    Attributes:
        widgets: Show live widgets (Open buttons, paging) beside the static HTML. False gives static
            HTML/Markdown/plain text only (``--no-widgets``, consoles, exported notebooks).
        widgets_outside_kernel: Build widgets even when no Jupyter kernel is running (tests, custom hosts).
            By default widgets are only built inside a kernel, since nothing else can show them.
        page_size: Hits (and documents) shown at first; a "Show more" button adds this many more.
        max_chars: Render at most about this many characters of a document (cut at a paragraph), with a
            "truncated, N of M characters" note and, in the widget, a "Show all" button. 0 or None: no limit.
        preview_chars: Characters of each passage shown in a hit list (cut at a block boundary, fading out;
            the whole page is one Open away). 0: whole passages.
        plain_chars: Characters of a document or answer shown in ``text/plain`` (terminals).
        toc_min_headings: Documents with at least this many headings get a table of contents (0: never).
        raw: Show documents' Markdown source instead of rendering it.
        remote_images: Load pages' images from the web as they display. False (default): each is a link that
            loads it on click, so nothing is fetched off the machine unasked (and nothing breaks offline).
        max_results: Hits ``%devsearch`` asks for when ``-n`` is not given (``%config DevKnowMagics.max_results``).
    """

    widgets: bool = True
    widgets_outside_kernel: bool = False
    page_size: int = 10
    max_chars: int | None = 100_000
    preview_chars: int = 600
    plain_chars: int = 2_000
    toc_min_headings: int = 4
    raw: bool = False
    max_results: int = 10
    remote_images: bool = False

    def __setattr__(self, name: str, value: Any) -> None:
        # Check values as they are set, so a typo fails where it is made, not at the next display.
        if name in _FLAGS:
            value = bool(value)
        elif name in ("page_size", "max_results"):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        elif name == "max_chars":
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"max_chars must be 0/None (no limit) or a positive integer, not {value!r}")
        elif name in _COUNTS:
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, not {value!r}")
        elif name not in {f.name for f in dataclasses.fields(self)}:
            raise AttributeError(f"DisplayOptions has no option {name!r}")
        super().__setattr__(name, value)


#: The settings every result display uses.
options = DisplayOptions()


@contextlib.contextmanager
def using(**changes: Any) -> Iterator[DisplayOptions]:
    """Change :data:`options` for the duration of a ``with`` block, e.g. ``using(widgets=False)``."""
    saved = dataclasses.asdict(options)
    try:
        for name, value in changes.items():
            setattr(options, name, value)
        yield options
    finally:
        for name, value in saved.items():
            setattr(options, name, value)



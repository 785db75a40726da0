"""How results look in Jupyter, IPython and static viewers.

Every result object (:class:`~devknow_jupyter.models.SearchResults`, ``DocumentChunk``, ``Document``,
``Documents``, ``Answer``) displays itself through :func:`mimebundle`, which returns

* ``text/plain``: short and readable in a terminal (numbered hits with title, URL and first line);
* ``text/markdown``: the same content as safe Markdown (raw HTML shown as text, unsafe links dropped);
* ``text/html``: sanitized HTML with one ``<style>`` block of our own, for nbviewer, GitHub, nbconvert,
  VS Code, Colab and untrusted notebooks;
* ``application/vnd.jupyter.widget-view+json``: the live view (one anywidget model: Open, ↑/↓/Enter, "More",
  "Show all"), when :data:`options` ``.widgets`` is on, ipywidgets is installed and a Jupyter kernel is running.

Nothing here calls the network: documents are fetched only when an Open button is clicked.

Settings live in :data:`options` (a :class:`DisplayOptions`; the very object
:mod:`devknow_jupyter.render.settings` holds, which the renderer reads and ``%config DevKnowMagics.*`` writes)::

    from devknow_jupyter import display
    display.options.widgets = False      # static HTML/Markdown only (consoles, exports, --no-widgets)
    display.options.page_size = 5        # hits shown before "More"
    display.options.max_chars = 0        # render whole documents, however long

    with display.using(widgets=False):   # for one display call
        IPython.display.display(results)

:func:`message_bundle` and :func:`placeholder` build the short styled notices the magics show.
"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import Any

# The settings live below the renderer (render/settings.py); display.options IS that one object.
from .render.settings import DisplayOptions, options, using

__all__ = [
    "WIDGET_MIME",
    "DisplayOptions",
    "MimeBundle",
    "message_bundle",
    "mimebundle",
    "options",
    "placeholder",
    "using",
    "widget_for",
    "widgets_available",
]

#: The MIME type of a live ipywidgets view.
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_MESSAGE_KINDS = ("info", "warning", "error")


class MimeBundle(dict):
    """A mimebundle (``{mime type: data}``) that also displays itself.

    Use it with ``IPython.display.display(bundle, raw=True)`` or plainly ``display(bundle)``; either way
    the frontend gets the MIME types, not a dict repr.
    """

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return _filter(dict(self), include, exclude)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython pretty-prints dicts by type; this keeps our text/plain instead of the dict's repr.
        printer.text(str(self.get("text/plain", "")))


# -- result objects -----------------------------------------------------------------------------------


def mimebundle(
    obj: Any, include: Any = None, exclude: Any = None, *, actions: Any = None, **overrides: Any
) -> dict[str, Any]:
    """The mimebundle of a result object (what its ``_repr_mimebundle_`` returns).

    Args:
        obj: A SearchResults, DocumentChunk, Document, Documents or Answer.
        include: MIME types to produce (IPython's argument); None for all.
        exclude: MIME types to leave out.
        actions: What the widget's buttons act through (a ResultActions or a client); by default the kernel's
            shared client (:func:`devknow_jupyter.session.default_actions`).
        **overrides: :class:`DisplayOptions` fields to use for this call only, e.g. ``widgets=False``.
    """
    opts = dataclasses.replace(options, **overrides) if overrides else options
    views = _views(obj, opts)
    if views is None:
        return {"text/plain": repr(obj)}
    wanted = _wanted(include, exclude)
    bundle: dict[str, Any] = {"text/plain": _guarded(views["text/plain"], lambda: repr(obj))}
    for mime in ("text/markdown", "text/html"):
        if wanted(mime):
            bundle[mime] = _guarded(views[mime], lambda mime=mime: _fallback(bundle["text/plain"], mime))
    if wanted(WIDGET_MIME) and widgets_available(opts):
        view = _widget_view(obj, opts, actions)
        if view is not None:
            bundle[WIDGET_MIME] = view
    return _filter(bundle, include, exclude)


def widget_for(obj: Any, *, actions: Any = None, **overrides: Any) -> Any:
    """The live view of a result object (a HitList, DocumentView, ... anywidget model), or None for other objects.

    Its buttons act through ``actions`` (by default the kernel's shared client). Raises ImportError when
    ipywidgets is not installed.
    """
    from .render.views import widget_for as view_for

    opts = dataclasses.replace(options, **overrides) if overrides else options
    return view_for(obj, options=opts, actions=_actions(actions, obj))


def _actions(actions: Any, obj: Any) -> Any:
    if actions is not None:
        return actions
    from .session import default_actions

    return default_actions(obj)


def widgets_available(opts: DisplayOptions | None = None) -> bool:
    """True when results will display as widgets: the option is on, ipywidgets is installed, and a kernel
    runs (or ``widgets_outside_kernel`` is set)."""
    opts = opts or options
    if not opts.widgets or not _ipywidgets_installed():
        return False
    return opts.widgets_outside_kernel or _in_kernel()


def _views(obj: Any, opts: DisplayOptions) -> dict[str, Callable[[], Any]] | None:
    from .render.views import view_for

    view = view_for(obj)
    if view is None:
        return None
    return {
        "text/plain": lambda: view.plain(obj, opts),
        "text/markdown": lambda: view.markdown(obj, opts),
        "text/html": lambda: view.html(obj, opts),
    }


def _widget_view(obj: Any, opts: DisplayOptions, actions: Any) -> dict[str, Any] | None:
    try:
        from .render.views import widget_for as view_for

        widget = view_for(obj, options=opts, actions=_actions(actions, obj))
        if widget is None:
            return None
        data = widget._repr_mimebundle_()
        if isinstance(data, tuple):  # anywidget returns (data, metadata)
            data = data[0]
    except Exception as exc:  # a broken widget stack must not hide the static views
        print(f"devknow: widgets unavailable ({type(exc).__name__}: {exc}); showing static output", file=sys.stderr)
        return None
    return data.get(WIDGET_MIME) if isinstance(data, dict) else None


def _guarded(build: Callable[[], Any], fallback: Callable[[], Any]) -> Any:
    try:
        return build()
    except Exception as exc:
        # A document the renderer chokes on should still show, as text, rather than as a formatter traceback.
        print(f"devknow: could not render ({type(exc).__name__}: {exc}); showing text", file=sys.stderr)
        return fallback()


def _fallback(text: str, mime: str) -> str:
    if mime == "text/markdown":
        from .render.markdown import fenced_source

        return fenced_source(text, "text")  # verbatim: a fence longer than any backtick run inside
    from .render.style import ROOT_CLASS, style_block

    return f'{style_block()}\n<div class="{ROOT_CLASS}"><pre>{html.escape(text)}</pre></div>'


def _wanted(include: Any, exclude: Any) -> Callable[[str], bool]:
    active = _active_types() if include is None else None

    def wanted(mime: str) -> bool:
        if include is not None and mime not in include:
            return False
        if exclude is not None and mime in exclude:
            return False
        # The terminal shell shows only text/plain: skip building HTML nobody sees.
        return active is None or mime in active

    return wanted


def _filter(bundle: dict[str, Any], include: Any, exclude: Any) -> dict[str, Any]:
    if include is not None:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude is not None:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _active_types() -> set[str] | None:
    shell = _shell()
    formatter = getattr(shell, "display_formatter", None)
    active = getattr(formatter, "active_types", None)
    if not active or "text/html" in active:
        return None
    return set(active)


def _in_kernel() -> bool:
    return getattr(_shell(), "kernel", None) is not None


@lru_cache(maxsize=1)
def _ipywidgets_installed() -> bool:
    return importlib.util.find_spec("ipywidgets") is not None


# -- notices ---------------------------------------------------------------------------------------------


def message_bundle(text: str, kind: str = "info") -> MimeBundle:
    """A short styled notice: ``text/plain`` and escaped ``text/html`` (kind: info, warning or error).

    Example: ``display(message_bundle("Quota used up; showing search results instead.", "warning"), raw=True)``.
    """
    if kind not in _MESSAGE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(_MESSAGE_KINDS)}, not {kind!r}")
    from .render.style import ROOT_CLASS, style_block

    role = "alert" if kind == "error" else "status"
    # `code` spans (commands, variables) show as code, not as backticks; the text is escaped first.
    body = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text)))
    return MimeBundle(
        {
            "text/plain": str(text),
            "text/html": f'{style_block()}\n<div class="{ROOT_CLASS} devknow-msg devknow-msg-{kind}" '
            f'role="{role}">{body}</div>',
        }
    )


def placeholder(text: str = "Searching…", *, spinner: bool = False) -> MimeBundle:
    """A muted "working on it" line to display with a ``display_id`` and replace when the result is ready.

    ``spinner``: lead the line with a spinning ring (``--background`` calls, which may take a while).

    Example::

        handle = display(placeholder("Searching…"), display_id=True)
        handle.update(results)
    """
    from .render.style import ROOT_CLASS, style_block

    ring = '<span class="devknow-spinner" aria-hidden="true"></span>' if spinner else ""
    # The plain line goes without the stylesheet (italic by its markup): it shows for a moment, once per call,
    # and is replaced. The spinning ring needs the stylesheet's animation.
    style = style_block() + "\n" if spinner else ""
    return MimeBundle(
        {
            "text/plain": str(text),
            "text/html": f'{style}<div class="{ROOT_CLASS} devknow-placeholder" role="status">'
            f"{ring}<em>{html.escape(str(text))}</em></div>",
        }
    )

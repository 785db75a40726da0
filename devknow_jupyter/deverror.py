"""``%deverror``: search the docs for the last exception raised in the kernel, and the opt-in docs button that
appears under a failed cell's traceback (``%devknow --on-error``).

A ``post_run_cell`` hook notes the query for each cell that raised (:func:`~.error_query.query_from_exception`:
the exception's type, message and libraries, never the user's paths). Only the query string is kept, not the
exception, whose traceback would hold every frame's variables alive. An exception raised before the extension
was loaded is read from ``sys.last_value``, where IPython leaves it.

The magics' own errors (a ``DevKnowError``, a ``UsageError``) and interrupts are not searched for: they are
already one line that says what to do.
"""

from __future__ import annotations

import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand, output_can_be_silenced
from IPython.core.magic_arguments import argument, magic_arguments

from .magics import (
    _display,
    _message,
    _parse,
    _Progress,
    _strip_silencing_semicolon,
    _variable_name,
    remove_magics,
)

__all__ = ["BUTTON_LABEL", "DevErrorMagics", "register", "unregister"]

#: The button's words under a failed cell's traceback.
BUTTON_LABEL = "Search the docs for this error"
# Not searched for: they are the magics' own short errors, or the user stopping a cell.
_OWN_OR_STOPPED = (UsageError, KeyboardInterrupt, SystemExit)


def _searchable(exc: BaseException | None) -> bool:
    if exc is None or isinstance(exc, _OWN_OR_STOPPED):
        return False
    from .errors import DevKnowError

    return not isinstance(exc, DevKnowError)


@magics_class
class DevErrorMagics(Magics):
    """``%deverror`` and the docs button under tracebacks, sharing the settings and client of ``owner`` (the
    :class:`~devknow_jupyter.magics.DevKnowMagics` loaded with it)."""

    def __init__(self, shell: Any, owner: Any) -> None:
        super().__init__(shell=shell)
        self.owner = owner
        self.last_query: str | None = None
        shell.events.register("post_run_cell", self._after_cell)

    def close(self) -> None:
        """Stop watching cells (the extension is being unloaded)."""
        try:
            self.shell.events.unregister("post_run_cell", self._after_cell)
        except ValueError:  # already unregistered
            pass

    # -- the hook -------------------------------------------------------------------------------

    def _after_cell(self, result: Any) -> None:
        exc = getattr(result, "error_in_exec", None)
        if not _searchable(exc):
            return
        from .error_query import query_from_exception

        try:
            self.last_query = query_from_exception(exc)
            if self.owner.on_error and self.last_query:
                self._offer_search(self.last_query)
        except Exception:  # a hook that fails would add its own traceback under the user's: offer nothing instead
            self.last_query = None

    def _offer_search(self, query: str) -> None:
        """One line under the traceback: a button that shows the hits in its place, or, where no widget can
        render, the magic to run."""
        from .display import widgets_available

        if not widgets_available():
            _display(_message(f"{BUTTON_LABEL}: run %deverror"))
            return
        import ipywidgets

        button = ipywidgets.Button(description=BUTTON_LABEL, icon="search", tooltip=query)
        handle = _display(button, display_id=True)

        def search(_button: Any) -> None:
            button.disabled = True
            try:
                results = self._search(query, None, None, refresh=False)
            except Exception as exc:  # a click has no cell to fail: say it in the button's place
                from .render.widgets import error_line

                handle.update(_message(error_line(exc), "error"), raw=True)
                return
            self.shell.user_ns["_deverror"] = results
            handle.update(results)

        button.on_click(search)

    # -- the magic ------------------------------------------------------------------------------

    def _search(self, query: str, source: str | None, limit: int | None, *, refresh: bool) -> Any:
        from .render import settings

        limit = settings.options.max_results if limit is None else limit
        results = self.owner.session.client().search_documents(
            query, source=source, page_size=limit, refresh=refresh
        )
        return results[:limit] if len(results) > limit else results

    def _last_query(self) -> str:
        if self.last_query:
            return self.last_query
        exc = getattr(sys, "last_value", None)  # raised before %load_ext, or where the hook could not see it
        if _searchable(exc):
            from .error_query import query_from_exception

            return query_from_exception(exc)
        raise UsageError("No exception to search for yet: run %deverror after a cell has raised one.")

    @magic_arguments()
    @argument(
        "-n",
        "--max-results",
        dest="n",
        type=int,
        metavar="N",
        help="Show at most N hits (default: DevKnowMagics.max_results).",
    )
    @argument("-o", "--out", metavar="VAR", help="Also store the hits in the variable VAR.")
    @argument("--source", metavar="DOMAIN", help="Only hits from this site, e.g. docs.python.org.")
    @argument("--refresh", action="store_true", help="Ask the server even when the result is cached.")
    @no_var_expand
    @output_can_be_silenced
    @line_magic
    def deverror(self, line: str) -> Any:
        """Search the documentation for the last exception raised in this kernel.

        The query is the exception's type and message and the libraries its traceback passed through
        (never your own files' paths or code): ``UnicodeDecodeError: 'charmap' codec can't decode byte
        ... litellm``. The hits show as with ``%devsearch``, are returned and stored in ``_deverror``
        (and in VAR with ``-o``); their header shows the query. The magics' own errors are not searched for.

        ``%devknow --on-error`` also puts a button under each failed cell's traceback that shows
        these hits in its place (off by default).

        Examples::

            %deverror
            %deverror -n 3 --source docs.python.org
        """
        args = _parse(self.deverror, _strip_silencing_semicolon(line))
        out = _variable_name(args.out, self.shell)
        if args.n is not None and args.n < 1:
            raise UsageError("-n must be at least 1.")
        query = self._last_query()
        with self.owner._interruptible(), _Progress(self.shell, "Searching…"):
            results = self._search(query, args.source, args.n, refresh=args.refresh)
            self.owner._store("_deverror", out, results)
        return results


def register(ipython: Any) -> None:
    """Add ``%deverror`` and its hook beside the loaded :class:`~devknow_jupyter.magics.DevKnowMagics`; a second
    call does nothing."""
    registry = ipython.magics_manager.registry
    if "DevErrorMagics" not in registry and "DevKnowMagics" in registry:
        magics = DevErrorMagics(ipython, registry["DevKnowMagics"])
        ipython.register_magics(magics)
        from .completion import install_options

        install_options(ipython, "%deverror", magics.deverror)


def unregister(ipython: Any) -> None:
    """Remove ``%deverror`` and its hook (``%unload_ext``)."""
    magics = ipython.magics_manager.registry.get("DevErrorMagics")
    if magics is not None:
        magics.close()
        remove_magics(ipython, magics)

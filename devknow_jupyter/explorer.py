"""The documentation explorer: one ipywidgets app to search, read and ask (``%devknow explore``).

::

    ┌ ◀ ▶ [site filter] [search box ……………………………………] [Search] ┐
    │ status line: spinner while a request runs, notices, errors (one line) │
    ├ hits (one button per hit) ┬ title · link · contents · rendered page ─┤
    │                           │ (or the answer, with its references)     │
    └ [ask box ……………………………………………………………………………………………………] [Ask] ┘

Keyboard (checked in JupyterLab 4 with headless Chromium):

* **Enter in the search box searches**; Enter in the site filter does too, Enter in the ask box asks
  (the text fields' "submit" event; the Search and Ask buttons are for the mouse and are skipped by Tab).
* **With the pointer over the hits, ArrowDown / ArrowUp move the highlight, Enter (or Space) opens
  the highlighted hit.** Home / End go to the first / last hit; ArrowDown with nothing highlighted
  starts at the first, ArrowUp at the last; the ends stop (no wrap). Moving makes no request: the
  status line previews the hit ("Hit 2 of 10: title — site · Enter opens it"), because opening on
  every arrow press would cost a request and a history visit per hit passed over. The references of
  an answer take the same keys. A dashed ring shows which list has the keys.
* **Tab from the search box goes to the first hit, Tab / Shift+Tab move between hits, Enter (or
  Space) opens the focused hit.** The hits are real buttons, so this works in every frontend; the open
  hit stays highlighted. After the hits, Tab reaches the page's contents links, its references and
  the ask box. (With the pointer over the hits, Tab / Shift+Tab step the highlight instead.)

Why the pointer: ipywidgets has no keyboard events, and in a JupyterLab notebook ArrowUp/ArrowDown on
a focused output element that is not a text field (a ``Select``, ``RadioButtons``, a button) run the
notebook's "select the cell above/below" shortcut, so focus jumps to another cell. The arrow keys come
from `ipyevents <https://github.com/mwcraig/ipyevents>`_ (an ``Event`` widget watching ``keydown`` on the
hit column): it listens while the pointer is over the column, focuses it, and takes *every* key there
in the capture phase (stopPropagation + preventDefault), before JupyterLab's shortcuts, which listen in
the bubble phase; moving the pointer away gives the keys back. So arrows need the pointer over the
list (a keyboard-only user, pointer elsewhere, has Tab / Enter), and typing elsewhere needs the pointer
elsewhere. Where ipyevents' frontend is missing (tested: JupyterLab with its labextension disabled;
likewise any frontend that cannot load the module, e.g. VS Code without CDN access or Colab without
custom widgets) the ``Event`` models are never made (the widget manager logs a console error for each,
nothing shows in the notebook) and everything else works as above; without the Python package there
are no ``Event`` widgets at all.

Requests run on worker threads: the notebook stays free, the app shows a spinner for the request in
flight and stays usable (back/forward, other hits); the newest action wins and an older reply that
arrives later is dropped (its result is still cached). Errors show in the status line, in one line.

Every visit (search, document, answer) is an entry of the back/forward history, kept with its
result: going back or forward makes no request. In IPython the visits are also appended to
``_devknow_history`` in the user's namespace (a :class:`History`, capped at 100 entries), and a new
explorer in the same kernel starts with that history, so Back returns to earlier visits.

Displayed, an :class:`Explorer` is the widget plus a static twin (text/plain, text/markdown and
sanitized text/html of the hits and page shown at display time) for saved notebooks, nbviewer and
frontends without widgets.
"""

from __future__ import annotations

import html
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from .client import QUOTA_FALLBACK_NOTICE
from .errors import DevKnowError, redact
from .models import Answer, Document, ResultInfo, SearchResults, name_to_uri

if TYPE_CHECKING:
    import ipywidgets

    from .client import DevKnowClient

__all__ = ["HISTORY_LIMIT", "HISTORY_VARIABLE", "Explorer", "History", "HistoryEntry", "explore"]

#: The name of the visit history in the IPython user namespace.
HISTORY_VARIABLE = "_devknow_history"
#: How many visits the history keeps (oldest dropped first).
HISTORY_LIMIT = 100
#: At most this many hits get a button (a bounded number of widgets keeps the frontend quick).
MAX_HITS = 20
# What a key does in a hit list (with the pointer over it): a step, or "first"/"last"/"open".
_LIST_KEYS: dict[str, int | str] = {
    "ArrowDown": 1,
    "ArrowUp": -1,
    "Tab": 1,  # ipyevents stops every key over the list, so Tab would do nothing; it steps like ArrowDown
    "Home": "first",
    "End": "last",
    "Enter": "open",
    " ": "open",
}

_CSS = """
.devknow-explorer { width: 100%; box-sizing: border-box; }
.devknow-explorer .dkx-status { white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
  min-height: 1.6em; color: var(--jp-content-font-color2, inherit); font-size: 0.92em; }
.devknow-explorer .dkx-error { color: var(--jp-error-color1, #d0393e); }
.devknow-explorer .dkx-warn { color: var(--jp-warn-color1, #b07a10); }
.devknow-explorer .dkx-hint { color: var(--jp-content-font-color2, inherit); }
.devknow-explorer .dkx-spin { display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.45em;
  vertical-align: -0.1em; border: 2px solid var(--jp-border-color2, rgba(128, 128, 128, 0.35));
  border-top-color: var(--jp-brand-color1, #2f8fc4); border-radius: 50%; animation: dkx-spin 0.8s linear infinite; }
@keyframes dkx-spin { to { transform: rotate(360deg); } }
.devknow-explorer .dkx-hits .widget-toggle-buttons, .devknow-explorer .dkx-refs .widget-toggle-buttons {
  width: 100%; }
.devknow-explorer .dkx-hits .widget-toggle-buttons > div, .devknow-explorer .dkx-refs .widget-toggle-buttons > div {
  display: flex; flex-direction: column; width: 100%; }
.devknow-explorer .dkx-hits button.widget-toggle-button, .devknow-explorer .dkx-refs button.widget-toggle-button {
  width: 100% !important; height: auto; min-height: var(--jp-widgets-inline-height, 28px); margin: 0 0 3px 0;
  padding: 4px 8px; white-space: normal; text-align: left; line-height: 1.3; overflow-wrap: break-word; }
.devknow-explorer .dkx-hits button.widget-toggle-button:focus-visible,
.devknow-explorer .dkx-refs button.widget-toggle-button:focus-visible {
  outline: 2px solid var(--jp-brand-color1, #2f8fc4); outline-offset: -2px; }
/* ipyevents marks the list that takes the keys (pointer over it); ring it so the user sees where keys go. */
.devknow-explorer .dkx-hits.ipyevents-watched, .devknow-explorer .dkx-refs.ipyevents-watched {
  outline: 1px dashed var(--jp-brand-color1, #2f8fc4); outline-offset: 2px; }
.devknow-explorer .dkx-page { max-height: 70vh; overflow: auto; padding-right: 0.5em; }
.devknow-explorer .widget-html-content { min-width: 0; }
.devknow-explorer .dkx-empty { color: var(--jp-content-font-color2, inherit); font-style: italic; }
""".strip()


#: After Enter in the search box, a value update arriving this soon is the text typed before Enter.
SUBMIT_SETTLE_SECONDS = 2.0


class HistoryEntry(NamedTuple):
    """One visit: ``kind`` ("search", "document" or "answer"), ``key`` (the query, or the document
    name) and the ``result`` shown (:class:`SearchResults`, :class:`Document` or :class:`Answer`).

    ``source`` is the site filter of a search; ``notice`` a line shown with it (e.g. the quota fallback).
    """

    kind: str
    key: str
    result: Any
    source: str | None = None
    notice: str | None = None

    @property
    def query(self) -> str | None:
        """The query of a search or the question of an answer (None for a document)."""
        return None if self.kind == "document" else self.key

    @property
    def name(self) -> str | None:
        """The document name of a document visit (None otherwise)."""
        return self.key if self.kind == "document" else None

    def same_place(self, other: HistoryEntry | None) -> bool:
        """True when ``other`` visits the same thing (kind, key and filter)."""
        return other is not None and (self.kind, self.key, self.source) == (other.kind, other.key, other.source)

    def label(self) -> str:
        """A short description, e.g. ``search: create a bucket``."""
        return f"{self.kind}: {self.key}" + (f" (site {self.source})" if self.source else "")


class History(list):
    """The visits of the explorers in this kernel, oldest first: a plain list of :class:`HistoryEntry`."""

    limit = HISTORY_LIMIT

    def record(self, entry: HistoryEntry) -> None:
        """Append ``entry``, dropping the oldest visits beyond :attr:`limit`."""
        self.append(entry)
        if len(self) > self.limit:
            del self[: len(self) - self.limit]

    def __repr__(self) -> str:
        shown = ", ".join(entry.label() for entry in self[-3:])
        return f"<History {len(self)} visit{'s' if len(self) != 1 else ''}{': … ' + shown if self else ''}>"


def explore(query: str | None = None, client: DevKnowClient | None = None, *, source: str | None = None) -> Explorer:
    """Open the documentation explorer, optionally with a first search.

    Args:
        query: Search this at once (the search runs before the explorer is shown, so its static twin
            holds the hits). Errors show in the explorer, not as an exception.
        client: The :class:`~devknow_jupyter.DevKnowClient` to use. Default: the kernel's shared client
            when the extension is loaded (``%load_ext devknow_jupyter``), else a new one.
        source: Only hits from this site (e.g. ``"firebase.google.com"``), like ``%devsearch --source``.

    Returns:
        The :class:`Explorer`; it displays itself as the cell's output.

    Keyboard: Enter in the search box searches. With the pointer over the hits, ArrowDown / ArrowUp
    move the highlight (no request; the status line previews the hit) and Enter opens it; Tab from the
    search box reaches the hits, Tab / Shift+Tab move between them and Enter opens the focused one,
    in every frontend. Arrow keys come from ipyevents; without its frontend, Tab / Enter remain.
    """
    explorer = Explorer(client if client is not None else _default_client(), source=source)
    if query and query.strip():
        explorer.search(query, source=source, wait=True)
    return explorer


class Explorer:
    """Search, read and ask the documentation in one widget (see the module docstring for the keyboard).

    The parts are public attributes, so the app can be scripted or rearranged: ``search_box``,
    ``source_box``, ``search_button``, ``back_button``, ``forward_button``, ``status``, ``hits``
    (a vertical ``ToggleButtons``), ``title``, ``toc``, ``page``, ``references``, ``more_button``,
    ``ask_box``, ``ask_button`` and ``widget`` (the whole app, a ``VBox``). ``hit_keys`` and
    ``reference_keys`` are the ipyevents ``Event`` widgets that bring the keys pressed over the hit
    column and over the references (None when ipyevents is not installed).

    Args:
        client: The client every request goes through (its cache makes repeated visits free).
        source: The site filter to start with.
        namespace: Where to keep ``_devknow_history``; default: the IPython user namespace when running
            in IPython, else nowhere (the explorer keeps its own history either way).
    """

    def __init__(
        self, client: DevKnowClient, *, source: str | None = None, namespace: dict[str, Any] | None = None
    ) -> None:
        import ipywidgets as w

        self.client = client
        self.last_error: BaseException | None = None
        self._lock = threading.RLock()
        self._ticket = 0  # the newest navigation; replies for older ones are dropped
        self._futures: set[Future] = set()
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False
        # Set (per thread) while the app itself changes a widget, so observers know it was not the user.
        self._quiet = threading.local()
        self._pending: tuple[str, str] | None = None  # what the newest request in flight is for
        self._hits_result: SearchResults | None = None
        self._refs: list[str] = []
        self._domains: list[str] = []
        self._shown: HistoryEntry | None = None

        self.kernel_history = _kernel_history(namespace)
        self._stack: list[HistoryEntry] = list(self.kernel_history[-HISTORY_LIMIT:])
        self._position = len(self._stack) - 1

        self.back_button = w.Button(icon="arrow-left", tooltip="Back", layout=w.Layout(width="36px"))
        self.forward_button = w.Button(icon="arrow-right", tooltip="Forward", layout=w.Layout(width="36px"))
        self.source_box = w.Combobox(
            value=source or "",
            placeholder="all sites",
            options=[],
            ensure_option=False,
            tooltip="Only hits from this site, e.g. firebase.google.com (Enter searches)",
            layout=w.Layout(width="190px", flex="0 0 auto"),
        )
        # continuous_update keeps the kernel's copy current, so Enter ("submit") searches what was typed.
        self.search_box = w.Text(
            placeholder="Search the documentation, press Enter",
            continuous_update=True,
            layout=w.Layout(flex="1 1 auto", width="auto", min_width="8em"),
        )
        # Not a Tab stop (Enter in the box searches): Tab goes from the search box straight to the hits.
        self.search_button = w.Button(
            description="Search", icon="search", tabbable=False, layout=w.Layout(width="auto")
        )
        self.status = w.HTML(layout=w.Layout(width="100%", overflow="hidden"))
        self.hits_header = w.HTML()
        self.hits = w.ToggleButtons(
            options=[], index=None, style={"button_width": "100%"}, layout=w.Layout(width="100%")
        )
        self.title = w.HTML()
        self.toc = w.HTML()
        self.page = w.HTML(layout=w.Layout(width="100%"))
        self.more_button = w.Button(
            description="Show the whole page", icon="expand", layout=w.Layout(width="auto", display="none")
        )
        self.references = w.ToggleButtons(
            options=[], index=None, style={"button_width": "100%"}, layout=w.Layout(width="100%", display="none")
        )
        self.ask_box = w.Text(
            placeholder="Ask a question (empty: the search above), press Enter",
            continuous_update=True,
            layout=w.Layout(flex="1 1 auto", width="auto", min_width="8em"),
        )
        self.ask_button = w.Button(description="Ask", icon="comment", tabbable=False, layout=w.Layout(width="auto"))

        left = w.VBox(
            [self.hits_header, self.hits],
            layout=w.Layout(flex="0 1 32%", min_width="220px", max_width="100%", padding="0 10px 0 0"),
        )
        left.add_class("dkx-hits")
        refs = w.VBox([self.references])
        refs.add_class("dkx-refs")
        right = w.VBox(
            [self.title, self.toc, self.page, self.more_button, refs],
            layout=w.Layout(flex="1 1 420px", min_width="0", max_width="100%"),
        )
        right.add_class("dkx-doc")
        # The filter sits before the search box so that Tab goes search box → Search → first hit.
        toolbar = w.HBox(
            [self.back_button, self.forward_button, self.source_box, self.search_box, self.search_button],
            layout=w.Layout(width="100%", align_items="center"),
        )
        body = w.HBox([left, right], layout=w.Layout(width="100%", flex_flow="row wrap", align_items="flex-start"))
        ask = w.HBox([self.ask_box, self.ask_button], layout=w.Layout(width="100%", align_items="center"))
        style = w.HTML(f"<style>{_CSS}</style>{_style_block()}", layout=w.Layout(height="0px", margin="0"))
        self.widget = w.VBox([style, toolbar, self.status, body, ask], layout=w.Layout(width="100%"))
        self.widget.add_class("devknow-explorer")
        # Stable class names for styling, and for tests that find the parts in a browser.
        for part, name in (
            (self.status, "dkx-status-box"),
            (self.back_button, "dkx-back"),
            (self.forward_button, "dkx-forward"),
            (self.source_box, "dkx-source"),
            (self.search_box, "dkx-search"),
            (self.search_button, "dkx-search-button"),
            (self.hits, "dkx-hit-list"),
            (self.title, "dkx-title"),
            (self.toc, "dkx-toc"),
            (self.page, "dkx-page-box"),
            (self.references, "dkx-reference-list"),
            (self.ask_box, "dkx-ask"),
            (self.ask_button, "dkx-ask-button"),
        ):
            part.add_class(name)

        self.search_box.on_msg(self._guard(self._on_search_submit))
        self.source_box.on_msg(self._guard(self._on_search_submit))
        self._submitted_at: float | None = None
        self.search_box.observe(self._guard(self._on_search_value_after_submit), names=["value"])
        self.source_box.observe(self._guard(self._on_search_value_after_submit), names=["value"])
        self.search_button.on_click(self._guard(lambda _button: self.search()))
        self.ask_box.on_msg(self._guard(self._on_ask_submit))
        self.ask_button.on_click(self._guard(lambda _button: self.ask()))
        # Arrow keys: only through ipyevents (see the module docstring); None where it is not installed.
        self.hit_keys = self._list_keys(left, self.hits, self.open, "Hit")
        self.reference_keys = self._list_keys(refs, self.references, lambda i: self.open(self._refs[i]), "Reference")
        self.back_button.on_click(self._guard(lambda _button: self.back()))
        self.forward_button.on_click(self._guard(lambda _button: self.forward()))
        self.more_button.on_click(self._guard(lambda _button: self._show_whole_page()))
        self.hits.observe(self._guard(self._on_hit_index), names=["index"])
        self.hits.on_msg(self._guard(self._on_hit_click))
        self.references.observe(self._guard(self._on_reference_index), names=["index"])
        self.references.on_msg(self._guard(self._on_reference_click))

        if self._stack:
            self._show(self._position)
            self._say_result(self._stack[self._position], None)
        else:
            self._show_welcome()
        self._update_buttons()

    # -- public actions ---------------------------------------------------------------------------------

    def search(self, query: str | None = None, *, source: str | None = None, wait: bool = False) -> None:
        """Search ``query`` (default: the search box) with the site filter (default: the filter box).

        The request runs on a worker thread unless ``wait``; the hits replace the list and the right
        pane shows them as passages until a hit is opened.
        """
        if query is None:
            query = self.search_box.value
        else:
            self._set_quietly(self.search_box, query)
        if source is None:
            source = self.source_box.value
        else:
            self._set_quietly(self.source_box, source)
        query, source = " ".join(str(query).split()), (source or "").strip() or None
        if not query:
            self._say("Type what to look for, then press Enter.", "hint")
            return

        def job() -> Callable[[], None]:
            results = self.client.search_documents(query, source=source)
            return lambda: self._visit(HistoryEntry("search", query, results, source, _notices(results)))

        self._run(("search", f"{query}\0{source}"), f"Searching “{query}”…", job, wait=wait)

    def open(self, target: Any, *, wait: bool = False) -> None:
        """Open a document: a hit number (0-based) of the list, a hit, a document name or a page URL."""
        if isinstance(target, int):
            results = self._hits_result
            if results is None or not 0 <= target < min(len(results), MAX_HITS):
                self._say(f"There is no hit number {target + 1}.", "hint")
                return
            target = results[target]
        from .names import normalize_names

        names = normalize_names(target)
        if len(names) != 1:
            self._say("Open one document at a time.", "hint")
            return
        name = names[0]
        if self._shown is not None and self._shown.name == name and self._pending is None:
            self._highlight_hit(name)
            return  # already shown

        def job() -> Callable[[], None]:
            documents = self.client.get_documents([name])
            return lambda: self._visit(HistoryEntry("document", name, documents[0]), documents.info)

        self._run(("document", name), f"Opening {name_to_uri(name)}…", job, wait=wait)

    def ask(self, question: str | None = None, *, wait: bool = False) -> None:
        """Ask ``question`` (default: the ask box, else the current search) with ``answer_query``.

        When the answer quota is used up, the question is searched instead, with a one-line notice,
        as ``%%devask`` does.
        """
        if question is None:
            question = self.ask_box.value.strip() or self.search_box.value
        else:
            self._set_quietly(self.ask_box, question)
        question = " ".join(str(question).split())
        if not question:
            self._say("Type a question in the ask box (or a search above), then press Enter.", "hint")
            return

        def job() -> Callable[[], None]:
            result = self.client.ask(question)  # search results with a notice when the quota is used up
            if isinstance(result, Answer):
                return lambda: self._visit(HistoryEntry("answer", question, result, None, _notices(result)))
            return lambda: self._visit(HistoryEntry("search", question, result, None, QUOTA_FALLBACK_NOTICE))

        self._run(("answer", question), f"Asking “{question}”…", job, wait=wait)

    def back(self) -> None:
        """Show the previous visit (no request)."""
        self._step(-1)

    def forward(self) -> None:
        """Show the next visit after going back (no request)."""
        self._step(+1)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the requests in flight are done (for scripts and tests). False on timeout."""
        with self._lock:
            pending = list(self._futures)
        if not pending:
            return True
        _done, not_done = wait_futures(pending, timeout=timeout)
        return not not_done

    def close(self) -> None:
        """Stop the worker threads and close the widgets (the client stays open)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        for keys in (self.hit_keys, self.reference_keys):
            if keys is not None:
                keys.close()
        _close_tree(self.widget)

    @property
    def history(self) -> list[HistoryEntry]:
        """This explorer's back/forward list (a copy), oldest first."""
        with self._lock:
            return list(self._stack)

    @property
    def position(self) -> int:
        """The index in :attr:`history` of the visit shown (-1 before the first)."""
        return self._position

    @property
    def current(self) -> HistoryEntry | None:
        """The visit shown, or None."""
        return self._shown

    @property
    def busy(self) -> bool:
        """True while a request started by the app is in flight."""
        with self._lock:
            return any(not future.done() for future in self._futures)

    # -- display ----------------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget beside a static twin: text/plain, text/markdown and sanitized text/html of the
        hits and the page shown now. Frontends without the widget manager (nbviewer, GitHub, untrusted
        notebooks, consoles) show the twin; ``display.options.widgets = False`` leaves the widget out."""
        from .display import WIDGET_MIME, widgets_available

        def wanted(mime: str) -> bool:
            return (include is None or mime in include) and not (exclude and mime in exclude)

        bundle: dict[str, Any] = {}
        if wanted(WIDGET_MIME) and widgets_available():
            view = (self.widget._repr_mimebundle_() or {}).get(WIDGET_MIME)
            if view is not None:
                bundle[WIDGET_MIME] = view
        for mime, build in (
            ("text/plain", self._static_text),
            ("text/markdown", self._static_markdown),
            ("text/html", self._static_html),
        ):
            if wanted(mime):
                bundle[mime] = build()
        return bundle

    def __repr__(self) -> str:
        shown = self._shown.label() if self._shown else "nothing shown"
        return f"<Explorer {shown}; {len(self._stack)} visit(s); endpoint={self.client.endpoint!r}>"

    def _static_parts(self) -> list[Any]:
        parts: list[Any] = []
        if self._hits_result is not None:
            parts.append(self._hits_result[:MAX_HITS])
        if self._shown is not None and self._shown.kind != "search":
            parts.append(self._shown.result)
        return parts

    def _static_text(self) -> str:
        lines = [repr(self)]
        for part in self._static_parts():
            lines.append(_bundle(part).get("text/plain", ""))
        return "\n\n".join(line for line in lines if line)

    def _static_markdown(self) -> str:
        chunks = [_bundle(part).get("text/markdown", "") for part in self._static_parts()]
        chunks = [chunk for chunk in chunks if chunk]
        return "\n\n---\n\n".join(chunks) or "*The documentation explorer (open it in a live notebook).*"

    def _static_html(self) -> str:
        chunks = [_bundle(part).get("text/html", "") for part in self._static_parts()]
        chunks = [chunk for chunk in chunks if chunk]
        if not chunks:
            return f'<div class="devknow"><p class="devknow-placeholder">{html.escape(repr(self))}</p></div>'
        return "\n<hr>\n".join(chunks)

    # -- callbacks (each is wrapped by _guard: errors land in the status line) ---------------------------

    def _guard(self, callback: Callable[..., None]) -> Callable[..., None]:
        def guarded(*args: Any) -> None:
            try:
                callback(*args)
            except BaseException as exc:  # shown to the user, never lost in the log
                self._fail(exc)

        return guarded

    def _on_search_submit(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "submit":
            self._submitted_at = time.monotonic()
            self.search()

    def _on_search_value_after_submit(self, change: dict[str, Any]) -> None:
        # The frontend sends "submit" at once but holds back value updates while the kernel is busy
        # (ipywidgets' message throttling), so what was typed before Enter can arrive just after it.
        # A value landing right after Enter is that text: search again with it (the newest search wins).
        if self._is_quiet() or self._submitted_at is None:
            return
        if time.monotonic() - self._submitted_at < SUBMIT_SETTLE_SECONDS:
            self.search()

    def _on_ask_submit(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "submit":
            self.ask()

    # A click (or Enter/Space) on a hit sets the index, then sends a "click" message: the index only
    # changes for another hit, the message also comes for the highlighted one. open() ignores the
    # second call for the same document, so each click opens once.

    def _on_hit_index(self, change: dict[str, Any]) -> None:
        if not self._is_quiet() and change["new"] is not None:
            self.open(int(change["new"]))

    def _on_hit_click(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "click" and self.hits.index is not None:
            self.open(int(self.hits.index))

    def _on_reference_index(self, change: dict[str, Any]) -> None:
        if not self._is_quiet() and change["new"] is not None:
            self.open(self._refs[int(change["new"])])

    def _on_reference_click(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "click" and self.references.index is not None:
            self.open(self._refs[int(self.references.index)])

    # -- keys over a list (ipyevents) ---------------------------------------------------------------------

    def _list_keys(
        self, panel: ipywidgets.DOMWidget, toggle: ipywidgets.ToggleButtons, opener: Callable[[int], None], noun: str
    ) -> Any:
        """An ipyevents ``Event`` sending the keydowns over ``panel`` to :meth:`_on_list_key`; None without it.

        ipyevents listens while the pointer is over ``panel``: it focuses the panel and takes every
        keydown in the capture phase (stopPropagation + preventDefault), so JupyterLab's notebook
        shortcuts, which listen in the bubble phase, never see the arrows. Where the frontend lacks
        ipyevents (no labextension, VS Code without its CDN, Colab), the model just never listens.
        """
        try:
            from ipyevents import Event
        except ImportError:  # an install without it: Tab/Enter on the hit buttons still work
            return None
        keys = Event(source=panel, watched_events=["keydown"])
        keys.on_dom_event(self._guard(lambda message: self._on_list_key(toggle, opener, noun, message)))
        return keys

    def _on_list_key(
        self, toggle: ipywidgets.ToggleButtons, opener: Callable[[int], None], noun: str, message: dict[str, Any]
    ) -> None:
        """A keydown over a list: arrows (and Tab, Home, End) move its highlight, Enter or Space opens it.

        Moving makes no request (a document per arrow press would cost a request and a visit each);
        the status line previews the highlighted entry instead.
        """
        if message.get("type") != "keydown" or any(message.get(mod) for mod in ("ctrlKey", "altKey", "metaKey")):
            return
        action = _LIST_KEYS.get(str(message.get("key")))
        count = len(toggle.options)
        if action is None or not count:
            return
        with self._lock:
            current = toggle.index
            if action == "open":
                if current is not None:
                    opener(int(current))
                return
            if message.get("key") == "Tab" and message.get("shiftKey"):
                action = -1
            if action == "first":
                target = 0
            elif action == "last":
                target = count - 1
            elif current is None:
                target = 0 if action > 0 else count - 1
            else:
                target = min(max(int(current) + int(action), 0), count - 1)
            if target == current:
                return
            self._set_quietly(toggle, target, trait="index")
            if self._pending is None:  # keep the spinner line of a request in flight
                label = _one_line(toggle.options[target][0].split(". ", 1)[-1], 160)
                self._say(f"{noun} {target + 1} of {count}: {label} · Enter opens it", "hint")

    # -- requests ----------------------------------------------------------------------------------------

    def _run(self, key: tuple[str, str], label: str, job: Callable[[], Callable[[], None]], *, wait: bool) -> None:
        """Run ``job`` (the request) off the kernel thread; apply what it returns if still the newest.

        ``key`` names what is asked for: asking again for what the newest request in flight asks for
        does nothing (a double click, a second Enter).
        """
        with self._lock:
            if self._closed:
                raise RuntimeError("This explorer is closed.")
            if self._pending == key:
                return
            self._ticket += 1
            ticket = self._ticket
            self._pending = key
        self._say(label, "busy")

        def work() -> None:
            try:
                apply = job()
            except BaseException as exc:  # reported in the app
                with self._lock:
                    if ticket == self._ticket:
                        self._pending = None
                        self._fail(exc)
                return
            with self._lock:
                if ticket == self._ticket:
                    self._pending = None
                    try:
                        apply()
                    except BaseException as exc:
                        self._fail(exc)

        if wait:
            work()
            return
        future = self._executor().submit(work)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._futures.discard(future)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(2, thread_name_prefix="devknow-explorer")
            return self._pool

    # -- history -----------------------------------------------------------------------------------------

    def _visit(self, entry: HistoryEntry, info: ResultInfo | None = None) -> None:
        with self._lock:
            current = self._stack[self._position] if self._position >= 0 else None
            if entry.same_place(current):
                self._stack[self._position] = entry  # e.g. the same search again: no new visit
            else:
                del self._stack[self._position + 1 :]
                self._stack.append(entry)
                if len(self._stack) > HISTORY_LIMIT:
                    del self._stack[: len(self._stack) - HISTORY_LIMIT]
                self._position = len(self._stack) - 1
                self.kernel_history.record(entry)
            self._show(self._position)
            self._update_buttons()
            self._say_result(entry, info or getattr(entry.result, "info", None))

    def _step(self, delta: int) -> None:
        with self._lock:
            target = self._position + delta
            if not 0 <= target < len(self._stack):
                self._say("Nothing further back." if delta < 0 else "Nothing further forward.", "hint")
                return
            self._ticket += 1  # a request still in flight must not replace what is shown now
            self._pending = None
            self._position = target
            self._show(target)
            self._update_buttons()
            self._say_result(entry=self._stack[target], info=None)

    def _update_buttons(self) -> None:
        self.back_button.disabled = self._position <= 0
        self.forward_button.disabled = self._position >= len(self._stack) - 1

    # -- showing -----------------------------------------------------------------------------------------

    def _show(self, position: int) -> None:
        entry = self._stack[position]
        self._shown = entry
        if entry.kind == "search":
            self._set_hits(entry.result)
            self._set_quietly(self.search_box, entry.key)
            self._set_quietly(self.source_box, entry.source or "")
            self._show_passages(entry.result)
        else:
            # A document or answer keeps the hits of the search it came from beside it.
            context = self._search_before(position)
            if context is not None and context.result is not self._hits_result:
                self._set_hits(context.result)
            if entry.kind == "document":
                self._show_document(entry.result)
            else:
                self._show_answer(entry.result)

    def _search_before(self, position: int) -> HistoryEntry | None:
        for entry in reversed(self._stack[: position + 1]):
            if entry.kind == "search":
                return entry
        return None

    def _set_hits(self, results: SearchResults) -> None:
        shown = results[:MAX_HITS]
        labels, tips = [], []
        for number, hit in enumerate(shown, 1):
            host = _host(hit.uri)
            labels.append((f"{number}. {_one_line(hit.title, 90)} — {host}", number - 1))
            tips.append(f"{hit.title}\n{hit.uri}")
        for hit in shown:
            host = _host(hit.uri).lower()
            if host and host not in self._domains:
                self._domains.append(host)
        with self._quietly():
            self.hits.index = None
            self.hits.options = labels
            self.hits.tooltips = tips
            self.hits.index = None
            self.source_box.options = sorted(self._domains)
        self._hits_result = results
        more = f'<div class="devknow-meta">The first {MAX_HITS} of {len(results)} hits have buttons.</div>'
        self.hits_header.value = _root(_static().hits_header_html(results) + (more if len(results) > MAX_HITS else ""))

    def _highlight_hit(self, name: str | None) -> None:
        index = None
        if name and self._hits_result is not None:
            hits = self._hits_result[:MAX_HITS]
            selected = self.hits.index
            if selected is not None and selected < len(hits) and hits[selected].parent == name:
                index = selected  # several hits of one page: keep the one the user picked
            else:
                index = next((number for number, hit in enumerate(hits) if hit.parent == name), None)
        self._set_quietly(self.hits, index, trait="index")

    def _show_welcome(self) -> None:
        self.hits_header.value = _root('<div class="devknow-header">No search yet.</div>')
        self.title.value = ""
        self.toc.value = ""
        self.page.value = _root(
            "Type a search above and press Enter. With the pointer over the hits, ↑ and ↓ move and Enter opens;"
            " Tab also reaches them. Ask a question below.",
            "dkx-empty",
        )
        self._hide_references()
        self.more_button.layout.display = "none"

    def _show_passages(self, results: SearchResults) -> None:
        self._highlight_hit(None)
        self.title.value = ""
        self.toc.value = ""
        passages = "".join(
            f'<div class="devknow-hit">{_static().hit_html(hit, i, max_chars=_page_chars())}</div>'
            for i, hit in enumerate(results[:MAX_HITS], 1)
        )
        self.page.value = _root(passages, "dkx-page")
        self._hide_references()
        self.more_button.layout.display = "none"

    def _show_document(self, document: Document, *, whole: bool = False) -> None:
        from .render.markdown import render_markdown, toc_html

        views = _static()
        limit = None if whole else _page_chars()
        self._highlight_hit(document.name)
        self.title.value = _root(views.document_header_html(document))
        # The contents sit above the scrolling page so they stay in reach; links are #heading-id anchors.
        toc = render_markdown(document.content, base_url=document.uri, max_chars=limit).toc
        self.toc.value = _root(toc_html(toc).replace("<details", "<details open", 1)) if toc else ""
        body, truncated = views.document_body_html(document, max_chars=limit, toc_min_headings=0, static=False)
        self.page.value = _root(body, "dkx-page")
        self.more_button.layout.display = "" if truncated else "none"
        self._hide_references()

    def _show_whole_page(self) -> None:
        if self._shown is not None and self._shown.kind == "document":
            self._show_document(self._shown.result, whole=True)

    def _show_answer(self, answer: Answer) -> None:
        views = _static()
        self._highlight_hit(None)
        self.title.value = _root(views.answer_header_html(answer))
        self.toc.value = ""
        refs = list(dict.fromkeys(answer.references))
        heading = '<div class="devknow-refs">References (Tab to one, Enter opens it)</div>' if refs else ""
        self.page.value = _root(views.answer_text_html(answer, max_chars=_page_chars()) + heading, "dkx-page")
        self.more_button.layout.display = "none"
        self._refs = refs
        with self._quietly():
            self.references.index = None
            self.references.options = [(f"{i}. {name_to_uri(ref)}", i - 1) for i, ref in enumerate(refs, 1)]
            self.references.tooltips = [f"{name_to_uri(ref)}\n{ref}" for ref in refs]
            self.references.index = None
        self.references.layout.display = "" if refs else "none"

    def _hide_references(self) -> None:
        self._refs = []
        with self._quietly():
            self.references.index = None
            self.references.options = []
        self.references.layout.display = "none"

    # -- status line -------------------------------------------------------------------------------------

    def _say_result(self, entry: HistoryEntry, info: ResultInfo | None) -> None:
        """The status line after showing ``entry``: what it is, and the request's time (None: no request)."""
        result = entry.result
        if entry.notice:
            self._say(entry.notice, "warn")
            return
        if entry.kind == "search":
            text = f"{len(result)} hit{'s' if len(result) != 1 else ''} for “{entry.key}”"
            if entry.source:
                text += f" on {entry.source}"
        elif entry.kind == "document":
            text = f"{result.title or result.name}"
        else:
            text = f"Answer to “{entry.key}” ({len(result.references)} reference(s))"
        if info is None:
            text += " · from history, no request"
        else:
            text += "".join(f" · {part}" for part in _static().info_summary(info))
        self._say(text, "ok")

    def _say(self, text: str, kind: str = "ok") -> None:
        """Put one line in the status bar: ``busy`` (with spinner), ``ok``, ``hint``, ``warn`` or ``error``."""
        line = html.escape(_one_line(text, 400))
        if kind == "busy":
            content = f'<span class="dkx-spin" role="progressbar" aria-label="working"></span>{line}'
        elif kind in ("error", "warn", "hint"):
            content = f'<span class="dkx-{kind}">{line}</span>'
        else:
            content = line
        self.status.value = f'<div class="dkx-status" title="{html.escape(text, quote=True)}">{content}</div>'

    def _fail(self, exc: BaseException) -> None:
        self.last_error = exc
        if isinstance(exc, DevKnowError):
            message, _, hint = exc.short_message().partition("\n")
            self.status.value = (
                f'<div class="dkx-status" title="{html.escape(exc.short_message(), quote=True)}">'
                f'<span class="dkx-error">{html.escape(message)}</span>'
                + (f' <span class="dkx-hint">— {html.escape(hint.strip())}</span>' if hint.strip() else "")
                + "</div>"
            )
        elif isinstance(exc, KeyboardInterrupt):
            self._say("Interrupted.", "warn")
        else:
            # A bug, not an expected error: say so in one line and keep the traceback for `last_error`.
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._say(redact(f"Unexpected error: {detail}"), "error")

    # -- small helpers -----------------------------------------------------------------------------------

    def _set_quietly(self, widget: ipywidgets.Widget, value: Any, *, trait: str = "value") -> None:
        with self._quietly():
            setattr(widget, trait, value)

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        depth = getattr(self._quiet, "depth", 0)
        self._quiet.depth = depth + 1
        try:
            yield
        finally:
            self._quiet.depth = depth

    def _is_quiet(self) -> bool:
        return getattr(self._quiet, "depth", 0) > 0


def _kernel_history(namespace: dict[str, Any] | None) -> History:
    """The kernel's ``_devknow_history`` (created if missing), or a private one outside IPython."""
    if namespace is None:
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:  # pragma: no cover - IPython is a dependency
            shell = None
        namespace = getattr(shell, "user_ns", None)
    if namespace is None:
        return History()
    history = namespace.get(HISTORY_VARIABLE)
    if not isinstance(history, History):
        history = History(entry for entry in (history or []) if isinstance(entry, HistoryEntry))
        namespace[HISTORY_VARIABLE] = history
    return history


def _default_client() -> DevKnowClient:
    """The kernel's shared client when the magics are loaded, else a new client."""
    from .session import shared_client

    client = shared_client()
    if client is not None:
        return client
    from .client import DevKnowClient

    return DevKnowClient()


def _bundle(obj: Any) -> dict[str, Any]:
    from .display import mimebundle

    # Static views only: the explorer is the live view, the twin must not build more widgets.
    return mimebundle(obj, widgets=False) or {}


def _style_block() -> str:
    from .render.style import style_block

    return style_block()


def _static() -> Any:
    """The shared static renderer (:mod:`devknow_jupyter.render.static`), imported on first use."""
    from .render import static as views

    return views


def _root(inner: str, *classes: str) -> str:
    # Each HTML widget is its own DOM subtree and needs the .devknow root for the shared CSS.
    from .render.style import ROOT_CLASS

    return f'<div class="{" ".join((ROOT_CLASS, *classes))}">{inner}</div>'


def _page_chars() -> int | None:
    from .display import options

    return options.max_chars or None


def _notices(result: Any) -> str | None:
    info = getattr(result, "info", None)
    notices = list(getattr(info, "notices", None) or [])
    return " ".join(notices) if notices else None


def _host(uri: str) -> str:
    """The host of a page's URL, or "" for URLs without one or that ``urlsplit`` refuses (``http://[::1``)."""
    try:
        return urlsplit(uri).hostname or ""
    except ValueError:
        return ""


def _one_line(text: str, width: int) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _close_tree(widget: Any) -> None:
    for child in getattr(widget, "children", ()):
        _close_tree(child)
    widget.close()

"""The documentation explorer: one widget to search, read and ask (``%devknow explore``).

Small parts, each in its own module and tested alone:

* :mod:`.history`: the visits (:class:`HistoryEntry`), the kernel's :class:`History` and one explorer's
  back/forward list;
* :mod:`.runner`: requests on worker threads, the newest one wins;
* :mod:`.widget`: the one widget model (an anywidget) with its hand-written ES module and stylesheet;
* :mod:`.view`: showing a result in that model; :mod:`.twin`: the static copy for saved notebooks.

:class:`Explorer` wires them together: a message from the browser becomes a request, a reply becomes a
visit, a visit is shown. History, requests and fetching stay in Python; the browser only shows.

Keyboard (in the browser, checked in JupyterLab 4 and Notebook 7 with headless Chromium):

* **Enter in the search box searches**; Enter in the site filter does too, Enter in the ask box asks
  (the Search and Ask buttons are for the mouse and are skipped by Tab).
* **↓ in the search box goes to the hits; there ↓ / ↑ move the highlight, Enter (or Space) opens the
  highlighted hit**, wherever the focus is in the explorer (a click on its blank space gives it the
  focus). Home / End go to the first / last hit; the ends stop (no wrap). Moving makes no request: the
  status line previews the hit ("Hit 2 of 10: title — site · Enter opens it"), because opening on every
  arrow press would cost a request and a history visit per hit passed over. The references of an answer
  take the same keys. These keys stop at the explorer, so the notebook's own arrow shortcuts don't fire.
* **Tab from the search box goes to the first hit, Tab / Shift+Tab move between hits.** The hits are
  real buttons; after them Tab reaches the page's contents links, its references and the ask box.

Requests run on worker threads: the notebook stays free, the app shows a spinner for the request in
flight and stays usable (back/forward, other hits); the newest action wins and an older reply that
arrives later is dropped (its result is still cached). Errors show in the status line, in one line.
When the hits listed have a next page (``SearchResults.has_next_page``), "More hits" fetches it through
the actions (:class:`~devknow_jupyter.render.actions.ResultActions`) and adds it to the list.

Every visit (search, document, answer) is an entry of the back/forward history, kept with its
result: going back or forward makes no request. In IPython the visits are also appended to
``_devknow_history`` in the user's namespace (a :class:`History`, capped at 100 entries), and a new
explorer in the same kernel starts with that history, so Back returns to earlier visits.

Displayed in IPython, an :class:`Explorer` is two outputs: the live widget, then its static twin
(text/plain, text/markdown, sanitized text/html of what it shows). Each visit updates the twin through
its display id, so a saved notebook shows what the explorer showed last (nbviewer, GitHub, a notebook
reopened without its kernel). While the widget is live its stylesheet hides the twin.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..client import QUOTA_FALLBACK_NOTICE
from ..models import Answer, ResultInfo, name_to_uri
from .history import HISTORY_LIMIT, HISTORY_VARIABLE, History, HistoryEntry, Visits, kernel_history
from .runner import RequestRunner
from .twin import twin_bundle
from .view import MAX_HITS, ExplorerView

if TYPE_CHECKING:
    from ..client import DevKnowClient

__all__ = ["HISTORY_LIMIT", "HISTORY_VARIABLE", "MAX_HITS", "Explorer", "History", "HistoryEntry", "explore"]

_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# The live widget's own twins: one line pointing at the static copy below it. Its HTML has our root class, so
# the JupyterLab extension shows it in place of the widget in a notebook reopened without its kernel.
_LIVE_NOTE = "Documentation explorer: what it showed last is saved below."
_LIVE_TWINS = {
    "text/plain": _LIVE_NOTE,
    "text/markdown": f"*{_LIVE_NOTE}*",
    "text/html": f'<div class="devknow devknow-explorer-live">{_LIVE_NOTE}</div>',
}


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

    Keyboard: Enter in the search box searches; ↓ goes to the hits, where ↓ / ↑ move the highlight (no
    request; the status line previews the hit) and Enter opens it; Tab from the search box reaches the
    hits too. The keys are handled in the browser by the explorer's own ES module.
    """
    explorer = Explorer(client if client is not None else _default_client(), source=source)
    if query and query.strip():
        explorer.search(query, source=source, wait=True)
    return explorer


class Explorer:
    """Search, read and ask the documentation in one widget (see the module docstring for the keyboard).

    ``widget`` is the whole app: one :class:`~devknow_jupyter.explorer.widget.ExplorerWidget` model whose
    traits hold what it shows (``query``, ``hits``, ``status``, ``page_html``, ...). The browser sends the
    user's actions as messages; the methods below are the same actions for scripts.

    Args:
        client: The client every request goes through (its cache makes repeated visits free).
        source: The site filter to start with.
        namespace: Where to keep ``_devknow_history``; default: the IPython user namespace when running
            in IPython, else nowhere (the explorer keeps its own history either way).
    """

    def __init__(
        self, client: DevKnowClient, *, source: str | None = None, namespace: dict[str, Any] | None = None
    ) -> None:
        from ..render.actions import as_actions

        self.client = client
        self.actions = as_actions(client)  # what "More hits" fetches the next page through
        self.last_error: BaseException | None = None
        self._runner = RequestRunner(self._fail)
        self._lock = self._runner.lock  # guards the history and what is shown, with the runner's state
        self.kernel_history = kernel_history(namespace)
        self._visits = Visits(self.kernel_history)
        self._shown: HistoryEntry | None = None
        self._listed: HistoryEntry | None = None  # the search whose hits are listed
        self._display_id: str | None = None  # set when IPython displays the explorer: visits update its twin
        self._view = view = ExplorerView(source)
        self.widget = view.widget
        self.widget.on_msg(self._guard(self._on_message))
        if self._visits.current is not None:
            self._show(self._visits.position, None)
        else:
            view.show_welcome()
        view.set_back_forward(self._visits.can_go_back, self._visits.can_go_forward)

    # -- public actions ---------------------------------------------------------------------------------

    def search(self, query: str | None = None, *, source: str | None = None, wait: bool = False) -> None:
        """Search ``query`` (default: the search box) with the site filter (default: the filter box).

        The request runs on a worker thread unless ``wait``; the hits replace the list and the right
        pane shows them as passages until a hit is opened.
        """
        view, widget = self._view, self._view.widget
        query = widget.query if query is None else query
        source = widget.source if source is None else source
        view.set_inputs(query=str(query), source=source or "")
        query, source = " ".join(str(query).split()), (source or "").strip() or None
        if not query:
            view.say("Type what to look for, then press Enter.", "hint")
            return

        def job() -> Callable[[], None]:
            results = self.client.search_documents(query, source=source)
            return lambda: self._visit(HistoryEntry("search", query, results, source, _notices(results)))

        self._run(("search", f"{query}\0{source}"), f"Searching “{query}”…", job, wait=wait)

    def open(self, target: Any, *, wait: bool = False) -> None:
        """Open a document: a hit number (0-based) of the list, a hit, a document name or a page URL."""
        if isinstance(target, int):
            results = self._view.hits_result
            if results is None or not 0 <= target < min(len(results), MAX_HITS):
                self._view.say(f"There is no hit number {target + 1}.", "hint")
                return
            self._view.select_hit(target)  # the hit the user picked, among several passages of one page
            target = results[target]
        from ..names import normalize_names

        names = normalize_names(target)
        if len(names) != 1:
            self._view.say("Open one document at a time.", "hint")
            return
        name = names[0]
        if self._shown is not None and self._shown.name == name and self._runner.pending is None:
            self._view.highlight_hit(name)
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
        view = self._view
        if question is None:
            question = view.widget.question.strip() or view.widget.query
        else:
            view.set_inputs(question=str(question))
        question = " ".join(str(question).split())
        if not question:
            view.say("Type a question in the ask box (or a search above), then press Enter.", "hint")
            return

        def job() -> Callable[[], None]:
            result = self.client.ask(question)  # search results with a notice when the quota is used up
            if isinstance(result, Answer):
                return lambda: self._visit(HistoryEntry("answer", question, result, None, _notices(result)))
            return lambda: self._visit(HistoryEntry("search", question, result, None, QUOTA_FALLBACK_NOTICE))

        self._run(("answer", question), f"Asking “{question}”…", job, wait=wait)

    def more(self, *, wait: bool = False) -> None:
        """Add the next page of the hits listed to the list (a "More hits" click); the list's search is shown."""
        listed = self._listed
        results = listed.result if listed is not None else None
        if results is None or not results.has_next_page or len(results) >= MAX_HITS:
            self._view.say("There are no more hits.", "hint")
            return

        def job() -> Callable[[], None]:
            page = self.actions.next_page(results)
            joined = results.followed_by(page)
            return lambda: self._visit(listed._replace(result=joined), page.info)

        self._run(("more", f"{listed.key}\0{listed.source}\0{results.next_page_token}"), "More hits…", job, wait=wait)

    def back(self) -> None:
        """Show the previous visit (no request)."""
        self._step(-1)

    def forward(self) -> None:
        """Show the next visit after going back (no request)."""
        self._step(+1)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the requests in flight are done (for scripts and tests). False on timeout."""
        return self._runner.wait(timeout)

    def close(self) -> None:
        """Stop the worker threads and close the widgets (the client stays open)."""
        self._runner.close()
        self._view.close()

    @property
    def history(self) -> list[HistoryEntry]:
        """This explorer's back/forward list (a copy), oldest first."""
        with self._lock:
            return self._visits.entries

    @property
    def position(self) -> int:
        """The index in :attr:`history` of the visit shown (-1 before the first)."""
        return self._visits.position

    @property
    def current(self) -> HistoryEntry | None:
        """The visit shown, or None."""
        return self._shown

    @property
    def busy(self) -> bool:
        """True while a request started by the app is in flight."""
        return self._runner.busy

    # -- display ----------------------------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        """Show the live widget, then the static twin under a display id that each visit updates."""
        from IPython.display import display

        from ..display import widgets_available

        if widgets_available():
            view = self._widget_view()
            if view is not None:
                display({_WIDGET_MIME: view, **_LIVE_TWINS}, raw=True)
        with self._lock:
            if self._display_id is None:
                self._display_id = f"devknow-explorer-{uuid.uuid4().hex}"
            bundle = twin_bundle(self._shown)
        display(bundle, raw=True, display_id=self._display_id)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget beside a static twin of what is shown now (for frontends other than IPython,
        which uses :meth:`_ipython_display_`); ``display.options.widgets = False`` leaves the widget out."""
        from ..display import widgets_available

        bundle: dict[str, Any] = {}
        wanted = (include is None or _WIDGET_MIME in include) and not (exclude and _WIDGET_MIME in exclude)
        if wanted and widgets_available():
            view = self._widget_view()
            if view is not None:
                bundle[_WIDGET_MIME] = view
        bundle.update(twin_bundle(self._shown, include, exclude))
        return bundle

    def _widget_view(self) -> dict[str, Any] | None:
        # anywidget's bundle is (data, metadata); ipywidgets' is data alone.
        bundle = self.widget._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        return (data or {}).get(_WIDGET_MIME)

    def __repr__(self) -> str:
        shown = self._shown.label() if self._shown else "nothing shown"
        return f"<Explorer {shown}; {len(self._visits)} visit(s); endpoint={self.client.endpoint!r}>"

    def _update_twin(self) -> None:
        # The saved output shows what the explorer showed last: replace the twin's data in place.
        if self._display_id is None:
            return
        from IPython.display import update_display

        update_display(twin_bundle(self._shown), raw=True, display_id=self._display_id)

    # -- requests and visits -----------------------------------------------------------------------------

    def _run(self, key: tuple[str, str], label: str, job: Callable[[], Callable[[], None]], *, wait: bool) -> None:
        """Run ``job`` through the runner, with a spinner line; nothing for what is already in flight."""
        with self._lock:
            if self._runner.pending == key:
                return  # a double click, a second Enter
            self._view.say(label, "busy")
        self._runner.submit(key, job, wait=wait)  # not under the lock: with ``wait`` the request runs here

    def _visit(self, entry: HistoryEntry, info: ResultInfo | None = None) -> None:
        with self._lock:
            self._visits.visit(entry)
            self._show(self._visits.position, info or getattr(entry.result, "info", None))

    def _step(self, delta: int) -> None:
        with self._lock:
            entry = self._visits.step(delta)
            if entry is None:
                self._view.say("Nothing further back." if delta < 0 else "Nothing further forward.", "hint")
                return
            self._runner.supersede()  # a request still in flight must not replace what is shown now
            self._show(self._visits.position, None)

    def _show(self, position: int, info: ResultInfo | None) -> None:
        """Show visit ``position`` and its status line (``info``: its request; None: from history)."""
        with self.widget.hold_sync():  # one state update for the browser, before the twin's
            self._show_entry(position)
            self._say_result(self._visits.entries[position], info)
        self._update_twin()

    def _show_entry(self, position: int) -> None:
        view, entry = self._view, self._visits.entries[position]
        self._shown = entry
        if entry.kind == "search":
            self._listed = entry
            view.show_hits(entry.result)
            view.set_inputs(query=entry.key, source=entry.source or "")
            view.show_passages(entry.result)
        else:
            # A document or answer keeps the hits of the search it came from beside it.
            context = self._visits.search_before(position)
            if context is None and view.hits_result is not None:
                self._listed = None
                view.clear_hits("No hits: the answer's references are listed under it.")
            elif context is not None and context.result is not view.hits_result:
                self._listed = context
                view.show_hits(context.result)
            if entry.kind == "document":
                view.show_document(entry.result)
            else:
                view.show_answer(entry.result)
        view.set_back_forward(self._visits.can_go_back, self._visits.can_go_forward)

    def _show_whole_page(self) -> None:
        if self._shown is not None and self._shown.kind == "document":
            self._view.show_document(self._shown.result, whole=True)

    def _say_result(self, entry: HistoryEntry, info: ResultInfo | None) -> None:
        """The status line after showing ``entry``: what it is, and the request's time (None: no request)."""
        from ..render.static import info_summary

        result = entry.result
        if entry.notice:
            self._view.say(entry.notice, "warn")
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
            text += "".join(f" · {part}" for part in info_summary(info))
        self._view.say(text, "ok")

    def _fail(self, exc: BaseException) -> None:
        self.last_error = exc
        self._view.say_error(exc)

    # -- callbacks (each is wrapped by _guard: errors land in the status line) ---------------------------

    def _guard(self, callback: Callable[..., None]) -> Callable[..., None]:
        def guarded(*args: Any) -> None:
            try:
                callback(*args)
            except BaseException as exc:  # shown to the user, never lost in the log
                self._fail(exc)

        return guarded

    def _on_message(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        """A user's action in the browser (see :mod:`.widget` for the messages)."""
        event = content.get("event") if isinstance(content, dict) else None
        if event == "search":
            self.search(str(content.get("query") or ""), source=str(content.get("source") or ""))
        elif event == "ask":
            self.ask(str(content.get("question") or "").strip() or None)
        elif event == "open":
            self._open_row(content)
        elif event in ("back", "forward"):
            self._step(-1 if event == "back" else +1)
        elif event == "more":
            self.more()
        elif event == "whole":
            self._show_whole_page()

    def _open_row(self, content: dict[str, Any]) -> None:
        # A click (or Enter) on a row: a hit of the list, or a reference of the answer shown.
        row = content.get("hit", content.get("reference"))
        if not isinstance(row, int) or isinstance(row, bool):
            return
        if "hit" in content:
            self.open(row)
        elif 0 <= row < len(self._view.refs):
            self.open(self._view.refs[row])


def _default_client() -> DevKnowClient:
    """The kernel's shared client when the magics are loaded, else a new client."""
    from ..session import shared_client

    client = shared_client()
    if client is not None:
        return client
    from ..client import DevKnowClient

    return DevKnowClient()


def _notices(result: Any) -> str | None:
    info = getattr(result, "info", None)
    notices = list(getattr(info, "notices", None) or [])
    return " ".join(notices) if notices else None

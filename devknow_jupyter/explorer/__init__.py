"""The documentation explorer: one ipywidgets app to search, read and ask (``%devknow explore``).

Four small parts, each in its own module and tested alone:

* :mod:`.history`: the visits (:class:`HistoryEntry`), the kernel's :class:`History` and one explorer's
  back/forward list;
* :mod:`.runner`: requests on worker threads, the newest one wins;
* :mod:`.keys`: the keys pressed over a list (ipyevents);
* :mod:`.view`: the widgets, and showing a result in them; :mod:`.twin`: the static copy for saved notebooks.

:class:`Explorer` wires them together: a user's action becomes a request, a reply becomes a visit, a
visit is shown.

Keyboard (checked in JupyterLab 4 with headless Chromium):

* **Enter in the search box searches**; Enter in the site filter does too, Enter in the ask box asks
  (the text fields' "submit" event; the Search and Ask buttons are for the mouse and are skipped by Tab).
* **With the pointer over the hits, ArrowDown / ArrowUp move the highlight, Enter (or Space) opens
  the highlighted hit.** Home / End go to the first / last hit; ArrowDown with nothing highlighted
  starts at the first, ArrowUp at the last; the ends stop (no wrap). Moving makes no request: the
  status line previews the hit ("Hit 2 of 10: title — site · Enter opens it"), because opening on
  every arrow press would cost a request and a history visit per hit passed over. The references of
  an answer take the same keys. A dashed ring shows which list has the keys (see :mod:`.keys` for why
  the pointer).
* **Tab from the search box goes to the first hit, Tab / Shift+Tab move between hits, Enter (or
  Space) opens the focused hit.** The hits are real buttons, so this works in every frontend; the open
  hit stays highlighted. After the hits, Tab reaches the page's contents links, its references and
  the ask box.

Requests run on worker threads: the notebook stays free, the app shows a spinner for the request in
flight and stays usable (back/forward, other hits); the newest action wins and an older reply that
arrives later is dropped (its result is still cached). Errors show in the status line, in one line.

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

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..client import QUOTA_FALLBACK_NOTICE
from ..models import Answer, ResultInfo, name_to_uri
from .history import HISTORY_LIMIT, HISTORY_VARIABLE, History, HistoryEntry, Visits, kernel_history
from .keys import OPEN, list_key, watch_keys
from .runner import RequestRunner
from .twin import twin_bundle
from .view import MAX_HITS, ExplorerView, one_line

if TYPE_CHECKING:
    from ..client import DevKnowClient

__all__ = ["HISTORY_LIMIT", "HISTORY_VARIABLE", "MAX_HITS", "Explorer", "History", "HistoryEntry", "explore"]

#: After Enter in the search box, a value update arriving this soon is the text typed before Enter.
SUBMIT_SETTLE_SECONDS = 2.0
# The widgets of the view that are public attributes of the explorer.
_PARTS = [
    "search_box",
    "source_box",
    "search_button",
    "back_button",
    "forward_button",
    "status",
    "hits_header",
    "hits",
    "title",
    "toc",
    "page",
    "references",
    "more_button",
    "ask_box",
    "ask_button",
    "widget",
]
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
        self.client = client
        self.last_error: BaseException | None = None
        self._runner = RequestRunner(self._fail)
        self._lock = self._runner.lock  # guards the history and what is shown, with the runner's state
        self.kernel_history = kernel_history(namespace)
        self._visits = Visits(self.kernel_history)
        self._shown: HistoryEntry | None = None
        self._submitted_at: float | None = None
        self._display_id: str | None = None  # set when IPython displays the explorer: visits update its twin
        self._view = view = ExplorerView(source)
        for part in _PARTS:
            setattr(self, part, getattr(view, part))
        self._connect()
        if self._visits.current is not None:
            self._show(self._visits.position)
            self._say_result(self._visits.current, None)
        else:
            view.show_welcome()
        view.set_back_forward(self._visits.can_go_back, self._visits.can_go_forward)

    def _connect(self) -> None:
        view, guard = self._view, self._guard
        view.search_box.on_msg(guard(self._on_search_submit))
        view.source_box.on_msg(guard(self._on_search_submit))
        view.search_box.observe(guard(self._on_search_value_after_submit), names=["value"])
        view.source_box.observe(guard(self._on_search_value_after_submit), names=["value"])
        view.search_button.on_click(guard(lambda _button: self.search()))
        view.ask_box.on_msg(guard(self._on_ask_submit))
        view.ask_button.on_click(guard(lambda _button: self.ask()))
        view.back_button.on_click(guard(lambda _button: self.back()))
        view.forward_button.on_click(guard(lambda _button: self.forward()))
        view.more_button.on_click(guard(lambda _button: self._show_whole_page()))
        view.hits.observe(guard(self._on_hit_index), names=["index"])
        view.hits.on_msg(guard(self._on_hit_click))
        view.references.observe(guard(self._on_reference_index), names=["index"])
        view.references.on_msg(guard(self._on_reference_click))
        # Arrow keys: only through ipyevents (see .keys); None where it is not installed.
        self.hit_keys = watch_keys(
            view.hit_panel, guard(lambda msg: self._on_list_key(view.hits, self.open, "Hit", msg))
        )
        self.reference_keys = watch_keys(
            view.reference_panel,
            guard(lambda msg: self._on_list_key(view.references, lambda i: self.open(view.refs[i]), "Reference", msg)),
        )

    # -- public actions ---------------------------------------------------------------------------------

    def search(self, query: str | None = None, *, source: str | None = None, wait: bool = False) -> None:
        """Search ``query`` (default: the search box) with the site filter (default: the filter box).

        The request runs on a worker thread unless ``wait``; the hits replace the list and the right
        pane shows them as passages until a hit is opened.
        """
        view = self._view
        if query is None:
            query = view.search_box.value
        else:
            view.set_quietly(view.search_box, query)
        if source is None:
            source = view.source_box.value
        else:
            view.set_quietly(view.source_box, source)
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
            question = view.ask_box.value.strip() or view.search_box.value
        else:
            view.set_quietly(view.ask_box, question)
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
        for keys in (self.hit_keys, self.reference_keys):
            if keys is not None:
                keys.close()
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
            view = (self.widget._repr_mimebundle_() or {}).get(_WIDGET_MIME)
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
            view = (self.widget._repr_mimebundle_() or {}).get(_WIDGET_MIME)
            if view is not None:
                bundle[_WIDGET_MIME] = view
        bundle.update(twin_bundle(self._shown, include, exclude))
        return bundle

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
            self._show(self._visits.position)
            self._say_result(entry, info or getattr(entry.result, "info", None))

    def _step(self, delta: int) -> None:
        with self._lock:
            entry = self._visits.step(delta)
            if entry is None:
                self._view.say("Nothing further back." if delta < 0 else "Nothing further forward.", "hint")
                return
            self._runner.supersede()  # a request still in flight must not replace what is shown now
            self._show(self._visits.position)
            self._say_result(entry, None)

    def _show(self, position: int) -> None:
        view, entry = self._view, self._visits.entries[position]
        self._shown = entry
        if entry.kind == "search":
            view.show_hits(entry.result)
            view.set_quietly(view.search_box, entry.key)
            view.set_quietly(view.source_box, entry.source or "")
            view.show_passages(entry.result)
        else:
            # A document or answer keeps the hits of the search it came from beside it.
            context = self._visits.search_before(position)
            if context is not None and context.result is not view.hits_result:
                view.show_hits(context.result)
            if entry.kind == "document":
                view.show_document(entry.result)
            else:
                view.show_answer(entry.result)
        view.set_back_forward(self._visits.can_go_back, self._visits.can_go_forward)
        self._update_twin()

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

    def _on_search_submit(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "submit":
            self._submitted_at = time.monotonic()
            self.search()

    def _on_search_value_after_submit(self, change: dict[str, Any]) -> None:
        # The frontend sends "submit" at once but holds back value updates while the kernel is busy
        # (ipywidgets' message throttling), so what was typed before Enter can arrive just after it.
        # A value landing right after Enter is that text: search again with it (the newest search wins).
        if self._view.is_quiet() or self._submitted_at is None:
            return
        if time.monotonic() - self._submitted_at < SUBMIT_SETTLE_SECONDS:
            self.search()

    def _on_ask_submit(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "submit":
            self.ask()

    # A click (or Enter/Space on a hit) sets the index, then sends a "click" message: the index only
    # changes for another hit, the message also comes for the highlighted one. open() ignores the
    # second call for the same document, so each click opens once.

    def _on_hit_index(self, change: dict[str, Any]) -> None:
        if not self._view.is_quiet() and change["new"] is not None:
            self.open(int(change["new"]))

    def _on_hit_click(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "click" and self._view.hits.index is not None:
            self.open(int(self._view.hits.index))

    def _on_reference_index(self, change: dict[str, Any]) -> None:
        if not self._view.is_quiet() and change["new"] is not None:
            self.open(self._view.refs[int(change["new"])])

    def _on_reference_click(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "click" and self._view.references.index is not None:
            self.open(self._view.refs[int(self._view.references.index)])

    def _on_list_key(self, toggle: Any, opener: Callable[[int], None], noun: str, message: dict[str, Any]) -> None:
        """A keydown over a list (see :func:`.keys.list_key`): move the highlight, or open the highlighted row.

        Moving makes no request (a document per arrow press would cost a request and a visit each);
        the status line previews the highlighted entry instead.
        """
        with self._lock:
            count = len(toggle.options)
            action = list_key(message, toggle.index, count)
            if action is None:
                return
            if action == OPEN:
                opener(int(toggle.index))
                return
            self._view.set_quietly(toggle, action, trait="index")
            if self._runner.pending is None:  # keep the spinner line of a request in flight
                label = one_line(toggle.options[action][0].split(". ", 1)[-1], 160)
                self._view.say(f"{noun} {action + 1} of {count}: {label} · Enter opens it", "hint")


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

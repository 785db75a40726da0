"""The explorer app, driven the way the browser drives it, against real MCP servers on 127.0.0.1.

The explorer is one real anywidget model; a user's actions arrive as the custom messages its ES module
sends (``model.send``): Enter in the search box is ``{"event": "search", "query", "source"}``, a click (or
Enter on a highlighted hit) ``{"event": "open", "hit": i}``, and so on (see ``explorer/widget.py``). What the
app shows is read from the model's synced traits, what the server saw from its call log, so "no request"
claims are checked against the server itself. The keys themselves live in the browser: see
``tests/e2e/test_explorer_browser.py``.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from IPython.utils.capture import capture_output

from devknow_jupyter import DevKnowClient, display, explore
from devknow_jupyter.errors import DevKnowError, TransportError
from devknow_jupyter.explorer import HISTORY_VARIABLE, Explorer, History, HistoryEntry
from devknow_jupyter.models import Answer, Document, SearchResults

TAG = re.compile(r"<[^>]+>")


class _ActiveContent(HTMLParser):
    """Collects what could run in a page: script-like elements, event handlers, script URLs."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "iframe", "object", "embed", "svg", "form", "input"):
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"{tag} {name}=")
            if name in ("href", "src") and (value or "").strip().lower().startswith(("javascript:", "data:")):
                self.found.append(f"{tag} {name}={value}")


def active_content(page: str) -> list[str]:
    parser = _ActiveContent()
    parser.feed(page)
    return parser.found


# -- the front end's messages -------------------------------------------------------------------


def send(app: Explorer, **content) -> None:
    """A message of the explorer's ES module (``model.send(content)``), as the kernel receives it."""
    app.widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def type_text(app: Explorer, text: str, box: str = "query") -> None:
    """Typing into a box: the browser keeps the text and sends it with the action, as here."""
    app._typed = {**getattr(app, "_typed", {}), box: text}


def press_enter(app: Explorer, box: str = "query") -> None:
    """Enter in the search box, the site filter (both search) or the ask box (``box="question"``)."""
    typed = {"query": app.widget.query, "source": app.widget.source, **getattr(app, "_typed", {})}
    if box == "question":
        send(app, event="ask", question=typed.get("question", ""))
    else:
        send(app, event="search", query=typed["query"], source=typed["source"])


def click_hit(app: Explorer, index: int) -> None:
    send(app, event="open", hit=index)


def text_of(value) -> str:
    """What an HTML trait shows, as text (a status line: its text and hint)."""
    if isinstance(value, dict):
        return " ".join(part for part in (value.get("text", ""), value.get("hint", "")) if part)
    return " ".join(html.unescape(TAG.sub(" ", value)).split())


def labels(rows) -> list[str]:
    return [row["label"] for row in rows]


def tools(server) -> list[str]:
    return [call["tool"] for call in server.calls()]


# -- fixtures ---------------------------------------------------------------------------------------


class _CallsSince:
    """The session's server, with a call log that starts at this test (the cache is cleared per test)."""

    def __init__(self, server) -> None:
        self._server = server
        self.url = server.url
        self._start = len(server.calls())

    def calls(self, tool: str | None = None) -> list[dict]:
        return [call for call in self._server.calls()[self._start :] if tool is None or call["tool"] == tool]


@pytest.fixture
def server(sdk_server):
    """The shared SDK server; ``calls()`` counts only this test's requests."""
    return _CallsSince(sdk_server)


@pytest.fixture
def client(server):
    with DevKnowClient(server.url) as client:
        yield client


@pytest.fixture
def app(client):
    explorer = Explorer(client, namespace={})
    yield explorer
    assert explorer.wait(timeout=30)
    explorer.close()


def search(app: Explorer, query: str) -> None:
    type_text(app, query)
    press_enter(app)
    assert app.wait(timeout=30)


def open_hit(app: Explorer, index: int) -> None:
    click_hit(app, index)
    assert app.wait(timeout=30)


# -- searching and reading --------------------------------------------------------------------------


def test_enter_searches_and_lists_the_hits(app, server):
    search(app, "bucket")

    assert labels(app.widget.hits) == [
        "1. Create a storage bucket — docs.example.dev",
        "2. Choose a region — docs.example.dev",
        "3. Create it from the command line — docs.example.dev",
    ]
    assert app.widget.selected == -1  # nothing opened yet: the right pane shows the passages
    assert "3 hits for “bucket”" in text_of(app.widget.status)
    assert "Bucket names are global" in text_of(app.widget.page_html)
    assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["bucket"]
    assert app.current == app.history[-1] and app.current.kind == "search"


def test_the_search_is_what_the_enter_message_carries_not_an_older_copy_of_the_box(app, server):
    # The browser sends the typed text with the action: no value update can arrive after Enter, late.
    search(app, "buck")
    send(app, event="search", query="bucket   region ", source="")
    assert app.wait(timeout=30)

    assert app.current.key == "bucket region" and app.widget.query == "bucket region"
    assert labels(app.widget.hits)[0] == "1. Choose a region — docs.example.dev"
    assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["buck", "bucket region"]


def test_the_explorer_is_one_widget_model_whatever_it_shows(client, server):
    import ipywidgets.widgets.widget as registry

    before = set(registry._instances)
    app = Explorer(client, namespace={})
    try:
        search(app, "restrict key bucket")
        open_hit(app, 0)
        app.ask("How many answers a day?", wait=True)
        made = [registry._instances[key] for key in set(registry._instances) - before]
        # The anywidget model and the Layout every DOMWidget has: nothing per hit, pane or button.
        assert sorted(type(widget).__name__ for widget in made) == ["ExplorerWidget", "Layout"]
    finally:
        app.close()
    assert not set(registry._instances) - before  # closing leaves no model behind


def test_malformed_messages_do_nothing(app, server):
    search(app, "bucket")
    for content in ({}, {"event": "open"}, {"event": "open", "hit": "1"}, {"event": "open", "hit": True},
                    {"event": "open", "reference": 5}, {"event": "nonsense"}, ["not", "a", "dict"]):
        app.widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
    assert app.wait(timeout=30)
    send(app, event="open", hit=7)  # past the end: a hint, no request
    assert "There is no hit number 8" in text_of(app.widget.status)
    assert tools(server) == ["search_documents"] and app.last_error is None


def test_opening_a_hit_renders_the_page_with_a_contents_list_that_jumps_to_its_headings(app, server):
    search(app, "bucket")
    open_hit(app, 1)

    assert app.widget.selected == 1  # the hit the user picked stays highlighted
    assert "Create a storage bucket" in text_of(app.widget.title_html)
    assert "https://docs.example.dev/storage/buckets" in app.widget.title_html
    heading = re.search(r'<h2 id="(dk-[\w-]+)">Choose a region</h2>', app.widget.page_html)
    assert heading, app.widget.page_html[:500]
    anchors = re.findall(r'href="#([^"]+)"', app.widget.toc_html)
    assert heading.group(1) in anchors
    assert all(f'id="{anchor}"' in app.widget.page_html for anchor in anchors)  # every contents link has its heading
    assert tools(server) == ["search_documents", "get_documents"]


def test_a_click_opens_once_and_clicking_the_open_hit_again_makes_no_request(app, server):
    search(app, "bucket")
    open_hit(app, 0)
    open_hit(app, 0)  # a second click on the highlighted hit: only the "click" message changes
    open_hit(app, 2)  # another passage of the same page: already shown

    assert tools(server) == ["search_documents", "get_documents"]
    assert len(app.history) == 2
    assert app.widget.selected == 2


def test_back_and_forward_show_earlier_visits_without_any_request(app, server):
    search(app, "restrict key bucket")
    open_hit(app, 0)  # Restrict an API key
    open_hit(app, 3)  # Create a storage bucket
    made = len(server.calls())
    assert made == 3

    send(app, event="back")
    assert "Restrict an API key" in text_of(app.widget.title_html)
    assert app.widget.selected == 0
    assert "from history, no request" in text_of(app.widget.status)
    send(app, event="back")
    assert app.current.kind == "search" and app.widget.query == "restrict key bucket"
    assert app.widget.selected == -1 and app.widget.title_html == ""
    assert not app.widget.can_back and app.widget.can_forward
    send(app, event="forward")
    send(app, event="forward")
    assert "Create a storage bucket" in text_of(app.widget.title_html)
    assert not app.widget.can_forward

    assert len(server.calls()) == made


def test_a_new_visit_after_going_back_drops_the_forward_visits(app, server):
    search(app, "restrict key bucket")
    open_hit(app, 0)
    app.back()
    open_hit(app, 3)

    assert [entry.kind for entry in app.history] == ["search", "document"]
    assert app.history[-1].name == "documents/docs.example.dev/storage/buckets"
    assert not app.widget.can_forward


def test_searching_again_is_served_from_the_cache_and_adds_no_visit(app, server):
    search(app, "bucket")
    search(app, "sign users")
    search(app, "bucket")

    assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["bucket", "sign users"]
    assert "from cache" in text_of(app.widget.status)
    assert [entry.key for entry in app.history] == ["bucket", "sign users", "bucket"]
    press_enter(app)  # Enter again on the same query: the same visit, no request
    assert app.wait(timeout=30)
    assert len(app.history) == 3 and len(server.calls()) == 2


def test_the_site_filter_offers_the_sites_seen_and_filters_the_hits(app, server):
    search(app, "key quota")
    assert "docs.example.dev" in app.widget.sites

    type_text(app, "firebase.example.dev", "source")
    press_enter(app)  # Enter in the filter searches too
    assert app.wait(timeout=30)

    assert app.current.source == "firebase.example.dev"
    assert labels(app.widget.hits) == []
    assert "firebase.example.dev" in text_of(app.widget.status)  # the "filtered here" notice


def test_a_search_with_no_hits_clears_the_hits_shown_before(app, server):
    search(app, "bucket")
    assert labels(app.widget.hits)
    type_text(app, "firebase.example.dev", "source")
    press_enter(app)
    assert app.wait(timeout=30)

    assert "0 hits" in text_of(app.widget.hits_header_html)
    assert labels(app.widget.hits) == [] and app.widget.selected == -1
    assert "Bucket names are global" not in text_of(app.widget.page_html)
    search(app, "sign users")
    assert labels(app.widget.hits)[0].startswith("1. Sign users in")


def test_explore_with_a_query_has_the_hits_when_it_returns(client, server):
    app = explore("bucket", client=client)
    try:
        assert len(app.widget.hits) == 3  # searched before returning: the static twin has the hits
        assert not app.busy
    finally:
        app.close()


def test_empty_search_box_gives_a_hint_and_sends_nothing(app, server):
    press_enter(app)
    assert "Type what to look for" in text_of(app.widget.status)
    assert server.calls() == []


# -- more hits, the whole page ------------------------------------------------------------------------


def test_more_hits_appear_when_the_hits_have_a_next_page_and_add_it_to_the_list():
    from tests.servers.rest_server import RestServer

    with RestServer() as server, DevKnowClient(
        server.url, protocol="rest", api_key=server.api_key, cache=False, offline_store=False
    ) as client:
        app = Explorer(client, namespace={})
        try:
            app.search("bucket", wait=True)
            first = labels(app.widget.hits)
            assert len(first) == 5 and app.widget.has_more  # the service's default page, and more
            open_hit(app, 1)  # "More hits" is offered beside a page too
            assert app.widget.has_more and app.current.kind == "document"
            send(app, event="more")
            assert app.wait(timeout=30)

            hits = labels(app.widget.hits)
            assert hits[:5] == first and len(hits) > 5 and hits[5].startswith("6. ")
            assert len({label.split(". ", 1)[1] for label in hits}) == len(hits)  # no hit twice
            assert app.current.kind == "search" and len(app.current.result) == len(hits)
            assert f"{len(hits)} hits for “bucket”" in text_of(app.widget.status)
            while app.widget.has_more:
                app.more(wait=True)
            assert not app.current.result.has_next_page
            pages = len(server.calls_to("searchDocumentChunks"))
            send(app, event="more")  # none left: says so, asks nothing
            assert "no more hits" in text_of(app.widget.status)
            assert len(server.calls_to("searchDocumentChunks")) == pages
            app.back()  # the list before "More": one visit, extended in place
            assert app.current.kind == "document"
        finally:
            app.close()


def test_the_mcp_backend_has_no_next_page_and_no_more_button(app, server):
    search(app, "bucket")
    assert not app.widget.has_more
    send(app, event="more")
    assert "no more hits" in text_of(app.widget.status) and tools(server) == ["search_documents"]


def test_a_cut_page_offers_the_whole_page(app, server, monkeypatch):
    monkeypatch.setattr(display.options, "max_chars", 200)
    search(app, "bucket")
    open_hit(app, 0)
    assert app.widget.truncated
    cut = len(app.widget.page_html)
    send(app, event="whole")
    assert not app.widget.truncated and len(app.widget.page_html) > cut
    assert tools(server) == ["search_documents", "get_documents"]


# -- hostile pages ------------------------------------------------------------------------------------


def test_the_hostile_page_reaches_the_browser_sanitized_in_every_html_trait(app, server):
    search(app, "hostile sanitizing")
    html_traits = ("hits_header_html", "title_html", "toc_html", "page_html")
    assert active_content("".join(getattr(app.widget, name) for name in html_traits)) == []
    open_hit(app, 0)
    shown = "".join(getattr(app.widget, name) for name in html_traits)
    assert "Hostile content test page" in shown
    assert active_content(shown) == []
    # The other traits are plain text, which the ES module sets as text (see test_explorer_parts).


# -- asking -----------------------------------------------------------------------------------------


def test_ask_shows_the_answer_and_its_references_open_in_the_page_pane(app, server):
    type_text(app, "How many answers a day?", "question")
    press_enter(app, "question")
    assert app.wait(timeout=30)

    assert app.current.kind == "answer" and isinstance(app.current.result, Answer)
    assert "50 a day" in text_of(app.widget.page_html)
    assert labels(app.widget.references) == ["1. https://docs.example.dev/quotas"]

    send(app, event="open", reference=0)
    assert app.wait(timeout=30)
    assert "Quotas and limits" in text_of(app.widget.title_html)
    assert tools(server) == ["answer_query", "get_documents"]
    app.back()
    assert app.current.kind == "answer" and len(server.calls()) == 2


def test_ask_with_an_empty_box_asks_the_current_search(app, server):
    search(app, "requests a minute")
    send(app, event="ask", question="")
    assert app.wait(timeout=30)
    assert [call["arguments"]["query"] for call in server.calls("answer_query")] == ["requests a minute"]


def test_ask_falls_back_to_search_when_the_answer_quota_is_used_up(sdk_server_factory):
    server = sdk_server_factory("--answer-quota", "0")
    with DevKnowClient(server.url) as client:
        app = Explorer(client, namespace={})
        type_text(app, "How many answers a day?", "question")
        press_enter(app, "question")
        assert app.wait(timeout=30)

        status = text_of(app.widget.status)
        assert "answer quota is used up" in status and "\n" not in status
        assert app.current.kind == "search" and isinstance(app.current.result, SearchResults)
        assert labels(app.widget.hits)[0].startswith("1. Quotas and limits")
        assert "answer quota is used up" in text_of(app.widget.hits_header_html)
        assert app.last_error is None
        assert tools(server) == ["answer_query", "search_documents"]
        app.close()


# -- slow requests and errors -----------------------------------------------------------------------


def test_a_slow_request_shows_a_spinner_and_the_app_stays_usable(sdk_server_factory):
    server = sdk_server_factory("--delay", "1.5")
    with DevKnowClient(server.url) as client:
        app = Explorer(client, namespace={})
        app.search("bucket", wait=True)
        type_text(app, "sign users")
        press_enter(app)  # returns at once; the request runs on a worker thread

        assert app.busy
        assert app.widget.status["kind"] == "busy" and "Searching “sign users”" in text_of(app.widget.status)
        app.back()  # nothing before the first search: says so, and the request goes on
        assert "Nothing further back" in text_of(app.widget.status)
        assert app.wait(timeout=30)
        assert labels(app.widget.hits)[0].startswith("1. Sign users in")
        assert app.current.key == "sign users"
        app.close()


def test_going_back_while_a_request_runs_keeps_what_the_user_chose(sdk_server_factory):
    server = sdk_server_factory("--delay", "1.5")
    with DevKnowClient(server.url) as client:
        app = Explorer(client, namespace={})
        app.search("bucket", wait=True)
        app.open(0, wait=True)
        app.search("sign users")  # slow; the user goes back before it answers
        app.back()
        assert app.wait(timeout=30)

        assert app.current.kind == "search" and app.current.key == "bucket"  # the late reply was dropped
        assert [entry.key for entry in app.history] == ["bucket", "documents/docs.example.dev/storage/buckets"]
        app.search("sign users", wait=True)  # the dropped reply was cached: no second request
        assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["bucket", "sign users"]
        app.close()


def test_a_stopped_server_shows_one_line_in_the_app_and_the_app_keeps_working(sdk_server_factory):
    server = sdk_server_factory()
    app = Explorer(DevKnowClient(server.url), namespace={})
    search(app, "bucket")
    server.stop()
    search(app, "sign users")

    assert isinstance(app.last_error, TransportError)
    assert app.widget.status["kind"] == "error"
    status = text_of(app.widget.status)
    assert status.startswith("TransportError: ") and "\n" not in status and "Traceback" not in status
    assert labels(app.widget.hits)[0].startswith("1. Create a storage bucket")  # what was shown stays
    app.back()
    assert "Nothing further back" in text_of(app.widget.status)
    app.search("bucket", wait=True)  # cached: still works without the server
    assert "3 hits" in text_of(app.widget.status)
    app.close()
    app.client.close()


def test_an_endpoint_that_is_not_an_mcp_server_is_one_line(server):
    with DevKnowClient(server.url.replace("/mcp", "/not-mcp"), timeout=5) as client:
        app = explore("bucket", client=client)
        assert isinstance(app.last_error, DevKnowError)
        status = text_of(app.widget.status)
        assert status.startswith(type(app.last_error).__name__ + ": ") and "\n" not in status
        assert labels(app.widget.hits) == []
        app.close()


def test_an_unexpected_failure_in_a_callback_is_shown_not_lost_in_the_log(app, server, monkeypatch, caplog):
    search(app, "bucket")

    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(app.client, "get_documents", broken)  # a bug, which no real server can cause
    open_hit(app, 0)

    assert isinstance(app.last_error, RuntimeError)
    assert text_of(app.widget.status) == "Unexpected error: RuntimeError: renderer exploded"
    assert "renderer exploded" not in caplog.text
    assert app.current.kind == "search"


# -- history in the kernel namespace ------------------------------------------------------------------


def test_visits_are_kept_in_the_kernel_namespace_and_a_new_explorer_returns_to_them(ip, server):
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {server.url!r}")
    ip.run_cell("ex = %devknow explore bucket", store_history=False).raise_error()
    first = ip.user_ns["ex"]
    assert isinstance(first, Explorer)
    open_hit(first, 0)

    history = ip.user_ns[HISTORY_VARIABLE]
    assert isinstance(history, History) and isinstance(history, list)
    assert [(entry.kind, entry.query, entry.name) for entry in history] == [
        ("search", "bucket", None),
        ("document", None, "documents/docs.example.dev/storage/buckets"),
    ]
    kind, key, result, *_ = history[1]  # a plain tuple-like entry
    assert key == result.name
    assert kind == "document" and isinstance(result, Document) and result.title == "Create a storage bucket"

    ip.run_cell("again = %devknow explore", store_history=False).raise_error()
    again = ip.user_ns["again"]
    assert again.current.name == "documents/docs.example.dev/storage/buckets"  # where the user left off
    assert "Create a storage bucket" in text_of(again.widget.title_html)
    again.back()
    assert again.current.kind == "search" and len(again.widget.hits) == 3
    assert tools(server) == ["search_documents", "get_documents"]  # returning made no request


def test_the_kernel_history_is_capped(client):
    namespace: dict = {}
    app = Explorer(client, namespace=namespace)
    history = namespace[HISTORY_VARIABLE]
    for number in range(history.limit + 5):
        history.record(HistoryEntry("search", f"q{number}", SearchResults(f"q{number}")))
    assert len(history) == history.limit and history[0].key == "q5"
    app.close()


# -- offline backend ----------------------------------------------------------------------------------


def test_the_explorer_works_on_the_offline_backend():
    with DevKnowClient("local") as client:
        app = explore("create an API key", client=client)
        assert app.last_error is None and len(app.widget.hits) > 0
        app.open(0, wait=True)
        assert app.current.kind == "document" and "<h1" in app.widget.page_html
        app.ask("How do I restrict an API key?", wait=True)
        assert app.current.kind == "answer" and app.current.result.extractive
        assert len(app.widget.references) > 0
        app.close()


# -- the static twin ----------------------------------------------------------------------------------


def test_the_display_bundle_has_the_widget_and_a_static_twin_of_hits_and_page(app, server, monkeypatch):
    monkeypatch.setattr(display.options, "widgets_outside_kernel", True)
    search(app, "hostile sanitizing")
    open_hit(app, 0)

    bundle = app._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == app.widget.model_id
    plain, markdown, page = bundle["text/plain"], bundle["text/markdown"], bundle["text/html"]
    assert plain.startswith("Documentation explorer · https://docs.example.dev/evil/page")
    assert "# Hostile content test page" in markdown or "Hostile content test page" in markdown
    assert "Hostile content test page" in page and "Sanitizing checklist" in page
    assert active_content(page) == []
    assert "javascript:" not in markdown.lower()


def test_without_widgets_the_bundle_is_static_only(app, server, monkeypatch):
    monkeypatch.setattr(display.options, "widgets", False)
    search(app, "bucket")
    bundle = app._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}
    assert "Create a storage bucket" in bundle["text/markdown"]


def test_the_explorer_displays_in_a_shell_as_its_twin_and_every_visit_updates_it(ip, server):
    # A saved notebook keeps the twin's last data: each visit must replace it, through the display id.
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {server.url!r}")
    ip.run_cell("ex = %devknow explore", store_history=False).raise_error()
    with capture_output() as captured:
        ip.run_cell("ex", store_history=False).raise_error()
        ex = ip.user_ns["ex"]
        search(ex, "bucket")
        open_hit(ex, 1)

    first, *updates = captured.outputs
    assert "nothing shown yet" in first.data["text/plain"] and not first.update
    display_id = first.transient["display_id"]
    assert updates and all(out.update and out.transient["display_id"] == display_id for out in updates)
    assert "Create a storage bucket" in updates[0].data["text/markdown"]  # the hits of the search
    last = updates[-1].data
    assert last["text/plain"].startswith("Documentation explorer · https://docs.example.dev/storage/buckets")
    assert "Choose a region" in last["text/plain"]
    assert "<h2" in last["text/html"] and "Choose a region" in last["text/html"]
    assert "## Choose a region" in last["text/markdown"]

    with capture_output() as captured:
        ex.back()  # going back is a visit shown too: the twin shows the hits again
    assert captured.outputs[-1].transient["display_id"] == display_id
    assert captured.outputs[-1].data["text/plain"].startswith("Documentation explorer · search: bucket")


def test_in_a_kernel_the_widget_and_its_twin_are_two_outputs(ip, server, monkeypatch):
    monkeypatch.setattr(display.options, "widgets_outside_kernel", True)
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {server.url!r}")
    with capture_output() as captured:
        ip.run_cell("%devknow explore bucket", store_history=False).raise_error()
    widget, twin = captured.outputs
    # The widget's own twins only point at the copy below (so a notebook reopened without its kernel shows
    # that line in place of the widget, not "Loading widget"); the content is in the copy.
    assert set(widget.data) == {"application/vnd.jupyter.widget-view+json", "text/plain", "text/markdown", "text/html"}
    assert 'class="devknow' in widget.data["text/html"] and "Create a storage bucket" not in widget.data["text/html"]
    assert not widget.transient  # the widget output is never replaced (that would rebuild the app)
    assert twin.transient["display_id"].startswith("devknow-explorer-")
    assert '<div class="dkx-twin">' in twin.data["text/html"]
    assert "Create a storage bucket" in twin.data["text/html"]


# -- the XSS gallery through the explorer ---------------------------------------------------------------


def test_the_xss_gallery_through_the_explorer_reaches_the_browser_inert():
    # The hostile results of the XSS tests, served in-process: every HTML trait after a search, an open,
    # an answer and its reference passes the same checks as every other view; the style is ours, verbatim.
    from devknow_jupyter.models import Documents
    from devknow_jupyter.render.style import style_block
    from devknow_jupyter.testing import InProcessBackend
    from tests.test_xss import PAYLOAD, XSS_NAME, assert_safe_html, hostile_answer, hostile_document, hostile_results

    def handler(tool: str, arguments: dict) -> dict:
        if tool == "search_documents":
            return hostile_results().to_dict()
        if tool == "get_documents":
            return Documents([hostile_document() for _ in arguments["names"]]).to_dict()
        return hostile_answer().to_dict()

    with DevKnowClient(backend=InProcessBackend(handler), cache=False) as client:
        app = Explorer(client, namespace={})
        try:
            shown, labels = [], []
            for step in (lambda: app.search(f"query {PAYLOAD}", wait=True), lambda: app.open(0, wait=True),
                         lambda: app.ask(f"question {PAYLOAD}", wait=True), lambda: app.open(XSS_NAME, wait=True),
                         lambda: send(app, event="whole")):
                step()
                assert app.last_error is None, app.last_error
                for name in ("hits_header_html", "title_html", "toc_html", "page_html"):
                    assert_safe_html(getattr(app.widget, name), styles=0)
                shown.append(app.widget.page_html)
                labels = labels or [row["label"] for row in app.widget.hits]  # the search's (an answer clears them)
            assert app.widget.style_html == style_block()
            assert "Hostile content test page" in shown[1] and app.current.kind == "document"
            # Labels are text (the module sets them with textContent): the payload stays visible, unescaped.
            assert any("<script>" in label for label in labels)
        finally:
            app.close()

"""The explorer app, driven the way the browser drives it, against real MCP servers on 127.0.0.1.

The widgets are real ipywidgets; a user's actions arrive as the comm messages the front end sends:
Enter in a text box is a custom ``{"event": "submit"}`` message, a click (or Enter on a focused hit)
is an ``index`` state update followed by a ``{"event": "click"}`` message, and a key pressed with the
pointer over the hit list is ipyevents' custom message to its ``Event`` widget (the DOM event's fields).
What the server saw comes from its call log, so "no request" claims are checked against the server itself.
"""

from __future__ import annotations

import html
import re
import sys
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


def _message(widget, data: dict) -> None:
    widget._handle_msg({"content": {"data": data}, "buffers": []})


def type_text(widget, text: str) -> None:
    """Typing into a text box (continuous_update sends the value as it changes)."""
    _message(widget, {"method": "update", "state": {"value": text}, "buffer_paths": []})


def press_enter(widget) -> None:
    """Enter in a text box: the front end sends a "submit" message."""
    _message(widget, {"method": "custom", "content": {"event": "submit"}})


def click(toggle, index: int) -> None:
    """A click on (or Enter/Space on the focused) button ``index`` of a ToggleButtons."""
    _message(toggle, {"method": "update", "state": {"index": index}, "buffer_paths": []})
    _message(toggle, {"method": "custom", "content": {"event": "click"}})


def press_key(keys, key: str, *, shift: bool = False, ctrl: bool = False, kind: str = "keydown") -> None:
    """A key pressed with the pointer over a list: the message ipyevents' frontend sends for a keydown."""
    code = {" ": "Space"}.get(key, key)
    event = {"altKey": False, "ctrlKey": ctrl, "metaKey": False, "shiftKey": shift, "type": kind}
    event.update(timeStamp=1234.5, code=code, key=key, location=0, repeat=False, event=kind)
    _message(keys, {"method": "custom", "content": event})


def text_of(widget) -> str:
    """What an HTML widget shows, as text."""
    return " ".join(html.unescape(TAG.sub(" ", widget.value)).split())


def labels(toggle) -> list[str]:
    return [label for label, _ in toggle.options]


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
    type_text(app.search_box, query)
    press_enter(app.search_box)
    assert app.wait(timeout=30)


def open_hit(app: Explorer, index: int) -> None:
    click(app.hits, index)
    assert app.wait(timeout=30)


# -- searching and reading --------------------------------------------------------------------------


def test_enter_searches_and_lists_the_hits(app, server):
    search(app, "bucket")

    assert labels(app.hits) == [
        "1. Create a storage bucket — docs.example.dev",
        "2. Choose a region — docs.example.dev",
        "3. Create it from the command line — docs.example.dev",
    ]
    assert app.hits.index is None  # nothing opened yet: the right pane shows the passages
    assert "3 hits for “bucket”" in text_of(app.status)
    assert "Bucket names are global" in text_of(app.page)
    assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["bucket"]
    assert app.current == app.history[-1] and app.current.kind == "search"


def test_text_arriving_just_after_enter_is_what_gets_searched(app, server):
    # Under load ipywidgets holds back value updates but sends "submit" at once: Enter can overtake the
    # last keystrokes. The explorer searches again with the text that lands right after Enter.
    type_text(app.search_box, "buck")
    press_enter(app.search_box)
    assert app.wait(timeout=30)
    type_text(app.search_box, "bucket region")  # the held-back update, delivered after the submit
    assert app.wait(timeout=30)

    assert app.current.key == "bucket region"
    assert labels(app.hits)[0] == "1. Choose a region — docs.example.dev"
    assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["buck", "bucket region"]


def test_opening_a_hit_renders_the_page_with_a_contents_list_that_jumps_to_its_headings(app, server):
    search(app, "bucket")
    open_hit(app, 1)

    assert app.hits.index == 1  # the hit the user picked stays highlighted
    assert "Create a storage bucket" in text_of(app.title)
    assert "https://docs.example.dev/storage/buckets" in app.title.value
    heading = re.search(r'<h2 id="(dk-[\w-]+)">Choose a region</h2>', app.page.value)
    assert heading, app.page.value[:500]
    anchors = re.findall(r'href="#([^"]+)"', app.toc.value)
    assert heading.group(1) in anchors
    assert all(f'id="{anchor}"' in app.page.value for anchor in anchors)  # every contents link has its heading
    assert tools(server) == ["search_documents", "get_documents"]


def test_a_click_opens_once_and_clicking_the_open_hit_again_makes_no_request(app, server):
    search(app, "bucket")
    open_hit(app, 0)
    open_hit(app, 0)  # a second click on the highlighted hit: only the "click" message changes
    open_hit(app, 2)  # another passage of the same page: already shown

    assert tools(server) == ["search_documents", "get_documents"]
    assert len(app.history) == 2
    assert app.hits.index == 2


def test_back_and_forward_show_earlier_visits_without_any_request(app, server):
    search(app, "restrict key bucket")
    open_hit(app, 0)  # Restrict an API key
    open_hit(app, 3)  # Create a storage bucket
    made = len(server.calls())
    assert made == 3

    app.back_button.click()
    assert "Restrict an API key" in text_of(app.title)
    assert app.hits.index == 0
    assert "from history, no request" in text_of(app.status)
    app.back_button.click()
    assert app.current.kind == "search" and app.search_box.value == "restrict key bucket"
    assert app.hits.index is None and app.title.value == ""
    assert app.back_button.disabled and not app.forward_button.disabled
    app.forward_button.click()
    app.forward_button.click()
    assert "Create a storage bucket" in text_of(app.title)
    assert app.forward_button.disabled

    assert len(server.calls()) == made


def test_a_new_visit_after_going_back_drops_the_forward_visits(app, server):
    search(app, "restrict key bucket")
    open_hit(app, 0)
    app.back()
    open_hit(app, 3)

    assert [entry.kind for entry in app.history] == ["search", "document"]
    assert app.history[-1].name == "documents/docs.example.dev/storage/buckets"
    assert app.forward_button.disabled


def test_searching_again_is_served_from_the_cache_and_adds_no_visit(app, server):
    search(app, "bucket")
    search(app, "sign users")
    search(app, "bucket")

    assert [call["arguments"]["query"] for call in server.calls("search_documents")] == ["bucket", "sign users"]
    assert "from cache" in text_of(app.status)
    assert [entry.key for entry in app.history] == ["bucket", "sign users", "bucket"]
    press_enter(app.search_box)  # Enter again on the same query: the same visit, no request
    assert app.wait(timeout=30)
    assert len(app.history) == 3 and len(server.calls()) == 2


def test_the_site_filter_offers_the_sites_seen_and_filters_the_hits(app, server):
    search(app, "key quota")
    assert "docs.example.dev" in app.source_box.options

    type_text(app.source_box, "firebase.example.dev")
    press_enter(app.source_box)  # Enter in the filter searches too
    assert app.wait(timeout=30)

    assert app.current.source == "firebase.example.dev"
    assert labels(app.hits) == []
    assert "firebase.example.dev" in text_of(app.status)  # the "filtered here" notice


def test_a_search_with_no_hits_clears_the_hits_shown_before(app, server):
    search(app, "bucket")
    assert app.hits.layout.display != "none"
    type_text(app.source_box, "firebase.example.dev")
    press_enter(app.source_box)
    assert app.wait(timeout=30)

    assert "0 hits" in text_of(app.hits_header)
    # The browser's ToggleButtons keep their old buttons for an empty list: the list must be hidden.
    assert labels(app.hits) == [] and app.hits.layout.display == "none"
    assert "Bucket names are global" not in text_of(app.page)
    search(app, "sign users")
    assert app.hits.layout.display != "none" and labels(app.hits)[0].startswith("1. Sign users in")


def test_explore_with_a_query_has_the_hits_when_it_returns(client, server):
    app = explore("bucket", client=client)
    try:
        assert len(app.hits.options) == 3  # searched before returning: the static twin has the hits
        assert not app.busy
    finally:
        app.close()


def test_empty_search_box_gives_a_hint_and_sends_nothing(app, server):
    press_enter(app.search_box)
    assert "Type what to look for" in text_of(app.status)
    assert server.calls() == []


# -- keys over the hit list (ipyevents) -------------------------------------------------------------


def test_arrow_keys_move_the_highlight_without_a_request_and_enter_opens_it(app, server):
    search(app, "restrict key bucket")
    keys = app.hit_keys
    assert keys.watched_events == ["keydown"] and app.hits in keys.source.children  # the hit column

    press_key(keys, "ArrowDown")
    press_key(keys, "ArrowDown")
    assert app.hits.index == 1
    assert text_of(app.status) == "Hit 2 of 6: Restrict by API — docs.example.dev · Enter opens it"
    assert app.current.kind == "search" and app.title.value == ""  # moving opens nothing
    press_key(keys, "Enter")
    assert app.wait(timeout=30)
    assert app.current.name == "documents/docs.example.dev/keys/restrict"
    assert "Restrict an API key" in text_of(app.title) and app.hits.index == 1

    press_key(keys, "ArrowDown")
    press_key(keys, "ArrowDown")
    assert app.hits.index == 3 and tools(server) == ["search_documents", "get_documents"]
    press_key(keys, "Enter")
    assert app.wait(timeout=30)
    assert "Create a storage bucket" in text_of(app.title) and app.hits.index == 3

    press_key(keys, "ArrowUp")
    assert app.hits.index == 2 and "Create a storage bucket" in text_of(app.title)
    press_key(keys, "Enter")  # the first page again: from the client's cache
    assert app.wait(timeout=30)
    assert app.current.name == "documents/docs.example.dev/keys/restrict" and app.hits.index == 2
    assert tools(server) == ["search_documents", "get_documents", "get_documents"]
    assert [entry.kind for entry in app.history] == ["search", "document", "document", "document"]


def test_list_keys_stop_at_the_ends_and_tab_home_end_space_work_too(app, server):
    search(app, "restrict key bucket")
    keys = app.hit_keys

    press_key(keys, "ArrowUp")  # nothing highlighted: ArrowUp starts from the last hit
    assert app.hits.index == 5
    press_key(keys, "ArrowDown")
    assert app.hits.index == 5
    press_key(keys, "Home")
    press_key(keys, "ArrowUp")
    assert app.hits.index == 0
    press_key(keys, "Tab")  # ipyevents keeps Tab from moving focus over the list: it steps instead
    assert app.hits.index == 1
    press_key(keys, "Tab", shift=True)
    assert app.hits.index == 0
    press_key(keys, "End")
    assert app.hits.index == 5
    assert tools(server) == ["search_documents"]
    press_key(keys, " ")
    assert app.wait(timeout=30)
    assert app.current.name == "documents/docs.example.dev/storage/buckets"


def test_other_keys_modified_keys_and_keyups_do_nothing(app, server):
    press_key(app.hit_keys, "ArrowDown")  # no hits yet
    press_key(app.hit_keys, "Enter")
    assert app.hits.index is None and app.last_error is None
    search(app, "bucket")
    press_key(app.hit_keys, "Enter")  # nothing highlighted: nothing to open
    for key in ("a", "ArrowLeft", "Escape", "Shift"):
        press_key(app.hit_keys, key)
    press_key(app.hit_keys, "ArrowDown", ctrl=True)
    press_key(app.hit_keys, "ArrowDown", kind="keyup")
    assert app.hits.index is None and app.title.value == ""
    assert tools(server) == ["search_documents"] and app.last_error is None


def test_arrow_keys_over_the_references_open_them(app, server):
    type_text(app.ask_box, "How many answers a day?")
    press_enter(app.ask_box)
    assert app.wait(timeout=30)

    press_key(app.reference_keys, "ArrowDown")
    assert app.references.index == 0
    assert text_of(app.status) == "Reference 1 of 1: https://docs.example.dev/quotas · Enter opens it"
    press_key(app.reference_keys, "Enter")
    assert app.wait(timeout=30)
    assert "Quotas and limits" in text_of(app.title)
    assert tools(server) == ["answer_query", "get_documents"]


def test_without_ipyevents_the_explorer_has_no_key_events_and_still_works(client, server, monkeypatch):
    monkeypatch.setitem(sys.modules, "ipyevents", None)  # as if not installed: importing it fails
    app = Explorer(client, namespace={})
    try:
        assert app.hit_keys is None and app.reference_keys is None
        search(app, "bucket")
        open_hit(app, 1)
        assert "Create a storage bucket" in text_of(app.title) and app.last_error is None
    finally:
        app.close()


def test_closing_the_explorer_closes_its_key_listeners(client):
    app = Explorer(client, namespace={})
    keys = [app.hit_keys, app.reference_keys]
    assert all(key.comm is not None for key in keys)
    app.close()
    assert all(key.comm is None for key in keys)


# -- asking -----------------------------------------------------------------------------------------


def test_ask_shows_the_answer_and_its_references_open_in_the_page_pane(app, server):
    type_text(app.ask_box, "How many answers a day?")
    press_enter(app.ask_box)
    assert app.wait(timeout=30)

    assert app.current.kind == "answer" and isinstance(app.current.result, Answer)
    assert "50 a day" in text_of(app.page)
    assert labels(app.references) == ["1. https://docs.example.dev/quotas"]
    assert app.references.layout.display != "none"

    click(app.references, 0)
    assert app.wait(timeout=30)
    assert "Quotas and limits" in text_of(app.title)
    assert tools(server) == ["answer_query", "get_documents"]
    app.back()
    assert app.current.kind == "answer" and len(server.calls()) == 2


def test_ask_with_an_empty_box_asks_the_current_search(app, server):
    search(app, "requests a minute")
    app.ask_button.click()
    assert app.wait(timeout=30)
    assert [call["arguments"]["query"] for call in server.calls("answer_query")] == ["requests a minute"]


def test_ask_falls_back_to_search_when_the_answer_quota_is_used_up(sdk_server_factory):
    server = sdk_server_factory("--answer-quota", "0")
    with DevKnowClient(server.url) as client:
        app = Explorer(client, namespace={})
        type_text(app.ask_box, "How many answers a day?")
        press_enter(app.ask_box)
        assert app.wait(timeout=30)

        status = text_of(app.status)
        assert "answer quota is used up" in status and "\n" not in status
        assert app.current.kind == "search" and isinstance(app.current.result, SearchResults)
        assert labels(app.hits)[0].startswith("1. Quotas and limits")
        assert "answer quota is used up" in text_of(app.hits_header)
        assert app.last_error is None
        assert tools(server) == ["answer_query", "search_documents"]
        app.close()


# -- slow requests and errors -----------------------------------------------------------------------


def test_a_slow_request_shows_a_spinner_and_the_app_stays_usable(sdk_server_factory):
    server = sdk_server_factory("--delay", "1.5")
    with DevKnowClient(server.url) as client:
        app = Explorer(client, namespace={})
        app.search("bucket", wait=True)
        type_text(app.search_box, "sign users")
        press_enter(app.search_box)  # returns at once; the request runs on a worker thread

        assert app.busy
        assert 'class="dkx-spin"' in app.status.value and "Searching “sign users”" in text_of(app.status)
        app.back()  # nothing before the first search: says so, and the request goes on
        assert "Nothing further back" in text_of(app.status)
        assert app.wait(timeout=30)
        assert labels(app.hits)[0].startswith("1. Sign users in")
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
    assert app.status.value.count('class="dkx-status"') == 1
    status = text_of(app.status)
    assert status.startswith("TransportError: ") and "\n" not in status and "Traceback" not in status
    assert labels(app.hits)[0].startswith("1. Create a storage bucket")  # what was shown stays
    app.back()
    assert "Nothing further back" in text_of(app.status)
    app.search("bucket", wait=True)  # cached: still works without the server
    assert "3 hits" in text_of(app.status)
    app.close()
    app.client.close()


def test_an_endpoint_that_is_not_an_mcp_server_is_one_line(server):
    with DevKnowClient(server.url.replace("/mcp", "/not-mcp"), timeout=5) as client:
        app = explore("bucket", client=client)
        assert isinstance(app.last_error, DevKnowError)
        status = text_of(app.status)
        assert status.startswith(type(app.last_error).__name__ + ": ") and "\n" not in status
        assert labels(app.hits) == []
        app.close()


def test_an_unexpected_failure_in_a_callback_is_shown_not_lost_in_the_log(app, server, monkeypatch, caplog):
    search(app, "bucket")

    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(app.client, "get_documents", broken)  # a bug, which no real server can cause
    open_hit(app, 0)

    assert isinstance(app.last_error, RuntimeError)
    assert text_of(app.status) == "Unexpected error: RuntimeError: renderer exploded"
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
    assert "Create a storage bucket" in text_of(again.title)
    again.back()
    assert again.current.kind == "search" and len(again.hits.options) == 3
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
        assert app.last_error is None and len(app.hits.options) > 0
        app.open(0, wait=True)
        assert app.current.kind == "document" and "<h1" in app.page.value
        app.ask("How do I restrict an API key?", wait=True)
        assert app.current.kind == "answer" and app.current.result.extractive
        assert len(app.references.options) > 0
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

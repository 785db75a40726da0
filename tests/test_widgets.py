"""The live views: one anywidget model per output; Open, More and Show all answered in Python through the actions.

Most views act through a client on the in-process StaticBackend (devknow_jupyter.testing, the fixture
pages, no server); the header, the next page and the server-that-went-away tests use real loopback servers.

What the page's module (render/esm/results.js) invokes (anywidget's commands) is delivered here as the
kernel's comm delivers it (:func:`send_from_page`), and each test asserts on the traits the page draws from
and on the answer the page awaits. Keys,
focus, Back and the local "More" live in the browser: tests/e2e/test_result_widgets.py drives them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ipywidgets
import pytest

from devknow_jupyter import display
from devknow_jupyter.client import DevKnowClient
from devknow_jupyter.explorer.widget import ExplorerWidget
from devknow_jupyter.models import Answer, Document, DocumentChunk, Documents, ResultInfo, SearchResults
from devknow_jupyter.render.views import widget_for as view_for
from devknow_jupyter.render.widgets import AnswerView, DocumentView, HitList, HitView
from devknow_jupyter.testing import StaticBackend
from tests.conftest import fixture_documents

BUCKETS = "documents/docs.example.dev/storage/buckets"
HEADING = "Create a storage bucket</h1>"


COMMANDS = {"open": "open_hit", "more": "more_hits", "all": "whole_page"}


def send_from_page(view: Any, do: str = "", **content: Any) -> None:
    """Invoke the command for ``do`` ("open", "more", "all") with ``content``, as the ES module's
    ``invoke`` does: an anywidget command message through ipywidgets' own comm handler. The view must answer
    it (the page awaits the answer), with the view's error line."""
    answers: list[Any] = []
    send = view.send
    view.send = lambda message, buffers=None: answers.append(message)  # what goes back to the page
    try:
        message = {"id": "req-1", "kind": "anywidget-command", "name": COMMANDS.get(do, do), "msg": content}
        view._handle_msg({"content": {"data": {"method": "custom", "content": message}}, "buffers": []})
    finally:
        view.send = send
    assert answers == [{"id": "req-1", "kind": "anywidget-command-response", "response": {"error": view.error}}], (
        "the view did not answer (the page would wait)")


def html_text(view: Any) -> str:
    """All HTML a view's page draws from: the header, the items, the opened page."""
    return "\n".join([view.header, *(item["html"] for item in view.items), view.page.get("html", "")])


def models_now() -> int:
    """How many widget models (comms to the frontend) the kernel holds."""
    from ipywidgets.widgets import widget

    return len(widget._instances)


@pytest.fixture
def backend() -> StaticBackend:
    return StaticBackend(fixture_documents())


@pytest.fixture
def client(backend: StaticBackend) -> Iterator[DevKnowClient]:
    with DevKnowClient(backend=backend) as made:
        yield made


def fetched(backend: StaticBackend) -> list[dict]:
    """The get_documents calls the backend has answered, as the test server logs them."""
    return [{"tool": tool, "arguments": args} for tool, args in backend.calls if tool == "get_documents"]


def many_hits(count: int) -> SearchResults:
    chunks = [DocumentChunk(f"documents/docs.example.dev/page/{i}", str(i), f"## Page {i}\n\nText {i}.")
              for i in range(1, count + 1)]
    return SearchResults("pages", chunks, ResultInfo("local", "local", 0.05, False, []))


# -- the hit list ------------------------------------------------------------------------------------------


def test_header_shows_query_count_backend_time_and_cache(sdk_server: Any) -> None:
    client = DevKnowClient(sdk_server.url)
    client.search_documents("bucket region")
    results = client.search_documents("bucket region")  # the second time comes from the cache
    header = HitList(results).header
    port = client.endpoint.split(":")[-1].split("/")[0]
    assert f"<b>{len(results)} hits</b> for <q>bucket region</q> · remote (127.0.0.1:{port}) · " in header
    assert " ms · from cache" in header
    client.close()


def test_notices_show_as_a_line() -> None:
    results = many_hits(2)
    results.info.notices.append("The service could not be reached; these hits come from documents saved offline.")
    assert '<div class="devknow-notice">The service could not be reached;' in HitList(results).header


def test_the_page_gets_every_hit_and_the_page_size_it_shows_at_a_time() -> None:
    view = HitList(many_hits(7), options=display.DisplayOptions(page_size=3))
    assert view.kind == "hits" and view.page_size == 3 and len(view.items) == 7
    assert view.items[6]["name"] == "documents/docs.example.dev/page/7" and "7. " in view.items[6]["html"]
    assert not view.has_next  # no next page from the server: "More" shows the hits in hand only


def test_one_output_is_one_model_however_many_hits_and_opens() -> None:
    HitList(many_hits(1))  # the shared Layout exists from here on
    before = models_now()
    twenty = HitList(many_hits(20), options=display.DisplayOptions(page_size=20))
    assert models_now() == before + 1
    HitList(many_hits(500))
    assert models_now() == before + 2
    assert twenty.layout is HitList(many_hits(3)).layout  # one Layout model for every view
    answer = AnswerView(Answer("Text.", [BUCKETS, "documents/docs.example.dev/other"], "q"))
    assert models_now() == before + 4 and len(answer.items) == 2


def test_each_hit_has_title_link_passage_and_can_open(client: DevKnowClient) -> None:
    view = HitList(client.search_documents("bucket region"), actions=client)
    first = view.items[0]
    assert 'href="https://docs.example.dev/storage/buckets" target="_blank" rel="noopener noreferrer"' in first["html"]
    assert first["name"] == BUCKETS and view.can_open and view.page == {} and view.error == ""


# -- Open ------------------------------------------------------------------------------------------------------


def test_open_fetches_once_and_shows_the_page_in_place(client: DevKnowClient, backend: StaticBackend) -> None:
    view = HitList(client.search_documents("bucket region"), actions=client)
    before = len(fetched(backend))
    send_from_page(view, do="open", name=BUCKETS)
    assert view.page["name"] == BUCKETS and HEADING in view.page["html"] and not view.page["truncated"]
    assert 'class="devknow-doc-title"' in view.page["html"]  # the list is hidden: the page brings its title
    assert fetched(backend)[before:] == [{"tool": "get_documents", "arguments": {"names": [BUCKETS]}}]
    send_from_page(view, do="open", name=BUCKETS)  # Back, then Open again: no new request
    assert len(fetched(backend)) == before + 1 and view.page["name"] == BUCKETS and view.error == ""


def test_a_second_view_opens_from_the_clients_cache(client: DevKnowClient, backend: StaticBackend) -> None:
    results = client.search_documents("bucket region")
    send_from_page(HitList(results, actions=client), do="open", name=results[0].parent)
    before = len(fetched(backend))
    other = HitList(results, actions=client)
    send_from_page(other, do="open", name=results[0].parent)
    assert other.page["name"] == results[0].parent and len(fetched(backend)) == before


def test_an_unknown_document_shows_one_error_line(client: DevKnowClient) -> None:
    view = HitList(many_hits(1), actions=client)
    send_from_page(view, do="open", name="documents/docs.example.dev/no/such/page")
    assert view.error.startswith("DocumentNotFoundError: Unknown document:") and "\n" not in view.error
    assert view.page == {}
    send_from_page(view, do="open", name=BUCKETS)  # the next Open that works clears the line
    assert view.error == "" and view.page["name"] == BUCKETS


def test_a_server_that_went_away_shows_one_error_line(sdk_server_factory: Any) -> None:
    server = sdk_server_factory()
    with DevKnowClient(server.url, timeout=5, connect_timeout=2, offline_store=False) as client:
        results = client.search_documents("bucket region")
        server.stop()
        view = HitList(results, actions=client)
        send_from_page(view, do="open", name=results[0].parent)
        assert view.error.startswith("TransportError: Could not connect") and "Traceback" not in view.error
        assert view.page == {}


def test_hits_given_no_actions_cannot_open() -> None:
    view = HitList(many_hits(1))
    assert not view.can_open
    send_from_page(view, do="open", name=view.items[0]["name"])
    assert view.page == {} and "No client" in view.error


def test_messages_the_view_does_not_know_change_nothing(client: DevKnowClient) -> None:
    view = HitList(many_hits(2), actions=client)
    for content in ({"do": "open"}, {"do": "all"}, {"do": "all", "name": BUCKETS}):
        send_from_page(view, **content)
    view._handle_msg({"content": {"data": {"method": "custom", "content": "open"}}, "buffers": []})
    view._handle_msg({"content": {"data": {"method": "custom", "content": {"do": "open", "name": BUCKETS}}},
                      "buffers": []})  # the old hand-rolled message: not a request any more
    assert view.page == {} and view.error == "" and len(view.items) == 2


LONG_PASSAGE = (
    "Intro to the steps.\n\n" + "".join(f"## Step {i}\n\nDo thing {i} carefully. Then check it.\n\n" for i in range(12))
)


def test_hits_show_a_short_preview_and_a_hit_alone_shows_its_whole_passage() -> None:
    results = SearchResults("steps", [DocumentChunk("documents/docs.example.dev/steps", "1", LONG_PASSAGE)])
    hit = HitList(results).items[0]["html"]
    assert "Step 2</h2>" in hit and "Step 11</h2>" not in hit
    assert 'class="devknow-chunk devknow-body devknow-clamped"' in hit  # fades out at the bottom
    whole = HitList(results, options=display.DisplayOptions(preview_chars=0)).items[0]["html"]
    assert "Step 11</h2>" in whole and "devknow-clamped" not in whole
    alone = view_for(results[0])
    assert isinstance(alone, HitView) and alone.kind == "hit" and "Step 11</h2>" in alone.items[0]["html"]


def test_a_hit_alone_opens_its_page(client: DevKnowClient) -> None:
    hit = client.search_documents("bucket region")[0]
    view = view_for(hit, actions=client)
    assert view.can_open
    send_from_page(view, do="open", name=hit.parent)
    assert view.page["name"] == hit.parent and "</h1>" in view.page["html"]


# -- More: the server's next page ---------------------------------------------------------------------------


def test_more_fetches_the_servers_next_page_and_numbers_on() -> None:
    from tests.servers.rest_server import RestServer

    with RestServer() as server:
        client = DevKnowClient(server.url, protocol="rest", api_key=server.api_key, cache=False, offline_store=False)
        results = client.search_documents("storage bucket", page_size=2)
        view = HitList(results, actions=client)
        assert view.has_next and len(view.items) == 2
        searches = len(server.calls_to("searchDocumentChunks"))
        send_from_page(view, do="more")
        assert len(server.calls_to("searchDocumentChunks")) == searches + 1
        assert server.calls_to("searchDocumentChunks")[-1].query["pageToken"] == [results.next_page_token]
        assert len(view.items) == 4 and "3. " in view.items[2]["html"] and view.error == ""
        assert view.has_next == view.results.has_next_page and view.results is not results
        names = [item["name"] for item in view.items]
        assert len(set(names)) == len(names)  # the next page, not the first one again
        while view.has_next:
            send_from_page(view, do="more")
        send_from_page(view, do="more")  # nothing left: no request, no error
        assert view.error == "" and not view.has_next
        server.__exit__(None, None, None)
        view.has_next, view.results = True, results  # pretend the first page was the last shown
        send_from_page(view, do="more")
        assert view.error.startswith("TransportError") and "\n" not in view.error
        client.close()


# -- documents ------------------------------------------------------------------------------------------------


def long_document(sections: int = 30) -> Document:
    body = "\n\n".join(f"## Step {i}\n\n" + f"Do thing {i}. " * 30 for i in range(1, sections + 1))
    return Document(name="documents/docs.example.dev/long", uri="https://docs.example.dev/long",
                    content=f"# Long guide\n\n{body}\n", title="Long guide", description="Many steps.")


def test_document_view_has_header_toc_and_body() -> None:
    view = DocumentView(long_document(6))
    value = view.page["html"]
    assert view.kind == "document" and 'class="devknow-doc-title"' in value and "Many steps." in value
    assert 'class="devknow-toc"' in value and ">Step 6</a>" in value and "Step 6</h2>" in value
    assert not view.truncated


def test_truncated_document_renders_in_full_on_show_all() -> None:
    # A page short enough to render at once (render/sections.py's FIRST_CHARS) is cut at max_chars as before.
    view = DocumentView(long_document(8), options=display.DisplayOptions(max_chars=2_000))
    assert view.truncated
    assert "Truncated: showing the first" in view.page["html"] and "Step 8</h2>" not in view.page["html"]
    assert "max_chars = 0" not in view.page["html"]  # the view has "Show all": no need to say how
    send_from_page(view, do="all", name=view.document.name)
    assert "Step 8</h2>" in view.page["html"] and "Truncated" not in view.page["html"]
    assert not view.truncated


def test_documents_view_lists_each_document_and_shows_all_of_one() -> None:
    docs = [long_document(8), Document.from_dict({"name": BUCKETS, "content": "# Buckets\n\nText."})]
    view = view_for(Documents(docs), options=display.DisplayOptions(page_size=1, max_chars=2_000))
    assert view.kind == "documents" and view.page_size == 1 and [item["name"] for item in view.items] == [
        docs[0].name, BUCKETS]
    assert "<b>2 documents</b>" in view.header and "Buckets</h1>" in view.items[1]["html"]
    assert view.items[0]["truncated"] and not view.items[1]["truncated"]
    send_from_page(view, do="all", name=docs[0].name)
    assert "Step 8</h2>" in view.items[0]["html"] and not view.items[0]["truncated"]


# -- answers ----------------------------------------------------------------------------------------------------


def test_answer_view_renders_the_answer_and_opens_references(client: DevKnowClient, backend: StaticBackend) -> None:
    answer = client.answer_query("Which region should a bucket use?")
    assert answer.references
    view = AnswerView(answer, actions=client)
    assert "<b>Answer</b> to <q>Which region should a bucket use?</q>" in view.header
    assert 'class="devknow-refs">References' in view.header
    assert view.page_size == len(answer.references)  # every reference shows, no "More"
    first = view.items[0]
    assert first["name"] == answer.references[0]
    assert f"1. <a href=\"https://{answer.references[0].removeprefix('documents/')}\"" in first["html"]
    before = len(fetched(backend))
    send_from_page(view, do="open", name=first["name"])
    assert view.page["name"] == first["name"] and "</h1>" in view.page["html"]
    assert len(fetched(backend)) == before + 1


def test_extractive_answers_are_labelled() -> None:
    view = AnswerView(Answer("Quoted **passage**.", [BUCKETS], "q", extractive=True))
    assert ">extractive</span>" in view.header and "<strong>passage</strong>" in view.header
    assert 'title="Extractive answer from the offline index: passages quoted, not generated."' in view.header


def test_views_have_cheap_reprs_and_ship_their_module() -> None:
    assert repr(HitList(many_hits(3))) == "<HitList>"
    assert repr(DocumentView(long_document(1))) == "<DocumentView>"
    view = HitList(many_hits(1))
    assert "export default { render }" in view._esm
    assert "function takeOwnKeys" in view._esm and "function takeOwnKeys" in ExplorerWidget._esm  # one keys.js
    assert isinstance(view, ipywidgets.DOMWidget)  # anywidget is an ipywidgets widget: the notebook contract holds


def test_the_stylesheet_is_one_model_for_every_view_not_in_each() -> None:
    from devknow_jupyter.render.style import CSS
    from devknow_jupyter.render.widgets import StyleSheet, _shared_style

    views = [HitList(many_hits(2)), DocumentView(long_document(1)), HitList(many_hits(3))]
    style = _shared_style()
    assert isinstance(style, StyleSheet) and CSS in style._css and ".dkv-item" in style._css
    for view in views:
        assert "<style" not in view.header and not getattr(view, "_css", "")
    assert _shared_style() is style  # one model, made once
    style.close()
    assert _shared_style() is not style  # closed (Widget.close_all()): made again for the next view

"""The live views: paging, Open/Close fetching through a client's actions, Show all, answers.

Most views act through a client on the in-process StaticBackend (devknow_jupyter.testing, the fixture
pages, no server); the header and the server-that-went-away tests use the real SDK test server.

Clicks go through ``Button.click()``, which (ipywidgets#2949) swallows exceptions raised by handlers into
the log. So every test asserts on what the view *shows* afterwards: a handler that raised would leave the
expected heading or label missing and fail the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ipywidgets
import pytest

from devknow_jupyter import display
from devknow_jupyter.client import DevKnowClient
from devknow_jupyter.models import Answer, Document, DocumentChunk, ResultInfo, SearchResults
from devknow_jupyter.render.views import widget_for as view_for
from devknow_jupyter.render.widgets import AnswerView, DocumentToggle, DocumentView, HitList
from devknow_jupyter.testing import StaticBackend
from tests.conftest import fixture_documents

BUCKETS = "documents/docs.example.dev/storage/buckets"
HEADING = "Create a storage bucket</h1>"


def html_text(widget: Any) -> str:
    """All HTML values in a widget tree, joined."""
    return "\n".join(_values(widget))


def _values(widget: Any) -> Iterator[str]:
    if isinstance(widget, ipywidgets.HTML):
        yield widget.value
    for child in getattr(widget, "children", ()):
        yield from _values(child)


def visible(widget: Any) -> bool:
    return widget.layout.display != "none"


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
    header = HitList(results).header.value
    port = client.endpoint.split(":")[-1].split("/")[0]
    assert f"<b>{len(results)} hits</b> for <q>bucket region</q> · remote (127.0.0.1:{port}) · " in header
    assert " ms · from cache" in header
    client.close()


def test_notices_show_as_a_line() -> None:
    results = many_hits(2)
    results.info.notices.append("The service could not be reached; these hits come from documents saved offline.")
    header = HitList(results).header.value
    assert '<div class="devknow-notice">The service could not be reached;' in header


def test_long_lists_page_with_show_more() -> None:
    view = HitList(many_hits(7), options=display.DisplayOptions(page_size=3))
    assert len(view.items.children) == 3 and view.more_button.description == "Show more (4 left)"
    view.more_button.click()
    assert len(view.items.children) == 6 and view.more_button.description == "Show more (1 left)"
    assert visible(view.more_button)
    view.more_button.click()
    assert len(view.items.children) == 7 and view.remaining == 0 and not visible(view.more_button)
    assert "7. " in html_text(view) and "Page 7" in html_text(view)


def models(widget: Any, seen: set[str] | None = None) -> set[str]:
    """The ids of every model a view sends to the frontend: widgets, their layouts and styles."""
    seen = set() if seen is None else seen
    seen.add(widget.model_id)
    for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
        if isinstance(part, ipywidgets.Widget):
            seen.add(part.model_id)
    for child in getattr(widget, "children", ()):
        models(child, seen)
    return seen


def test_widget_count_is_bounded_by_the_page_not_the_results() -> None:
    small, large = HitList(many_hits(10)), HitList(many_hits(500))
    assert len(models(small)) == len(models(large)) < 50
    large.more_button.click()
    assert len(large.hit_views) == 20 and len(models(large)) < 80


def test_a_closed_hit_costs_three_widgets_and_its_page_area_comes_with_the_first_open() -> None:
    ten = HitList(many_hits(10))
    eleven = HitList(many_hits(11), options=display.DisplayOptions(page_size=11))
    assert len(models(eleven)) - len(models(ten)) == 3  # the hit's box, its HTML and its button
    assert not any(hit.toggle.has_area for hit in eleven.hit_views)


def test_short_lists_have_no_show_more() -> None:
    view = HitList(many_hits(2))
    assert len(view.hit_views) == 2 and not visible(view.more_button)


def test_each_hit_has_title_link_passage_and_open_button(client: DevKnowClient) -> None:
    view = HitList(client.search_documents("bucket region"), actions=client)
    first = view.hit_views[0]
    assert 'href="https://docs.example.dev/storage/buckets" target="_blank" rel="noopener noreferrer"' in (
        first.html.value
    )
    assert first.toggle.button.description == "Open" and not first.toggle.button.disabled
    assert first.children == (first.html, first.toggle.button) and not first.toggle.has_area


# -- Open / Close ----------------------------------------------------------------------------------------------


def test_open_fetches_once_shows_in_place_and_folds(client: DevKnowClient, backend: StaticBackend) -> None:
    view = HitList(client.search_documents("bucket region"), actions=client)
    hit = next(h for h in view.hit_views if h.hit.parent == BUCKETS)
    before = len(fetched(backend))

    hit.toggle.button.click()
    assert HEADING in html_text(hit.toggle.area)
    assert hit.toggle.button.description == "Close"
    assert hit.children == (hit.html, hit.toggle.button, hit.toggle.area)  # the area, right below the button
    assert "devknow-hit-open" in hit._dom_classes  # the stylesheet hides the passage: the page shows it
    calls = fetched(backend)[before:]
    assert calls == [{"tool": "get_documents", "arguments": {"names": [BUCKETS]}}]

    area = hit.toggle.area
    hit.toggle.button.click()  # fold
    assert hit.toggle.area.children == () and hit.toggle.button.description == "Open"
    assert "devknow-hit-open" not in hit._dom_classes

    hit.toggle.button.click()  # open again: no new request, no second area
    assert HEADING in html_text(hit.toggle.area)
    assert hit.toggle.area is area and hit.children == (hit.html, hit.toggle.button, area)
    assert len(fetched(backend)) == before + 1


def test_a_second_view_opens_from_the_clients_cache(client: DevKnowClient, backend: StaticBackend) -> None:
    results = client.search_documents("bucket region")
    HitList(results, actions=client).hit_views[0].toggle.button.click()
    before = len(fetched(backend))
    other = next(h for h in HitList(results, actions=client).hit_views if h.hit.parent == results[0].parent)
    other.toggle.button.click()
    assert other.toggle.button.description == "Close" and other.toggle.view is not None
    assert len(fetched(backend)) == before


def test_an_unknown_document_shows_one_error_line(client: DevKnowClient) -> None:
    toggle = DocumentToggle("documents/docs.example.dev/no/such/page", client)
    toggle.button.click()
    text = html_text(toggle.area)
    assert 'class="devknow devknow-error"' in text and "DocumentNotFoundError: Unknown document:" in text
    assert text.count("\n") == 0 and toggle.button.description == "Open" and not toggle.button.disabled
    assert toggle.error is not None


def test_a_server_that_went_away_shows_one_error_line(sdk_server_factory: Any) -> None:
    server = sdk_server_factory()
    with DevKnowClient(server.url, timeout=5, connect_timeout=2, offline_store=False) as client:
        results = client.search_documents("bucket region")
        server.stop()
        hit = HitList(results, actions=client).hit_views[0]
        hit.toggle.button.click()
        text = html_text(hit.toggle.area)
        assert "devknow-error" in text and "TransportError: Could not connect" in text and "Traceback" not in text
        assert hit.toggle.button.description == "Open"
        assert "devknow-hit-open" not in hit._dom_classes  # nothing opened: the passage stays in view


def test_hits_given_no_actions_cannot_open() -> None:
    view = HitList(many_hits(1))
    toggle = view.hit_views[0].toggle
    assert toggle.button.disabled and "No client" in toggle.button.tooltip
    toggle.button.click()
    assert toggle.area.children == ()


LONG_PASSAGE = (
    "Intro to the steps.\n\n" + "".join(f"## Step {i}\n\nDo thing {i} carefully. Then check it.\n\n" for i in range(12))
)


def test_hits_show_a_short_preview_and_a_hit_alone_shows_its_whole_passage() -> None:
    results = SearchResults("steps", [DocumentChunk("documents/docs.example.dev/steps", "1", LONG_PASSAGE)])
    hit = HitList(results).hit_views[0]
    assert "Step 2</h2>" in hit.html.value and "Step 11</h2>" not in hit.html.value
    assert 'class="devknow-chunk devknow-body devknow-clamped"' in hit.html.value  # fades out at the bottom
    whole = HitList(results, options=display.DisplayOptions(preview_chars=0)).hit_views[0]
    assert "Step 11</h2>" in whole.html.value and "devknow-clamped" not in whole.html.value
    alone = view_for(results[0])
    assert "Step 11</h2>" in alone.html.value


# -- documents ------------------------------------------------------------------------------------------------


def long_document(sections: int = 30) -> Document:
    body = "\n\n".join(f"## Step {i}\n\n" + f"Do thing {i}. " * 30 for i in range(1, sections + 1))
    return Document(name="documents/docs.example.dev/long", uri="https://docs.example.dev/long",
                    content=f"# Long guide\n\n{body}\n", title="Long guide", description="Many steps.")


def test_document_view_has_header_toc_and_body() -> None:
    view = DocumentView(long_document(6))
    value = view.html.value
    assert 'class="devknow-doc-title"' in value and "Many steps." in value
    assert 'class="devknow-toc"' in value and ">Step 6</a>" in value and "Step 6</h2>" in value
    assert not view.truncated and not visible(view.show_all_button)


def test_truncated_document_renders_in_full_on_show_all() -> None:
    view = DocumentView(long_document(), options=display.DisplayOptions(max_chars=2_000))
    assert view.truncated and visible(view.show_all_button)
    assert "Truncated: showing the first" in view.html.value and "Step 30</h2>" not in view.html.value
    view.show_all_button.click()
    assert "Step 30</h2>" in view.html.value and "Truncated" not in view.html.value
    assert not view.truncated and not visible(view.show_all_button)


def test_documents_view_lists_each_document() -> None:
    docs = [long_document(2), Document.from_dict({"name": BUCKETS, "content": "# Buckets\n\nText."})]
    view = view_for(display_documents(docs), options=display.DisplayOptions(page_size=1))
    assert len(view.document_views) == 1 and visible(view.more_button)
    view.more_button.click()
    assert len(view.document_views) == 2 and not visible(view.more_button)
    assert "<b>2 documents</b>" in view.header.value and "Buckets</h1>" in html_text(view)


def display_documents(docs: list[Document]) -> Any:
    from devknow_jupyter.models import Documents

    return Documents(docs)


# -- answers ----------------------------------------------------------------------------------------------------


def test_answer_view_renders_the_answer_and_opens_references(client: DevKnowClient, backend: StaticBackend) -> None:
    answer = client.answer_query("Which region should a bucket use?")
    assert answer.references
    view = AnswerView(answer, actions=client)
    value = view.html.value
    assert "<b>Answer</b> to <q>Which region should a bucket use?</q>" in value
    assert 'class="devknow-refs">References' in value
    first = view.toggles[0]
    assert f"1. <a href=\"https://{answer.references[0].removeprefix('documents/')}\"" in html_text(view)
    assert not any(toggle.has_area for toggle in view.toggles)  # areas come with the first Open
    before = len(fetched(backend))
    first.button.click()
    assert first.button.description == "Close" and "</h1>" in html_text(first.area)
    assert len(fetched(backend)) == before + 1
    rows = list(view.children)
    assert first.button in rows[1].children and rows[2] is first.area  # the page sits right below its row
    assert [toggle.has_area for toggle in view.toggles] == [True] + [False] * (len(view.toggles) - 1)


def test_extractive_answers_are_labelled() -> None:
    view = AnswerView(Answer("Quoted **passage**.", [BUCKETS], "q", extractive=True))
    assert ">extractive</span>" in view.html.value and "<strong>passage</strong>" in view.html.value
    assert 'title="Extractive answer from the offline index: passages quoted, not generated."' in view.html.value


def test_views_have_cheap_reprs() -> None:
    assert repr(HitList(many_hits(3))) == "<HitList>"
    assert repr(DocumentView(long_document(1))) == "<DocumentView>"

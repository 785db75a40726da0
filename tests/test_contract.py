"""The typed backend contract's pure parts: capabilities read from tool schemas, the client's plans, and the
registry's mappings (request ↔ arguments, model ↔ result) for the three tools."""

from __future__ import annotations

import pytest

from devknow_jupyter.contract import NO_FILTERS, AnswerQuery, Capabilities, SearchQuery
from devknow_jupyter.errors import ConfigurationError, ToolError
from devknow_jupyter.local.backend import LocalBackend
from devknow_jupyter.models import Answer, Document, DocumentChunk, Documents, SearchResults
from devknow_jupyter.registry import REGISTRY, entry_for, tool_definitions
from devknow_jupyter.search_request import plan_answer, plan_search
from devknow_jupyter.tool_backend import capabilities_from_tools

HOSTS = Capabilities(search_sites="hosts", search_dates=True, paging=True, answer_sites="hosts", answer_dates=True)


def test_capabilities_are_read_from_the_schemas() -> None:
    service = capabilities_from_tools(tool_definitions())
    assert (service.search_sites, service.search_dates, service.paging) == ("none", False, False)
    assert service.operations == {"search", "get", "answer"}
    local = capabilities_from_tools(tool_definitions(local=True))
    assert (local.search_sites, local.search_dates, local.paging, local.answer_sites) == ("one", True, True, "one")
    assert local == LocalBackend.capabilities  # what the local index says of itself is what its schemas say
    widened = tool_definitions()
    widened[0]["inputSchema"]["properties"]["filter"] = {"type": "string"}
    assert capabilities_from_tools(widened).search_sites == "hosts"
    assert capabilities_from_tools(widened[:1]).operations == {"search"}


def test_the_plan_sends_what_the_backend_applies_and_filters_the_rest_here() -> None:
    sites = ["a.dev", "b.dev/docs"]
    request, here, notices = plan_search("q", sites, "2026-03-01", 250, None, HOSTS)
    assert request == SearchQuery("q", ("a.dev", "b.dev/docs"), "2026-03-01T00:00:00Z", 100)
    assert here == ["b.dev/docs"] and "at most 100" in notices[0]
    request, here, notices = plan_search("q", sites, "2026-03-01", 5, None, NO_FILTERS)
    assert request == SearchQuery("q") and here == sites
    assert notices == ["Not applied: since 2026-03-01T00:00:00Z (this server's search takes no date filter)."]
    one = Capabilities(search_sites="one")
    assert plan_search("q", ["a.dev"], None, None, None, one)[:2] == (SearchQuery("q", ("a.dev",)), [])
    with pytest.raises(ConfigurationError, match="no pages"):
        plan_search("q", [], None, None, "token", one)
    request, notices = plan_answer("q", sites, None, Capabilities(answer_sites="one"))
    assert request == AnswerQuery("q") and notices == [
        "Not applied: source a.dev, b.dev/docs (this server's answers take one site)."
    ]


def test_each_tool_maps_arguments_to_requests_and_models_to_results_and_back() -> None:
    search = REGISTRY["search_documents"]
    request = search.request({"query": " relay ", "source": "HTTPS://Lantern.test/", "page_size": 3})
    assert request == SearchQuery("relay", ("lantern.test",), None, 3)
    assert search.arguments(request, {"source", "page_size"}) == {"query": "relay", "source": "lantern.test",
                                                                   "page_size": 3}
    assert search.arguments(request, {"filter"})["filter"] == 'data_source = "lantern.test"'
    hits = SearchResults("relay", [DocumentChunk("documents/lantern.test/a", "1", "text")], next_page_token="t")
    hits.info.notices.append("a weak match")
    back = search.model_from(search.result_from(hits), request)
    assert back == hits and back.next_page_token == "t" and back.info.notices == ["a weak match"]
    documents = REGISTRY["get_documents"]
    docs = Documents([Document("documents/lantern.test/a", "https://lantern.test/a", "# A\n", title="A")])
    assert documents.model_from(documents.result_from(docs), ("documents/lantern.test/a",)) == docs
    answer = entry_for(operation="answer")
    said = Answer("quoted", ["documents/lantern.test/a"], query="q", extractive=True)
    assert answer.model_from(answer.result_from(said), AnswerQuery("q")) == said
    with pytest.raises(ToolError, match="INVALID_ARGUMENT: page_size"):
        search.request({"query": "q", "page_size": 0})
    assert [entry.retry_429 for entry in REGISTRY.values()] == [True, True, False]
    assert search.check({"results": [{"parent": 7}]}) == "results[0].parent is not a string"

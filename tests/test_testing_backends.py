"""devknow_jupyter.testing: in-process backends that keep the Backend contract (the contract tests in
test_local_backend.py run against StaticBackend too); here what is particular to them."""

from __future__ import annotations

import pytest

from devknow_jupyter import DevKnowClient, DocumentNotFoundError, ToolError
from devknow_jupyter.backend import Backend
from devknow_jupyter.testing import InProcessBackend, StaticBackend

PAGE = {"name": "documents/docs.lantern.test/setup", "content": "# Set up Lantern\n\nInstall the relay first."}


def test_in_process_backend_calls_the_handler_and_records_the_calls() -> None:
    def handler(tool: str, arguments: dict) -> dict:
        if tool == "search_documents":
            return {"results": [{"parent": PAGE["name"], "id": "1", "content": arguments["query"].upper()}]}
        raise ToolError(f"{tool} failed: INVALID_ARGUMENT: nope", tool=tool)

    backend = InProcessBackend(handler)
    assert isinstance(backend, Backend)
    client = DevKnowClient(backend=backend, cache=False)
    assert client.search_documents("relay")[0].content == "RELAY"
    assert backend.calls == [("search_documents", {"query": "relay"})]
    with pytest.raises(ToolError, match="INVALID_ARGUMENT"):
        client.answer_query("why?")
    client.close()
    assert backend.closed


def test_static_backend_serves_documents_and_splits_batches_for_unknown_names() -> None:
    backend = StaticBackend([PAGE])
    client = DevKnowClient(backend=backend, cache=False)
    assert client.search_documents("install relay").names == [PAGE["name"]]
    with pytest.raises(DocumentNotFoundError) as caught:
        client.get_documents([PAGE["name"], "documents/docs.lantern.test/nope"])
    assert caught.value.missing == ["documents/docs.lantern.test/nope"]
    assert [doc.title for doc in caught.value.documents] == ["Set up Lantern"]
    # The whole batch failed once, then each half was asked for alone.
    assert [len(args["names"]) for tool, args in backend.calls if tool == "get_documents"] == [2, 1, 1]


def test_the_magics_session_runs_on_an_in_process_backend(static_ip) -> None:
    from devknow_jupyter.session import shared_client

    hits = static_ip.run_line_magic("devsearch", "bucket names")
    (backend,) = static_ip.backends
    assert backend.calls == [("search_documents", {"query": "bucket names"})]
    assert hits.names and set(hits.names) <= set(backend.documents)
    assert shared_client(static_ip).endpoint == "memory://devknow"
    docs = static_ip.run_line_magic("devget", "_devsearch[0]")
    assert [doc.name for doc in docs] == [hits[0].parent] and backend.calls[-1][0] == "get_documents"

    # A setting that rebuilds the client makes a new backend: closing a client closes its backend.
    static_ip.run_line_magic("config", "DevKnowMagics.timeout = 7")
    static_ip.run_line_magic("devsearch", "quota units")
    assert backend.closed and len(static_ip.backends) == 2 and static_ip.backends[1].calls[0][0] == "search_documents"

    # Without the backend the endpoint applies again (here the offline index: no DEVKNOW_ENDPOINT in tests).
    magics = static_ip.magics_manager.registry["DevKnowMagics"]
    assert magics.session.configure(backend=None)
    assert shared_client(static_ip).backend_kind == "local" and len(static_ip.backends) == 2

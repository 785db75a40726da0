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

"""Security gallery of the Jupyter server extension (issue 21, item 8), through a real Jupyter server.

Bad input is one 400 in the usual ``{"error": {type, message, hint}}`` shape, never a 500: a lone surrogate
in a name or a question, a 100,000-deep JSON body, a huge body, query text that is not UTF-8.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import stop_process
from tests.test_labext import JupyterServer, start_jupyter_server

DEEP = 100_000


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """The extension over the offline index."""
    server = start_jupyter_server(tmp_path_factory.mktemp("lab-security"))
    yield server
    stop_process(server.proc)


def assert_400(server: JupyterServer, method: str, path: str, body: bytes | None = None) -> dict:
    """``method path`` is refused with a one-line ConfigurationError, and the server still answers after it."""
    status, reply, text = server.call(method, path, body)
    assert status == 400, (status, text[:300])
    error = reply["error"]
    assert set(error) == {"type", "message", "hint"} and error["type"] == "ConfigurationError", reply
    assert error["message"] and "\n" not in error["message"] and len(error["message"]) < 200, reply
    assert server.call("GET", "status")[0] == 200
    return error


@pytest.mark.parametrize(
    ("path", "body"),
    [("documents", b'{"names": ["documents/\\ud800"]}'), ("answer", b'{"query": "restrict a key \\udfff"}'),
     ("documents", b'{"names": ["documents/docs.example.dev/keys/restrict"], "\\udc00": 1}')],
)
def test_a_lone_surrogate_is_400(local_server: JupyterServer, path: str, body: bytes) -> None:
    error = assert_400(local_server, "POST", path, body)
    assert "Unicode" in error["message"]


@pytest.mark.parametrize("path", ["documents", "answer"])
def test_a_100000_deep_body_is_400(local_server: JupyterServer, path: str) -> None:
    assert_400(local_server, "POST", path, b'{"names": ' + b"[" * DEEP + b"]" * DEEP + b"}")


def test_a_deep_body_within_the_size_limit_is_400(local_server: JupyterServer) -> None:
    deep = 20_000  # 40 KB: refused for its depth, before the decoder recurses into it
    error = assert_400(local_server, "POST", "documents", b'{"names": ' + b"[" * deep + b"]" * deep + b"}")
    assert "deep" in error["message"]


def test_brackets_inside_strings_are_text_not_depth(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("POST", "answer", {"query": "restrict an API key [[[[[[[[[[[[[[[[[[[["})
    assert status == 200 and reply["kind"] == "answer", reply


def test_a_huge_body_is_400(local_server: JupyterServer) -> None:
    names = [f"documents/docs.example.dev/page-{i}" for i in range(40_000)]  # ~1.4 MB
    error = assert_400(local_server, "POST", "documents", json.dumps({"names": names}).encode())
    assert "bytes" in error["message"]


@pytest.mark.parametrize("query", ["%ED%A0%80", "%FF%FE", "key%C0"])
def test_query_text_that_is_not_utf8_is_400(local_server: JupyterServer, query: str) -> None:
    assert_400(local_server, "GET", f"search?query={query}")

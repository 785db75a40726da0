"""The offline fallback: with a key, an unreachable service is answered by the local index, with a notice.

"Unreachable" is made real on 127.0.0.1: a port that was bound and closed again (connection refused),
and a listening socket whose backlog is full and that never accepts (the connect or the read times out).
Errors that are the server's own answer (401/403, 429, unknown documents) come from the SDK test server
and must not fall back.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator

import pytest
from IPython.utils.capture import capture_output

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cache import shared_cache
from devknow_jupyter.cli import EXIT_STATUS, main
from devknow_jupyter.errors import (
    AuthenticationError,
    DocumentNotFoundError,
    QuotaExceededError,
    TransportError,
)
from devknow_jupyter.fallback import FALLBACK_BACKEND
from tests.servers.scripted import ScriptedServer, modern_server

KEY = "dk-fallback-SECRET-5e1c0b"
CACHING = "documents/devknow-jupyter.dev/guide/caching"
NOTICE = re.compile(r"The service could not be reached \(.+\), so the local index answered instead\.")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A port that listens but never accepts, its backlog already full: connecting or reading times out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):  # take the backlog's places, so the client's connection is never completed
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    yield f"http://127.0.0.1:{port}/mcp"
    for filler in fillers:
        filler.close()
    listener.close()


def test_all_three_tools_answer_from_the_local_index(closed_port_url: str) -> None:
    with DevKnowClient(closed_port_url, api_key=KEY) as client:
        assert client.offline_fallback and client.status()["answered_by"] is None
        hits = client.search_documents("clear the result cache")
        assert CACHING in hits.names[:3]
        assert hits.info.backend == "local" and hits.info.endpoint == "local"
        assert len(hits.info.notices) == 1 and NOTICE.fullmatch(hits.info.notices[0])
        assert "127.0.0.1" in hits.info.notices[0] and KEY not in hits.info.notices[0]
        assert client.status()["answered_by"] == FALLBACK_BACKEND

        docs = client.get_documents([CACHING])
        assert docs[0].title == "Caching" and NOTICE.fullmatch(docs.info.notices[0])
        assert docs.info.backend == "local"

        answer = client.answer_query("How do I clear the cache?")
        assert CACHING in answer.references and NOTICE.fullmatch(answer.info.notices[0])
        assert answer.extractive

        # Results that stand in for the service are not cached under its endpoint: when it is back,
        # it answers.
        assert len(shared_cache()) == 0
        assert "offline fallback" in repr(client.status())


def test_a_page_missing_locally_is_still_not_found(closed_port_url: str) -> None:
    with DevKnowClient(closed_port_url, api_key=KEY) as client, pytest.raises(DocumentNotFoundError) as caught:
        client.get_documents([CACHING, "documents/nowhere.example/page"])
    error = caught.value
    assert error.missing == ["documents/nowhere.example/page"]
    assert "local index" in error.message and "could not be reached" in error.message
    assert [doc.name for doc in error.documents] == [CACHING]
    assert NOTICE.fullmatch(error.documents.info.notices[0])


def test_a_connect_timeout_falls_back_too(silent_url: str) -> None:
    with DevKnowClient(silent_url, api_key=KEY, timeout=0.5, connect_timeout=0.3) as client:
        hits = client.search_documents("clear the result cache")
    assert CACHING in hits.names[:3]
    assert NOTICE.fullmatch(hits.info.notices[0])
    assert re.search(r"within 0\.[35] s", hits.info.notices[0])  # the connect (or read) timeout said


def test_no_fallback_without_a_key_or_when_turned_off(closed_port_url: str) -> None:
    with DevKnowClient(closed_port_url) as client:  # not the live service's situation: say the error
        assert not client.offline_fallback
        with pytest.raises(TransportError):
            client.search_documents("clear the result cache")
    off = DevKnowClient(closed_port_url, api_key=KEY, offline_fallback=False)
    with off, pytest.raises(TransportError):
        off.answer_query("How do I clear the cache?")


def test_the_servers_own_answers_never_fall_back(sdk_server_factory) -> None:
    guarded = sdk_server_factory("--api-key", "the-right-key-0000", "--answer-quota", "0")
    with DevKnowClient(guarded.url, api_key=KEY) as client, pytest.raises(AuthenticationError):
        client.search_documents("clear the result cache")
    with DevKnowClient(guarded.url, api_key="the-right-key-0000") as client:
        with pytest.raises(QuotaExceededError):
            client.answer_query("How do I clear the cache?")
        with pytest.raises(DocumentNotFoundError) as caught:
            client.get_documents([CACHING])  # in the local index, but the server said it does not know it
        assert "local index" not in caught.value.message
        assert client.status()["answered_by"] == "remote"


def test_devsearch_in_ipython_shows_the_notice(ip, closed_port_url: str, monkeypatch) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", KEY)
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {closed_port_url!r}")
    for code in ("%devsearch clear the result cache", f"%devget {CACHING}", "%%devask\nHow do I clear the cache?"):
        with capture_output() as captured:
            result = ip.run_cell(code, store_history=True)
        assert result.error_in_exec is None, code
        shown = result.result if result.result is not None else ip.user_ns["_devask"]
        bundle, _ = ip.display_formatter.format(shown)
        for mime in ("text/plain", "text/html", "text/markdown"):  # every view says where the answer came from
            if mime in bundle:
                assert "could not be reached" in bundle[mime], (code, mime)
        assert KEY not in captured.stdout + captured.stderr + json.dumps(bundle, default=str)
    status = ip.run_line_magic("devknow", "")
    assert re.search(r"answered by +local \(offline fallback\)", repr(status))
    assert KEY not in repr(status)


def test_devknow_search_and_status_on_the_command_line(closed_port_url: str, monkeypatch, capsys) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", KEY)
    assert main(["--endpoint", closed_port_url, "search", "clear", "the", "result", "cache"]) == 0
    captured = capsys.readouterr()
    assert "guide/caching" in captured.out
    assert re.search(r"devknow: note: The service could not be reached .*local index", captured.err)
    assert main(["--endpoint", closed_port_url, "--json", "ask", "How do I clear the cache?"]) == 0
    captured = capsys.readouterr()
    assert CACHING in json.loads(captured.out)["references"] and "could not be reached" in captured.err
    assert main(["--endpoint", closed_port_url, "get", CACHING]) == 0
    captured = capsys.readouterr()
    assert "# Caching" in captured.out and "could not be reached" in captured.err
    args = ["--endpoint", closed_port_url, "get", CACHING, "documents/nowhere.example/page"]
    assert main(args) == EXIT_STATUS[DocumentNotFoundError]
    captured = capsys.readouterr()
    assert "# Caching" in captured.out
    assert re.search(r"error: Unknown document in the local index \(the service could not be reached\)", captured.err)

    assert main(["--endpoint", closed_port_url, "status"]) == 0
    captured = capsys.readouterr()
    assert re.search(r"answered by +local \(offline fallback\)", captured.out)
    assert "local index" in captured.err and KEY not in captured.out + captured.err


def test_a_site_filter_is_applied_by_the_local_index_when_it_stands_in(closed_port_url: str) -> None:
    with DevKnowClient(closed_port_url, api_key=KEY) as client:
        hits = client.search_documents("clear the result cache", source="https://devknow-jupyter.dev/guide")
        none = client.search_documents("clear the result cache", source="adk.dev")
    assert CACHING in hits.names and all(name.startswith("documents/devknow-jupyter.dev/guide/") for name in hits.names)
    assert NOTICE.fullmatch(hits.info.notices[0]) and not any("Filtered here" in n for n in hits.info.notices)
    assert len(none) == 0 and NOTICE.fullmatch(none.info.notices[0]) and len(none.info.notices) == 2
    assert "adk.dev" in none.info.notices[1]  # the local index's own word on a site with no match


def _timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    value = call()
    return time.perf_counter() - started, value


def test_after_the_service_stops_it_is_skipped_for_a_pause_then_tried_again() -> None:
    """A server stopped mid-test: the first call finds out (and falls back), the later ones skip the network
    and take milliseconds, and the first call after the pause reaches the server that is back on its port."""
    with ScriptedServer(modern_server(lambda call: None)) as server:
        client = DevKnowClient(server.url, api_key=KEY, offline_retry=1.5)
        assert client.search_documents("is the service there").info.backend == "remote"
    port = server.port
    with client:
        first, hits = _timed(lambda: client.search_documents("clear the result cache"))
        assert hits.info.backend == "local" and NOTICE.fullmatch(hits.info.notices[0])
        status = client.status()
        assert status["service_next_try"] - status["service_unreachable_since"] == pytest.approx(1.5, abs=0.1)
        # Something listens on the port now: a call that tried the service would be seen connecting.
        with socket.socket() as listener:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", port))
            listener.listen(8)
            listener.setblocking(False)
            later = [
                _timed(lambda: client.search_documents("clear the result cache"))[0],
                _timed(lambda: client.get_documents([CACHING]))[0],
                _timed(lambda: client.answer_query("How do I clear the cache?"))[0],
                _timed(lambda: client.search_documents("invalidate cached results"))[0],
            ]
            with pytest.raises(BlockingIOError):
                listener.accept()  # nobody connected during the pause
        print(f"first call {first * 1000:.0f} ms; later calls {', '.join(f'{t * 1000:.1f}' for t in later)} ms")
        assert max(later) < 0.2, later
        skipped = client.search_documents("clear the result cache")
        assert NOTICE.fullmatch(skipped.info.notices[0]) and "not tried again for" in skipped.info.notices[0]
        time.sleep(max(0.0, client.status()["service_next_try"] - time.time()) + 0.1)
        with ScriptedServer(modern_server(lambda call: None), port=port) as back:
            again = client.search_documents("clear the result cache")
            assert again.info.backend == "remote" and not again.info.notices
            assert back.rpc_methods() and client.status()["service_next_try"] is None


def test_failed_tries_lengthen_the_pause(closed_port_url: str) -> None:
    with DevKnowClient(closed_port_url, api_key=KEY, offline_retry=0.3) as client:
        client.search_documents("clear the result cache")
        first = client.status()
        time.sleep(0.4)
        client.search_documents("clear the result cache")  # tried again, refused again
        second = client.status()
    assert first["service_next_try"] - first["service_unreachable_since"] == pytest.approx(0.3, abs=0.1)
    assert second["service_unreachable_since"] == first["service_unreachable_since"]
    assert second["service_next_try"] - time.time() > 0.4  # 0.6 s after the second failure


def test_devknow_says_when_the_service_is_tried_next(ip, closed_port_url: str, monkeypatch) -> None:
    monkeypatch.setenv("DEVKNOW_API_KEY", KEY)
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {closed_port_url!r}")
    assert "Connection refused" in dict(ip.run_line_magic("devknow", "").rows)["tools"]  # the try that failed
    with capture_output():
        took = [_timed(lambda: ip.run_cell("%devsearch clear the result cache"))[0] for _ in range(3)]
    assert max(took[1:]) < 0.25, took  # the first opens the local index; none waits for the network
    row = dict(ip.run_line_magic("devknow", "").rows)["offline fallback"]
    assert re.fullmatch(
        r"answering: the service could not be reached at \d\d:\d\d:\d\d UTC; "
        r"the next try is in \d+ s \(\d\d:\d\d:\d\d UTC\)",
        row,
    ), row


def test_the_panels_searches_skip_the_unreachable_service_too(tmp_path, closed_port_url: str) -> None:
    from tests.conftest import stop_process
    from tests.test_labext import start_jupyter_server

    server = start_jupyter_server(
        tmp_path, config={"DevKnowServer": {"endpoint": closed_port_url}}, env={"DEVKNOW_API_KEY": KEY}
    )
    try:
        took = []
        for query in ("clear the result cache", "invalidate cached results", "cache size", "cache hit rate"):
            elapsed, (status, reply, text) = _timed(
                lambda q=query: server.call("GET", f"search?query={q.replace(' ', '%20')}")
            )
            assert status == 200 and reply["info"]["backend"] == "local" and KEY not in text
            took.append(elapsed)
    finally:
        stop_process(server.proc)
    print(f"panel searches: {', '.join(f'{t * 1000:.0f}' for t in took)} ms")
    assert max(took[1:]) < 0.5, took  # after the first, none waits for the network (about 1 s each before)

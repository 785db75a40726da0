"""The JupyterLab panel's server extension (``devknow/api/*``) through a real Jupyter server on 127.0.0.1.

Each server is ``python -m jupyter_server`` from this interpreter, with the extension enabled only by the
enable file the wheel ships (copied into a temporary ``JUPYTER_CONFIG_DIR``), so these tests also prove
that file works. Behind it: the offline index (no key), or the SDK test server with a key.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, RunningServer, free_port, start_sdk_server, stop_process

ENABLE_FILE = ROOT / "labextension" / "jupyter-config" / "server" / "devknow_jupyter.labext.json"
KEY = "dk-test-labext-secret-key-0123456789abcdefgh"


@dataclass
class JupyterServer:
    """A running Jupyter server: base URL, token, process and log."""

    base: str
    token: str
    proc: subprocess.Popen
    log_path: Path

    def call(self, method: str, path: str, body: Any = None, *, token: bool = True, headers: dict | None = None,
             opener: urllib.request.OpenerDirector | None = None) -> tuple[int, dict[str, Any], str]:
        """``method`` on ``devknow/api/<path>``: status, parsed JSON reply, raw text."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        request = urllib.request.Request(f"{self.base}/devknow/api/{path}", data=data, method=method)
        if token:
            request.add_header("Authorization", f"token {self.token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with (opener or urllib.request.build_opener()).open(request, timeout=60) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = {}
        return status, parsed, text


def start_jupyter_server(state: Path, *, config: dict[str, Any] | None = None, env: dict[str, str] | None = None,
                         deadline: float = 60.0) -> JupyterServer:
    """A Jupyter server on a free port whose config dir holds our enable file (and ``config``)."""
    config_dir = state / "config"
    (config_dir / "jupyter_server_config.d").mkdir(parents=True)
    shutil.copy(ENABLE_FILE, config_dir / "jupyter_server_config.d" / ENABLE_FILE.name)
    (config_dir / "jupyter_server_config.json").write_text(json.dumps(config or {}))
    (state / "root").mkdir()
    port, token = free_port(), secrets.token_hex(16)
    keys = ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT")
    run_env = {name: value for name, value in os.environ.items() if name not in keys}
    run_env.update(
        JUPYTER_CONFIG_DIR=str(config_dir),
        JUPYTER_DATA_DIR=str(state / "data"),
        JUPYTER_RUNTIME_DIR=str(state / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        DEVKNOW_CACHE_DIR=str(state / "devknow-cache"),
        PYTHONPATH=os.pathsep.join([str(ROOT), run_env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        **(env or {}),
    )
    args = [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={state / 'root'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--ServerApp.allow_root=True")
    log_path = state / "server.log"
    with log_path.open("wb") as out:
        proc = subprocess.Popen(args, env=run_env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = JupyterServer(f"http://127.0.0.1:{port}", token, proc, log_path)
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter_server exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            status, _, _ = server.call("GET", "status")
            if status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.2)
    stop_process(proc)
    raise RuntimeError(f"jupyter_server did not serve devknow/api/status in time:\n{log_path.read_text()}")


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """The extension over the offline index (no key anywhere)."""
    server = start_jupyter_server(tmp_path_factory.mktemp("lab-local"))
    yield server
    stop_process(server.proc)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, RunningServer]]:
    """The extension over the SDK test server, which wants ``KEY`` and has no answer quota left."""
    mcp = start_sdk_server(tmp_path_factory.mktemp("sdk"), "--api-key", KEY, "--answer-quota", "0")
    server = start_jupyter_server(
        tmp_path_factory.mktemp("lab-keyed"),
        config={"DevKnowServer": {"endpoint": mcp.url}},
        env={"DEVKNOW_API_KEY": KEY},
    )
    yield server, mcp
    stop_process(server.proc)
    mcp.stop()


def _assert_error(reply: dict[str, Any], kind: str) -> None:
    error = reply["error"]
    assert error["type"] == kind, reply
    assert error["message"] and "\n" not in error["message"], reply
    assert set(error) == {"type", "message", "hint"}


def test_status_names_the_backend_never_a_key(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("GET", "status")
    assert status == 200
    assert reply["backend"] == "local" and reply["endpoint"] == "local" and reply["key_source"] is None
    assert ".devknow" in reply["stylesheet"] and reply["version"]
    # The site box suggests the hosts of the pages the offline index holds, not the service's sites.
    assert reply["sites"] == ["devknow-jupyter.dev"]  # the starter pack's one site


def test_search_returns_the_service_shape_with_rendered_html(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("GET", "search?" + urllib.parse.urlencode({"query": "API key", "n": 3}))
    assert status == 200, reply
    assert reply["kind"] == "search" and reply["query"] == "API key"
    hits = reply["results"]
    assert 1 <= len(hits) <= 3
    for hit in hits:
        assert {"parent", "id", "content", "title", "uri", "html"} <= set(hit)
        assert hit["parent"].startswith("documents/") and hit["uri"].startswith("https://")
        assert "devknow-hit-title" in hit["html"] and "<script" not in hit["html"]
    assert "hit" in reply["header_html"]


def test_search_source_filter_keeps_one_site(local_server: JupyterServer) -> None:
    def hosts(source: str) -> list[str]:
        query = urllib.parse.urlencode({"query": "API key", "source": source, "n": 20})
        status, reply, _ = local_server.call("GET", f"search?{query}")
        assert status == 200 and reply["source"] == source, reply
        return [urllib.parse.urlsplit(hit["uri"]).hostname for hit in reply["results"]]

    starter_site = "devknow-jupyter.dev"  # the starter pack's pages all live there
    assert hosts(starter_site) and set(hosts(starter_site)) == {starter_site}
    assert hosts("firebase.google.com") == []


def test_search_n_is_how_many_hits_come_back(local_server: JupyterServer) -> None:
    """The panel asks for n=20 and gets 20 (the page size goes to the backend; before, its default of 10)."""
    def count(n: int) -> int:
        status, reply, _ = local_server.call("GET", "search?" + urllib.parse.urlencode({"query": "API key", "n": n}))
        assert status == 200, reply
        return len(reply["results"])

    assert count(5) == 5
    assert count(20) == 20
    assert 20 < count(50) <= 50  # all the offline index has for it, up to n


@pytest.mark.parametrize(
    "query",
    ["search?query=", "search?query=%20%20", "search?query=x&n=abc", "search?query=x&n=0", "search?query=x&n=999"],
)
def test_bad_search_input_is_400(local_server: JupyterServer, query: str) -> None:
    status, reply, _ = local_server.call("GET", query)
    assert status == 400
    _assert_error(reply, "ConfigurationError")


def test_documents_returns_pages_with_contents_and_anchors(local_server: JupyterServer) -> None:
    _, hits, _ = local_server.call("GET", "search?query=API%20key&n=2")
    names = [hit["parent"] for hit in hits["results"]]
    status, reply, _ = local_server.call("POST", "documents", {"names": names})
    assert status == 200, reply
    assert [doc["name"] for doc in reply["documents"]] == list(dict.fromkeys(names))
    doc = reply["documents"][0]
    assert {"name", "uri", "content", "description", "title", "html"} <= set(doc)
    assert 'class="devknow-doc"' in doc["html"]
    if doc["content"].count("\n#") >= 2:  # a page with headings gets its contents list, linking to the ids
        assert 'class="devknow-toc"' in doc["html"] and 'href="#dk-' in doc["html"] and 'id="dk-' in doc["html"]


def test_documents_by_page_url(local_server: JupyterServer) -> None:
    _, hits, _ = local_server.call("GET", "search?query=API%20key&n=1")
    status, reply, _ = local_server.call("POST", "documents", {"names": [hits["results"][0]["uri"]]})
    assert status == 200 and reply["documents"][0]["name"] == hits["results"][0]["parent"]


def test_unknown_document_is_404(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("POST", "documents", {"names": ["documents/example.com/no/such/page"]})
    assert status == 404
    _assert_error(reply, "DocumentNotFoundError")


@pytest.mark.parametrize("body", [b"not json", b"[]", {"names": []}, {"names": "x"}, {"names": [1]}, {}])
def test_bad_documents_body_is_400(local_server: JupyterServer, body: Any) -> None:
    status, reply, _ = local_server.call("POST", "documents", body)
    assert status == 400
    _assert_error(reply, "ConfigurationError")


def test_answer_with_references(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("POST", "answer", {"query": "How do I restrict an API key?"})
    assert status == 200, reply
    assert reply["kind"] == "answer" and reply["answerText"] and reply["references"]
    assert reply["extractive"] is True  # the offline index quotes passages
    assert "devknow-ref" in reply["html"] and "References" in reply["html"]


def test_empty_question_is_400(local_server: JupyterServer) -> None:
    status, reply, _ = local_server.call("POST", "answer", {"query": "  "})
    assert status == 400
    _assert_error(reply, "ConfigurationError")


def test_without_login_every_endpoint_is_refused(local_server: JupyterServer) -> None:
    for method, path, body in [("GET", "status", None), ("GET", "search?query=key", None),
                               ("POST", "answer", {"query": "key"})]:
        status, reply, _ = local_server.call(method, path, body, token=False)
        assert status == 403, (path, status)
        assert "error" not in reply  # Jupyter's own refusal: our handler never ran


def test_cookie_login_needs_the_xsrf_token_for_posts(local_server: JupyterServer) -> None:
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    browser.open(f"{local_server.base}/login?next=%2F", timeout=30).close()  # sets _xsrf
    login = urllib.parse.urlencode({"password": local_server.token, "_xsrf": _cookie(jar, "_xsrf")}).encode()
    browser.open(urllib.request.Request(f"{local_server.base}/login?next=%2F", data=login), timeout=30).close()
    status, _, _ = local_server.call("GET", "status", token=False, opener=browser)
    assert status == 200  # logged in by cookie
    status, reply, _ = local_server.call("POST", "answer", {"query": "API key"}, token=False, opener=browser)
    assert status == 403 and "error" not in reply  # no X-XSRFToken: refused before our handler
    status, reply, _ = local_server.call("POST", "answer", {"query": "API key"}, token=False, opener=browser,
                                         headers={"X-XSRFToken": _cookie(jar, "_xsrf")})
    assert status == 200 and reply["kind"] == "answer"


def _cookie(jar: http.cookiejar.CookieJar, name: str) -> str:
    return next(cookie.value for cookie in jar if cookie.name == name)


def test_missing_key_for_googles_service_is_one_line_401(tmp_path: Path) -> None:
    server = start_jupyter_server(
        tmp_path, config={"DevKnowServer": {"endpoint": "https://developerknowledge.googleapis.com/mcp"}}
    )
    try:
        status, reply, _ = server.call("GET", "search?query=bucket")
        assert status == 401
        _assert_error(reply, "AuthenticationError")
        assert "DEVKNOW_API_KEY" in reply["error"]["hint"]
        status, reply, _ = server.call("GET", "status")
        assert status == 200 and reply["key_source"] is None
    finally:
        stop_process(server.proc)


def test_remote_service_with_key_and_quota_fallback(keyed: tuple[JupyterServer, RunningServer]) -> None:
    server, mcp = keyed
    texts = []
    status, reply, text = server.call("GET", "status")
    texts.append(text)
    assert status == 200 and reply["backend"] == "remote" and reply["key_source"] == "DEVKNOW_API_KEY"
    assert "cloud.google.com" in reply["sites"]  # the service answers: its sites are suggested
    status, reply, text = server.call("GET", "search?query=bucket&n=2")
    texts.append(text)
    assert status == 200 and reply["results"], reply
    status, reply, text = server.call("POST", "answer", {"query": "How do I create a bucket?"})
    texts.append(text)
    assert status == 200 and reply["kind"] == "search" and reply["fallback"] is True
    assert "quota" in reply["notices"][0] and reply["results"]
    status, reply, text = server.call("POST", "documents", {"names": ["documents/example.com/missing"]})
    texts.append(text)
    assert status == 404
    assert mcp.calls("search_documents"), "the requests went to the service"
    assert all(KEY not in text for text in texts)
    assert KEY not in server.log_path.read_text()


def test_wrong_key_is_refused_upstream_without_showing_it(tmp_path: Path) -> None:
    (tmp_path / "sdk").mkdir()
    mcp = start_sdk_server(tmp_path / "sdk", "--api-key", KEY)
    wrong = "AIzaSyWrongKey000000000000000000000000"
    server = start_jupyter_server(
        tmp_path / "lab", config={"DevKnowServer": {"endpoint": mcp.url}}, env={"DEVKNOW_API_KEY": wrong}
    )
    try:
        status, reply, text = server.call("GET", "search?query=bucket")
        assert status in (401, 403)
        _assert_error(reply, "AuthenticationError")
        assert wrong not in text
    finally:
        stop_process(server.proc)
        mcp.stop()


def test_unreachable_service_without_a_key_is_502(tmp_path: Path) -> None:
    server = start_jupyter_server(
        tmp_path, config={"DevKnowServer": {"endpoint": f"http://127.0.0.1:{free_port()}/mcp", "timeout": 5}}
    )
    try:
        status, reply, _ = server.call("GET", "search?query=bucket")
        assert status in (502, 504)
        _assert_error(reply, reply["error"]["type"])
        assert reply["error"]["type"] in ("TransportError", "RequestTimeout")
    finally:
        stop_process(server.proc)


def test_unreachable_service_with_a_key_answers_from_the_local_index(tmp_path: Path) -> None:
    server = start_jupyter_server(
        tmp_path, config={"DevKnowServer": {"endpoint": f"http://127.0.0.1:{free_port()}/mcp", "timeout": 5}},
        env={"DEVKNOW_API_KEY": KEY},
    )
    try:
        status, reply, text = server.call("GET", "search?query=clear%20the%20result%20cache")
        assert status == 200 and reply["results"] and reply["info"]["backend"] == "local"
        assert "could not be reached" in reply["notices"][0] and "local index" in reply["notices"][0]
        assert KEY not in text
    finally:
        stop_process(server.proc)

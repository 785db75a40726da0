"""A loopback server speaking the Developer Knowledge API's REST surface (``/v1/...``), for the REST backend.

JSON in the shapes of the official client's types (camelCase fields), errors in Google's body
``{"error": {"code", "message", "status", "details"}}``. It checks the ``X-Goog-Api-Key`` header (or an
``Authorization: Bearer`` token), filters search hits by a small AIP-160 subset (``data_source``,
``update_time``; ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``AND``, ``OR``, parentheses), pages them,
fails a whole batch get when one name is unknown, and answers questions with citations in UTF-8 byte
offsets. Quotas run out on demand (``server.quota_left``). ``/mcp`` refuses the MCP handshake (HTTP 404), or
with ``mcp="no-tools"`` completes it and lists no tools, so the client's MCP → REST fallback can be tried
against the same origin.

Runs in a thread of the test process (:class:`RestServer`, a context manager). The documents are our own
words, with multi-byte characters (emoji, CJK, accented letters) in places.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["ANSWER_TEXT", "DOCUMENTS", "RestServer"]

#: name → (data source, update time, title, content)
DOCUMENTS: dict[str, tuple[str, str, str, str]] = {
    "documents/docs.cloud.google.com/storage/docs/buckets": (
        "docs.cloud.google.com",
        "2026-05-01T10:00:00Z",
        "Buckets",
        "# Buckets\n\nA bucket holds objects. Create a bucket with a unique name and a location.",
    ),
    "documents/docs.cloud.google.com/storage/docs/objects": (
        "docs.cloud.google.com",
        "2025-02-11T08:30:00Z",
        "Objects",
        "# Objects\n\nObjects live in a bucket; each object has a name, data and metadata.",
    ),
    "documents/firebase.google.com/docs/storage": (
        "firebase.google.com",
        "2026-03-20T12:00:00Z",
        "Cloud Storage for Firebase",
        "# Cloud Storage for Firebase\n\nUpload files from apps into a bucket, guarded by security rules.",
    ),
    "documents/firebase.google.com/docs/storage/web/start": (
        "firebase.google.com",
        "2026-06-02T09:00:00Z",
        "Get started on the web",
        "# Get started on the web\n\nAdd the bucket to your web app config, then upload 📦 files.",
    ),
    "documents/developer.chrome.com/docs/storage-buckets": (
        "developer.chrome.com",
        "2026-01-15T00:00:00Z",
        "Storage Buckets API",
        "# Storage Buckets API\n\nThe browser groups site storage into buckets — café, 東京, and more.",
    ),
    "documents/web.dev/articles/storage-for-the-web": (
        "web.dev",
        "2024-11-30T00:00:00Z",
        "Storage for the web",
        "# Storage for the web\n\nBrowsers offer several storage buckets; quotas differ per browser.",
    ),
}

#: The answer: cited segments sit after multi-byte characters, so byte and string offsets differ.
ANSWER_TEXT = "Créez un bucket 📦 avec un nom unique. 東京 est une région. Then upload objects into it."
_ANSWER_REFERENCES = [
    "documents/docs.cloud.google.com/storage/docs/buckets",
    "documents/developer.chrome.com/docs/storage-buckets",
    "documents/docs.cloud.google.com/storage/docs/objects",
]
_CITED = [("Créez un bucket 📦 avec un nom unique.", [0]), ("東京 est une région.", [1, 0]), ("upload objects", [2])]


def _byte_span(text: str, segment: str) -> tuple[int, int]:
    start = len(text[: text.index(segment)].encode())
    return start, start + len(segment.encode())


def _own_documents() -> dict[str, dict[str, Any]]:
    """:data:`DOCUMENTS` in the REST surface's Document shape."""
    docs = {}
    for name, (source, updated, title, content) in DOCUMENTS.items():
        docs[name] = {
            "name": name,
            "uri": "https://" + name.removeprefix("documents/"),
            "content": content,
            "description": f"About {title.lower()}.",
            "dataSource": source,
            "title": title,
            "updateTime": updated,
        }
    return docs


def _fixture_documents() -> dict[str, dict[str, Any]]:
    """``tests/fixtures/docs``, as the MCP test server serves them, in the REST Document shape."""
    from tests.servers.sdk_server import load_docs

    return {
        name: {**doc, "dataSource": urlsplit(doc["uri"]).hostname, "updateTime": "2026-04-01T00:00:00Z"}
        for name, doc in load_docs().items()
    }


def _as_document(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "view": "DOCUMENT_VIEW_CONTENT", "contentLengthBytes": str(len(doc["content"].encode()))}


def _as_chunk(doc: dict[str, Any], chunk_id: str, content: str) -> dict[str, Any]:
    basic = {key: value for key, value in doc.items() if key not in ("content", "description")}
    return {
        "parent": doc["name"],
        "id": chunk_id,
        "content": content,
        "document": {**basic, "view": "DOCUMENT_VIEW_BASIC"},
        "relevanceScore": 0.5,
    }


class FilterError(ValueError):
    """The filter is not in the subset this server understands."""


_TOKEN = re.compile(r'\s*(\(|\)|AND\b|OR\b|[a-z_]+\s*(?:!=|<=|>=|=|<|>)\s*"[^"]*")')
_TERM = re.compile(r'([a-z_]+)\s*(!=|<=|>=|=|<|>)\s*"([^"]*)"')


def matches(expression: str, fields: dict[str, str]) -> bool:
    """Whether ``fields`` satisfy the AIP-160 subset ``expression`` (OR binds tighter than AND)."""
    tokens, pos = [], 0
    while pos < len(expression.rstrip()):
        found = _TOKEN.match(expression, pos)
        if not found:
            raise FilterError(f"cannot parse the filter at {expression[pos:pos + 20]!r}")
        tokens.append(found.group(1))
        pos = found.end()

    def term(token: str) -> bool:
        name, op, value = _TERM.match(token).groups()  # type: ignore[union-attr]
        if name not in fields:
            raise FilterError(f"unsupported filter field {name!r}")
        have = fields[name]
        return {"=": have == value, "!=": have != value, "<": have < value, "<=": have <= value,
                ">": have > value, ">=": have >= value}[op]  # fmt: skip

    def chain(word: str, operand: Any, either: bool) -> Any:
        """A parser of ``operand word operand word …`` (OR chains of atoms, AND chains of OR chains)."""

        def parse(i: int) -> tuple[bool, int]:
            value, i = operand(i)
            while i < len(tokens) and tokens[i] == word:
                right, i = operand(i + 1)
                value = (value or right) if either else (value and right)
            return value, i

        return parse

    def conj(i: int) -> tuple[bool, int]:  # OR binds tighter than AND
        return chain("AND", chain("OR", atom, True), False)(i)

    def atom(i: int) -> tuple[bool, int]:
        if i >= len(tokens):
            raise FilterError("the filter ends too early")
        if tokens[i] == "(":
            value, i = conj(i + 1)
            if i >= len(tokens) or tokens[i] != ")":
                raise FilterError("unbalanced parentheses")
            return value, i + 1
        if tokens[i] in ("AND", "OR", ")"):
            raise FilterError(f"unexpected {tokens[i]}")
        return term(tokens[i]), i + 1

    value, end = conj(0)
    if end != len(tokens):
        raise FilterError("trailing tokens")
    return value


@dataclass
class Call:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lowercase names
    body: Any


@dataclass
class RestServer:
    """The REST surface on a free loopback port while the ``with`` block runs.

    ``api_key``/``token``: the credentials it accepts. ``quota_left``: how many more calls of each kind
    (``"search"``, ``"answer"``, ``"documents"``) succeed before 429 (None: no limit); ``retry_delay`` goes
    into the 429's RetryInfo detail (None: no RetryInfo).
    """

    api_key: str = "rest-test-key-0123"
    token: str | None = None
    quota_left: dict[str, int | None] = field(
        default_factory=lambda: {"search": None, "answer": None, "documents": None}
    )
    retry_delay: str | None = "7s"
    page_max: int = 100
    mcp: str = "refuse"  # or "no-tools"
    corpus: str = "own"  # or "fixtures": tests/fixtures/docs, ranked and answered as the MCP test server does
    calls: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.documents = _own_documents() if self.corpus == "own" else _fixture_documents()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server's origin, e.g. ``http://127.0.0.1:PORT``."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def calls_to(self, path_part: str) -> list[Call]:
        """The calls whose path contains ``path_part``."""
        return [call for call in self.calls if path_part in call.path]

    def __enter__(self) -> RestServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="rest-server", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- requests -----------------------------------------------------------------------------------

    def _handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in request.headers.items()}
        call = Call(method, unquote(parts.path), parse_qs(parts.query), headers, body)
        self.calls.append(call)
        status, payload = self._route(call)
        data = json.dumps(payload).encode() if payload is not None else b""
        request.send_response(status)
        request.send_header("Content-Type", "application/json; charset=UTF-8")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _route(self, call: Call) -> tuple[int, Any]:
        if call.path.startswith("/mcp"):
            if self.mcp == "no-tools" and call.method == "POST":
                return _mcp_without_tools(call.body)
            return _error(404, "NOT_FOUND", "The requested URL /mcp was not found on this server.")
        denied = self._check_credentials(call.headers)
        if denied:
            return denied
        try:
            if call.method == "GET" and call.path == "/v1/documents:searchDocumentChunks":
                return self._search(call)
            if call.method == "GET" and call.path == "/v1/documents:batchGet":
                return self._batch_get(call)
            if call.method == "POST" and call.path == "/v1:answerQuery":
                return self._answer(call)
            if call.method == "GET" and call.path.startswith("/v1/documents/"):
                name = call.path.removeprefix("/v1/")
                if name in self.documents:
                    return 200, _as_document(self.documents[name])
                return _error(404, "NOT_FOUND", f"Document {name} not found.")
        except FilterError as exc:
            return _error(400, "INVALID_ARGUMENT", f"Invalid filter: {exc}")
        return _error(404, "NOT_FOUND", f"No such method: {call.method} {call.path}")

    def _check_credentials(self, headers: dict[str, str]) -> tuple[int, Any] | None:
        key = headers.get("x-goog-api-key")
        bearer = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if key is not None:
            if key == self.api_key:
                return None
            # Google answers a wrong key with 400 INVALID_ARGUMENT and reason API_KEY_INVALID.
            return _error(
                400,
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key.",
                [_error_info("API_KEY_INVALID")],
            )
        if bearer:
            if self.token and bearer == self.token:
                return None
            return _error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        return _error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")

    def _spend(self, kind: str) -> tuple[int, Any] | None:
        left = self.quota_left.get(kind)
        if left is None:
            return None
        if left <= 0:
            details: list[dict[str, Any]] = [_error_info("RATE_LIMIT_EXCEEDED")]
            if self.retry_delay:
                details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": self.retry_delay})
            return _error(429, "RESOURCE_EXHAUSTED", f"Quota exceeded for {kind} requests per minute.", details)
        self.quota_left[kind] = left - 1
        return None

    def _search(self, call: Call) -> tuple[int, Any]:
        query = (call.query.get("query") or [""])[0]
        if not query.strip():
            return _error(400, "INVALID_ARGUMENT", "query must not be empty.")
        refused = self._spend("search")
        if refused:
            return refused
        expression = (call.query.get("filter") or [""])[0]
        hits = []
        for doc, chunk_id, content in self._ranked(query):
            fields = {"data_source": doc["dataSource"], "update_time": doc["updateTime"]}
            if expression and not matches(expression, fields):
                continue
            hits.append(_as_chunk(doc, chunk_id, content))
        size = min(int((call.query.get("pageSize") or ["5"])[0] or 5), self.page_max)
        start = int((call.query.get("pageToken") or ["0"])[0].removeprefix("p") or 0)
        payload: dict[str, Any] = {"results": hits[start : start + size]}
        if start + size < len(hits):
            payload["nextPageToken"] = f"p{start + size}"
        return 200, payload

    def _ranked(self, query: str) -> list[tuple[dict[str, Any], str, str]]:
        """(document, chunk id, passage) matching ``query``, best first."""
        if self.corpus == "fixtures":
            from tests.servers.sdk_server import search

            found = search(self.documents, query, limit=1000)
            return [(self.documents[hit["parent"]], hit["id"], hit["content"]) for hit in found]
        words = [word for word in re.findall(r"\w+", query.lower()) if len(word) > 2]
        return [
            (doc, f"c{i}", doc["content"])
            for i, doc in enumerate(self.documents.values())
            if not words or any(word in doc["content"].lower() for word in words)
        ]

    def _batch_get(self, call: Call) -> tuple[int, Any]:
        names = call.query.get("names") or []
        if not names:
            return _error(400, "INVALID_ARGUMENT", "names must not be empty.")
        if len(names) > 20:
            return _error(400, "INVALID_ARGUMENT", "At most 20 names may be requested at once.")
        refused = self._spend("documents")
        if refused:
            return refused
        for name in names:
            if name not in self.documents:
                # The whole batch fails, and the message need not say which name was unknown.
                return _error(404, "NOT_FOUND", "One or more documents were not found.")
        return 200, {"documents": [_as_document(self.documents[name]) for name in names]}

    def _answer(self, call: Call) -> tuple[int, Any]:
        body = call.body if isinstance(call.body, dict) else {}
        if not str(body.get("query") or "").strip():
            return _error(400, "INVALID_ARGUMENT", "query must not be empty.")
        refused = self._spend("answer")
        if refused:
            return refused
        if body.get("filter"):  # checked (a bad one is refused as the service does); the answer stays the same
            matches(str(body["filter"]), {"data_source": "", "update_time": ""})
        if self.corpus == "fixtures":  # like the MCP test server: the two best passages, each citing its page
            passages = [(doc, text.split("\n\n", 1)[-1]) for doc, _id, text in self._ranked(body["query"])[:2]]
            text = " ".join(passage for _doc, passage in passages)
            names = list(dict.fromkeys(doc["name"] for doc, _passage in passages))
            cited = [(passage, [names.index(doc["name"])]) for doc, passage in passages]
        else:
            text, names, cited = ANSWER_TEXT, _ANSWER_REFERENCES, _CITED
        citations = []
        for segment, sources in cited:
            start, end = _byte_span(text, segment)
            citations.append(
                {"startIndex": start, "endIndex": end, "sources": [{"referenceIndex": i} for i in sources]}
            )
        references = []
        for name in names:
            chunk = _as_chunk(self.documents[name], "", self.documents[name]["content"])
            references.append({"documentReference": {"documentChunk": {k: v for k, v in chunk.items() if k != "id"}}})
        return 200, {"answer": {"answerText": text, "citations": citations, "references": references}}


def _mcp_without_tools(message: Any) -> tuple[int, Any]:
    """A handshake-era MCP server that has no tools: initialize works, tools/list is empty."""
    message = message if isinstance(message, dict) else {}
    method, ident = message.get("method"), message.get("id")
    if ident is None:  # a notification
        return 202, None
    if method == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "bare"}}
        return 200, {"jsonrpc": "2.0", "id": ident, "result": result}
    if method == "tools/list":
        return 200, {"jsonrpc": "2.0", "id": ident, "result": {"tools": []}}
    if method == "tools/call":
        name = (message.get("params") or {}).get("name")
        return 200, {"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": f"Unknown tool: {name}"}}
    return 404, {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": f"Method not found: {method}"}}


def _error_info(reason: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com"}


def _error(code: int, status: str, message: str, details: list[dict[str, Any]] | None = None) -> tuple[int, Any]:
    return code, {"error": {"code": code, "message": message, "status": status, "details": details or []}}

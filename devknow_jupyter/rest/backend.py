"""The Developer Knowledge API's REST surface behind the :class:`~devknow_jupyter.backend.Backend` contract.

Built on Google's generated client (``google-developer-knowledge``, its REST transport; the optional
``rest`` extra). It takes the typed requests and returns the models, and applies what the REST methods offer
beyond the MCP tools: sites and dates as a ``filter`` (AIP-160, built here from the request) and paging
(``page_size``, ``page_token``) for search, the same ``filter`` for answers, and citations in answers.

``search`` → ``SearchDocumentChunks`` (one page), ``get`` → ``BatchGetDocuments`` (in request order; when the
service fails a batch for an unknown name, without saying which, the batch is split until the unknown names
are found, and :class:`DocumentNotFoundError` names them and carries the others), ``answer`` →
``AnswerQuery`` (references as document names, citations as the service sent them, in UTF-8 byte offsets).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..contract import AnswerQuery, Capabilities, SearchQuery
from ..errors import ConfigurationError, DevKnowError, DocumentNotFoundError, ToolError, redact, register_secret
from ..models import Answer, Document, DocumentChunk, Documents, SearchResults
from ..registry import entry_for, tool_definitions
from ..search_filters import build_filter
from ..transport.budget import CallBudget
from ..transport.decode import MAX_REPLY_BYTES
from ..transport.encodings import ACCEPT_ENCODING
from ..transport.retry import RetryPolicy, parse_retry_after
from .bounded import MAX_REDIRECTS, BoundedAdapter, bounded_call, current_budget
from .errors import api_failure, malformed_reply, network_failure

__all__ = ["DEFAULT_REST_ENDPOINT", "MAX_PAGE_SIZE", "REST_EXTRA_HINT", "RestBackend", "rest_available"]

#: The REST surface of the Developer Knowledge API.
DEFAULT_REST_ENDPOINT = "https://developerknowledge.googleapis.com"
#: The most hits one SearchDocumentChunks call returns (larger page sizes are coerced to this).
MAX_PAGE_SIZE = 100
REST_EXTRA_HINT = "pip install 'devknow-jupyter[rest]'"
# Google's libraries log each request's headers (the key among them) at DEBUG, as structured extras.
_HEADER_LOGGERS = (
    "google.developer_knowledge_v1.services.developer_knowledge.transports.rest",
    "google.auth.transport.requests",
)
_LOG_EXTRAS = ("httpRequest", "httpResponse", "metadata")

# The registry's names of the three tools: their retry rules and error messages.
_SEARCH, _GET, _ANSWER = (entry_for(operation=op).name for op in ("search", "get", "answer"))  # type: ignore[union-attr]
# What the REST methods take beyond the tools' ``query`` and ``names``.
_EXTRA_INPUTS: dict[str, dict[str, Any]] = {
    _SEARCH: {
        "filter": {"type": "string", "description": "AIP-160 filter on data_source, uri, update_time."},
        "page_size": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE},
        "page_token": {"type": "string", "description": "nextPageToken of the previous page."},
    },
    _ANSWER: {"filter": {"type": "string", "description": "AIP-160 filter on the grounding documents."}},
}


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _scrub(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(item) for item in value]
    return value


class _RedactSecrets(logging.Filter):
    """Masks every registered secret in the structured extras of Google's request logs."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name in _LOG_EXTRAS:
            if hasattr(record, name):
                setattr(record, name, _scrub(getattr(record, name)))
        return True


_REDACTOR = _RedactSecrets()


def _guard_logs() -> None:
    for name in _HEADER_LOGGERS:
        logger = logging.getLogger(name)
        if _REDACTOR not in logger.filters:
            logger.addFilter(_REDACTOR)


def rest_available() -> bool:
    """Whether the official client (the ``rest`` extra) can be imported."""
    import importlib.util

    try:
        return importlib.util.find_spec("google.developer_knowledge_v1") is not None
    except (ImportError, ValueError):
        return False


class RestBackend:
    """The REST surface at ``endpoint`` (an origin such as ``https://developerknowledge.googleapis.com``).

    Args:
        api_key: Sent only in the ``X-Goog-Api-Key`` header.
        access_token: An OAuth bearer token, instead of a key.
        headers: More headers for every call, such as ``X-Goog-User-Project`` (the project to bill).
        credential_source: Where the key came from ("DEVKNOW_API_KEY"), for error messages; never the key.
        timeout: Seconds one tool call may take in all: every request it makes (a batch split in halves
            makes several), retries and their waits, and reading each reply, as in the MCP transport.
        max_reply_bytes: The largest reply body read; a larger one is a ``ProtocolError``, read no further
            and not asked again. ``None``: no limit.
    """

    kind = "remote"
    protocol = "rest"

    def __init__(
        self,
        endpoint: str = DEFAULT_REST_ENDPOINT,
        *,
        api_key: str | None = None,
        access_token: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
        credential_source: str | None = None,
        connect_timeout: float = 10.0,
        max_reply_bytes: int | None = MAX_REPLY_BYTES,
        retry: RetryPolicy | None = None,
    ) -> None:
        try:
            from google.auth.credentials import AnonymousCredentials
            from google.developer_knowledge_v1 import DeveloperKnowledgeClient
            from google.developer_knowledge_v1.services.developer_knowledge.transports.rest import (
                DeveloperKnowledgeRestTransport,
            )
        except ImportError:
            raise ConfigurationError(
                "The REST protocol needs Google's client library, which is not installed.",
                hint=f"{REST_EXTRA_HINT}, or use the MCP server (the default protocol).",
            ) from None
        self.endpoint = endpoint.rstrip("/")
        self.timeout = float(timeout)
        register_secret(api_key)
        register_secret(access_token)
        _guard_logs()
        self._credentials_said: str | None = None
        metadata: list[tuple[str, str]] = [(name.lower(), value) for name, value in (headers or {}).items()]
        if api_key:
            metadata.append(("x-goog-api-key", api_key))
            where = "passed as api_key=" if credential_source in (None, "argument") else f"from {credential_source}"
            self._credentials_said = f"the API key {where}"
        elif access_token:
            metadata.append(("authorization", f"Bearer {access_token}"))
            self._credentials_said = "the access token"
        # Credentials go in as headers: anonymous credentials keep the library from looking for
        # Application Default Credentials (files, metadata server) on its own.
        transport = DeveloperKnowledgeRestTransport(host=self.endpoint, credentials=AnonymousCredentials())
        # Under the generated code, which reads every body whole with a per-read timeout only (see .bounded).
        # It also refuses to send anything to another origin (a redirect's), where the key would go too.
        adapter = BoundedAdapter(max_reply_bytes, connect_timeout, self.endpoint)
        for prefix in ("http://", "https://"):
            transport._session.mount(prefix, adapter)
        transport._session.max_redirects = MAX_REDIRECTS
        transport._session.headers["Accept-Encoding"] = ACCEPT_ENCODING  # what the adapter undoes in pieces
        # google-auth would answer a 401 by refreshing the credentials, which anonymous ones can't do
        # (InvalidOperation, not the service's refusal): the 401 is the answer.
        transport._session._refresh_status_codes = ()
        self.retry = retry or RetryPolicy()
        self._client = DeveloperKnowledgeClient(transport=transport)
        self._metadata = tuple(metadata)
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"<RestBackend {self.endpoint!r}>"

    # -- the Backend contract ---------------------------------------------------------------------

    #: Any hosts and dates (an AIP-160 filter built here), pages, citations; answers take the same filter.
    capabilities = Capabilities(
        search_sites="hosts",
        search_dates=True,
        paging=True,
        max_page_size=MAX_PAGE_SIZE,
        answer_sites="hosts",
        answer_dates=True,
        citations=True,
    )

    def search(self, request: SearchQuery) -> SearchResults:
        """``SearchDocumentChunks``: one page, its sites and date as the ``filter`` expression."""
        call: dict[str, Any] = {"query": request.query}
        if request.sources or request.since:
            call["filter"] = build_filter(list(request.sources), request.since)
        if request.page_size:
            call["page_size"] = min(int(request.page_size), MAX_PAGE_SIZE)
        if request.page_token:
            call["page_token"] = request.page_token
        data = self.search_chunks(call)
        chunks = (DocumentChunk.from_dict(item) for item in data["results"])
        return SearchResults(request.query, chunks, next_page_token=data.get("nextPageToken"))

    def get(self, names: Sequence[str]) -> Documents:
        """``BatchGetDocuments``, in request order; unknown names: :class:`DocumentNotFoundError`."""
        with self._call():
            found = self._batch([str(name) for name in names])
        documents = Documents(Document.from_dict(doc) for doc in found)
        if len(found) < len(names):
            have = {doc.name for doc in documents}
            raise DocumentNotFoundError([name for name in names if name not in have], documents)
        return documents

    def answer(self, request: AnswerQuery) -> Answer:
        """``AnswerQuery``: references as document names, citations as the service sent them."""
        call: dict[str, Any] = {"query": request.query}
        if request.sources or request.since:
            call["filter"] = build_filter(list(request.sources), request.since)
        with self._call():
            response = self._invoke(_ANSWER, self._client.answer_query, call)
        answer = _to_json(response).get("answer") or {}
        references = []
        for reference in answer.get("references") or []:
            chunk = (reference.get("documentReference") or {}).get("documentChunk") or {}
            references.append(str((chunk.get("document") or {}).get("name") or chunk.get("parent") or ""))
        data = {
            "answerText": answer.get("answerText") or "",
            "references": references,  # kept in the service's order: citations point into it by index
            "citations": answer.get("citations") or [],
        }
        return Answer.from_dict(data, query=request.query)

    def invoke(self, operation: str, request: Any) -> Any:
        """The three operations only: the REST surface has no other method."""
        if operation not in self.capabilities.operations:
            raise ToolError(f"The REST API does not serve {operation!r}.", tool=operation)
        return getattr(self, operation)(request)

    def details(self) -> dict[str, Any]:
        """Its protocol, for ``status()``."""
        return {"protocol": "rest"}

    def list_tools(self) -> list[dict[str, Any]]:
        """The three tools, their input schemas widened with what the REST methods also take (for display)."""
        tools = tool_definitions()
        for tool in tools:
            tool["inputSchema"]["properties"].update(copy.deepcopy(_EXTRA_INPUTS.get(tool["name"], {})))
        return tools

    def close(self) -> None:
        """Close the HTTP session. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._client.transport.close()
        except Exception:  # closing is best effort
            pass

    # -- the methods ------------------------------------------------------------------------------

    def search_chunks(self, call: dict[str, Any]) -> dict[str, Any]:
        """One ``SearchDocumentChunks`` request as the service takes it (``query``, ``filter``, ``page_size``,
        ``page_token``): ``{"results": [{"parent", "id", "content"}], "nextPageToken"}``."""
        with self._call():
            pager = self._invoke(_SEARCH, self._client.search_document_chunks, call)
            response = next(iter(pager.pages))  # this page only: the client asks for the next when wanted
        data = _to_json(response)
        out: dict[str, Any] = {"results": [_pick(item, _CHUNK_FIELDS) for item in data.get("results") or []]}
        if data.get("nextPageToken"):
            out["nextPageToken"] = data["nextPageToken"]
        return out

    @contextmanager
    def _call(self) -> Iterator[None]:
        if self._closed:
            raise ConfigurationError("This REST connection is closed; create a new client.")
        with bounded_call(CallBudget(self.timeout, self.endpoint)):  # one deadline for all the call's requests
            yield

    def _batch(self, names: list[str]) -> list[dict[str, Any]]:
        """The documents of ``names`` that exist, in order. The service fails a whole batch for one unknown
        name without saying which, so a failed batch is split in halves until the unknown ones are alone."""
        try:
            response = self._invoke(_GET, self._client.batch_get_documents, {"names": names})
        except ToolError as exc:
            if not exc.not_found:
                raise
            if len(names) == 1:
                return []
            middle = len(names) // 2
            return self._batch(names[:middle]) + self._batch(names[middle:])
        return [_pick(doc, _DOCUMENT_FIELDS) for doc in _to_json(response).get("documents") or []]

    # -- calls and failures -----------------------------------------------------------------------

    def _invoke(self, tool: str, method: Any, request: dict[str, Any]) -> Any:
        """One REST method call with the MCP transport's retries (a connection that never opened, 502/503/504,
        a 429 of search or get), all within the call's deadline: a retry whose wait would end past it is not
        made, and the last failure is the answer."""
        from google.api_core import exceptions as google_errors

        budget = current_budget() or CallBudget(self.timeout, self.endpoint)
        attempt = 1
        while True:
            budget.check()
            try:
                # The library's own retries are off: these are ours, bounded by the deadline.
                return method(request=request, metadata=self._metadata, retry=None, timeout=budget.remaining())
            except google_errors.GoogleAPICallError as exc:
                failure = self._failure(exc, tool)
                status = int(exc.code) if isinstance(exc.code, int) else 500
                wait = self._retry_wait(attempt, status, tool, failure, exc)
            except DevKnowError:
                raise
            except Exception as exc:  # requests' and google-auth's network failures, or a malformed reply
                malformed = malformed_reply(exc, endpoint=self.endpoint, tool=tool)
                if malformed is not None:
                    raise malformed from None
                if not _is_network_error(exc):
                    raise
                if budget.remaining() <= 0:
                    raise budget.expired() from None
                failure = network_failure(exc, endpoint=self.endpoint, timeout=self.timeout)
                wait = self.retry.delay(attempt) if _never_connected(exc) and self.retry.may_retry(attempt) else None
            if wait is None or not budget.allows_wait(wait):
                raise failure from None
            time.sleep(wait)  # interruptible: Ctrl-C during a backoff stops the call
            attempt += 1

    def _retry_wait(self, attempt: int, status: int, tool: str, failure: DevKnowError, exc: Any) -> float | None:
        """Seconds to wait before trying a failed request again (the reply's RetryInfo or ``Retry-After``, else
        the backoff), or None for no retry."""
        if not self.retry.retries_status(status, tool) or not self.retry.may_retry(attempt):
            return None
        asked = getattr(failure, "retry_after", None)
        if asked is None:
            response = getattr(exc, "response", None)
            asked = parse_retry_after(response.headers.get("Retry-After") if response is not None else None)
        return self.retry.delay(attempt, asked)

    def _failure(self, exc: Any, tool: str) -> DevKnowError:
        response = getattr(exc, "response", None)
        body: Any = None
        retry_after = None
        if response is not None:
            try:
                body = response.json()
            except ValueError:
                body = None
            retry_after = response.headers.get("Retry-After")
        if body is None:
            body = {"error": {"message": getattr(exc, "message", str(exc)), "details": list(exc.details or [])}}
        status = int(exc.code) if isinstance(exc.code, int) else 500
        return api_failure(
            status, body, endpoint=self.endpoint, tool=tool, credentials=self._credentials_said, retry_after=retry_after
        )


_CHUNK_FIELDS = ("parent", "id", "content")
_DOCUMENT_FIELDS = ("name", "uri", "content", "description", "title")


def _pick(item: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The tool's shape of a REST message: its fields only (the client reads no more)."""
    return {field: item.get(field) or "" for field in fields}


def _to_json(message: Any) -> dict[str, Any]:
    """A proto-plus message as the service's JSON (camelCase names, enums by name)."""
    return type(message).to_dict(message, preserving_proto_field_name=False, use_integers_for_enums=False)


def _never_connected(exc: BaseException) -> bool:
    """A connection that never opened (refused, unreachable, no connection in time): the request did not go
    out, so trying again is safe. Not a TLS verdict, and not a reply cut short."""
    from requests.exceptions import ConnectionError, ConnectTimeout, SSLError
    from urllib3.exceptions import NewConnectionError

    if isinstance(exc, SSLError):
        return False
    if isinstance(exc, ConnectTimeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if isinstance(exc, ConnectionError) and exc.args else None
    return isinstance(reason, NewConnectionError)


def _is_network_error(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("requests", "urllib3", "google.auth")) or isinstance(exc, OSError)

"""``DevKnowClient``: search, fetch and ask Google's developer documentation from plain Python.

The client owns policy: where to connect and with which credentials, document names, batching of
``get_documents`` (at most 20 names a call, batches in parallel), the shared result cache and the
offline fallbacks. Talking MCP is the backend's job (:mod:`devknow_jupyter.transport` for a remote
server, :mod:`devknow_jupyter.local` for the embedded index).

The client composes small parts, one concern each: :mod:`.connection` (endpoint, credentials, the backend
in use and the switch to REST), :mod:`.search_request` (a search's arguments and the filters applied here),
:mod:`.batching` (documents by name, in parallel batches), :mod:`.offline_copy` (fetched pages kept on disk)
and :mod:`.fallback` (the local index when the service cannot be reached).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from .backend import Backend
from .backoff import FIRST_PAUSE, ServiceBackoff
from .batching import DocumentBatcher
from .cache import CacheStats, ResultCache, shared_cache
from .connection import (
    GOOGLE_ENDPOINT,
    LOCAL_ENDPOINT,
    BackendLink,
    Connection,
    resolve_api_key,
    resolve_endpoint,
    resolve_protocol,
)
from .contract import NO_FILTERS, Capabilities
from .errors import (
    ConfigurationError,
    DevKnowError,
    DocumentNotFoundError,
    QuotaExceededError,
    TransportError,
)
from .fallback import FALLBACK_BACKEND, OfflineFallback, fallback_notice, is_unreachable
from .hints import no_key_notice
from .models import Answer, Document, Documents, ResultInfo, SearchResults
from .names import normalize_names
from .offline_copy import OfflineCopy
from .registry import find_entry
from .search_filters import normalize_sources
from .search_request import keep_hits, plan_answer, plan_search

__all__ = [
    "GOOGLE_ENDPOINT",
    "LOCAL_ENDPOINT",
    "QUOTA_FALLBACK_NOTICE",
    "DevKnowClient",
    "resolve_api_key",
    "resolve_endpoint",
    "resolve_protocol",
]

#: Said on search results that stand in for an answer because the answer quota is used up.
QUOTA_FALLBACK_NOTICE = "The answer quota is used up, so these are search results for the question instead."

_local_notice_shown = False


class DevKnowClient:
    """A client for the Developer Knowledge tools, on the live service or the offline index.

    Args:
        endpoint: An MCP server URL, ``"local"`` for the embedded index (``"local:PATH"`` for an index or
            folder of your own). Default: ``DEVKNOW_ENDPOINT``, else Google's server when a key is
            configured, else ``"local"``.
        api_key: Sent only in the ``X-Goog-Api-Key`` header. Default: ``DEVKNOW_API_KEY``, else
            ``GOOGLE_API_KEY``.
        access_token: An OAuth bearer token, instead of a key.
        token: The token of a team's ``devknow serve`` (sent as ``Authorization: Bearer``, like
            ``access_token``). Default: ``DEVKNOW_TOKEN``, for any endpoint but Google's.
        timeout: Seconds a whole call may take: connecting, retries, backoff and ``Retry-After`` waits and
            reading the reply included (connecting has its own, shorter limit within it).
        cache: A :class:`~devknow_jupyter.cache.ResultCache`, ``None`` for the process-wide one, or
            ``False`` for none.
        backend: Use this backend object instead of building one from ``endpoint`` (advanced).
        http_transport: An ``httpx`` transport for the remote backend (tests, proxies).
        protocol: ``"mcp"`` (default) or ``"rest"`` (the API's REST surface, with filters, paging and
            citations; needs the ``rest`` extra). Default: ``DEVKNOW_PROTOCOL``, else ``"mcp"``. With
            ``"rest"`` an MCP URL such as Google's ``.../mcp`` means the same host's REST surface.
        offline_store: Keep documents fetched from the live service on disk, searchable offline.
        offline_fallback: With a key or token on a remote endpoint, answer from the local index (starter
            pack, indexed folders, saved pages) when the service cannot be reached (DNS failure, refused
            connection, connect or read timeout), with a notice in ``info.notices``. Errors the server
            replies with (401, 403, 429, tool errors) are never replaced.
        offline_retry: Seconds the service is skipped (the local index answering at once) after a call could
            not reach it; the first call after that tries it again, and each failed try doubles the pause, up
            to 5 minutes. 0: try the service on every call.
        max_reply_bytes: The largest reply (JSON body or one event of a stream; a REST body) read from a
            remote server, 32 MiB by default; a larger one is a ``ProtocolError``, read no further. ``None``: no limit.
        announce: Print one-time notices (such as "no key, using the offline index") to stderr. The
            magics turn this off and show ``client.notices`` in the notebook instead.

    Example::

        with DevKnowClient() as client:
            hits = client.search_documents("create a Cloud Storage bucket")
            docs = client.get_documents(hits)
            answer = client.answer_query("How do I create a bucket?")
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        api_key: str | None = None,
        access_token: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        cache: ResultCache | bool | None = None,
        backend: Backend | None = None,
        http_transport: Any = None,
        headers: dict[str, str] | None = None,
        offline_store: bool = True,
        offline_fallback: bool = True,
        offline_retry: float = FIRST_PAUSE,
        max_workers: int = 4,
        max_reply_bytes: int | None = 32 * 1024 * 1024,  # the transport's MAX_REPLY_BYTES
        announce: bool = True,
        protocol: str | None = None,
    ) -> None:
        connection, self.endpoint_source = Connection.resolve(
            endpoint,
            api_key=api_key,
            access_token=access_token or token,
            protocol=protocol,
            backend=backend,
            timeout=timeout,
            connect_timeout=connect_timeout,
            headers=dict(headers or {}),
            http_transport=http_transport,
            max_reply_bytes=max_reply_bytes,
        )
        self.protocol, self.endpoint = connection.protocol, connection.endpoint
        self.api_key, self.key_source = connection.api_key, connection.key_source
        self._access_token = connection.access_token
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.cache = _choose_cache(cache)
        self._headers = connection.headers
        self._cache_scope = connection.cache_scope()  # another key's results are never served
        self.notices: list[str] = []
        self._offline_copy = OfflineCopy(self.notices, enabled=offline_store)
        self._offline_fallback_enabled = offline_fallback
        self._fallback = OfflineFallback()
        self._backoff = ServiceBackoff(offline_retry)
        self.answered_by: str | None = None  # which backend gave the last tool answer (see status())
        get = lambda names: self._call("get", lambda backend: backend.get(names))  # noqa: E731
        self._batcher = DocumentBatcher(get, self.cache, self._cache_scope, max_workers)
        self._lock = threading.RLock()
        self._closed = False
        self._fallback_notices: list[str] = []  # said once more on the next result
        self._announce = announce
        self._link = BackendLink(connection, backend, on_switch=self._say_switch)
        #: How to add documentation, when the offline index answers for want of a key and holds only the
        #: starter guide; else None. (The no-key notice says it; the notebook words its own.)
        self.documentation_hint: str | None = None
        if self.endpoint_source == "no key":
            self.documentation_hint = self._backend.details().get("documentation_hint")
            _say_once(self.notices, no_key_notice("cli", self.documentation_hint), announce)

    @classmethod
    def from_config(cls, config: Any, **overrides: Any) -> DevKnowClient:
        """A client with a :class:`~devknow_jupyter.config.DevKnowConfig`'s settings; keyword arguments win."""
        from .config import client_options

        return cls(**{**client_options(config), **overrides})

    # -- the backend in use ----------------------------------------------------------------------

    @property
    def _backend(self) -> Backend:
        return self._link.backend  # the REST surface once the link switched to it

    def _say_switch(self, line: str) -> None:
        self.notices.append(line)
        self._fallback_notices.append(line)
        if self._announce:
            print(line, file=sys.stderr)

    # -- properties -----------------------------------------------------------------------------

    @property
    def backend(self) -> Backend:
        """The backend in use (remote MCP transport or local index)."""
        return self._backend

    @property
    def backend_kind(self) -> str:
        """``"remote"`` or ``"local"``."""
        return self._backend.kind

    @property
    def offline_fallback(self) -> bool:
        """Whether an unreachable service is answered by the local index: a remote endpoint with a key or token."""
        credentials = bool(self.api_key or self._access_token)
        return self._offline_fallback_enabled and credentials and self.backend_kind == "remote"

    def __repr__(self) -> str:
        key = f"key from {self.key_source}" if self.key_source else "no key"
        return f"<DevKnowClient endpoint={self.endpoint!r} backend={self.backend_kind} {key}>"

    # -- the three tools ------------------------------------------------------------------------

    def search_documents(
        self,
        query: str,
        *,
        source: str | Iterable[str] | None = None,
        since: Any = None,
        page_size: int | None = None,
        page_token: str | None = None,
        refresh: bool = False,
    ) -> SearchResults:
        """Search the documentation; returns the matching passages as :class:`SearchResults`.

        Args:
            query: What to look for, in plain words.
            source: Keep only hits from this site (e.g. ``"firebase.google.com"``), or from any of several
                (a list, or names separated by commas); sent to the service when its search takes a filter
                (REST: ``data_source = "…" OR …``), otherwise applied to the hits here (with a notice).
            since: Only documents updated since this date or time (``"2026-03-01"``, a ``date``): REST, and the
                local index for pages read from files (their modification time); other servers say in a
                notice that they could not apply it.
            page_size: How many hits (REST and the local index: up to 100 a page; elsewhere cut here).
            page_token: A page after the first: ``results.next_page_token`` (or use ``client.next_page(results)``).
            refresh: Ask the server even when the answer is cached.
        """
        self._check_open()
        query = _clean_query(query)
        sources = normalize_sources(source)
        started = time.perf_counter()
        try:
            can = self._capabilities() if (sources or since or page_size or page_token) else NO_FILTERS
            request, filter_here, notices = plan_search(query, sources, since, page_size, page_token, can)
            page, from_cache = self._cached("search", request, refresh, lambda backend: backend.search(request))
            token, local = page.next_page_token, False
        except TransportError as exc:
            if not self._falls_back(exc) or page_token:  # a later page of the service's results: not here
                raise
            can = self._fallback.capabilities(exc)
            request, filter_here, notices = plan_search(query, sources, since, page_size, None, can)
            page, from_cache = self._call_local(lambda backend: backend.search(request), exc), False
            token, local = None, True
            notices.insert(0, fallback_notice(exc))
        notices.extend(page.info.notices)
        chunks, cut = keep_hits(tuple(page), filter_here, page_size, notices)
        if cut:
            token = None  # the server's next page starts after the hits cut here: following it would skip them
        info = self._info(started, from_cache, notices, local=local)
        out = SearchResults(query, chunks, info, next_page_token=token)
        out._request = {"source": sources or None, "since": since, "page_size": page_size}
        return out

    def next_page(self, results: SearchResults, *, refresh: bool = False) -> SearchResults:
        """The page of hits after ``results``, searched with the same query and filters (a new request)."""
        if not results.next_page_token:
            raise ConfigurationError("There is no next page: the server sent all the hits it has for this search.")
        return self.search_documents(
            results.query, page_token=results.next_page_token, refresh=refresh, **results.request
        )

    def get_documents(self, names: Any, *, refresh: bool = False) -> Documents:
        """Fetch whole documents (Markdown) by name, page URL, hit or search results, in request order.

        Duplicates are dropped; at most 20 names go in one call and several calls run in parallel.
        Documents already in the cache are not fetched again (unless ``refresh``). Unknown names raise
        :class:`~devknow_jupyter.errors.DocumentNotFoundError`, which still carries the documents found.
        """
        wanted = normalize_names(names)
        if not wanted:
            raise ConfigurationError("No document names given.", hint="Pass names, page URLs or search hits.")
        started = time.perf_counter()
        found: dict[str, Document] = {} if refresh else self._batcher.cached(wanted)
        lacking = [name for name in wanted if name not in found]
        unreachable: TransportError | None = None
        try:
            fetched = self._batcher.fetch(lacking)
            if lacking:
                self.answered_by = self.backend_kind
        except TransportError as exc:
            if not self._falls_back(exc):
                raise
            unreachable = exc
            fetched = self._batcher.cached(lacking)  # batches that got through before the failure
            rest = [name for name in lacking if name not in fetched]
            found.update((doc["name"], Document.from_dict(doc)) for doc in self._fallback.get(rest, exc))
            self.answered_by = FALLBACK_BACKEND
        found.update(fetched)
        if fetched and self.backend_kind == "remote":
            self._offline_copy.keep(fetched.values())
        docs = [found[name] for name in wanted if name in found]
        notices = [fallback_notice(unreachable)] if unreachable is not None else []
        result = Documents(docs, self._info(started, not lacking, notices, local=unreachable is not None))
        missing = [name for name in wanted if name not in found]
        if missing:
            reason = "the service could not be reached" if unreachable is not None else None
            raise DocumentNotFoundError(missing, result, unreachable=reason)
        return result

    def answer_query(
        self, query: str, *, source: str | Iterable[str] | None = None, since: Any = None, refresh: bool = False
    ) -> Answer:
        """Ask a question; returns a grounded :class:`Answer` with the names of its references.

        The service allows few answers a day: on exhaustion this raises
        :class:`~devknow_jupyter.errors.QuotaExceededError`, and the caller may fall back to
        :meth:`search_documents` (``%%devask`` does). When the service cannot be reached (see
        ``offline_fallback``), the local index answers by quoting its best passages.

        ``source`` and ``since`` ground the answer in those sites' pages updated since then, as in
        :meth:`search_documents`, where the server's answers take them: the REST protocol's (AnswerQuery's
        ``filter``) and the local index's (one site; dates where it knows them). Elsewhere the answer says
        in a notice that they were not applied.
        """
        self._check_open()
        query = _clean_query(query)
        started = time.perf_counter()
        sources = normalize_sources(source)
        wanted = bool(sources) or (since is not None and since != "")
        local = False
        try:
            request, notices = plan_answer(query, sources, since, self._capabilities() if wanted else NO_FILTERS)
            answer, from_cache = self._cached("answer", request, refresh, lambda backend: backend.answer(request))
        except TransportError as exc:
            if not self._falls_back(exc):
                raise
            request, notices = plan_answer(query, sources, since, self._fallback.capabilities(exc))
            answer, from_cache, local = self._call_local(lambda backend: backend.answer(request), exc), False, True
            notices = [fallback_notice(exc), *notices]
        answer = replace(answer, info=self._info(started, from_cache, [*notices, *answer.info.notices], local=local))
        return answer

    def ask(
        self,
        query: str,
        *,
        fallback: bool = True,
        refresh: bool = False,
        source: str | Iterable[str] | None = None,
        since: Any = None,
    ) -> Answer | SearchResults:
        """Answer ``query``; when the answer quota is used up, search for it instead.

        The service's own advice for an exhausted ``answer_query`` quota. The search results then carry
        :data:`QUOTA_FALLBACK_NOTICE` in ``info.notices``, so every view of them says why. With
        ``fallback=False`` the :class:`~devknow_jupyter.errors.QuotaExceededError` is raised instead.
        ``source`` and ``since`` filter both (see :meth:`answer_query`).
        """
        try:
            return self.answer_query(query, source=source, since=since, refresh=refresh)
        except QuotaExceededError:
            if not fallback:
                raise
        results = self.search_documents(query, source=source, since=since, refresh=refresh)
        results.info.notices.insert(0, QUOTA_FALLBACK_NOTICE)
        return results

    def run_tool(self, tool: str, text: str, *, refresh: bool = False) -> Any:
        """Run a registry tool beyond the three (by name or ``face`` verb, :mod:`.registry`) on ``text``; its model."""
        entry = find_entry(tool)
        if entry is None:
            raise ConfigurationError(f"No tool {tool!r} is registered.", hint="registry.register adds one.")
        self._check_open()
        request, operation = entry.request({entry.text_field: text}), entry.operation
        return self._cached(operation, request, refresh, lambda backend: backend.invoke(operation, request))[0]

    def list_tools(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """The server's tools as ``tools/list`` gives them: name, description, schemas, annotations."""
        self._check_open()
        # As for tool calls: no keyless request to Google's server, and none while the service is skipped.
        return self._backoff.call(lambda: self._link.list_tools(refresh=refresh), watching=self.offline_fallback)

    # -- status and lifecycle -------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Endpoint, backend, protocol (``"mcp"``, ``"rest"`` or ``"local"``), the MCP era and protocol version
        once the server told them (None until then, and for the other protocols), where the key came from
        (never the key), cache figures, which backend answered the last tool call (``answered_by``:
        ``"remote"``, ``"local"`` or ``"local (offline fallback)"``; None before the first), whether the
        offline fallback is on and, while the service is skipped after failing to reach it, since when and when
        it is tried next (``service_unreachable_since``, ``service_next_try``: epoch seconds, else None)."""
        return _status_of(self)

    def close(self) -> None:
        """End the server session and release connections. The client cannot be used afterwards."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._batcher.close()
        self._offline_copy.close()  # documents fetched are saved before the store closes
        self._link.close()
        self._fallback.close()

    def __enter__(self) -> DevKnowClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigurationError("This DevKnowClient is closed; create a new one.")

    def _call(self, operation: str, call: Callable[[Backend], Any]) -> Any:
        """One typed request on the backend in use (on the REST surface when the MCP server refuses us)."""
        self._check_open()
        return self._backoff.call(lambda: self._link.run(operation, call), watching=self.offline_fallback)

    def _falls_back(self, exc: TransportError) -> bool:
        return self.offline_fallback and is_unreachable(exc)

    def _call_local(self, call: Callable[[Backend], Any], cause: TransportError) -> Any:
        """One request on the local index, standing in for the unreachable service (never cached)."""
        self._check_open()
        self._offline_copy.wait(timeout=30)  # pages just fetched are searchable offline too
        result = self._fallback.run(call, cause)
        self.answered_by = FALLBACK_BACKEND
        return result

    def _cached(self, operation: str, request: Any, refresh: bool, call: Callable[[Backend], Any]) -> tuple[Any, bool]:
        # The model is cached, so a hit costs a dict lookup, not a rebuild of every hit.
        key = (self._cache_scope, operation, request)
        if not refresh:
            cached = self.cache.get(key)
            if cached is not None:
                return cached, True
        value = self._call(operation, call)
        self.answered_by = self.backend_kind
        self.cache.set(key, value)
        return value, False

    def _capabilities(self) -> Capabilities:
        """What the backend applies itself (an MCP server's, from its tool schemas); none when it can't say."""
        try:
            return self._backoff.call(self._link.capabilities, watching=self.offline_fallback)
        except TransportError as exc:
            if self._falls_back(exc):
                raise  # unreachable: the search goes to the local index at once, without a second try
            return NO_FILTERS
        except DevKnowError:
            return NO_FILTERS

    def _info(self, started: float, from_cache: bool, notices: list[str], *, local: bool = False) -> ResultInfo:
        if self._fallback_notices:
            notices, self._fallback_notices = [*self._fallback_notices, *notices], []
        return ResultInfo(
            backend="local" if local else self.backend_kind,
            endpoint=LOCAL_ENDPOINT if local else self.endpoint,
            elapsed=time.perf_counter() - started,
            from_cache=from_cache,
            notices=notices,
        )


def _status_of(client: DevKnowClient) -> dict[str, Any]:
    """:meth:`DevKnowClient.status`'s figures (a function of its own: the class stays within its size)."""
    backoff = client._backoff.state() if client.offline_fallback else None
    remote = client.backend_kind == "remote"
    details = client._backend.details()
    return {
        "endpoint": client.endpoint,
        "endpoint_source": client.endpoint_source,
        "backend": client.backend_kind,
        "protocol": details.get("protocol", "mcp") if remote else "local",
        "era": details.get("era"),
        "protocol_version": details.get("protocol_version"),
        "key_source": client.key_source or ("access token" if client._access_token else None),
        "timeout": client.timeout,
        "answered_by": client.answered_by,
        "offline_fallback": client.offline_fallback,
        "service_unreachable_since": backoff.down_since if backoff else None,
        "service_next_try": backoff.next_try if backoff else None,
        **_cache_figures(client.cache.stats()),
    }


def _clean_query(query: str) -> str:
    """The query with its whitespace collapsed; an empty one is a short error, not a call."""
    if not isinstance(query, str) or not query.strip():
        raise ConfigurationError("The query is empty.", hint="Say what to look for, e.g. 'create a bucket'.")
    return " ".join(query.split())


def _say_once(notices: list[str], line: str, announce: bool) -> None:
    """Add ``line`` to ``notices``; print it on stderr too, once per process, when ``announce``."""
    global _local_notice_shown
    notices.append(line)
    if announce and not _local_notice_shown:
        _local_notice_shown = True
        print(line, file=sys.stderr)


def _cache_figures(stats: CacheStats) -> dict[str, Any]:
    """The cache's figures as :meth:`DevKnowClient.status` gives them."""
    return {
        "cache_size": stats.size,
        "cache_max_entries": stats.max_entries,
        "cache_ttl": stats.ttl,
        "cache_hits": stats.hits,
        "cache_misses": stats.misses,
        "cache_hit_rate": stats.hit_rate,
    }


def _choose_cache(cache: ResultCache | bool | None) -> ResultCache:
    """The cache a client uses: the process-wide one (``None``, ``True``), none (``False``) or the one given."""
    if cache is None or cache is True:
        return shared_cache()
    if cache is False:
        return ResultCache(max_entries=0)
    return cache

"""``DevKnowClient``: search, fetch and ask Google's developer documentation from plain Python.

The client owns policy: where to connect and with which credentials, document names, batching of
``get_documents`` (at most 20 names a call, batches in parallel), the shared result cache and the
offline fallbacks. Talking MCP is the backend's job (:mod:`devknow_jupyter.transport` for a remote
server, :mod:`devknow_jupyter.local` for the embedded index).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any
from urllib.parse import urlsplit

from .backend import Backend
from .cache import ResultCache, cache_key, cache_scope, shared_cache
from .errors import (
    AuthenticationError,
    ConfigurationError,
    DevKnowError,
    DocumentNotFoundError,
    QuotaExceededError,
    ToolError,
    TransportError,
    register_secret,
)
from .fallback import FALLBACK_BACKEND, OfflineFallback, fallback_notice, is_unreachable, source_field
from .models import Answer, Document, DocumentChunk, Documents, ResultInfo, SearchResults
from .names import normalize_names
from .tools import MAX_NAMES_PER_CALL

__all__ = [
    "GOOGLE_ENDPOINT",
    "LOCAL_ENDPOINT",
    "QUOTA_FALLBACK_NOTICE",
    "DevKnowClient",
    "resolve_api_key",
    "resolve_endpoint",
]

#: Google's Developer Knowledge MCP server.
GOOGLE_ENDPOINT = "https://developerknowledge.googleapis.com/mcp"
#: The embedded offline index.
LOCAL_ENDPOINT = "local"
KEY_VARIABLES = ("DEVKNOW_API_KEY", "GOOGLE_API_KEY")
#: Said on search results that stand in for an answer because the answer quota is used up.
QUOTA_FALLBACK_NOTICE = "The answer quota is used up, so these are search results for the question instead."

_local_notice_shown = False


def resolve_api_key(api_key: str | None = None) -> tuple[str | None, str | None]:
    """The key to use and where it came from: the argument, else DEVKNOW_API_KEY, else GOOGLE_API_KEY."""
    if api_key:
        return api_key, "argument"
    for variable in KEY_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value:
            return value, variable
    return None, None


def resolve_endpoint(endpoint: str | None, have_credentials: bool) -> tuple[str, str]:
    """The endpoint to use and why: the argument, else DEVKNOW_ENDPOINT, else Google's with a key, else local."""
    if endpoint:
        return endpoint.strip(), "argument"
    from_env = os.environ.get("DEVKNOW_ENDPOINT", "").strip()
    if from_env:
        return from_env, "DEVKNOW_ENDPOINT"
    if have_credentials:
        return GOOGLE_ENDPOINT, "default"
    return LOCAL_ENDPOINT, "no key"


def _is_local(endpoint: str) -> bool:
    return endpoint == LOCAL_ENDPOINT or endpoint.startswith(LOCAL_ENDPOINT + ":")


class DevKnowClient:
    """A client for the Developer Knowledge tools, on the live service or the offline index.

    Args:
        endpoint: An MCP server URL, ``"local"`` for the embedded index (``"local:PATH"`` for an index or
            folder of your own). Default: ``DEVKNOW_ENDPOINT``, else Google's server when a key is
            configured, else ``"local"``.
        api_key: Sent only in the ``X-Goog-Api-Key`` header. Default: ``DEVKNOW_API_KEY``, else
            ``GOOGLE_API_KEY``.
        access_token: An OAuth bearer token, instead of a key.
        timeout: Seconds to wait for a reply (connecting has its own, shorter limit).
        cache: A :class:`~devknow_jupyter.cache.ResultCache`, ``None`` for the process-wide one, or
            ``False`` for none.
        backend: Use this backend object instead of building one from ``endpoint`` (advanced).
        http_transport: An ``httpx`` transport for the remote backend (tests, proxies).
        offline_store: Keep documents fetched from the live service on disk, searchable offline.
        offline_fallback: With a key or token on a remote endpoint, answer from the local index (starter
            pack, indexed folders, saved pages) when the service cannot be reached (DNS failure, refused
            connection, connect or read timeout), with a notice in ``info.notices``. Errors the server
            replies with (401, 403, 429, tool errors) are never replaced.
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
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        cache: ResultCache | bool | None = None,
        backend: Backend | None = None,
        http_transport: Any = None,
        headers: dict[str, str] | None = None,
        offline_store: bool = True,
        offline_fallback: bool = True,
        max_workers: int = 4,
        announce: bool = True,
    ) -> None:
        self.api_key, self.key_source = resolve_api_key(api_key)
        self._access_token = access_token or None
        register_secret(self.api_key)
        register_secret(self._access_token)
        if backend is not None:
            self.endpoint, self.endpoint_source = backend.endpoint, "backend"
        else:
            self.endpoint, self.endpoint_source = resolve_endpoint(
                endpoint, bool(self.api_key or self._access_token)
            )
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        if cache is None or cache is True:
            self.cache = shared_cache()
        elif cache is False:
            self.cache = ResultCache(max_entries=0)
        else:
            self.cache = cache
        self._headers = dict(headers or {})
        # Results are cached per endpoint and credentials (hashed): another key's results are never served.
        self._cache_scope = cache_scope(
            self.endpoint,
            self.api_key,
            self._access_token,
            *(f"{name.lower()}: {value}" for name, value in sorted(self._headers.items())),
        )
        self._http_transport = http_transport
        self._offline_store_enabled = offline_store
        self._store: Any = None
        self._store_writer: ThreadPoolExecutor | None = None
        self._store_pending: Future[None] | None = None
        self._offline_fallback_enabled = offline_fallback
        self._fallback = OfflineFallback()
        self.answered_by: str | None = None  # which backend gave the last tool answer (see status())
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._tools: list[dict[str, Any]] | None = None
        self._lock = threading.RLock()
        self._closed = False
        self.notices: list[str] = []
        self._announce = announce
        self._backend = backend if backend is not None else self._make_backend()
        if self.endpoint_source == "no key":
            self._say_once(
                "devknow: no API key set, so using the offline index. For the live service set "
                "DEVKNOW_API_KEY (or run %devknow --api-key in a notebook)."
            )

    # -- construction ---------------------------------------------------------------------------

    def _make_backend(self) -> Backend:
        if _is_local(self.endpoint):
            from .local.backend import LocalBackend

            return LocalBackend.from_spec(self.endpoint)
        parts = urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError(
                f"Not an MCP endpoint: {self.endpoint!r}",
                hint="Use an http(s) URL such as https://developerknowledge.googleapis.com/mcp, or 'local'.",
            )
        from .transport import McpHttpBackend

        return McpHttpBackend(
            self.endpoint,
            api_key=self.api_key,
            access_token=self._access_token,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
            headers=self._headers,
            http_transport=self._http_transport,
        )

    def _say_once(self, line: str) -> None:
        global _local_notice_shown
        self.notices.append(line)
        if self._announce and not _local_notice_shown:
            _local_notice_shown = True
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
        self, query: str, *, source: str | None = None, refresh: bool = False
    ) -> SearchResults:
        """Search the documentation; returns the matching passages as :class:`SearchResults`.

        Args:
            query: What to look for, in plain words.
            source: Keep only hits from this site (e.g. ``"firebase.google.com"``); sent to the service
                when its tool accepts a filter, otherwise applied to the hits here (with a notice).
            refresh: Ask the server even when the answer is cached.
        """
        query = self._check_query(query)
        if source:
            source = source.strip().lower().removeprefix("https://").removeprefix("http://").strip("/")
        started = time.perf_counter()
        notices: list[str] = []
        try:
            hits, from_cache, filtered = self._search(query, source, refresh=refresh)
            local = False
        except TransportError as exc:
            if not self._falls_back(exc):
                raise
            hits, from_cache, filtered = self._search(query, source, refresh=refresh, fallen=exc)
            local = True
            notices.append(fallback_notice(exc))
        chunks: Iterable[DocumentChunk] = hits
        if source and not filtered:
            chunks = [hit for hit in hits if _host_matches(hit.uri, source)]
            notices.append(_filtered_here(source, len(chunks), len(hits)))
        out = SearchResults(query, chunks, self._info(started, from_cache, notices, local=local))
        out._client = self
        return out

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
        found: dict[str, Document] = {} if refresh else self._cached_documents(wanted)
        lacking = [name for name in wanted if name not in found]
        batches = [lacking[i : i + MAX_NAMES_PER_CALL] for i in range(0, len(lacking), MAX_NAMES_PER_CALL)]
        unreachable: TransportError | None = None
        try:
            fetched = self._fetch_batches(batches)
            if batches:
                self.answered_by = self.backend_kind
        except TransportError as exc:
            if not self._falls_back(exc):
                raise
            unreachable = exc
            fetched = self._cached_documents(lacking)  # batches that got through before the failure
            rest = [name for name in lacking if name not in fetched]
            found.update((doc["name"], Document.from_dict(doc)) for doc in self._fallback.get(rest, exc))
            self.answered_by = FALLBACK_BACKEND
        found.update(fetched)
        if fetched:
            self._keep_offline(fetched.values())
        docs = [found[name] for name in wanted if name in found]
        for doc in docs:
            object.__setattr__(doc, "_client", self)
        notices = [fallback_notice(unreachable)] if unreachable is not None else []
        result = Documents(docs, self._info(started, not lacking, notices, local=unreachable is not None))
        result._client = self
        missing = [name for name in wanted if name not in found]
        if missing:
            reason = "the service could not be reached" if unreachable is not None else None
            raise DocumentNotFoundError(missing, result, unreachable=reason)
        return result

    def answer_query(self, query: str, *, refresh: bool = False) -> Answer:
        """Ask a question; returns a grounded :class:`Answer` with the names of its references.

        The service allows few answers a day: on exhaustion this raises
        :class:`~devknow_jupyter.errors.QuotaExceededError`, and the caller may fall back to
        :meth:`search_documents` (``%%devask`` does). When the service cannot be reached (see
        ``offline_fallback``), the local index answers by quoting its best passages.
        """
        query = self._check_query(query)
        started = time.perf_counter()
        notices: list[str] = []
        try:
            data, from_cache = self._call_cached("answer_query", {"query": query}, refresh=refresh)
        except TransportError as exc:
            if not self._falls_back(exc):
                raise
            data, from_cache = self._call_local("answer_query", {"query": query}, exc), False
            notices.append(fallback_notice(exc))
        answer = Answer.from_dict(data, query=query)
        answer.info = self._info(started, from_cache, notices, local=bool(notices))
        answer._client = self
        return answer

    def ask(self, query: str, *, fallback: bool = True, refresh: bool = False) -> Answer | SearchResults:
        """Answer ``query``; when the answer quota is used up, search for it instead.

        The service's own advice for an exhausted ``answer_query`` quota. The search results then carry
        :data:`QUOTA_FALLBACK_NOTICE` in ``info.notices``, so every view of them says why. With
        ``fallback=False`` the :class:`~devknow_jupyter.errors.QuotaExceededError` is raised instead.
        """
        try:
            return self.answer_query(query, refresh=refresh)
        except QuotaExceededError:
            if not fallback:
                raise
        results = self.search_documents(query, refresh=refresh)
        results.info.notices.insert(0, QUOTA_FALLBACK_NOTICE)
        return results

    def list_tools(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """The server's tools as ``tools/list`` gives them: name, description, schemas, annotations."""
        self._check_open()
        self._check_credentials()  # like the tool calls: no keyless request to Google's server
        with self._lock:
            if self._tools is None or refresh:
                self._tools = self._backend.list_tools()
            return self._tools

    # -- status and lifecycle -------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Endpoint, backend, the MCP era and protocol version once the server told them (None until then,
        and for the local backend), where the key came from (never the key), cache figures, which backend
        answered the last tool call (``answered_by``: ``"remote"``, ``"local"`` or ``"local (offline
        fallback)"``; None before the first) and whether the offline fallback is on."""
        stats = self.cache.stats()
        return {
            "endpoint": self.endpoint,
            "endpoint_source": self.endpoint_source,
            "backend": self.backend_kind,
            "era": getattr(self._backend, "era", None),
            "protocol_version": getattr(self._backend, "protocol_version", None),
            "key_source": self.key_source or ("access token" if self._access_token else None),
            "timeout": self.timeout,
            "answered_by": self.answered_by,
            "offline_fallback": self.offline_fallback,
            "cache_size": stats.size,
            "cache_max_entries": stats.max_entries,
            "cache_ttl": stats.ttl,
            "cache_hits": stats.hits,
            "cache_misses": stats.misses,
            "cache_hit_rate": stats.hit_rate,
        }

    def close(self) -> None:
        """End the server session and release connections. The client cannot be used afterwards."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pool, self._pool = self._pool, None
            writer, self._store_writer = self._store_writer, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        if writer is not None:
            writer.shutdown(wait=True)  # documents fetched are saved before the store closes
        self._backend.close()
        self._fallback.close()
        if self._store is not None:
            self._store.close()

    def __enter__(self) -> DevKnowClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigurationError("This DevKnowClient is closed; create a new one.")

    def _check_query(self, query: str) -> str:
        self._check_open()
        if not isinstance(query, str) or not query.strip():
            raise ConfigurationError("The query is empty.", hint="Say what to look for, e.g. 'create a bucket'.")
        return " ".join(query.split())

    def _check_credentials(self) -> None:
        # Google's server needs a key; fail before any request rather than after a 401 round trip.
        google = urlsplit(self.endpoint).hostname == urlsplit(GOOGLE_ENDPOINT).hostname
        if self.backend_kind == "remote" and google and not (self.api_key or self._access_token):
            raise AuthenticationError("No API key is configured for the Developer Knowledge API.")

    def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self._check_open()
        self._check_credentials()
        return self._backend.call_tool(tool, arguments)

    def _falls_back(self, exc: TransportError) -> bool:
        return self.offline_fallback and is_unreachable(exc)

    def _search(
        self, query: str, source: str | None, *, refresh: bool, fallen: TransportError | None = None
    ) -> tuple[tuple[DocumentChunk, ...], bool, bool]:
        """``(hits, from_cache, filtered by the backend)`` from the backend, or the local index after ``fallen``."""
        arguments: dict[str, Any] = {"query": query}
        field = None
        if source:
            field = self._fallback.source_argument(fallen) if fallen is not None else self._source_argument()
            if field:
                arguments[field] = source
        if fallen is not None:
            return _parse_hits(self._call_local("search_documents", arguments, fallen)), False, bool(field)
        hits, from_cache = self._call_cached("search_documents", arguments, refresh=refresh, parse=_parse_hits)
        return hits, from_cache, bool(field)

    def _call_local(self, tool: str, arguments: dict[str, Any], cause: TransportError) -> dict[str, Any]:
        """One call on the local index, standing in for the unreachable service (never cached)."""
        self._check_open()
        pending = self._store_pending
        if pending is not None:
            futures_wait([pending], timeout=30)  # pages just fetched are searchable offline too
        data = self._fallback.call_tool(tool, arguments, cause)
        self.answered_by = FALLBACK_BACKEND
        return data

    def _cached_documents(self, names: list[str]) -> dict[str, Document]:
        found = {}
        for name in names:
            cached = self.cache.get(cache_key(self._cache_scope, "document", name))
            if cached is not None:
                found[name] = cached
        return found

    def _call_cached(
        self, tool: str, arguments: dict[str, Any], *, refresh: bool, parse: Callable[[dict[str, Any]], Any] = dict
    ) -> tuple[Any, bool]:
        # The parsed value is cached, so a hit costs a dict lookup, not a rebuild of every hit.
        key = cache_key(self._cache_scope, tool, arguments)
        if not refresh:
            cached = self.cache.get(key)
            if cached is not None:
                return cached, True
        value = parse(self._call(tool, arguments))
        self.answered_by = self.backend_kind
        self.cache.set(key, value)
        return value, False

    def _fetch_batches(self, batches: list[list[str]]) -> dict[str, Document]:
        if not batches:
            return {}
        if len(batches) == 1:  # the common case stays on the calling thread (prompt Ctrl-C)
            return self._fetch_batch(batches[0])
        futures = [self._executor().submit(self._fetch_batch, batch) for batch in batches]
        fetched: dict[str, Document] = {}
        error: BaseException | None = None
        try:
            for future in futures:
                try:
                    fetched.update(future.result())
                except DevKnowError as exc:
                    error = error or exc
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        if error is not None:
            raise error  # the documents of the other batches are cached already
        return fetched

    def _fetch_batch(self, names: list[str]) -> dict[str, Document]:
        try:
            data = self._call("get_documents", {"names": names})
        except ToolError as exc:
            if len(names) > 1 and _looks_not_found(exc):
                # The server failed the whole batch for an unknown name: split to keep the known ones.
                middle = len(names) // 2
                return {**self._fetch_batch(names[:middle]), **self._fetch_batch(names[middle:])}
            if _looks_not_found(exc):
                return {}
            raise
        docs = [Document.from_dict(item) for item in data.get("documents") or []]
        by_name = {doc.name: doc for doc in docs}
        if len(docs) == len(names) and not set(names) <= set(by_name):
            by_name = dict(zip(names, docs, strict=True))  # renamed by the server; order is kept
        result = {name: by_name[name] for name in names if name in by_name}
        for name, doc in result.items():
            self.cache.set(cache_key(self._cache_scope, "document", name), doc)
        return result

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix="devknow")
            return self._pool

    def _source_argument(self) -> str | None:
        try:
            tools = self.list_tools()
        except TransportError as exc:
            if self._falls_back(exc):
                raise  # unreachable: the search goes to the local index at once, without a second try
            return None
        except DevKnowError:
            return None
        return source_field(tools)

    def _info(self, started: float, from_cache: bool, notices: list[str], *, local: bool = False) -> ResultInfo:
        return ResultInfo(
            backend="local" if local else self.backend_kind,
            endpoint=LOCAL_ENDPOINT if local else self.endpoint,
            elapsed=time.perf_counter() - started,
            from_cache=from_cache,
            notices=notices,
        )

    def _offline_store(self) -> Any:
        if not self._offline_store_enabled or self.backend_kind != "remote":
            return None
        with self._lock:
            if self._store is None:
                from .local.store import DocumentStore

                self._store = DocumentStore.open_default()
            return self._store

    def _keep_offline(self, documents: Iterable[Document]) -> None:
        if not self._offline_store_enabled or self.backend_kind != "remote":
            return
        docs = list(documents)
        with self._lock:
            if self._closed:
                return
            if self._store_writer is None:
                self._store_writer = ThreadPoolExecutor(1, thread_name_prefix="devknow-store")
            # The SQLite write happens off the caller's thread: a fetch returns once its reply is parsed.
            # One worker keeps the writes in order, so waiting for the last one waits for them all.
            self._store_pending = self._store_writer.submit(self._write_offline, docs)

    def _write_offline(self, documents: list[Document]) -> None:
        try:
            store = self._offline_store()
            if store is not None:
                store.add(documents)
        except Exception as exc:  # the offline copy is a convenience; never fail a fetch for it
            self.notices.append(f"Could not save documents offline: {exc}")


def _parse_hits(data: dict[str, Any]) -> tuple[DocumentChunk, ...]:
    return tuple(DocumentChunk.from_dict(item) for item in data.get("results") or [])


def _filtered_here(source: str, kept: int, scanned: int) -> str:
    """The notice for hits filtered by site here, because the server's search has no such filter."""
    if not kept:
        return (
            f"No {source} hits among the first {scanned}: the server's search has no source filter, "
            "so its hits were filtered here. Try other words, or drop the source."
        )
    return (
        f"Filtered here to {source}: the server's search has no source filter ({kept} of {scanned} hits kept)."
    )


def _host_matches(uri: str, source: str) -> bool:
    host = (urlsplit(uri).hostname or "").lower()
    domain, _, path = source.partition("/")
    if not (host == domain or host.endswith("." + domain)):
        return False
    return not path or urlsplit(uri).path.lstrip("/").startswith(path)


def _looks_not_found(exc: ToolError) -> bool:
    text = exc.message.upper()
    return "NOT_FOUND" in text or "NOT FOUND" in text or "UNKNOWN DOCUMENT" in text or exc.code == 404

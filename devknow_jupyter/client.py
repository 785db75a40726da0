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
    ProtocolError,
    QuotaExceededError,
    ToolError,
    TransportError,
    register_secret,
    split_url_credentials,
)
from .fallback import FALLBACK_BACKEND, OfflineFallback, fallback_notice, is_unreachable
from .models import Answer, Document, DocumentChunk, Documents, ResultInfo, SearchResults
from .names import normalize_names, source_matches
from .tools import MAX_NAMES_PER_CALL

__all__ = [
    "GOOGLE_ENDPOINT",
    "LOCAL_ENDPOINT",
    "QUOTA_FALLBACK_NOTICE",
    "DevKnowClient",
    "resolve_api_key",
    "resolve_endpoint",
    "resolve_protocol",
]

#: Google's Developer Knowledge MCP server.
GOOGLE_ENDPOINT = "https://developerknowledge.googleapis.com/mcp"
#: The embedded offline index.
LOCAL_ENDPOINT = "local"
KEY_VARIABLES = ("DEVKNOW_API_KEY", "GOOGLE_API_KEY")
#: How the client talks to a remote server: the MCP tools (default) or the API's REST surface.
PROTOCOLS = ("mcp", "rest")
#: Said on search results that stand in for an answer because the answer quota is used up.
QUOTA_FALLBACK_NOTICE = "The answer quota is used up, so these are search results for the question instead."

_local_notice_shown = False


def resolve_api_key(api_key: str | None = None) -> tuple[str | None, str | None]:
    """The key to use and where it came from: the argument, else DEVKNOW_API_KEY, else GOOGLE_API_KEY.

    Surrounding whitespace is dropped (a key read from a file ends in a newline, which no header may hold).
    """
    api_key = (api_key or "").strip()
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


def resolve_protocol(protocol: str | None = None) -> str:
    """``"mcp"`` (the default) or ``"rest"``: the argument, else DEVKNOW_PROTOCOL, else ``"mcp"``."""
    value = (protocol or os.environ.get("DEVKNOW_PROTOCOL", "") or "mcp").strip().lower()
    if value not in PROTOCOLS:
        raise ConfigurationError(f"Unknown protocol {value!r}.", hint="Use 'mcp' (the default) or 'rest'.")
    return value


def rest_origin(endpoint: str) -> str:
    """The REST surface's URL for ``endpoint``: an MCP URL loses its ``/mcp`` path (same host, same API)."""
    endpoint = endpoint.rstrip("/")
    return endpoint[: -len("/mcp")] if endpoint.endswith("/mcp") else endpoint


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
        timeout: float = 30.0,
        connect_timeout: float = 10.0,
        cache: ResultCache | bool | None = None,
        backend: Backend | None = None,
        http_transport: Any = None,
        headers: dict[str, str] | None = None,
        offline_store: bool = True,
        offline_fallback: bool = True,
        max_workers: int = 4,
        max_reply_bytes: int | None = 32 * 1024 * 1024,  # the transport's MAX_REPLY_BYTES
        announce: bool = True,
        protocol: str | None = None,
    ) -> None:
        self.protocol = resolve_protocol(protocol)
        self.api_key, self.key_source = resolve_api_key(api_key)
        self._access_token = (access_token or "").strip() or None
        register_secret(self.api_key)
        register_secret(self._access_token)
        if backend is not None:
            self.endpoint, self.endpoint_source = backend.endpoint, "backend"
        else:
            self.endpoint, self.endpoint_source = resolve_endpoint(
                endpoint, bool(self.api_key or self._access_token)
            )
            self._take_url_credentials()
        self._max_reply_bytes = max_reply_bytes
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
        self._fallback_notices: list[str] = []  # said once more on the next result
        self._announce = announce
        self._backend = backend if backend is not None else self._make_backend()
        if self.endpoint_source == "no key":
            # One line; when the offline index holds only the starter guide it also says how to add documentation.
            bare = getattr(self._backend, "documentation_hint", lambda: None)()
            self._say_once(
                "devknow: no API key set, so using the offline index. For the live service set "
                "DEVKNOW_API_KEY (or run %devknow --api-key in a notebook)." + (f" {bare}" if bare else "")
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
        if self.protocol == "rest":
            return self._rest_backend()
        from .transport import McpHttpBackend

        return McpHttpBackend(
            self.endpoint,
            api_key=self.api_key,
            access_token=self._access_token,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
            headers=self._headers,
            http_transport=self._http_transport,
            max_reply_bytes=self._max_reply_bytes,
        )

    def _take_url_credentials(self) -> None:
        # A key in the endpoint URL (https://user:KEY@host/mcp, ?key=KEY) moves to its header; the URL
        # kept (shown in repr, status and messages) is the one without it.
        self.endpoint, url_key, url_token = split_url_credentials(self.endpoint)
        explicit_key = self.api_key if self.key_source == "argument" else None  # the environment's yields
        for found, given, what in ((url_key, explicit_key, "API key"), (url_token, self._access_token, "token")):
            if found and given and found != given:
                raise ConfigurationError(
                    f"The endpoint URL holds an {what} and another one was given; pass one only.",
                    hint="Keys belong in api_key= or DEVKNOW_API_KEY, not in the URL.",
                )
        if url_key:
            self.api_key, self.key_source = url_key, "the endpoint URL"
        if url_token:
            self._access_token = url_token

    def _rest_backend(self) -> Backend:
        from .rest import RestBackend

        return RestBackend(
            rest_origin(self.endpoint),
            api_key=self.api_key,
            access_token=self._access_token,
            headers=self._headers,
            timeout=self.timeout,
            connect_timeout=self.connect_timeout,
            max_reply_bytes=self._max_reply_bytes,
            credential_source=self.key_source,
        )

    def _switch_to_rest(self, exc: DevKnowError, tool: str | None) -> bool:
        """After the MCP server refused the handshake, or lacks ``tool``: use the same host's REST surface for
        the rest of this client's life, when the ``rest`` extra is installed. Returns whether it switched."""
        backend = self._backend
        speaks_mcp = getattr(backend, "protocol", "mcp") == "mcp"
        if self.endpoint_source == "backend" or backend.kind != "remote" or not speaks_mcp:
            return False  # a backend of the caller's, the offline index, or REST already
        if isinstance(exc, ProtocolError):
            if getattr(backend, "era", None) is not None:
                return False  # the server spoke MCP before: a fault in one reply, not a refusal
            why = "refused the MCP handshake"
        elif isinstance(exc, ToolError) and tool and _looks_like_missing_tool(exc):
            try:
                if tool in {item.get("name") for item in backend.list_tools()}:
                    return False  # the tool is there: its error is a real one
            except DevKnowError:
                return False
            why = f"offers no {tool} tool"
        else:
            return False
        from .rest import rest_available

        if not rest_available():
            return False
        with self._lock:
            if self._backend is not backend:  # another thread switched already
                return True
            self._backend, self._tools = self._rest_backend(), None
        line = f"devknow: {self.endpoint} {why}; using the REST API at {self._backend.endpoint} from now on."
        self.notices.append(line)
        self._fallback_notices.append(line)
        if self._announce:
            print(line, file=sys.stderr)
        backend.close()
        return True

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
        query = self._check_query(query)
        from .rest.filters import normalize_sources

        sources = normalize_sources(source)
        started = time.perf_counter()
        try:
            arguments, filter_here, notices = self._search_arguments(query, sources, since, page_size, page_token)
            (hits, token, served), from_cache = self._call_cached(
                "search_documents", arguments, refresh=refresh, parse=_parse_page
            )
            local = False
        except TransportError as exc:
            if not self._falls_back(exc) or page_token:  # a later page of the service's results: not here
                raise
            inputs = self._fallback.search_inputs(exc)
            arguments, filter_here, notices = self._search_arguments(query, sources, since, page_size, None, inputs)
            (hits, _, served), from_cache = _parse_page(self._call_local("search_documents", arguments, exc)), False
            token, local = None, True
            notices.insert(0, fallback_notice(exc))
        notices.extend(served)
        chunks: list[DocumentChunk] = list(hits)
        if filter_here:
            chunks = [hit for hit in hits if any(source_matches(hit.uri, site) for site in filter_here)]
            notices.append(_filtered_here(", ".join(filter_here), len(chunks), len(hits)))
        if page_size and len(chunks) > page_size:
            chunks = chunks[:page_size]
            token = None  # the server's next page starts after the hits cut here: following it would skip them
        info = self._info(started, from_cache, notices, local=local)
        out = SearchResults(query, chunks, info, next_page_token=token)
        out._request = {"source": sources or None, "since": since, "page_size": page_size}
        return out

    def _search_arguments(
        self,
        query: str,
        sources: list[str],
        since: Any,
        page_size: int | None,
        page_token: str | None,
        inputs: set[str] | None = None,
    ) -> tuple[dict[str, Any], list[str], list[str]]:
        """The tool's arguments for a search, the sites left to filter here, and notices on what the server
        can't do. Filters and paging go to the server when its search schema takes them (the REST backend).
        ``inputs``: the search tool's argument names, when not the server's (the local index's, offline)."""
        from .rest.filters import build_filter, rfc3339

        arguments: dict[str, Any] = {"query": query}
        notices: list[str] = []
        rest = getattr(self._backend, "protocol", None) == "rest" and inputs is None
        if inputs is not None:
            accepts = inputs
        else:
            accepts = self._search_inputs() if (sources or since or page_size or page_token or rest) else set()
        if "filter" in accepts and (sources or since):
            arguments["filter"] = build_filter(sources, since)
            filter_here = [site for site in sources if "/" in site]  # the service filters by whole sites only
        else:
            field = _source_field(accepts) if sources else None
            filter_here = sources if len(sources) != 1 or not field else []
            if field and not filter_here:
                arguments[field] = sources[0]
            if since and "since" in accepts:  # the local index (and `devknow serve`): by the dates it knows
                arguments["since"] = rfc3339(since)
            elif since:
                notices.append(f"Not applied: since {rfc3339(since)} (this server's search takes no date filter).")
        if page_size and "page_size" in accepts:
            from .rest import MAX_PAGE_SIZE

            if page_size > MAX_PAGE_SIZE:
                notices.append(
                    f"The service returns at most {MAX_PAGE_SIZE} hits a page; use client.next_page(results) for more."
                )
            arguments["page_size"] = min(int(page_size), MAX_PAGE_SIZE)
        if page_token:
            if "page_token" not in accepts:
                raise ConfigurationError(
                    "This server's search has no pages.",
                    hint="Use protocol='rest' or the local index for paging, or a larger -n.",
                )
            arguments["page_token"] = page_token
        return arguments, filter_here, notices

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
        :meth:`search_documents`; only the REST protocol's answers take such a filter (AnswerQuery's
        ``filter``): elsewhere the answer says in a notice that they were not applied.
        """
        query = self._check_query(query)
        started = time.perf_counter()
        from .rest.filters import answer_filter, normalize_sources

        sources = normalize_sources(source)
        wanted = bool(sources) or (since is not None and since != "")
        accepts = self._search_inputs("answer_query") if wanted else set()
        expression, notices = answer_filter(sources, since, accepts)
        arguments = {"query": query, **({"filter": expression} if expression else {})}
        local = False
        try:
            data, from_cache = self._call_cached("answer_query", arguments, refresh=refresh)
        except TransportError as exc:
            if not self._falls_back(exc):
                raise
            data, from_cache, local = self._call_local("answer_query", {"query": query}, exc), False, True
            notices = [fallback_notice(exc), *answer_filter(sources, since, set())[1]]
        answer = Answer.from_dict(data, query=query)
        answer.info = self._info(started, from_cache, [*notices, *answer.info.notices], local=local)
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

    def list_tools(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """The server's tools as ``tools/list`` gives them: name, description, schemas, annotations."""
        self._check_open()
        self._check_credentials()  # like the tool calls: no keyless request to Google's server
        with self._lock:
            if self._tools is None or refresh:
                try:
                    self._tools = self._backend.list_tools()
                except ProtocolError as exc:
                    if not self._switch_to_rest(exc, None):
                        raise
                    self._tools = self._backend.list_tools()
            return self._tools

    # -- status and lifecycle -------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Endpoint, backend, protocol (``"mcp"``, ``"rest"`` or ``"local"``), the MCP era and protocol version
        once the server told them (None until then, and for the other protocols), where the key came from
        (never the key), cache figures, which backend answered the last tool call (``answered_by``:
        ``"remote"``, ``"local"`` or ``"local (offline fallback)"``; None before the first) and whether the
        offline fallback is on."""
        stats = self.cache.stats()
        return {
            "endpoint": self.endpoint,
            "endpoint_source": self.endpoint_source,
            "backend": self.backend_kind,
            "protocol": getattr(self._backend, "protocol", "mcp") if self.backend_kind == "remote" else "local",
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
        try:
            return self._backend.call_tool(tool, arguments)
        except (ProtocolError, ToolError) as exc:
            if not self._switch_to_rest(exc, tool):
                raise
        return self._backend.call_tool(tool, arguments)

    def _falls_back(self, exc: TransportError) -> bool:
        return self.offline_fallback and is_unreachable(exc)

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
        except DocumentNotFoundError as exc:  # the backend told the unknown names apart already (REST)
            data = (exc.documents or Documents()).to_dict()
        except ToolError as exc:
            if not exc.not_found:  # decided where the reply was read (transport, local or REST backend)
                raise
            if len(names) > 1:
                # The server failed the whole batch for an unknown name: split to keep the known ones.
                middle = len(names) // 2
                return {**self._fetch_batch(names[:middle]), **self._fetch_batch(names[middle:])}
            return {}
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

    def _search_inputs(self, tool: str = "search_documents") -> set[str]:
        """The argument names the server's ``tool`` (search_documents) takes (from its input schema)."""
        try:
            tools = self.list_tools()
        except TransportError as exc:
            if self._falls_back(exc):
                raise  # unreachable: the search goes to the local index at once, without a second try
            return set()
        except DevKnowError:
            return set()
        for item in tools:
            if item.get("name") == tool:
                return set((item.get("inputSchema") or {}).get("properties") or {})
        return set()

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


def _parse_page(data: dict[str, Any]) -> tuple[tuple[DocumentChunk, ...], str | None, tuple[str, ...]]:
    """The hits, the next page's token, and the one-line ``notices`` a server may send beside them (the
    local index's weak match)."""
    hits = tuple(DocumentChunk.from_dict(item) for item in data.get("results") or [])
    notices = data.get("notices") if isinstance(data.get("notices"), list) else []
    return hits, data.get("nextPageToken") or None, tuple(str(n) for n in notices if str(n).strip())


def _source_field(inputs: set[str]) -> str | None:
    """The site filter argument among a search tool's argument names, if it has one."""
    return next((field for field in ("source", "data_source", "site") if field in inputs), None)


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


def _looks_like_missing_tool(exc: ToolError) -> bool:
    # JSON-RPC "method not found" / "invalid params" (the SDKs' "Unknown tool"), or words to that effect.
    text = exc.message.lower()
    unknown = "unknown tool" in text or "no such tool" in text or ("tool" in text and "not found" in text)
    return not isinstance(exc, DocumentNotFoundError) and (exc.code in (-32601, -32602) or unknown)


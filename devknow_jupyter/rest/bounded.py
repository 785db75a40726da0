"""Bounded replies for the REST backend: at most ``max_reply_bytes`` read, and one deadline per call.

Google's REST transport sends each request through a ``requests`` session (google-auth's
``AuthorizedSession``) without ``stream=True``, so ``requests`` reads the whole body into memory before
the transport sees it, and its ``timeout`` is a per-socket-read limit: a 300 MB body is buffered whole,
and a reply that drips a byte at a time never ends. The layer that can bound both is the session's
transport adapter, under the generated code: :class:`BoundedAdapter` sends with ``stream=True``, gives the
request at most the time the call has left (:class:`~devknow_jupyter.transport.budget.CallBudget`), then
reads the body itself, chunk by chunk as it arrives (``read1``, raw), undoing its content encodings in
bounded pieces (:mod:`~devknow_jupyter.transport.encodings`, as the MCP transport does: urllib3's own
decoders inflated a ``gzip, gzip`` body slowly, past the deadline), giving each read at most the time left
and stopping with the MCP transport's ``ProtocolError`` (:func:`~devknow_jupyter.transport.decode.too_large`)
once the body passes the limit, without reading further. The body it read becomes the response's content,
so the generated code parses it as before.

The status line and headers are read inside urllib3, a line at a time, each read waiting at most the time
left but a dripping server could still send one byte per read for ever: so each connection records itself
when a request goes out on it (the adapter's connection classes), and a timer shuts its socket down at the
call's deadline, which ends any read at once (as the MCP transport bounds every read by the deadline).

Every request the adapter sends must go to the backend's own origin (scheme, host and port): ``requests``
follows 301/302/303/307/308 on its own and keeps ``X-Goog-Api-Key`` on every hop, so a redirect to another
origin is refused here, before anything is sent there (as the MCP transport refuses it), and redirects
within the origin are followed at most :data:`MAX_REDIRECTS` times.

The call's budget travels in a thread-local (:func:`bounded_call`): the generated methods take no argument
that could carry it, and the client calls a backend from several threads at once.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from requests.adapters import HTTPAdapter
from urllib3 import exceptions as urllib3_errors
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ..errors import ProtocolError, TransportError
from ..transport.budget import CallBudget
from ..transport.decode import too_large
from ..transport.encodings import decoded

__all__ = ["MAX_REDIRECTS", "BoundedAdapter", "bounded_call", "current_budget"]

#: The most redirects one request follows (within its origin), as in the MCP transport.
MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}

_CHUNK = 64 * 1024
_call = threading.local()


@contextmanager
def bounded_call(budget: CallBudget) -> Iterator[CallBudget]:
    """While the block runs, every request this thread sends through a :class:`BoundedAdapter` is bounded by
    ``budget`` (its deadline; the adapter's byte limit applies either way)."""
    outer = getattr(_call, "budget", None)
    _call.budget = budget
    try:
        yield budget
    finally:
        _call.budget = outer


def current_budget() -> CallBudget | None:
    """The budget of the call this thread is making, if any."""
    return getattr(_call, "budget", None)


class _Watched:
    """A connection that records itself in its thread's call when a request goes out on it."""

    def request(self, *args: Any, **kwargs: Any) -> Any:
        sent_on = getattr(_call, "connections", None)
        if sent_on is not None:
            sent_on.append(self)
        return super().request(*args, **kwargs)  # type: ignore[misc]


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


def _cut(connections: list[Any]) -> None:
    """At the deadline: end every read on the call's connections (a blocked read returns at once)."""
    for connection in connections:
        sock = getattr(connection, "sock", None)
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class BoundedAdapter(HTTPAdapter):
    """A ``requests`` adapter that reads each reply body itself, within a byte limit and the call's deadline.

    Args:
        max_reply_bytes: The largest body read (after content decoding); ``None`` for no limit.
        connect_timeout: The longest wait for a connection (within the time the call has left).
        endpoint: The backend's URL: requests to any other origin (a redirect's) are refused unsent.
    """

    def __init__(self, max_reply_bytes: int | None, connect_timeout: float = 10.0, endpoint: str | None = None) -> None:
        super().__init__(max_retries=0)  # retries are the backend's, within the call's deadline
        self.max_reply_bytes = max_reply_bytes
        self.connect_timeout = connect_timeout
        self.endpoint = endpoint
        self._origin = _origin(endpoint) if endpoint else None

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """The pool manager, with connections that record themselves (see the module docstring)."""
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}

    def send(self, request: Any, stream: bool = False, timeout: Any = None, **kwargs: Any) -> Any:
        """Send ``request`` and, unless the caller streams, read its body within the limits."""
        self._check_origin(request.url)
        budget = current_budget()
        if budget is None:
            return self._send(request, stream, timeout, None, **kwargs)
        budget.check()
        left = max(budget.remaining(), 0.001)
        connections: list[Any] = []
        deadline = threading.Timer(left, _cut, (connections,))
        deadline.daemon = True
        _call.connections = connections
        deadline.start()
        try:
            return self._send(request, stream, (min(self.connect_timeout, left), left), budget, **kwargs)
        except Exception:
            if budget.remaining() <= 0:
                raise budget.expired() from None  # whatever the cut read ended in, the call ran out of time
            raise
        finally:
            deadline.cancel()
            _call.connections = None

    def _check_origin(self, url: str) -> None:
        """Refuse a request to another origin than the endpoint's: only a redirect makes one, and the
        request carries the key."""
        if self._origin is None or _origin(url) == self._origin:
            return
        parts = urlsplit(url)
        raise TransportError(
            f"{self.endpoint} redirected to another site ({parts.scheme}://{parts.hostname}); "
            "not followed, so that the key is not sent there. Use the final URL as the endpoint."
        )

    def _send(self, request: Any, stream: bool, timeout: Any, budget: CallBudget | None, **kwargs: Any) -> Any:
        response = super().send(request, stream=True, timeout=timeout, **kwargs)
        if stream:
            return response
        try:
            response._content = self._read(response, budget)
            if budget is not None:
                budget.check()  # a body cut at the deadline may look complete
        except BaseException:
            response.close()  # the connection is dropped, the rest of the body never read
            raise
        response._content_consumed = True
        response.raw.release_conn()
        return response

    def _raw_pieces(self, raw: Any, budget: CallBudget | None) -> Iterator[bytes]:
        """The body as sent (still encoded), a chunk at a time, each read waiting at most the time left."""
        sock = _socket_of(raw)
        while True:
            if budget is not None:
                budget.check()
                if sock is not None:
                    sock.settimeout(max(budget.remaining(), 0.001))  # one read waits at most the time left
            try:
                chunk = raw.read1(_CHUNK, decode_content=False)
            except Exception as exc:
                if budget is not None and budget.remaining() <= 0 and _is_timeout(exc):
                    raise budget.expired() from None
                if isinstance(exc, urllib3_errors.ProtocolError):
                    # The server answered, but sent less than its Content-Length said.
                    where = self.endpoint or "the server"
                    raise ProtocolError(f"The reply from {where} was cut short.") from None
                raise
            if not chunk:
                return
            yield chunk

    def _read(self, response: Any, budget: CallBudget | None) -> bytes:
        limit = self.max_reply_bytes
        declared = response.headers.get("Content-Length", "")
        if limit is not None and declared.isdigit() and int(declared) > limit:
            raise too_large(limit)
        parts, size = [], 0
        # Raw bytes, each encoding layer undone here in bounded pieces (urllib3's decoders are slow to stop).
        for chunk in decoded(self._raw_pieces(response.raw, budget), response.headers.get("Content-Encoding")):
            if budget is not None:
                budget.check()  # between pieces: inflating can't outlast the call either
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                raise too_large(limit)
        return b"".join(parts)


def _origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the port filled in from the scheme (an unreadable port counts
    as its own origin, so it never matches the endpoint's)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def _socket_of(raw: Any) -> socket.socket | None:
    """The socket under urllib3's response (best effort: None when this urllib3 keeps it elsewhere)."""
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _is_timeout(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return False
        if isinstance(seen, (TimeoutError, socket.timeout)) or "Timeout" in type(seen).__name__:
            return True
        seen = seen.__cause__ or seen.__context__
    return False

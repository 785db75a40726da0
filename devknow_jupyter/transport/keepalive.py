"""Reading the rest of an event stream after our reply, briefly, so its connection can be kept alive.

``read_reply`` stops at the response whose id is ours. Closing the response there, with the stream's
end unread, makes httpcore drop the connection (h11 is not at the end of the message), so every SSE
call would open a new TCP connection (and, against Google, do a new TLS handshake). Servers usually
end the stream right after the response, and the end (a ``0\\r\\n\\r\\n`` chunk, or nothing more for a
``Content-Length`` body) is often already buffered or a moment behind. So we go on reading the *same*
event iterator (a new one would find the stream consumed), but only briefly: a server may also leave
the stream open.

How the wait is bounded: httpcore takes the read timeout from the request once, when the body starts,
so it can't be shortened mid-response. Instead, for the drain, the connection's network stream (the
``network_stream`` response extension, HTTP/1.1 only) gets a ``read`` that waits at most until a
deadline and stops after a byte budget. Its own reads only: the thread is checked, since the
connection goes back to the pool the moment the stream ends. When anything is not as expected (no
network stream, HTTP/2, an error, the deadline), the response is closed as before: the connection is
dropped, never waited on for longer.

The same wrapper bounds every read by the call's deadline (:func:`reads_bounded`): each read waits at
most the time the call has left, so a reply that drips a byte at a time can't outlast it. Streams are
wrapped as their connection opens (:func:`trace`, httpcore's trace extension), so the status line and
headers of a first response are bounded too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

__all__ = ["DRAIN_BYTES", "DRAIN_SECONDS", "SHORT_DRAIN_SECONDS", "drain", "reads_bounded", "trace", "watch"]

#: The longest wait for the end of a stream after our reply.
DRAIN_SECONDS = 0.05
#: The wait once a server has left a stream open (what is already there is still read).
SHORT_DRAIN_SECONDS = 0.005
#: At most this many more bytes are read from the network after our reply.
DRAIN_BYTES = 64 * 1024

log = logging.getLogger("devknow_jupyter.transport")


class _Stop(Exception):
    """Internal: the drain's deadline or byte budget is used up (raised from inside httpcore's read)."""


# The deadline of the call this thread is making (a time.monotonic() value), read by every wrapped stream.
_call = threading.local()


def trace(event: str, info: dict[str, Any]) -> None:
    """httpcore's ``trace`` extension: wrap each new connection's stream as it opens, so that even its
    first response's status line and headers are read within the call's deadline."""
    if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
        stream = info.get("return_value")
        if stream is not None:
            _budgets_of(stream)


def watch(response: httpx.Response) -> None:
    """Wrap ``response``'s connection if :func:`trace` did not see it open (one opened elsewhere)."""
    stream = response.extensions.get("network_stream")
    if stream is not None and response.http_version == "HTTP/1.1":
        _budgets_of(stream)


@contextmanager
def reads_bounded(deadline: float) -> Iterator[None]:
    """While the block runs, every read this thread makes on a wrapped connection (all that :func:`trace`
    saw open) waits at most until ``deadline``, then raises httpcore's ``ReadTimeout``. Elsewhere reads
    keep httpx's own timeout, which the transport sets to the time left when each request starts."""
    outer = getattr(_call, "deadline", None)
    _call.deadline = deadline if outer is None else min(deadline, outer)
    try:
        yield
    finally:
        _call.deadline = outer


def drain(response: httpx.Response, events: Iterator[Any], *, seconds: float, max_bytes: int = DRAIN_BYTES) -> bool:
    """Read ``events`` (the iterator that gave our reply) to its end within ``seconds`` and ``max_bytes``.

    Returns True when the stream ended in time (its connection can be reused), False otherwise. Never
    raises for a network or stream problem: the caller closes the response either way.
    """
    stream = response.extensions.get("network_stream")
    if seconds <= 0 or stream is None or response.http_version != "HTTP/1.1":
        return False  # HTTP/2 resets just the stream; an unknown transport can't be bounded
    budgets = _budgets_of(stream)
    if budgets is None:
        return False
    me = threading.get_ident()
    budgets[me] = [time.monotonic() + seconds, max_bytes]
    try:
        for _ in events:
            pass  # anything after our reply (a stray notification, keep-alive comments) is not ours
        return True
    except (_Stop, httpx.HTTPError) as exc:
        log.debug("the event stream stayed open after the reply (%s); closing it", type(exc).__name__)
        return False
    except Exception as exc:  # a malformed tail: not worth an error, the reply is already in
        log.debug("could not read the end of the event stream: %s", type(exc).__name__)
        return False
    finally:
        budgets.pop(me, None)


_install_lock = threading.Lock()


def _budgets_of(stream: Any) -> dict[int, list[float]] | None:
    """The stream's per-thread drain budgets, wrapping its ``read`` once (None if it can't be wrapped).

    One wrapper per connection, installed for good: each drain only adds and removes its own thread's
    budget. (Swapping ``read`` per drain raced: a drain on another thread could restore a stale wrapper.)
    """
    budgets = getattr(stream, "_devknow_drain_budgets", None)
    if budgets is not None:  # wrapped already (the usual case: a kept-alive connection); set last, so complete
        return budgets
    with _install_lock:
        budgets = getattr(stream, "_devknow_drain_budgets", None)
        if budgets is not None:
            return budgets
        read = getattr(stream, "read", None)
        if not callable(read):
            return None
        budgets = {}

        def bounded_read(size: int, timeout: float | None = None) -> bytes:
            budget = budgets.get(threading.get_ident()) if budgets else None  # empty unless a drain is on
            deadline = getattr(_call, "deadline", None)
            if budget is None and deadline is None:  # a read outside any call of ours
                return read(size, timeout)
            now = time.monotonic()
            wait = timeout
            if deadline is not None:
                if deadline <= now:
                    # httpx turns this into its ReadTimeout, which the transport reports as the call's timeout.
                    raise httpcore.ReadTimeout("the call's deadline passed")
                wait = deadline - now if wait is None else min(wait, deadline - now)
            if budget is None:
                return read(size, wait)
            # A drain: its own short deadline and byte budget.
            if budget[0] <= now or budget[1] <= 0:
                raise _Stop()
            data = read(size, budget[0] - now if wait is None else min(wait, budget[0] - now))
            budget[1] -= len(data)
            return data

        try:
            stream.read = bounded_read
            stream._devknow_drain_budgets = budgets
        except (AttributeError, TypeError):
            return None
        return budgets

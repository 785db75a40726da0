"""Reading one JSON-RPC reply out of a ``text/event-stream`` response, bounded while it is read.

The framing follows the SSE spec: CR, LF and CRLF line ends, comments, multi-line ``data:``. It is
read from the byte stream here (not with httpx-sse) so that a line and an event are bounded *while*
they arrive: a ``data:`` line without an end, or an event of 300 MB, stops at ``max_bytes`` with a
``ProtocolError`` instead of being buffered whole. The call's deadline is checked after every chunk.

On top of the framing this module applies the rules of MCP's Streamable HTTP transport: skip priming
events (empty data) and notifications, hand server requests (``ping``) to a callback, and stop at the
response whose id is ours (``after`` may then read the stream's end: see :mod:`.keepalive`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import ProtocolError
from .budget import CallBudget
from .decode import MAX_REPLY_BYTES, chunks, parse_json, too_large

__all__ = ["Event", "events", "read_reply"]

log = logging.getLogger("devknow_jupyter.transport")

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Event:
    """One server-sent event: its type (``message`` when unnamed) and its data."""

    event: str
    data: str


def read_reply(
    response: httpx.Response,
    request_id: int | str,
    on_server_request: Callable[[dict[str, Any]], None],
    *,
    max_bytes: int | None = MAX_REPLY_BYTES,
    budget: CallBudget | None = None,
    after: Callable[[Iterator[Any]], object] | None = None,
) -> dict[str, Any] | None:
    """The JSON-RPC response to ``request_id`` from an SSE ``response``, or None if the stream ends first.

    ``after``, if given, gets the event iterator once the reply is found (the same one: leaving it
    unfinished would drop the connection). Raises :class:`~devknow_jupyter.errors.ProtocolError` for
    an event that is not JSON-RPC, or a line or event past ``max_bytes`` (None: no limit), and
    :class:`~devknow_jupyter.errors.RequestTimeout` when ``budget``'s deadline passes first.
    """
    stream = events(chunks(response, budget), max_bytes)
    reply = _find_reply(stream, request_id, on_server_request)
    if reply is not None and after is not None:
        after(stream)
    return reply


def lines(pieces: Iterable[bytes], max_bytes: int | None) -> Iterator[bytes]:
    """The lines of a byte stream (without their ends), each at most ``max_bytes`` long.

    A CR at the end of a chunk may be the first half of a CRLF, so an LF opening the next chunk is
    skipped. An unterminated last line is dropped, as the SSE spec drops an unfinished event.
    """
    pending: list[bytes] = []
    size = 0
    after_cr = False
    for chunk in pieces:
        if not chunk:
            continue
        start = 1 if after_cr and chunk[:1] == b"\n" else 0
        after_cr = False
        for match in _LINE_END.finditer(chunk, start):
            piece = chunk[start : match.start()]
            if pending:
                if max_bytes is not None and size + len(piece) > max_bytes:
                    raise too_large(max_bytes, "event stream line")
                pending.append(piece)
                piece, pending, size = b"".join(pending), [], 0
            elif max_bytes is not None and len(piece) > max_bytes:
                raise too_large(max_bytes, "event stream line")
            yield piece
            start = match.end()
            after_cr = start == len(chunk) and match.group() == b"\r"
        if start < len(chunk):
            size += len(chunk) - start
            if max_bytes is not None and size > max_bytes:
                raise too_large(max_bytes, "event stream line")
            pending.append(chunk[start:])


def events(pieces: Iterable[bytes], max_bytes: int | None) -> Iterator[Event]:
    """The events of a byte stream; an event's data may hold at most ``max_bytes`` bytes."""
    data: list[bytes] = []
    size = 0
    kind = b""
    for line in lines(pieces, max_bytes):
        if not line:  # the blank line that ends an event
            if data:
                yield Event(kind.decode("utf-8", "replace") or "message", b"\n".join(data).decode("utf-8", "replace"))
            data, size, kind = [], 0, b""
            continue
        if line[:1] == b":":  # a comment (keep-alive)
            continue
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            size += len(value) + 1
            if max_bytes is not None and size > max_bytes:
                raise too_large(max_bytes, "event")
            data.append(value)
        elif name == b"event":
            kind = value
        # id and retry: this client never reconnects to a stream, so neither matters here.


def _find_reply(
    stream: Iterator[Event],
    request_id: int | str,
    on_server_request: Callable[[dict[str, Any]], None],
) -> dict[str, Any] | None:
    for event in stream:
        if not event.data:  # a priming event (id, empty data)
            continue
        if event.event != "message":
            continue
        message = parse_json(event.data, "an event")
        if not isinstance(message, dict):
            raise ProtocolError("The server sent an event that is not a JSON-RPC object.")
        if "method" in message:
            if "id" in message:  # a server request, e.g. ping
                on_server_request(message)
            else:
                log.debug("server notification %s", message.get("method"))
            continue
        if "result" in message or "error" in message:
            if message.get("id") == request_id:
                return message
            if message.get("id") is None and "error" in message:
                return message  # an error the server could not tie to a request id: it is about ours
            log.debug("ignoring a reply to another request (%r)", message.get("id"))
            continue
        raise ProtocolError("The server's stream holds an event that is not a JSON-RPC message.")
    return None

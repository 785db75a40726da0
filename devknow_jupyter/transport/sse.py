"""Reading one JSON-RPC reply out of a ``text/event-stream`` response.

The framing (CR, LF and CRLF line ends, comments, multi-line ``data:``) is httpx-sse's. On top of
it this module applies MCP's rules (``shared/notes/mcp-protocol.md`` §4): skip priming events (empty
data) and notifications, hand server requests (``ping``) to a callback, and stop at the response
whose id is ours (``after`` may then read the stream's end: see :mod:`.keepalive`). Events may be
large: 20 whole pages easily pass 1 MiB, so the cap is far higher.
(httpx-sse holds back a chunk's final bare CR until it sees whether LF follows; servers use CRLF or LF.)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from ..errors import ProtocolError

__all__ = ["MAX_EVENT_CHARS", "read_reply"]

#: One event may hold this many characters (the SDK's 1 MiB is too small for 20 documents).
MAX_EVENT_CHARS = 64 * 1024 * 1024

log = logging.getLogger("devknow_jupyter.transport")


def read_reply(
    response: httpx.Response,
    request_id: int | str,
    on_server_request: Callable[[dict[str, Any]], None],
    *,
    max_event_chars: int = MAX_EVENT_CHARS,
    after: Callable[[Iterator[Any]], object] | None = None,
) -> dict[str, Any] | None:
    """The JSON-RPC response to ``request_id`` from an SSE ``response``, or None if the stream ends first.

    ``after``, if given, gets the event iterator once the reply is found (the same one: leaving it
    unfinished would drop the connection). Raises :class:`~devknow_jupyter.errors.ProtocolError` for
    an event that is not JSON-RPC.
    """
    events = EventSource(response).iter_sse()
    reply = _find_reply(events, request_id, on_server_request, max_event_chars)
    if reply is not None and after is not None:
        after(events)
    return reply


def _find_reply(
    events: Iterator[Any],
    request_id: int | str,
    on_server_request: Callable[[dict[str, Any]], None],
    max_event_chars: int,
) -> dict[str, Any] | None:
    try:
        for event in events:
            if not event.data:  # a priming event (id, empty data) or a bare id/retry line
                continue
            if event.event not in ("", "message"):
                continue
            if len(event.data) > max_event_chars:
                raise ProtocolError(f"An event of the server's stream is larger than {max_event_chars} characters.")
            message = _parse(event.data)
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
    except SSEError as exc:
        raise ProtocolError(f"The server's event stream is malformed: {exc}") from exc
    return None


def _parse(data: str) -> dict[str, Any]:
    try:
        message = json.loads(data)
    except ValueError as exc:
        raise ProtocolError(f"The server sent an event that is not JSON: {data[:80]!r}") from exc
    if not isinstance(message, dict):
        raise ProtocolError("The server sent an event that is not a JSON-RPC object.")
    return message

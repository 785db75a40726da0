"""Reply bytes to JSON values, at the boundary: bounded while read, never a Python error, always valid text.

* :func:`read_capped` reads a body chunk by chunk and stops with a ``ProtocolError`` naming the limit
  once it passes ``max_bytes`` (never buffering a 300 MB body whole), checking the call's deadline
  between chunks. Chunks are counted after decoding, and each encoding layer is undone in bounded
  pieces (:mod:`.encodings`), so a small compressed body can't inflate past the limit or the deadline.
* :func:`parse_json` turns odd but valid JSON into either a value or one ``ProtocolError``: nesting
  too deep for Python's parser is a ``RecursionError`` there, caught here.
* Lone surrogates (``"\\ud800"`` is valid JSON, but not encodable text) become U+FFFD, so notebook output
  and ``--json`` can always encode what a server sent. The walk is iterative (any depth) and runs only
  when the raw text holds a surrogate escape at all, so the normal path pays one byte search.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import httpx

from ..errors import ProtocolError
from .budget import CallBudget
from .encodings import decoded

__all__ = ["MAX_REPLY_BYTES", "parse_json", "read_capped", "too_large"]

#: The default limit for one reply body or one SSE event, in bytes. Twenty whole pages are a few MB.
MAX_REPLY_BYTES = 32 * 1024 * 1024

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def too_large(limit: int, what: str = "reply") -> ProtocolError:
    """The error for a reply (or event) past ``limit`` bytes."""
    return ProtocolError(
        f"The server's {what} is larger than the {_size(limit)} limit (max_reply_bytes); it was not read further.",
        hint="Raise max_reply_bytes (DevKnowClient(max_reply_bytes=...)) if such replies are expected.",
    )


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} byte"


def chunks(response: httpx.Response, budget: CallBudget | None) -> Iterator[bytes]:
    """The body's chunks as they arrive, content encodings undone in bounded pieces (:mod:`.encodings`),
    checking the call's deadline after each."""
    if response.is_stream_consumed:  # an in-memory reply (httpx.MockTransport): read, and decoded, already
        pieces: Iterable[bytes] = [response.content]
    else:
        pieces = decoded(response.iter_raw(), response.headers.get("content-encoding"))
    for chunk in pieces:
        if budget is not None:
            budget.check()
        yield chunk


def read_capped(response: httpx.Response, max_bytes: int | None, budget: CallBudget | None, *, cut: bool) -> bytes:
    """The body, at most ``max_bytes`` long: beyond it, the first ``max_bytes`` when ``cut`` (error bodies,
    where the start is enough), else a ``ProtocolError``. ``None`` reads without a limit."""
    declared = response.headers.get("content-length", "")
    if max_bytes is not None and not cut and declared.isdigit() and int(declared) > max_bytes:
        raise too_large(max_bytes)
    parts, size = [], 0
    for chunk in chunks(response, budget):
        parts.append(chunk)
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            if not cut:
                raise too_large(max_bytes)
            break
    raw = b"".join(parts)
    return raw[:max_bytes] if cut and max_bytes is not None else raw


def parse_json(raw: bytes | str, what: str = "a reply") -> Any:
    """``raw`` parsed as JSON, with lone surrogates replaced; ``ProtocolError`` for anything else.

    Bytes are read as UTF-8 (what JSON over HTTP is), bad sequences replaced. ``what`` completes the
    message "The server sent {what} that is not valid JSON".
    """
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        value = json.loads(text)
    except RecursionError:
        raise ProtocolError(f"The server sent {what} nested too deeply to read.") from None
    except ValueError:
        raise ProtocolError(f"The server sent {what} that is not valid JSON.") from None
    # Read with "replace", text holds no raw surrogate: only an escape (\\uD800) makes one.
    if "\\ud" in text or "\\uD" in text:
        value = valid_text(value)
    return value


def _fix(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def valid_text(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD, at any depth."""
    if isinstance(value, str):
        return _fix(value)
    if not isinstance(value, (dict, list)):
        return value
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = _fix(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
        else:
            for key in [key for key in node if _LONE_SURROGATE.search(key)]:
                node[_fix(key)] = node.pop(key)
            for key, item in node.items():
                if isinstance(item, str):
                    node[key] = _fix(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return value

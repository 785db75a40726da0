"""Page tokens and date filters of the local index's ``search_documents``: pure functions, no I/O.

A page token is opaque to callers (as the service's ``nextPageToken`` is): URL-safe base64 of a small JSON
object holding where the next page starts, the index generation the ranking was made at, and a digest of
the search (query, site, date). A token is refused, with one line saying why, when it was made for another
search or before the index changed (its pages would overlap or skip hits): the caller searches again.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from ..dates import epoch_nanoseconds
from ..errors import ConfigurationError, ToolError

__all__ = ["decode_token", "encode_token", "since_nanoseconds", "stale_token", "undated_notice"]

_VERSION = 1
INVALID_PARAMS = -32602


def _digest(query: str, source: str | None, since: str | None) -> str:
    search = json.dumps([" ".join(query.split()), source or "", since or ""], ensure_ascii=False)
    return hashlib.sha256(search.encode("utf-8")).hexdigest()[:16]


def encode_token(offset: int, generation: str, query: str, source: str | None, since: str | None) -> str:
    """The token of the page starting at ``offset`` of this search, ranked at index ``generation``."""
    data = {"v": _VERSION, "o": offset, "g": generation, "s": _digest(query, source, since)}
    raw = json.dumps(data, separators=(",", ":")).encode("ascii")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_token(token: str, query: str, source: str | None, since: str | None) -> tuple[int, str]:
    """Where the page of ``token`` starts and the index generation it continues; ``ToolError``
    (INVALID_ARGUMENT) for a token that is not one, or was made for another search."""
    data: Any = None
    try:
        text = token.strip()
        data = json.loads(base64.urlsafe_b64decode((text + "=" * (-len(text) % 4)).encode("ascii")))
    except (ValueError, TypeError, UnicodeError, binascii.Error):
        pass
    offset = data.get("o") if isinstance(data, dict) and data.get("v") == _VERSION else None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise _invalid("page_token is not a page token of this index; search again without it")
    if data.get("s") != _digest(query, source, since):
        raise _invalid("page_token belongs to another search (query, source or since differ)")
    return offset, str(data.get("g"))


def stale_token() -> ToolError:
    """The error for a token made before the index changed (its pages would overlap or skip hits)."""
    return _invalid("page_token is stale: the index changed since the first page; search again")


def since_nanoseconds(value: Any, tool: str = "search_documents") -> tuple[int, str]:
    """``since`` as sent (an RFC 3339 time or a date) → nanoseconds since the epoch, and its RFC 3339 form."""
    try:
        return epoch_nanoseconds(value)
    except ConfigurationError as exc:
        raise _invalid(f"since: {exc.message}", tool) from None


def undated_notice(moment: str, undated: int, dated: bool) -> str | None:
    """What the local index says about a date filter it could apply only partly (None: nothing to say).

    ``undated``: pages kept for want of a date; ``dated``: whether any page of the ranking had one.
    """
    if not undated:
        return None
    why = "only pages read from files have a date here (their front matter's date, else the file's time); pages "
    why += "from knowledge packs or fetched from the service have none"
    if not dated:
        return f"Not applied: since {moment} ({why})."
    return f"since {moment} applied by page date; {undated} matching pages without a date kept ({why})."


def _invalid(message: str, tool: str = "search_documents") -> ToolError:
    return ToolError(f"{tool} failed: INVALID_ARGUMENT: {message}", code=INVALID_PARAMS, tool=tool)

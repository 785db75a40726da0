"""What comes back: tool results, and every failure shape mapped to one of our exceptions.

Failures arrive in several shapes (HTTP statuses, JSON-RPC errors and MCP tool errors): an HTTP status with or
without a JSON body (JSON-RPC or Google's ``{"error": {"code", "message", "status"}}``), a JSON-RPC
``error`` member in a 200 reply, or a tool result with ``isError``. Each maps to the most specific
:mod:`devknow_jupyter.errors` class. A result of one of the three tools is checked against its shape
(:func:`check_shape`), so a wrong type anywhere is one ``ProtocolError`` here, never a ``TypeError``
later. Pure functions; no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import (
    AuthenticationError,
    DevKnowError,
    ProtocolError,
    QuotaExceededError,
    ToolError,
    TransportError,
)
from ..registry import REGISTRY
from . import wire
from .decode import parse_json

__all__ = ["check_shape", "error_member", "http_failure", "looks_like_quota", "rpc_failure", "tool_result"]

_MAX_TEXT = 300
_QUOTA_TEXT = re.compile(r"RESOURCE_EXHAUSTED|QUOTA[ _]EXCEEDED|EXCEEDED[A-Z ]* QUOTA|RATE[ _]LIMIT|\b429\b")


def _short(text: Any) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def error_member(body: Any) -> dict[str, Any] | None:
    """The ``error`` object of a JSON-RPC error or of a Google API error body, else None."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        if "code" in error or "message" in error or "status" in error:
            return error
    return None


def looks_like_quota(code: Any = None, message: Any = "", data: Any = None, status: Any = None) -> bool:
    """Whether an error says the quota is used up: code 429, RESOURCE_EXHAUSTED, or a quota/429 text."""
    if code == 429 or status == "RESOURCE_EXHAUSTED":
        return True
    if isinstance(data, dict) and (data.get("status") == "RESOURCE_EXHAUSTED" or data.get("code") == 429):
        return True
    text = str(message or "").upper()
    if "NOT_FOUND" in text:  # "document …/quotas was not found" is not a quota error
        return False
    return bool(_QUOTA_TEXT.search(text))


def says_not_found(message: Any = "", data: Any = None, status: Any = None) -> bool:
    """Whether an error reply says the thing asked for does not exist.

    The service's tool errors carry its status word in their text (``NOT_FOUND: document … not found``);
    a JSON-RPC error may carry it in ``status`` or ``data``. Decided here, where the reply is read.
    """
    if status == "NOT_FOUND":
        return True
    if isinstance(data, dict) and (data.get("status") == "NOT_FOUND" or data.get("code") == 404):
        return True
    text = str(message or "").upper()
    return "NOT_FOUND" in text or "NOT FOUND" in text or "UNKNOWN DOCUMENT" in text


def _quota(message: str, retry_after: float | None) -> QuotaExceededError:
    wait = f" Try again in {retry_after:g} s." if retry_after else ""
    return QuotaExceededError(f"The service's quota is used up: {_short(message)}.{wait}", retry_after=retry_after)


def rpc_failure(error: dict[str, Any], *, tool: str | None, method: str) -> DevKnowError:
    """The exception for a JSON-RPC ``error`` member (in a 200 reply or a 4xx body)."""
    code = error.get("code")
    message = str(error.get("message") or "unspecified error")
    data = error.get("data")
    if looks_like_quota(code, message, data, error.get("status")):
        return _quota(message, None)
    what = f"{tool}" if tool else method
    return ToolError(
        f"{what} failed: {_short(message)} (JSON-RPC {code})",
        code=code if isinstance(code, int) else None,
        tool=tool,
        # "Method not found" is about the method, not about a document.
        not_found=code != wire.METHOD_NOT_FOUND and says_not_found(message, data, error.get("status")),
    )


def http_failure(
    status: int,
    body: Any,
    *,
    text: str,
    retry_after: float | None,
    endpoint: str,
    method: str,
    tool: str | None,
    credentials: str | None,
) -> DevKnowError:
    """The exception for a non-2xx HTTP reply.

    ``credentials`` says what was sent and where it came from ("the API key from DEVKNOW_API_KEY"),
    or None when nothing was; it never holds the secret itself.
    """
    error = error_member(body)
    detail = _short(error.get("message") or error.get("status") or "") if error else _short(text)
    reason = error.get("status") if error and isinstance(error.get("status"), str) else None
    said = " ".join(part for part in (reason, detail and f"({detail})" if reason else detail) if part)
    if status in (401, 403):
        if credentials:
            message = f"{endpoint} rejected {credentials} (HTTP {status}{': ' + said if said else ''})."
        else:
            message = (
                f"{endpoint} needs an API key (HTTP {status}) and none was sent: set DEVKNOW_API_KEY or "
                "GOOGLE_API_KEY, or pass api_key= to DevKnowClient."
            )
        return AuthenticationError(message, status=status)
    if status == 429 or (
        error and looks_like_quota(error.get("code"), error.get("message"), error.get("data"), error.get("status"))
    ):
        return _quota(said or f"HTTP {status}", retry_after)
    if status >= 500:
        wait = f"; it asked to wait {retry_after:g} s" if retry_after else ""
        return TransportError(f"{endpoint} is unavailable (HTTP {status}{': ' + said if said else ''}){wait}.")
    if error and isinstance(error.get("code"), int) and "jsonrpc" in (body or {}):
        return rpc_failure(error, tool=tool, method=method)
    if status == 404:
        return ProtocolError(
            f"{endpoint} answered HTTP 404 to {method}: is this an MCP endpoint?{' ' + said if said else ''}"
        )
    return ProtocolError(f"{endpoint} answered HTTP {status} to {method}{': ' + said if said else ''}.")


def tool_result(result: Any, *, tool: str) -> dict[str, Any]:
    """The structured result of a ``tools/call``, or the exception its ``isError`` reports.

    ``isError`` comes first (a tool error is a normal result with error text); then
    ``structuredContent``; then the JSON in the first text content.
    """
    if not isinstance(result, dict):
        raise ProtocolError(f"{tool}: the result is not an object.")
    kind = result.get("resultType")
    if kind not in (None, "complete"):
        raise ProtocolError(f"{tool}: unsupported result type {kind!r} (this client asks for no input).")
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and not result.get("isError"):
        return check_shape(tool, structured)  # the usual reply: its text contents are not read
    content = result.get("content") if isinstance(result.get("content"), list) else []
    texts = [
        item["text"]
        for item in content
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str)
    ]
    if result.get("isError"):
        message = " ".join(str(text) for text in texts).strip() or "the tool reported an error"
        if looks_like_quota(message=message):
            raise _quota(message, None)
        raise ToolError(f"{tool} failed: {_short(message)}", tool=tool, not_found=says_not_found(message))
    if texts:
        try:
            parsed = parse_json(texts[0], "a text content")
        except ProtocolError:
            parsed = None
        if isinstance(parsed, dict):
            return check_shape(tool, parsed)
    raise ProtocolError(f"{tool}: the result has neither structuredContent nor JSON text content.")


def check_shape(tool: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` if it has ``tool``'s result shape (the registry entry's check; unknown tools pass as they are),
    else a ``ProtocolError``.

    Only the fields this package reads are checked: a list where a list is read, an object for each
    item, a string (or null) for each text. Extra fields are left alone.
    """
    entry = REGISTRY.get(tool)
    problem = entry.check(data) if entry is not None else None
    if problem:
        raise _bad_shape(tool, problem)
    return data


def _bad_shape(tool: str, what: str) -> ProtocolError:
    return ProtocolError(f"{tool}: the result does not have the tool's shape ({what}).")

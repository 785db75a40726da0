"""The REST surface's failures mapped to our exception tree. Pure functions; no I/O.

Google's REST errors carry ``{"error": {"code", "message", "status", "details"}}``; ``details`` may hold a
``google.rpc.RetryInfo`` (``retryDelay`` such as ``"7s"``) and a ``google.rpc.ErrorInfo`` (``reason`` such as
``API_KEY_INVALID``, which Google sends with HTTP 400, not 401).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import (
    AuthenticationError,
    ConfigurationError,
    DevKnowError,
    ProtocolError,
    QuotaExceededError,
    RequestTimeout,
    ToolError,
    TransportError,
    redact,
)
from ..transport.retry import parse_retry_after, sane_delay

__all__ = ["api_failure", "malformed_reply", "network_failure", "retry_delay"]

_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_KEY_REASONS = {"API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED", "API_KEY_HTTP_REFERRER_BLOCKED"}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_MAX_TEXT = 300


def _short(text: Any) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def retry_delay(details: Any, header: str | None = None) -> float | None:
    """Seconds to wait: the RetryInfo detail's ``retryDelay`` (``"7s"``, ``"1.5s"``), else a ``Retry-After``;
    clamped to a sane range (:func:`~devknow_jupyter.transport.retry.sane_delay`), None when unreadable."""
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and detail.get("@type") == _RETRY_INFO:
            delay = detail.get("retryDelay")
            if isinstance(delay, dict):  # a Duration object rather than its JSON string form
                try:
                    return sane_delay(float(delay.get("seconds") or 0) + float(delay.get("nanos") or 0) / 1e9)
                except (TypeError, ValueError, OverflowError):  # a list, a word: no delay said
                    return None
            match = _DURATION.match(str(delay or ""))
            if match:
                return sane_delay(match.group(1))
    return parse_retry_after(header)


def _reasons(details: Any) -> set[str]:
    return {
        str(detail.get("reason"))
        for detail in (details if isinstance(details, list) else [])
        if isinstance(detail, dict) and detail.get("@type") == _ERROR_INFO and detail.get("reason")
    }


def api_failure(
    status: int, body: Any, *, endpoint: str, tool: str, credentials: str | None, retry_after: str | None = None
) -> DevKnowError:
    """The exception for a non-2xx REST reply (``body``: the parsed JSON, or None).

    ``credentials`` names what was sent ("the API key from DEVKNOW_API_KEY"), never the secret itself.
    """
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    message = _short(error.get("message") or f"HTTP {status}")
    state = str(error.get("status") or "")
    details = error.get("details")
    said = f"{state}: {message}" if state else message
    if status == 429 or state == "RESOURCE_EXHAUSTED":
        wait = retry_delay(details, retry_after)
        again = f" Try again in {wait:g} s." if wait else ""
        return QuotaExceededError(f"The service's quota is used up ({tool}): {message}.{again}", retry_after=wait)
    if status in (401, 403) or state in ("UNAUTHENTICATED", "PERMISSION_DENIED") or _reasons(details) & _KEY_REASONS:
        if credentials:
            return AuthenticationError(f"{endpoint} rejected {credentials} (HTTP {status}: {said}).", status=status)
        return AuthenticationError(
            f"{endpoint} needs an API key (HTTP {status}) and none was sent: set DEVKNOW_API_KEY or "
            "GOOGLE_API_KEY, or pass api_key= to DevKnowClient.",
            status=status,
        )
    if status >= 500 or state in ("UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL"):
        return TransportError(f"{endpoint} is unavailable (HTTP {status}: {said}).")
    if state == "INVALID_ARGUMENT" and "filter" in message.lower():
        return ConfigurationError(
            f"The service refused the filter: {message}",
            hint='Filters compare data_source, uri and update_time exactly, e.g. data_source = "firebase.google.com".',
        )
    not_found = status == 404 or state == "NOT_FOUND"
    return ToolError(f"{tool} failed: {said} (HTTP {status})", code=status, tool=tool, not_found=not_found)


def network_failure(exc: BaseException, *, endpoint: str, timeout: float) -> TransportError:
    """A short message for a failure before any reply (the ``requests`` exceptions under the official client)."""
    name = type(exc).__name__
    if "Timeout" in name:
        if "Connect" in name:
            return TransportError(f"Could not connect to {endpoint} within {timeout:g} s.", unreachable=True)
        return RequestTimeout(f"No reply from {endpoint} within {timeout:g} s.")
    text = str(exc)
    if "SSL" in name or "CERTIFICATE_VERIFY_FAILED" in text:
        return TransportError(
            f"The TLS connection to {endpoint} failed. Behind a corporate proxy or CA, set REQUESTS_CA_BUNDLE "
            "(the REST client uses requests) to its certificate bundle, and HTTPS_PROXY to the proxy."
        )
    if "Proxy" in name:
        return TransportError(f"The proxy would not connect us to {endpoint}; check HTTPS_PROXY and NO_PROXY.")
    return TransportError(f"Could not connect to {endpoint} ({name}).", unreachable=True)


def malformed_reply(exc: BaseException, *, endpoint: str, tool: str) -> ProtocolError | None:
    """The ``ProtocolError`` for a reply the official client could not read (None for other failures).

    Its JSON parser raises protobuf's ``ParseError`` for anything but the method's message (truncated or
    HTML bodies, wrong member types, numbers out of range, nesting past protobuf's depth limit), and
    Python's ``RecursionError`` for nesting past the interpreter's; ``requests`` gives up on a redirect loop.
    """
    name = type(exc).__name__
    if name == "TooManyRedirects":
        return ProtocolError(f"{endpoint} redirected more than a few times for {tool}; not followed further.")
    if isinstance(exc, RecursionError):
        return ProtocolError(f"{endpoint} sent a {tool} reply nested too deeply to read.")
    if name in ("ParseError", "DecodeError") and type(exc).__module__.startswith("google.protobuf"):
        reason = _short(redact(str(exc)))[:160]
        return ProtocolError(f"{endpoint} sent a {tool} reply that is not the API's JSON ({reason}).")
    if isinstance(exc, UnicodeDecodeError):
        return ProtocolError(f"{endpoint} sent a {tool} reply that is not UTF-8 text.")
    return None

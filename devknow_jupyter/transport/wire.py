"""What goes on the wire: protocol versions, header names and the JSON-RPC envelopes of both eras.

Pure functions over dicts and strings (no I/O), so the shapes are easy to read and to test.
They follow the MCP specification's base protocol and Streamable HTTP transport (both eras: the handshake
era's ``initialize`` and session header, and the modern era's per-request version header).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from .._version import __version__

__all__ = [
    "CLIENT_INFO",
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSIONS",
    "encode_header_value",
    "handshake_headers",
    "initialize_params",
    "modern_headers",
    "modern_params",
    "notification",
    "param_headers",
    "request",
    "valid_session_id",
]

#: Handshake-era versions we can talk (2024-11-05 used the older HTTP+SSE transport, so it is not here).
HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
#: What we offer in ``initialize``.
HANDSHAKE_OFFER = "2025-11-25"
#: Modern (session-less) versions we can talk, most preferred first.
MODERN_VERSIONS = ("2026-07-28",)
#: Every version any MCP server is known to answer with; a -32022 naming only these means "handshake era".
KNOWN_HANDSHAKE_VERSIONS = ("2024-11-05", *HANDSHAKE_VERSIONS)

CLIENT_INFO = {"name": "devknow-jupyter", "version": __version__}

# The reserved ``_meta`` keys of a modern request.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

# JSON-RPC error codes with a protocol meaning.
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022

# Header names, in the spelling the spec uses (HTTP header names are case-insensitive).
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
PARAM_HEADER_PREFIX = "Mcp-Param-"

# A session id is visible ASCII (0x21-0x7E, spec §Session Management); longer than this is no honest id.
MAX_SESSION_ID = 4096
_SESSION_ID = re.compile(r"[\x21-\x7E]+")

# Visible ASCII without edge whitespace goes verbatim; anything else is base64-wrapped (spec §Custom Headers).
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")
_B64_SENTINEL = re.compile(r"^=\?base64\?.*\?=$")
# An HTTP field-name token (RFC 9110 §5.6.2): what an ``x-mcp-header`` annotation may name.
HEADER_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def encode_header_value(value: str) -> str:
    """``value`` as a header value: verbatim when plain printable ASCII, else ``=?base64?...?=``."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _B64_SENTINEL.fullmatch(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def valid_session_id(value: str) -> bool:
    """Whether ``value`` may be an ``Mcp-Session-Id``: 1 to :data:`MAX_SESSION_ID` visible ASCII characters."""
    return len(value) <= MAX_SESSION_ID and _SESSION_ID.fullmatch(value) is not None


def request(request_id: int, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """A JSON-RPC 2.0 request object."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 notification (no id, so no reply)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize_params() -> dict[str, Any]:
    """The ``initialize`` params: our offered version, no capabilities (we serve no requests), who we are."""
    return {"protocolVersion": HANDSHAKE_OFFER, "capabilities": {}, "clientInfo": dict(CLIENT_INFO)}


def modern_params(version: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """``params`` plus the ``_meta`` every modern request carries (version, capabilities, client info)."""
    out = dict(params or {})
    meta = dict(out.get("_meta") or {})
    meta.update({META_VERSION: version, META_CAPABILITIES: {}, META_CLIENT_INFO: dict(CLIENT_INFO)})
    out["_meta"] = meta
    return out


def modern_headers(version: str, method: str, name: str | None = None) -> dict[str, str]:
    """The routing headers of a modern request; ``name`` is the tool for ``tools/call``."""
    headers = {VERSION_HEADER: version, METHOD_HEADER: method}
    if name is not None:
        headers[NAME_HEADER] = encode_header_value(name)
    return headers


def handshake_headers(version: str | None, session_id: str | None) -> dict[str, str]:
    """The headers of a handshake-era request after ``initialize``: the negotiated version and the session."""
    headers: dict[str, str] = {}
    if version:
        headers[VERSION_HEADER] = version
    if session_id is not None:
        headers[SESSION_HEADER] = session_id
    return headers


def param_headers(input_schema: Any, arguments: dict[str, Any]) -> dict[str, str] | None:
    """``Mcp-Param-*`` headers for arguments whose schema property carries ``x-mcp-header``.

    Returns None when an annotation is invalid (the spec says to drop such a tool), else the headers
    (often none). Only top-level string, integer and boolean properties may carry the annotation.
    """
    properties = (input_schema or {}).get("properties") if isinstance(input_schema, dict) else None
    headers: dict[str, str] = {}
    if not isinstance(properties, dict):
        return headers
    for field, schema in properties.items():
        if not isinstance(schema, dict) or "x-mcp-header" not in schema:
            continue
        header = schema["x-mcp-header"]
        if not isinstance(header, str) or not HEADER_TOKEN.fullmatch(header):
            return None
        if schema.get("type") not in ("string", "integer", "boolean"):
            return None
        value = arguments.get(field)
        if value is None:
            continue
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        headers[PARAM_HEADER_PREFIX + header] = encode_header_value(text)
    return headers

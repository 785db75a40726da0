"""Where and how :class:`~devknow_jupyter.DevKnowClient` connects: endpoint, credentials, protocol, backend.

The resolution rules (argument, else environment, else default), a key found in the endpoint URL moving to
its header, the backend built for an endpoint, and when an MCP server that refuses us is replaced by the same
host's REST surface. The client holds the result and the policy around it; this module holds no state.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .backend import Backend
from .cache import cache_scope
from .contract import Capabilities
from .errors import (
    KEY_VARIABLES,
    AuthenticationError,
    ConfigurationError,
    DevKnowError,
    DocumentNotFoundError,
    ProtocolError,
    ToolError,
    register_secret,
    split_url_credentials,
)
from .extras import extra_installed, missing_extra
from .registry import entry_for
from .tool_backend import typed_backend

__all__ = [
    "GOOGLE_ENDPOINT",
    "LOCAL_ENDPOINT",
    "BackendLink",
    "Connection",
    "resolve_api_key",
    "resolve_endpoint",
    "resolve_protocol",
    "rest_origin",
    "rest_switch_reason",
    "take_url_credentials",
]

T = TypeVar("T")

#: Google's Developer Knowledge MCP server.
GOOGLE_ENDPOINT = "https://developerknowledge.googleapis.com/mcp"
#: The embedded offline index.
LOCAL_ENDPOINT = "local"
#: How the client talks to a remote server: the MCP tools (default) or the API's REST surface.
PROTOCOLS = ("mcp", "rest")


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


def take_url_credentials(
    endpoint: str, api_key: str | None, key_source: str | None, access_token: str | None
) -> tuple[str, str | None, str | None, str | None]:
    """``(endpoint, api_key, key_source, access_token)`` once a key or token in the endpoint URL has moved out.

    A key in the URL (``https://user:KEY@host/mcp``, ``?key=KEY``) goes to its header; the URL kept (shown in
    repr, status and messages) is the one without it. A URL key and a different one given as an argument are
    a ``ConfigurationError``; a key from the environment yields to the URL's.
    """
    endpoint, url_key, url_token = split_url_credentials(endpoint)
    explicit_key = api_key if key_source == "argument" else None  # the environment's yields
    for found, given, what in ((url_key, explicit_key, "API key"), (url_token, access_token, "token")):
        if found and given and found != given:
            raise ConfigurationError(
                f"The endpoint URL holds an {what} and another one was given; pass one only.",
                hint="Keys belong in api_key= or DEVKNOW_API_KEY, not in the URL.",
            )
    if url_key:
        api_key, key_source = url_key, "the endpoint URL"
    if url_token:
        access_token = url_token
    return endpoint, api_key, key_source, access_token


def _team_token() -> str | None:
    """``DEVKNOW_TOKEN``: the token of a team's ``devknow serve`` (the endpoint is ``DEVKNOW_ENDPOINT``)."""
    token = os.environ.get("DEVKNOW_TOKEN", "").strip() or None
    register_secret(token)
    return token


@dataclass(frozen=True)
class Connection:
    """What a backend is built from: the resolved endpoint, protocol, credentials and limits."""

    endpoint: str
    protocol: str
    api_key: str | None
    key_source: str | None
    access_token: str | None
    timeout: float
    connect_timeout: float
    headers: dict[str, str]
    http_transport: Any
    max_reply_bytes: int | None

    @classmethod
    def resolve(
        cls,
        endpoint: str | None,
        *,
        api_key: str | None,
        access_token: str | None,
        protocol: str | None,
        backend: Backend | None,
        **limits: Any,
    ) -> tuple[Connection, str]:
        """The connection for a client's arguments, and where its endpoint came from (``"argument"``,
        ``"DEVKNOW_ENDPOINT"``, ``"default"``, ``"no key"``, or ``"backend"`` for a backend handed in).

        ``limits``: ``timeout``, ``connect_timeout``, ``headers``, ``http_transport`` and ``max_reply_bytes``.
        The key and token are registered as secrets, so no message can show them.
        """
        protocol = resolve_protocol(protocol)
        api_key, key_source = resolve_api_key(api_key)
        access_token = (access_token or "").strip() or None
        register_secret(api_key)
        register_secret(access_token)
        if backend is not None:
            endpoint, endpoint_source = backend.endpoint, "backend"
        else:
            endpoint, endpoint_source = resolve_endpoint(endpoint, bool(api_key or access_token))
            endpoint, api_key, key_source, access_token = take_url_credentials(
                endpoint, api_key, key_source, access_token
            )
            if access_token is None and not _is_google(endpoint) and not _is_local(endpoint):
                access_token = _team_token()  # a team service's token; never sent to Google
        return cls(endpoint, protocol, api_key, key_source, access_token, **limits), endpoint_source

    def cache_scope(self) -> tuple[str, str]:
        """The scope of this connection's cache keys: the endpoint and a salted hash of the credentials and
        headers (:func:`~devknow_jupyter.cache.cache_scope`), so another key's results are never served."""
        return cache_scope(
            self.endpoint,
            self.api_key,
            self.access_token,
            *(f"{name.lower()}: {value}" for name, value in sorted(self.headers.items())),
        )

    def check_credentials(self, backend: Backend) -> None:
        """Google's server needs a key: fail before any request rather than after a 401 round trip."""
        if backend.kind == "remote" and _is_google(self.endpoint) and not (self.api_key or self.access_token):
            raise AuthenticationError("No API key is configured for the Developer Knowledge API.")

    def make_backend(self) -> Backend:
        """The backend for the endpoint: the local index, the REST surface or an MCP server over HTTP."""
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
            return self.rest_backend()
        from .transport import McpHttpBackend

        return McpHttpBackend(self.endpoint, http_transport=self.http_transport, **self._remote_settings())

    def rest_backend(self) -> Backend:
        """The same host's REST surface (needs the ``rest`` extra: without it, one line naming it)."""
        if not extra_installed("rest"):
            raise missing_extra(
                "rest", "The REST protocol needs Google's client library", hint="Or use the default protocol, MCP."
            )
        from .rest import RestBackend

        return RestBackend(rest_origin(self.endpoint), credential_source=self.key_source, **self._remote_settings())

    def _remote_settings(self) -> dict[str, Any]:
        # What both remote backends (MCP and REST) take alike: credentials, headers and the limits.
        return {
            "api_key": self.api_key,
            "access_token": self.access_token,
            "headers": self.headers,
            "timeout": self.timeout,
            "connect_timeout": self.connect_timeout,
            "max_reply_bytes": self.max_reply_bytes,
        }


class BackendLink:
    """The backend the client's calls go to: the one built for ``connection`` (or ``backend``, handed in),
    replaced once by the same host's REST surface when the MCP server refuses us (:func:`rest_switch_reason`).

    ``on_switch(line)`` is told of a switch, in one line. A backend handed in is never replaced. Thread-safe.
    """

    def __init__(
        self, connection: Connection, backend: Backend | None = None, on_switch: Callable[[str], None] | None = None
    ) -> None:
        self.connection = connection
        self._replaceable = backend is None
        # An old-style backend of the caller's (tool calls only) is wrapped in the typed contract.
        self.backend: Backend = typed_backend(backend) if backend is not None else connection.make_backend()
        self._on_switch = on_switch
        self._tools: list[dict[str, Any]] | None = None
        self._lock = threading.RLock()

    def run(self, operation: str, call: Callable[[Backend], T]) -> T:
        """``call(backend)`` (one typed request of ``operation``); once more on the REST surface when the MCP
        server refused it."""
        self.connection.check_credentials(self.backend)
        try:
            return call(self.backend)
        except (ProtocolError, ToolError) as exc:
            if not self.switch_to_rest(exc, operation):
                raise
        return call(self.backend)

    def capabilities(self) -> Capabilities:
        """What the backend applies itself (an MCP server's are read from its tools, asked once)."""
        self.connection.check_credentials(self.backend)
        try:
            return self.backend.capabilities
        except ProtocolError as exc:
            if not self.switch_to_rest(exc, None):
                raise
        return self.backend.capabilities

    def list_tools(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """The backend's tools, asked once (again with ``refresh``, or after a switch)."""
        self.connection.check_credentials(self.backend)
        with self._lock:
            if self._tools is None or refresh:
                try:
                    self._tools = self.backend.list_tools()
                except ProtocolError as exc:
                    if not self.switch_to_rest(exc, None):
                        raise
                    self._tools = self.backend.list_tools()
            return self._tools

    def switch_to_rest(self, exc: DevKnowError, operation: str | None) -> bool:
        """After the MCP server refused the handshake, or lacks the tool of ``operation``: use the same host's
        REST surface for the rest of this link's life, when the ``rest`` extra is installed. Returns whether it
        switched."""
        backend = self.backend
        why = rest_switch_reason(backend, exc, operation) if self._replaceable else None
        if why is None:
            return False  # a backend of the caller's, or no reason to switch
        with self._lock:
            if self.backend is not backend:  # another thread switched already
                return True
            self.backend, self._tools = self.connection.rest_backend(), None
        if self._on_switch is not None:
            where = self.backend.endpoint
            self._on_switch(f"devknow: {self.connection.endpoint} {why}; using the REST API at {where} from now on.")
        backend.close()
        return True

    def close(self) -> None:
        """Close the backend in use."""
        self.backend.close()


def rest_switch_reason(backend: Backend, exc: DevKnowError, operation: str | None) -> str | None:
    """Why the MCP ``backend`` should give way to the same host's REST surface after ``exc``, or None.

    It should when the server refused the MCP handshake, or lacks the tool serving ``operation``, and the
    ``rest`` extra is installed; never for the offline index, a REST backend already, or a fault in one reply of
    a server that spoke MCP before. (A backend the caller handed in is the client's to rule out.)
    """
    if backend.kind != "remote":
        return None  # the offline index
    details = backend.details()
    if details.get("protocol", "mcp") != "mcp":
        return None  # REST already
    entry = entry_for(operation=operation) if operation else None
    if isinstance(exc, ProtocolError):
        if details.get("era") is not None:
            return None  # the server spoke MCP before: a fault in one reply, not a refusal
        why = "refused the MCP handshake"
    elif isinstance(exc, ToolError) and entry is not None and _looks_like_missing_tool(exc):
        try:
            if entry.operation in backend.capabilities.operations:
                return None  # the tool is there: its error is a real one
        except DevKnowError:
            return None
        why = f"offers no {entry.name} tool"
    else:
        return None
    return why if extra_installed("rest") else None


def _looks_like_missing_tool(exc: ToolError) -> bool:
    # JSON-RPC "method not found" / "invalid params" (the SDKs' "Unknown tool"), or words to that effect.
    text = exc.message.lower()
    unknown = "unknown tool" in text or "no such tool" in text or ("tool" in text and "not found" in text)
    return not isinstance(exc, DocumentNotFoundError) and (exc.code in (-32601, -32602) or unknown)


@lru_cache(maxsize=64)
def _is_google(endpoint: str) -> bool:
    """Whether ``endpoint`` is on Google's host (asked before every call: parsed once per endpoint)."""
    return urlsplit(endpoint).hostname == urlsplit(GOOGLE_ENDPOINT).hostname

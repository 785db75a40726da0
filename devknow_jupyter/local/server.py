"""``devknow serve``: the local index as an MCP Streamable HTTP server, on the official ``mcp`` SDK.

It offers exactly the tools of :mod:`devknow_jupyter.registry` (names, input and output schemas,
annotations), so any MCP client, and :class:`~devknow_jupyter.DevKnowClient`, can use it like the
Developer Knowledge service. Results carry ``structuredContent`` and the same JSON as text; failures
are ``isError`` results whose text starts with the service's status word (``NOT_FOUND``,
``INVALID_ARGUMENT``); more than 20 names is a JSON-RPC -32602 error, as on the service.

Safe defaults: it listens on 127.0.0.1, refuses requests whose ``Host`` or ``Origin`` does not name this
server (DNS rebinding: HTTP 421 and 403), and with a token refuses every request without it (HTTP 401).
This server's names are the bound address and its loopback aliases; bound to every address (``0.0.0.0``,
``::``), also the machine's host names and whichever of its addresses a client connected to; plus the
names given with ``--allow-host`` (a proxy's name, a DNS name of this machine).

This module needs the ``server`` extra (``mcp``, ``uvicorn``, ``starlette``) and is imported only by
the ``devknow`` command, never on the notebook path.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TextIO
from urllib.parse import urlsplit

import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse

from .._version import __version__
from ..errors import AuthenticationError, ConfigurationError, DevKnowError, QuotaExceededError
from ..service.gate import GateSettings, ServiceGate
from ..service.metrics import use_multiprocess_folder
from ..service.options import TeamOptions, open_team
from ..tools import MAX_NAMES_PER_CALL

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "HostCheck", "TeamOptions", "build_app", "build_server", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
INVALID_PARAMS = -32602
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_ANY = {"0.0.0.0", "::", ""}
# The service's status words; a message that already names one is passed on unchanged.
_STATUS_WORDS = ("NOT_FOUND", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "PERMISSION_DENIED", "UNAUTHENTICATED")


def build_server(backend: Any) -> Server:
    """An SDK ``Server`` offering ``backend``'s tools (its ``call_tool``, in worker threads).

    The tool table is ``backend.list_tools()``: the registry's (:func:`~devknow_jupyter.registry.tool_definitions`;
    the local index's shapes, with ``source``, ``since`` and pages, or the upstream service's).
    """
    definitions = {tool["name"]: tool for tool in backend.list_tools()}
    tools = [types.Tool.model_validate(tool) for tool in definitions.values()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, arguments = params.name, dict(params.arguments or {})
        if name not in definitions:
            return _error_result(f"Unknown tool: {name}. Tools: {', '.join(definitions)}")
        names = arguments.get("names")
        if name == "get_documents" and isinstance(names, list) and len(names) > MAX_NAMES_PER_CALL:
            # The service rejects this at the protocol level, not as a tool result; so do we.
            message = f"get_documents takes at most {MAX_NAMES_PER_CALL} names ({len(names)} given)"
            raise MCPError(INVALID_PARAMS, message)
        try:
            # SQLite work is blocking; a worker thread keeps the event loop serving other requests.
            data = await anyio.to_thread.run_sync(backend.call_tool, name, arguments)
        except DevKnowError as exc:
            return _error_result(_status_message(exc))
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(data, ensure_ascii=False, indent=2))],
            structured_content=data,
        )

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = definitions.get(name)
        return tool["inputSchema"] if tool else None

    return Server(
        "devknow-jupyter",
        version=__version__,
        instructions="Developer documentation indexed locally by devknow_jupyter: search_documents finds "
        "passages, get_documents returns whole pages (at most 20 names), answer_query quotes the best passages.",
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _status_message(exc: DevKnowError) -> str:
    if any(word in exc.message for word in _STATUS_WORDS):
        return exc.message
    if isinstance(exc, QuotaExceededError):  # the upstream's quota: said so, so clients fall back as for Google's
        return f"RESOURCE_EXHAUSTED: {exc.message}"
    if isinstance(exc, AuthenticationError):  # the server's own key was refused: the operator's to mend
        return "UNAVAILABLE: the upstream service refused this server's credentials; tell the server's operator."
    status = "INVALID_ARGUMENT" if isinstance(exc, ConfigurationError) else "INTERNAL"
    return f"{status}: {exc.message}"


def _host_and_port(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` (IPv6 in brackets) as a lowercase host and a port, or None when it is anything else."""
    value = value.strip()
    if not value or any(char in value for char in "@/?#\\ \t*"):
        return None
    try:
        parts = urlsplit("//" + value)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    return (host, port) if host else None


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # without an IPv6 zone (fe80::1%eth0)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)  # an IPv4 client of a dual-stack socket
    return mapped or address


class HostCheck:
    """ASGI middleware against DNS rebinding: the ``Host``, and the ``Origin`` when sent, must name this server.

    Accepted: ``names`` with the bound ``port`` (and without a port when that is 80); ``extra`` names, each
    ``NAME`` with any port or none, or ``NAME:PORT``; and with ``any_address`` (bound to 0.0.0.0 or ::) an IP
    address equal to the one the client connected to, which a rebound DNS name can never be. A bad ``Host``
    gets HTTP 421, a bad ``Origin`` 403.
    """

    def __init__(
        self, app: Any, *, port: int, names: Iterable[str], extra: Iterable[str] = (), any_address: bool = False
    ) -> None:
        self.app = app
        self._ports = {port, None} if port == 80 else {port}  # browsers omit the default port
        self._exact = {(name.lower(), shown) for name in names for shown in self._ports}
        self._any_port: set[str] = set()
        for value in extra:
            parsed = _host_and_port(value)
            if parsed is None:
                raise ConfigurationError(
                    f"--allow-host takes a host name or address, optionally with :PORT, not {value!r}."
                )
            if parsed[1] is None:
                self._any_port.add(parsed[0])
            else:
                self._exact.add(parsed)
        self._any_address = any_address

    def _allowed(self, value: str, scope: dict[str, Any]) -> bool:
        parsed = _host_and_port(value)
        if parsed is None:
            return False
        host, port = parsed
        if parsed in self._exact or host in self._any_port:
            return True
        if not self._any_address or port not in self._ports:
            return False
        connected = (scope.get("server") or (None,))[0]
        given = _address(host)
        return given is not None and connected is not None and given == _address(str(connected))

    def _origin_allowed(self, origin: str, scope: dict[str, Any]) -> bool:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
            return False
        return self._allowed(parts.netloc, scope)

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            if not self._allowed(headers.get("host", ""), scope):
                await PlainTextResponse("Invalid Host header", status_code=421)(scope, receive, send)
                return
            origin = headers.get("origin")
            if origin is not None and not self._origin_allowed(origin, scope):
                await PlainTextResponse("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _own_names(host: str) -> set[str]:
    """The names a client may use for a server bound to ``host``: it, its loopback aliases, the machine's names."""
    names = {host}
    if host in _LOOPBACK:
        names |= _LOOPBACK
    elif host in _ANY:
        names |= _LOOPBACK | {socket.gethostname(), socket.getfqdn()}
    return {name for name in names if name and name not in _ANY}


def build_app(
    backend: Any,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    json_response: bool = False,
    stateless: bool = False,
    allow_hosts: Iterable[str] = (),
    gate: GateSettings | None = None,
) -> Any:
    """The ASGI app serving ``backend`` at ``/mcp``: DNS rebinding protection, then the gate (tokens or users,
    quotas, metrics, access log, ``/healthz`` and ``/readyz``: :class:`~devknow_jupyter.service.gate.ServiceGate`).

    ``token``: the one token every client must send, when ``gate`` names no users.
    ``allow_hosts``: more names (``NAME`` or ``NAME:PORT``) to accept in ``Host`` and ``Origin``.
    """
    app: Any = build_server(backend).streamable_http_app(
        json_response=json_response,
        stateless_http=stateless,
        # HostCheck does this, knowing the address each client connected to; the SDK's list can't.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host,
    )
    settings = gate or GateSettings()
    if token and not settings.token:
        settings = replace(settings, token=token)
    app = ServiceGate(app, settings)
    return HostCheck(app, port=port, names=_own_names(host), extra=allow_hosts, any_address=host in _ANY)


def _bind(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigurationError(f"Cannot listen on {host}:{port}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        in_use = exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == 10048
        reason = "the port is in use" if in_use else exc.strerror or str(exc)
        raise ConfigurationError(f"Cannot listen on {host}:{port}: {reason}.") from None
    return sock


def _exit_cleanly_on_sigterm() -> None:
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it; with this handler the re-raised
    # signal ends the process with exit code 0 (and our `finally` runs) instead of killing it.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


def serve(
    *,
    docs: str | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    json_response: bool = False,
    stateless: bool = False,
    allow_hosts: Iterable[str] = (),
    packs: Sequence[str] = (),
    workers: int = 1,
    team: TeamOptions | None = None,
    out: TextIO | None = None,
) -> None:
    """Serve the local index (``docs``: one folder of Markdown instead; ``packs``: these knowledge packs
    instead) until interrupted.

    ``allow_hosts``: names besides this server's own to accept in ``Host`` and ``Origin`` (see :class:`HostCheck`).
    ``workers``: processes sharing the listening socket, each with its own read-only view of the index; with
    more than one the server is stateless (a session would live in one process only).
    ``team``: the upstream, users, quotas and access log of a team service (:class:`TeamOptions`).

    Prints the URL once the port is bound. Raises :class:`~devknow_jupyter.errors.ConfigurationError`
    for a missing folder, an unusable pack, a broken users file or quota, or a port that is taken.
    """
    out = out or sys.stdout
    team = (team or TeamOptions()).checked()
    spec = _backend_spec(docs, packs)
    workers = max(1, int(workers))
    stateless = stateless or workers > 1
    if workers > 1:
        use_multiprocess_folder()  # before prometheus_client is imported: the workers' counts add up
    options = dict(
        host=host, port=port, json_response=json_response, stateless=stateless, allow_hosts=allow_hosts
    )
    local = _open_backend(spec)
    try:
        # Built before the port opens: once a client can connect, a SIGTERM must find our handler in place.
        app = _app(local, team, token, options) if workers == 1 else None
        _exit_cleanly_on_sigterm()
        sock = _bind(host, port)
        served = f"{len(packs)} packs" if len(packs) > 1 else local.endpoint
        _announce(out, f"{local.index.count()} documents from {served}", host, port, workers, team, token)
        if app is not None:
            _run(app, sock)
            return
    finally:
        local.close()  # each worker opens its own connection: SQLite connections must not cross a fork
    _run_workers(spec, team, token, options, sock, workers)


def _announce(
    out: TextIO, what: str, host: str, port: int, workers: int, team: TeamOptions, token: str | None
) -> None:
    """The lines ``devknow serve`` prints once its port is open: where, what, and who may ask."""
    shown = f"[{host}]" if ":" in host else (host or "0.0.0.0")
    out.write(f"devknow serve: {what} at http://{shown}:{port}/mcp\n")
    if team.upstream:
        out.write(f"devknow serve: forwarding to {team.upstream}; these documents answer while it is unreachable\n")
    if workers > 1:
        out.write(f"devknow serve: {workers} worker processes (stateless)\n")
    if team.users:
        out.write(f"devknow serve: users from {team.users} (Authorization: Bearer TOKEN), re-read on change\n")
    elif token:
        out.write("devknow serve: clients must send the token (Authorization: Bearer or X-Goog-Api-Key)\n")
    elif host not in _LOOPBACK:
        out.write("devknow serve: warning: listening beyond this machine without --token or --users\n")
    out.write("devknow serve: press Ctrl-C to stop\n")
    out.flush()


def _app(local: Any, team: TeamOptions, token: str | None, options: dict[str, Any]) -> Any:
    """One process's app: its backend (the upstream in front of ``local`` when there is one) and its gate."""
    backend, gate = open_team(team, local, token=token)
    return build_app(backend, gate=gate, **options)


def _backend_spec(docs: str | None, packs: Sequence[str]) -> str:
    """The endpoint string of what to serve; several packs are first copied into one index in the cache."""
    if docs and packs:
        raise ConfigurationError("Give --docs or --pack, not both.")
    if not packs:
        return f"local:{docs}" if docs else "local"
    from ..packs.pack import read_manifest

    manifests = [read_manifest(pack) for pack in packs]  # refuse a damaged or newer pack before serving anything
    if len(packs) == 1:
        return f"local:{packs[0]}"
    from ..packs.installed import combined_index

    return f"local:{combined_index(list(packs), manifests)}"


def _open_backend(spec: str) -> Any:
    from .backend import LocalBackend

    return LocalBackend.from_spec(spec)


def _run(app: Any, sock: socket.socket) -> None:
    # On SIGTERM uvicorn stops accepting and lets the requests in flight finish (for at most 30 s).
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=30)
    uvicorn.Server(config).run(sockets=[sock])


def _run_workers(
    spec: str, team: TeamOptions, token: str | None, options: dict[str, Any], sock: socket.socket, workers: int
) -> None:
    """Fork ``workers`` processes that accept on the same socket; stop them all on SIGTERM or Ctrl-C."""
    import os

    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # the worker: its own backend, then serve until told to stop
            status = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns Ctrl-C into SIGTERM
                _exit_cleanly_on_sigterm()
                local = _open_backend(spec)
                try:
                    _run(_app(local, team, token, options), sock)
                finally:
                    local.close()
            except BaseException:  # a worker never returns into the parent's code
                status = 1
            os._exit(status)
        children.append(pid)
    sock.close()

    def stop(signum: int, frame: Any) -> None:
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for child in children:
        while True:
            try:
                os.waitpid(child, 0)
                break
            except ChildProcessError:
                break
            except InterruptedError:
                continue

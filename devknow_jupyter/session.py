"""The kernel's one shared :class:`~devknow_jupyter.DevKnowClient`, as the magics use it.

A :class:`Session` holds the settings that shape the client (endpoint, timeout, a key typed at a
prompt) and builds the client on first use. Changing a setting closes the client; the next call
builds a new one. :class:`SessionStatus` is what ``%devknow`` shows: a small table that never
contains the key.

The client module (and with it models, cache and the transport) is imported when the first client
is built, not when the extension loads: ``%load_ext`` stays cheap in a kernel that never searches.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backend import Backend
    from .client import DevKnowClient
    from .config import DevKnowConfig
    from .render.actions import ResultActions

__all__ = [
    "PROMPTED_KEY_SOURCE",
    "Session",
    "SessionStatus",
    "close_all",
    "default_actions",
    "register_session",
    "shared_client",
    "unregister_session",
]

#: How the status names a key typed at the ``%devknow --api-key`` prompt.
PROMPTED_KEY_SOURCE = "%devknow --api-key (this kernel only)"

_UNSET: Any = object()


class Session:
    """One lazily built client, rebuilt whenever its configuration or the key changes.

    Args:
        endpoint: As for :class:`~devknow_jupyter.DevKnowClient`; ``None`` lets the client choose
            (``DEVKNOW_ENDPOINT``, else Google's server with a key, else the offline index).
        timeout: Seconds to wait for a reply.
        config: The :class:`~devknow_jupyter.config.DevKnowConfig` the client is built from (the magics pass
            themselves); by default one made of ``endpoint`` and ``timeout``. Whoever changes its traits calls
            :meth:`close` (the magics do, from their trait observers); the next call builds a new client.
        on_notices: Called with the client's one-line notices when it is built (its no-key notice in the
            notebook's words, and left out once :meth:`startup_notices` said it);
            the magics show them as notes in the notebook.
        backend: Makes the client's backend in place of ``endpoint`` (called at each build, since closing a
            client closes its backend): e.g. ``lambda: StaticBackend(pages)`` from :mod:`devknow_jupyter.testing`,
            so that tests of the magics need no server.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        timeout: float = 30.0,
        on_notices: Callable[[list[str]], None] | None = None,
        backend: Callable[[], Backend] | None = None,
        config: DevKnowConfig | None = None,
    ) -> None:
        if config is None:
            from .config import DevKnowConfig

            config = DevKnowConfig(endpoint=endpoint or "", timeout=timeout)
        self.config = config
        self._on_notices = on_notices
        self._backend = backend
        self._api_key: str | None = None  # only a key typed at the prompt; env keys stay in the env
        self._token: str | None = None  # a team service's token typed at the prompt (%devknow --token)
        self._client: DevKnowClient | None = None
        self._lock = threading.RLock()
        self._no_key_said = False  # at %load_ext: then the first client need not say it again

    def __repr__(self) -> str:
        state = "connected" if self._client is not None else "idle"
        return f"<Session endpoint={self.config.endpoint or 'auto'!r} {state}>"

    @property
    def has_prompted_key(self) -> bool:
        """True when a key was typed at the ``%devknow --api-key`` prompt."""
        return self._api_key is not None

    def configure(
        self,
        *,
        endpoint: Any = _UNSET,
        timeout: Any = _UNSET,
        api_key: Any = _UNSET,
        backend: Any = _UNSET,
        token: Any = _UNSET,
    ) -> bool:
        """Change settings; closes the current client if any of them changed. Returns whether it did.

        ``backend`` (as in the constructor; None: from the endpoint again) takes the endpoint's place while set.
        """
        with self._lock:
            before = (self._settings(), self._api_key, self._backend, self._token)
            if backend is not _UNSET:
                self._backend = backend
            if endpoint is not _UNSET:
                self.config.endpoint = endpoint or ""
            if timeout is not _UNSET:
                self.config.timeout = float(timeout)
            if api_key is not _UNSET:
                from .errors import register_secret

                register_secret(api_key)
                self._api_key = api_key or None
            if token is not _UNSET:
                from .errors import register_secret

                register_secret(token)
                self._token = token or None
            if (self._settings(), self._api_key, self._backend, self._token) == before:
                return False
            self._close_client()
            return True

    def _settings(self) -> tuple[Any, ...]:
        from .config import client_options

        return tuple(client_options(self.config).values())

    def client(self) -> DevKnowClient:
        """The shared client, built now if there is none (may raise ``ConfigurationError``)."""
        with self._lock:
            if self._client is None:
                from .client import DevKnowClient

                backend = self._backend() if self._backend is not None else None
                client = DevKnowClient.from_config(
                    self.config, api_key=self._api_key, token=self._token, backend=backend, announce=False
                )
                self._client = client
                notices = self._worded(client)
                if self._on_notices is not None and notices:
                    self._on_notices(notices)
            return self._client

    def startup_notices(self) -> list[str]:
        """What to say when the extension loads: that, with no key set, the offline index answers (then the
        first client does not say it again). Nothing is built or opened here."""
        import os

        from .errors import KEY_VARIABLES  # connection.py would import the cache
        from .hints import no_key_notice

        chosen = self.config.endpoint or self._backend or self._api_key  # the endpoint's default: DEVKNOW_ENDPOINT
        if chosen or any(os.environ.get(name, "").strip() for name in KEY_VARIABLES):
            return []
        self._no_key_said = True
        return [no_key_notice("notebook") or ""]

    def _worded(self, client: DevKnowClient) -> list[str]:
        """The new client's notices, its no-key notice (the first) in the notebook's words."""
        notices = list(client.notices)
        if client.endpoint_source == "no key" and notices:
            from .hints import no_key_notice

            line = no_key_notice("notebook", client.documentation_hint, said=self._no_key_said)
            notices[:1] = [line] if line else []
        return notices

    def key_source(self, client: DevKnowClient | None = None) -> str:
        """Where the key comes from, by variable name or prompt; never the key itself."""
        if self._api_key is not None:
            return PROMPTED_KEY_SOURCE
        client = client or self._client
        if client is not None and client.key_source:
            return client.key_source
        return "none"

    def status(self) -> SessionStatus:
        """Endpoint, backend, key source, which backend answered last, cache figures and the server's tools,
        as a displayable table."""
        from .errors import DevKnowError, split_url_credentials

        rows: list[tuple[str, str]] = []
        try:
            client = self.client()
        except DevKnowError as exc:
            endpoint = split_url_credentials(self.config.endpoint)[0] if self.config.endpoint else "auto"
            return SessionStatus([("endpoint", endpoint), ("error", exc.short_message())])
        try:  # first: the era, and whether the service can be reached, are known after it
            tools = ", ".join(tool.get("name", "?") for tool in client.list_tools()) or "(none)"
        except DevKnowError as exc:
            tools = f"unavailable: {exc.short_message().splitlines()[0]}"
        from .status import installed_pack_lines, offline_fallback_line, protocol_line

        info = client.status()
        # The magics pass the endpoint as an argument; the user set it in DevKnowMagics.endpoint.
        source = "DevKnowMagics.endpoint" if info["endpoint_source"] == "argument" else info["endpoint_source"]
        rows.append(("endpoint", f"{info['endpoint']} ({source})"))
        rows.append(("backend", str(info["backend"])))
        rows.append(("protocol", protocol_line(info)))
        rows.append(("API key", self.key_source(client)))
        rows.append(("timeout", f"{info['timeout']:g} s"))
        rows.append(("answered by", info.get("answered_by") or "nothing yet"))
        if info.get("offline_fallback"):
            rows.append(("offline fallback", offline_fallback_line(info)))
        ttl = info["cache_ttl"]
        rows.append(
            (
                "cache",
                f"{info['cache_size']} of {info['cache_max_entries']} entries, "
                f"TTL {'none' if ttl is None else f'{ttl:g} s'}, "
                f"hit rate {info['cache_hit_rate']:.0%} ({info['cache_hits']} hits, {info['cache_misses']} misses)",
            )
        )
        rows.append(("tools", tools))
        rows.append(("packs", ", ".join(installed_pack_lines(client.backend)) or "none"))  # as `devknow status`
        return SessionStatus(rows, data={**info, "key_source": self.key_source(client)})

    def close(self) -> None:
        """Close the client (a later call builds a new one)."""
        with self._lock:
            self._close_client()

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()


# The session of each shell whose magics are loaded: the one place front ends find the kernel's client.
_sessions: weakref.WeakKeyDictionary[Any, Session] = weakref.WeakKeyDictionary()


def register_session(ipython: Any, session: Session) -> None:
    """Make ``session`` the shared one of shell ``ipython`` (the magics do it when they load); its client and
    the buttons' clients are closed when the process (the kernel) stops."""
    global _at_exit_registered
    _sessions[ipython] = session
    if not _at_exit_registered:
        import atexit

        atexit.register(close_all)
        _at_exit_registered = True


_at_exit_registered = False


def close_all() -> None:
    """Close every shell's shared client and the clients the result buttons built (the kernel is stopping)."""
    for session in list(_sessions.values()):
        session.close()
    with _clients_lock:
        clients = list(_clients.values())
        _clients.clear()
    for client in clients:
        client.close()


def unregister_session(ipython: Any) -> Session | None:
    """Forget the shared session of ``ipython`` (``%unload_ext``); returns it, or None."""
    return _sessions.pop(ipython, None)


def shared_client(ipython: Any = None) -> DevKnowClient | None:
    """The client the magics use in ``ipython`` (default: the running shell), or None when not loaded.

    Lets Python code in a notebook (and the explorer) share the magics' connection, cache and key.
    """
    if ipython is None:
        from IPython import get_ipython

        ipython = get_ipython()
    session = _sessions.get(ipython) if ipython is not None else None
    return session.client() if session is not None else None


def default_actions(result: Any = None) -> ResultActions:
    """What a result's buttons do when ``display()`` shows it: act through the kernel's shared client (the
    magics') when it serves the endpoint the result came from (``result.info.endpoint``; a lone hit has
    none), else through one client per endpoint, built on the first click with the environment's key.
    With neither, the default settings apply (``DEVKNOW_ENDPOINT``, a key, else the offline index)."""
    from .render.actions import ClientActions

    info = getattr(result, "info", None)
    endpoint = getattr(info, "endpoint", "") or None
    return ClientActions(lambda: _client_for(endpoint))


_clients_lock = threading.Lock()
_clients: dict[str | None, DevKnowClient] = {}


def _client_for(endpoint: str | None) -> DevKnowClient:
    client = shared_client()
    if client is not None and endpoint in (None, client.endpoint):
        return client
    with _clients_lock:
        if endpoint not in _clients:
            from .client import DevKnowClient

            _clients[endpoint] = DevKnowClient(endpoint, announce=False)
        return _clients[endpoint]


class SessionStatus:
    """What ``%devknow`` shows: rows of (setting, value); ``.data`` has the raw figures.

    Displays as a two-column table in text/plain and text/html (every value escaped).
    """

    def __init__(self, rows: list[tuple[str, str]], data: dict[str, Any] | None = None) -> None:
        self.rows = rows
        self.data = data or {}

    def __repr__(self) -> str:
        width = max((len(name) for name, _ in self.rows), default=0)
        lines = ["devknow status", *(f"  {name.ljust(width)}  {value}" for name, value in self.rows)]
        return "\n".join(lines)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        import html

        body = "".join(
            f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(name)}</th>"
            f"<td style='text-align:left'>{html.escape(value)}</td></tr>"
            for name, value in self.rows
        )
        table = f"<table class='devknow-status'><caption style='text-align:left'>devknow status</caption>{body}</table>"
        return {"text/plain": repr(self), "text/html": table}

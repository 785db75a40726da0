"""The offline fallback: when the live service cannot be reached, answer from the local index.

:class:`~devknow_jupyter.DevKnowClient` (with a key or token, on a remote endpoint) hands a failed call
here when the error says the service was never reached (:attr:`TransportError.unreachable
<devknow_jupyter.errors.TransportError.unreachable>`: a DNS failure, a refused connection, a connect
or read timeout). The call is then answered by the default local index (the starter pack, the folders
added with ``devknow index`` and the pages fetched earlier), with a one-line notice saying so. A reply
from the server that refuses us (401, 403, 429, a tool error) is the service's answer and is never
replaced.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .contract import Capabilities
from .errors import DevKnowError, LocalIndexError, TransportError

if TYPE_CHECKING:
    from .local.backend import LocalBackend

__all__ = ["FALLBACK_BACKEND", "OfflineFallback", "fallback_notice", "is_unreachable"]

#: How ``DevKnowClient.status()["answered_by"]`` names the local index standing in for the service.
FALLBACK_BACKEND = "local (offline fallback)"
T = TypeVar("T")


def is_unreachable(exc: BaseException) -> bool:
    """True for a failure to reach the service at all, never for a reply the server gave."""
    return isinstance(exc, TransportError) and exc.unreachable


def fallback_notice(exc: BaseException) -> str:
    """The one line shown on results that the local index answered: why, and where they come from."""
    reason = str(exc).strip().rstrip(".") or type(exc).__name__
    return f"The service could not be reached ({reason}), so the local index answered instead."


class OfflineFallback:
    """The default local index, opened on first use and kept open for later fallbacks. Thread-safe."""

    def __init__(self) -> None:
        self._backend: LocalBackend | None = None
        self._lock = threading.Lock()
        self._closed = False

    def backend(self, cause: BaseException) -> LocalBackend:
        """The local backend; re-raises ``cause`` (the network error) when the local index can't be opened."""
        with self._lock:
            if self._closed:
                raise cause
            if self._backend is None:
                from .local.backend import LocalBackend

                try:
                    self._backend = LocalBackend.from_spec("local")
                except DevKnowError as exc:
                    # Two problems: say the first (the network), keep the second as its cause.
                    raise cause from exc
            return self._backend

    def run(self, call: Callable[[LocalBackend], T], cause: BaseException) -> T:
        """``call(backend)`` on the local index (``cause``: the error the service call ended with)."""
        backend = self.backend(cause)
        try:
            return call(backend)
        except LocalIndexError as exc:
            raise cause from exc  # the network is the user's problem; the broken index is its cause here

    def get(self, names: list[str], cause: BaseException) -> list[dict[str, Any]]:
        """The documents of ``names`` the local index has, in request order (the others are left out)."""
        backend = self.backend(cause)
        try:
            return backend.index.get(names)
        except sqlite3.Error as exc:
            raise cause from exc

    def capabilities(self, cause: BaseException) -> Capabilities:
        """What the local index applies itself (one site, dates, pages)."""
        return self.backend(cause).capabilities

    def close(self) -> None:
        """Close the local index, if it was opened. Safe to call twice."""
        with self._lock:
            self._closed = True
            backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()


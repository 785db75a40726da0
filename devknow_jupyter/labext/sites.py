"""The sites the panel's site box suggests: those of the index that answers.

The offline index (the backend, or the offline fallback standing in for an unreachable service) suggests the
hosts of the pages it holds, the most pages first, so a suggestion never filters every hit away. The live
service suggests the sites it serves.
"""

from __future__ import annotations

import threading
from typing import Any

from ..fallback import FALLBACK_BACKEND

__all__ = ["SERVICE_SITES", "SiteSuggestions"]

#: The sites of Google's developer documentation service (any other host can be typed).
SERVICE_SITES = (
    "cloud.google.com",
    "firebase.google.com",
    "developers.google.com",
    "developer.android.com",
    "ai.google.dev",
    "developer.chrome.com",
    "web.dev",
)
#: Most sites suggested.
MAX_SITES = 30


class SiteSuggestions:
    """Sites to suggest for a client; opens the default offline index (read only) when the fallback answered."""

    def __init__(self) -> None:
        self._offline: Any = None
        self._lock = threading.Lock()

    def for_client(self, client: Any) -> list[str]:
        """The sites of the index that answers ``client``'s calls now (after its last answer)."""
        if client.backend_kind == "local":
            return client.backend.index.sites()[:MAX_SITES]
        if client.answered_by == FALLBACK_BACKEND:
            return self._offline_index().sites()[:MAX_SITES]
        return list(SERVICE_SITES)

    def close(self) -> None:
        """Close the offline index, if it was opened."""
        with self._lock:
            offline, self._offline = self._offline, None
        if offline is not None:
            offline.close()

    def _offline_index(self) -> Any:
        with self._lock:
            if self._offline is None:
                from ..local.backend import LocalBackend

                self._offline = LocalBackend.from_spec("local")
            return self._offline.index

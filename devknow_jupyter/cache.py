"""A thread-safe in-memory LRU cache with a time-to-live, shared by every client in the process.

Keys are built by :func:`cache_key` from a scope (:func:`cache_scope`: the endpoint and a salted hash of
the credentials), the tool and its normalised arguments, so the same question to the same server with the
same credentials is answered once, and a client whose key the server refuses never gets what another key
fetched. Documents are cached one by one under their name.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["CacheStats", "ResultCache", "cache_key", "cache_scope", "shared_cache"]

_MISSING = object()
# A fresh salt per process: a credential's tag can't be looked up in a table, nor compared across processes.
_SALT = secrets.token_bytes(32)


def cache_scope(endpoint: str, *credentials: str | None) -> tuple[str, str]:
    """The part of every cache key that says who asked whom: the endpoint and a tag of ``credentials``.

    The tag is a truncated HMAC-SHA256 of the credentials (API key, access token, headers) under a random
    per-process salt, never a credential itself; no credentials give an empty tag.
    """
    given = [value for value in credentials if value]
    if not given:
        return (endpoint, "")
    message = "\0".join(f"{len(value)}:{value}" for value in given).encode("utf-8", "surrogatepass")
    return (endpoint, hmac.new(_SALT, message, hashlib.sha256).hexdigest()[:32])


def cache_key(scope: Hashable, tool: str, arguments: Any) -> tuple[Any, ...]:
    """A hashable key for one tool call in ``scope`` (:func:`cache_scope`), whatever the order of the arguments."""
    if isinstance(arguments, str):
        return (scope, tool, arguments)
    if isinstance(arguments, dict) and all(isinstance(value, str) for value in arguments.values()):
        return (scope, tool, *sorted(arguments.items()))  # the common case, without serialising
    return (scope, tool, json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True)
class CacheStats:
    """Counters of a :class:`ResultCache`."""

    size: int
    max_entries: int
    ttl: float | None
    hits: int
    misses: int

    @property
    def hit_rate(self) -> float:
        """Hits divided by lookups (0.0 before any lookup)."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class ResultCache:
    """LRU cache of at most ``max_entries`` values, each kept for ``ttl`` seconds (None: forever)."""

    def __init__(self, max_entries: int = 512, ttl: float | None = 3600.0) -> None:
        self._data: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.ttl = ttl
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value stored under ``key``, or ``default`` when absent or expired (counts a hit or a miss)."""
        with self._lock:
            entry = self._data.get(key, _MISSING)
            if entry is not _MISSING:
                stored_at, value = entry  # type: ignore[misc]
                if self.ttl is None or time.monotonic() - stored_at < self.ttl:
                    self._data.move_to_end(key)
                    self.hits += 1
                    return value
                del self._data[key]
            self.misses += 1
            return default

    def set(self, key: Hashable, value: Any) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entries beyond the limit."""
        if self.max_entries <= 0:
            return
        with self._lock:
            self._data[key] = (time.monotonic(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def configure(self, *, max_entries: int | None = None, ttl: float | object | None = _MISSING) -> None:
        """Change the limits in place (entries beyond a smaller limit are evicted)."""
        with self._lock:
            if max_entries is not None:
                self.max_entries = max_entries
            if ttl is not _MISSING:
                self.ttl = ttl  # type: ignore[assignment]
            while len(self._data) > max(self.max_entries, 0):
                self._data.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            entry = self._data.get(key, _MISSING)
            return entry is not _MISSING and (self.ttl is None or time.monotonic() - entry[0] < self.ttl)  # type: ignore[index]

    def __repr__(self) -> str:
        # Sizes only: keys hold queries and credential tags, values hold results.
        return f"<ResultCache {len(self._data)}/{self.max_entries} entries ttl={self.ttl}>"

    def stats(self) -> CacheStats:
        """Current size, limits and hit/miss counters."""
        return CacheStats(len(self._data), self.max_entries, self.ttl, self.hits, self.misses)


_shared: ResultCache | None = None
_shared_lock = threading.Lock()


def shared_cache() -> ResultCache:
    """The process-wide cache every :class:`~devknow_jupyter.DevKnowClient` uses by default."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ResultCache()
        return _shared

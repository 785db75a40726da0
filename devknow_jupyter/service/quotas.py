"""Per-user quotas: how many calls of each kind a user may make in a minute, an hour or a day.

A quota is ``KIND=COUNT/PERIOD`` (``search=60/min``, ``answer=20/day``); the kinds are the three tools'
(``search``, ``get``, ``answer``). Counting uses fixed windows aligned to the clock (a minute starts at
:00), so a count is one integer per user, kind and window, incremented atomically where it is kept:

- :class:`MemoryCounter`: this process only (one worker);
- :class:`SqliteCounter`: a SQLite file shared by the worker processes of one server (``--workers N``);
- :class:`RedisCounter`: a Redis server shared by several servers (``--redis URL``).

Each says exactly whether one more call fits, so across workers and replicas a user gets the quota and not a
call more. A refused call is not counted.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigurationError

__all__ = [
    "KINDS",
    "PERIODS",
    "MemoryCounter",
    "Quota",
    "QuotaCounter",
    "RedisCounter",
    "Refusal",
    "SqliteCounter",
    "kind_of_tool",
    "open_counter",
    "parse_quota",
    "parse_quotas",
]

#: The kinds of call a quota counts, by the tool that makes them.
KINDS = {"search_documents": "search", "get_documents": "get", "answer_query": "answer"}
#: Window lengths in seconds, by the names a quota may use.
PERIODS = {"s": 1, "sec": 1, "min": 60, "minute": 60, "h": 3600, "hour": 3600, "day": 86400, "d": 86400}
_QUOTA = re.compile(r"^\s*(search|get|answer)\s*=\s*(\d+)\s*/\s*([a-z]+)\s*$")


def kind_of_tool(tool: str) -> str | None:
    """The quota kind of a tool call (``search_documents`` → ``search``), or None for a call no quota counts."""
    return KINDS.get(tool)


@dataclass(frozen=True)
class Quota:
    """At most ``limit`` calls of ``kind`` per window of ``period`` seconds (``name``: the period as written)."""

    kind: str
    limit: int
    period: int
    name: str

    def __str__(self) -> str:
        return f"{self.kind}={self.limit}/{self.name}"

    def window(self, now: float) -> int:
        """The number of the window ``now`` falls in."""
        return int(now // self.period)

    def seconds_left(self, now: float) -> float:
        """Seconds until the window ``now`` falls in ends."""
        return (self.window(now) + 1) * self.period - now


def parse_quota(text: str) -> Quota:
    """``"search=60/min"`` as a :class:`Quota`; anything else is a ``ConfigurationError`` saying the form."""
    match = _QUOTA.match(text.lower())
    if not match or match.group(3) not in PERIODS:
        raise ConfigurationError(
            f"Not a quota: {text!r}.",
            hint="Write KIND=COUNT/PERIOD with KIND search, get or answer and PERIOD s, min, hour or day "
            "(e.g. search=60/min).",
        )
    kind, limit, period = match.group(1), int(match.group(2)), match.group(3)
    return Quota(kind, limit, PERIODS[period], period)


def parse_quotas(values: Iterable[str] | Mapping[str, str]) -> dict[str, Quota]:
    """Quotas by kind, from ``KIND=COUNT/PERIOD`` strings or a ``{kind: "COUNT/PERIOD"}`` table (a users file's)."""
    items = [f"{kind}={value}" for kind, value in values.items()] if isinstance(values, Mapping) else list(values)
    quotas: dict[str, Quota] = {}
    for item in items:
        quota = parse_quota(str(item))
        quotas[quota.kind] = quota  # the last one given for a kind wins, as on a command line
    return quotas


@dataclass(frozen=True)
class Refusal:
    """A call over its quota: which quota, and in how many seconds its window resets."""

    quota: Quota
    retry_after: int

    @property
    def message(self) -> str:
        return f"RESOURCE_EXHAUSTED: the quota {self.quota} is used up; it resets in {self.retry_after} s."


class QuotaCounter(Protocol):
    """Counts calls per user, kind and window; thread- and process-safe as its kind says."""

    def take(self, user: str, quota: Quota, now: float | None = None) -> Refusal | None:
        """Count one call of ``user`` against ``quota``: None when it fits, else the :class:`Refusal`."""
        ...

    def close(self) -> None:
        """Release the counter's connection."""
        ...


def _refusal(quota: Quota, now: float) -> Refusal:
    return Refusal(quota, max(1, math.ceil(quota.seconds_left(now))))


class MemoryCounter:
    """Counts in this process's memory: exact for one worker."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, int, int], int] = {}
        self._lock = threading.Lock()

    def take(self, user: str, quota: Quota, now: float | None = None) -> Refusal | None:
        now = time.time() if now is None else now
        key = (user, quota.kind, quota.period, quota.window(now))
        with self._lock:
            used = self._counts.get(key, 0)
            if used >= quota.limit:
                return _refusal(quota, now)
            self._counts[key] = used + 1
            if len(self._counts) > 100_000:  # old windows: drop them all but the current ones
                current = {k: v for k, v in self._counts.items() if k[3] >= quota.window(now)}
                self._counts = current
        return None

    def close(self) -> None:
        pass


class SqliteCounter:
    """Counts in a SQLite file: exact across the processes that share the file (one write lock per call)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        with self._connection() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS quota_counts (user TEXT NOT NULL, kind TEXT NOT NULL, "
                "period INTEGER NOT NULL, window INTEGER NOT NULL, used INTEGER NOT NULL, "
                "PRIMARY KEY (user, kind, period, window))"
            )

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            # isolation_level=None: transactions are ours (BEGIN IMMEDIATE below); WAL lets readers not block.
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def take(self, user: str, quota: Quota, now: float | None = None) -> Refusal | None:
        now = time.time() if now is None else now
        window = quota.window(now)
        db = self._connection()
        db.execute("BEGIN IMMEDIATE")  # the write lock first: two workers can't both read "one left"
        try:
            row = db.execute(
                "SELECT used FROM quota_counts WHERE user = ? AND kind = ? AND period = ? AND window = ?",
                (user, quota.kind, quota.period, window),
            ).fetchone()
            used = row[0] if row else 0
            if used >= quota.limit:
                db.execute("COMMIT")
                return _refusal(quota, now)
            db.execute(
                "INSERT INTO quota_counts VALUES (?, ?, ?, ?, 1) ON CONFLICT (user, kind, period, window) "
                "DO UPDATE SET used = used + 1",
                (user, quota.kind, quota.period, window),
            )
            # Windows that ended are of no use: keep the table the size of the current windows.
            db.execute("DELETE FROM quota_counts WHERE period = ? AND window < ?", (quota.period, window))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return None

    def close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


# Increment only below the limit, in one step on the server: exact however many servers share it.
_REDIS_TAKE = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return -1 end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return used
"""


class RedisCounter:
    """Counts in a Redis server: exact across every server that shares it (a Lua script per call)."""

    def __init__(self, url: str, *, prefix: str = "devknow:quota") -> None:
        try:
            import redis
        except ImportError:
            raise ConfigurationError(
                "--redis needs the redis package, which is not installed.",
                hint="pip install 'devknow-jupyter[server]'",
            ) from None
        self._client: Any = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        try:
            self._client.ping()
        except redis.RedisError as exc:
            raise ConfigurationError(f"Cannot reach Redis at {_without_password(url)}: {exc}") from None
        self._take = self._client.register_script(_REDIS_TAKE)
        self._prefix = prefix

    def take(self, user: str, quota: Quota, now: float | None = None) -> Refusal | None:
        now = time.time() if now is None else now
        key = f"{self._prefix}:{quota.kind}:{quota.period}:{quota.window(now)}:{user}"
        ttl = math.ceil(quota.seconds_left(now)) + 1
        used = int(self._take(keys=[key], args=[quota.limit, ttl]))
        return _refusal(quota, now) if used < 0 else None

    def close(self) -> None:
        self._client.close()


def _without_password(url: str) -> str:
    return re.sub(r"//[^@/]*@", "//", url)


def open_counter(*, redis_url: str | None, sqlite_path: str | Path | None) -> QuotaCounter:
    """The counter for a server: Redis when a URL is given, else the SQLite file, else this process's memory."""
    if redis_url:
        return RedisCounter(redis_url)
    if sqlite_path:
        return SqliteCounter(sqlite_path)
    return MemoryCounter()

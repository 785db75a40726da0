"""What ``devknow serve`` is told for a team (``--upstream``, ``--users``, ``--quota``, ``--redis``, the log),
and how each worker process turns it into its backend and its gate.

:class:`TeamOptions` is plain data, so the parent process checks it once and every forked worker builds its
own connections from it (SQLite and Redis connections, like sockets to the upstream, must not cross a fork).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..backend import Backend
from ..connection import GOOGLE_ENDPOINT
from ..errors import ConfigurationError
from .access_log import AccessLog
from .gate import GateSettings
from .metrics import ServiceMetrics
from .quotas import open_counter, parse_quotas
from .upstream import UpstreamBackend
from .users import UserDirectory

__all__ = ["TeamOptions", "open_team"]


@dataclass(frozen=True)
class TeamOptions:
    """The team service's settings (all optional; the default is a plain, open ``devknow serve``).

    Attributes:
        upstream: Forward the tools to this MCP endpoint, with ``upstream_key`` (default: ``DEVKNOW_API_KEY``,
            else ``GOOGLE_API_KEY``, of the server's environment); the packs answer when it can't be reached.
        users: A TOML file of users and their tokens (:mod:`~devknow_jupyter.service.users`), re-read on change.
        quotas: ``KIND=COUNT/PERIOD`` for every user (a user's table in ``users`` overrides them).
        redis: Count quotas in this Redis server (shared by replicas) instead of ``quota_db``.
        quota_db: The SQLite file of the quota counts (shared by the workers); default in the cache folder.
        access_log: Write the JSON-lines access log to this file (``-``: stderr; None: no log).
        log_queries: Write each query's text in the access log too.
        upstream_timeout: Seconds an upstream call may take.
    """

    upstream: str | None = None
    upstream_key: str | None = field(default=None, repr=False)
    users: str | None = None
    quotas: tuple[str, ...] = ()
    redis: str | None = None
    quota_db: str | None = None
    access_log: str | None = None
    log_queries: bool = False
    upstream_timeout: float = 30.0

    def checked(self) -> TeamOptions:
        """These options with the key found and every file and quota checked (in the parent, before any fork)."""
        parse_quotas(self.quotas)
        if self.users:
            UserDirectory(self.users)  # a broken users file is an error at start, not at the first request
        key = self.upstream_key
        if self.upstream and not key:
            key = (os.environ.get("DEVKNOW_API_KEY") or os.environ.get("GOOGLE_API_KEY") or "").strip() or None
            if key is None and self.upstream == GOOGLE_ENDPOINT:
                raise ConfigurationError(
                    "--upstream forwards to Google's service with the server's key, and none is set.",
                    hint="Set DEVKNOW_API_KEY (or GOOGLE_API_KEY) in the server's environment.",
                )
        if self.redis:
            open_counter(redis_url=self.redis, sqlite_path=None).close()  # unreachable: say so now
        return TeamOptions(**{**self.__dict__, "upstream_key": key})

    @property
    def counts_quotas(self) -> bool:
        return bool(self.quotas or self.users)


def _quota_db(options: TeamOptions) -> Path:
    if options.quota_db:
        return Path(options.quota_db)
    from ..local.paths import cache_dir

    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "serve-quotas.sqlite3"


def _log(options: TeamOptions) -> AccessLog | None:
    if not options.access_log:
        return None
    stream: TextIO | None = None
    if options.access_log != "-":
        stream = open(options.access_log, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - kept for the process
    return AccessLog(stream, log_queries=options.log_queries)


def open_team(options: TeamOptions, local: Backend, *, token: str | None = None) -> tuple[Any, GateSettings]:
    """In one process: the backend to serve (``local``, or the upstream in front of it) and the gate's settings."""
    metrics = ServiceMetrics()
    backend: Any = local
    ready, reason = (lambda: True), (lambda: "starting")
    if options.upstream:
        from ..transport import McpHttpBackend

        upstream = McpHttpBackend(
            options.upstream, api_key=options.upstream_key, timeout=options.upstream_timeout, connect_timeout=5.0
        )
        backend = UpstreamBackend(upstream, local, on_event=metrics.event)
        stop = threading.Event()
        threading.Thread(target=backend.probe_until_ready, args=(stop,), daemon=True, name="upstream-probe").start()
        ready = lambda: backend.ready  # noqa: E731
        reason = lambda: f"the upstream has not answered yet ({backend.last_upstream_error or 'trying'})"  # noqa: E731
    counter = None
    if options.counts_quotas:
        counter = open_counter(redis_url=options.redis, sqlite_path=_quota_db(options))
    settings = GateSettings(
        users=UserDirectory(options.users) if options.users else None,
        token=token,
        quotas=parse_quotas(options.quotas),
        counter=counter,
        metrics=metrics,
        access_log=_log(options),
        ready=ready,
        not_ready_reason=reason,
    )
    return backend, settings

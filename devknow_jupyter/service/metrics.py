"""The team service's numbers, in the Prometheus text format at ``/metrics`` (``prometheus_client``).

Counted: requests by tool and HTTP status, their latency, cache hits, upstream errors, offline fallbacks
and quota refusals. With several worker processes every worker writes its counts to files in one folder
(``prometheus_client``'s multiprocess mode, chosen by ``PROMETHEUS_MULTIPROC_DIR`` before the library is
first imported: :func:`use_multiprocess_folder`) and ``/metrics`` adds them up, whichever worker answers.
No label holds a user name, a token or a query.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

__all__ = ["CONTENT_TYPE", "ServiceMetrics", "use_multiprocess_folder"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"


def use_multiprocess_folder() -> str:
    """Before forking workers: a fresh folder for their counts, named in the environment they inherit."""
    folder = tempfile.mkdtemp(prefix="devknow-metrics-")
    os.environ[_MULTIPROCESS] = folder
    return folder


class ServiceMetrics:
    """The counters and histograms of one server process (shared across its workers in multiprocess mode)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self._multiprocess = bool(os.environ.get(_MULTIPROCESS))
        # In multiprocess mode values go to the workers' files, and /metrics reads those, not a registry.
        self._registry = CollectorRegistry()
        registry = None if self._multiprocess else self._registry
        self.requests = Counter(
            "devknow_requests", "Requests by tool and HTTP status.", ["tool", "status"], registry=registry
        )
        self.latency = Histogram(
            "devknow_request_duration_seconds",
            "Time to answer a request, by tool.",
            ["tool"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=registry,
        )
        self.cache_hits = Counter(
            "devknow_cache_hits", "Calls answered from the shared cache.", ["tool"], registry=registry
        )
        self.upstream_errors = Counter(
            "devknow_upstream_errors", "Calls the upstream failed or refused.", ["tool"], registry=registry
        )
        self.fallbacks = Counter(
            "devknow_offline_fallbacks", "Calls answered by the packs because the upstream was unreachable.",
            ["tool"], registry=registry,
        )
        self.quota_refusals = Counter(
            "devknow_quota_refusals", "Calls refused because a user's quota was used up.", ["kind"], registry=registry
        )

    def request(self, tool: str, status: int, seconds: float) -> None:
        """Count one answered request."""
        self.requests.labels(tool=tool, status=str(status)).inc()
        self.latency.labels(tool=tool).observe(seconds)

    def event(self, event: str, tool: str) -> None:
        """Count a backend event: ``cache_hit``, ``upstream_error`` or ``fallback``."""
        counter = {"cache_hit": self.cache_hits, "upstream_error": self.upstream_errors, "fallback": self.fallbacks}
        if event in counter:
            counter[event].labels(tool=tool).inc()

    def refusal(self, kind: str) -> None:
        """Count one call refused by a quota."""
        self.quota_refusals.labels(kind=kind).inc()

    def exposition(self) -> bytes:
        """Everything counted so far (every worker's, in multiprocess mode), in the text format."""
        from prometheus_client import CollectorRegistry, generate_latest

        if not self._multiprocess:
            return generate_latest(self._registry)
        from prometheus_client import multiprocess

        registry: Any = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)

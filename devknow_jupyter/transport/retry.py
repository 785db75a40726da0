"""When to try a request again, and how long to wait first.

Only failures that are safe and likely to pass are retried: a connection that never opened, a
502/503/504 from a front end, and a 429 on the two tools whose quota is generous
(``search_documents``, ``get_documents``). ``answer_query``'s quota must surface at once so the caller
can fall back to search. 400/401/403 are never retried: asking again gives the same answer.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from ..registry import REGISTRY

__all__ = ["MAX_RETRY_AFTER", "RETRY_STATUSES", "RetryPolicy", "parse_retry_after", "sane_delay"]

#: HTTP statuses a front end sends for a passing overload or restart.
RETRY_STATUSES = frozenset({502, 503, 504})


#: The longest wait a server's ``Retry-After`` (or RetryInfo) is reported as: a day. Longer ones are clamped.
MAX_RETRY_AFTER = 24 * 3600.0


def sane_delay(seconds: object) -> float | None:
    """``seconds`` as a delay in [0, :data:`MAX_RETRY_AFTER`]: negative ones are 0, longer ones the maximum;
    None for what is not a finite number (``inf``, ``nan``, a string), so that no caller sleeps a negative
    time or shows an infinite one."""
    try:
        value = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(value):
        return None
    return min(max(value, 0.0), MAX_RETRY_AFTER)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (a number or an HTTP date), clamped by :func:`sane_delay`;
    None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return sane_delay(float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return sane_delay((when - datetime.now(timezone.utc)).total_seconds())
    except (TypeError, ValueError, OverflowError):
        return None


@dataclass
class RetryPolicy:
    """Capped exponential backoff with jitter, for at most ``attempts`` tries in all.

    Attributes:
        attempts: Tries in all, the first included.
        base: Seconds before the first retry (doubled each time, times a random factor in [0.5, 1]).
        cap: Longest wait between two tries, in seconds.
        max_retry_after: The longest ``Retry-After`` we wait for; a longer one ends the retries at once.
    """

    attempts: int = 3
    base: float = 0.5
    cap: float = 8.0
    max_retry_after: float = 10.0

    def may_retry(self, attempt: int) -> bool:
        """Whether a try numbered ``attempt`` (1 for the first) may be followed by another."""
        return attempt < self.attempts

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait after failed try ``attempt``, or None when the server asks for too long a wait."""
        if retry_after is not None:
            wait = sane_delay(retry_after)
            return wait if wait is not None and wait <= self.max_retry_after else None
        backoff = min(self.cap, self.base * (2 ** (attempt - 1)))
        return backoff * random.uniform(0.5, 1.0)

    @staticmethod
    def retries_status(status: int, tool: str | None) -> bool:
        """Whether an HTTP ``status`` is worth another try for a call of ``tool`` (None: not a tool call)."""
        if status in RETRY_STATUSES:
            return True
        entry = REGISTRY.get(tool) if status == 429 and tool else None
        return entry is not None and entry.retry_429  # the registry's retry rule: a generous quota

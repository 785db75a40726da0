"""What one call may spend: a deadline for the whole call and a cap on the server requests it answers.

A call's ``timeout`` is not a per-read timeout: it bounds the whole call, the era discovery, retries,
backoff and ``Retry-After`` waits, slow bodies and event streams that carry only notifications or pings
included. Every HTTP exchange gets at most the time that is left (:meth:`CallBudget.http_timeout`), and
the readers check :meth:`CallBudget.check` between chunks and events.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import RequestTimeout

__all__ = ["MAX_SERVER_REQUESTS", "CallBudget"]

#: A call answers at most this many requests (``ping``) the server sends on its streams; later ones are ignored.
MAX_SERVER_REQUESTS = 100


@dataclass
class CallBudget:
    """The deadline of one call (``timeout`` seconds from its start) and what it has answered so far."""

    timeout: float
    host: str
    deadline: float = 0.0
    server_requests: int = field(default=0)

    def __post_init__(self) -> None:
        if not self.deadline:
            self.deadline = time.monotonic() + self.timeout

    def remaining(self) -> float:
        """Seconds left before the deadline (may be negative)."""
        return self.deadline - time.monotonic()

    def expired(self) -> RequestTimeout:
        """The error for a call that ran out of time."""
        return RequestTimeout(
            f"No complete reply from {self.host} within {self.timeout:g} s (the timeout bounds the whole call: "
            "retries, waits and slow or chatty replies included)."
        )

    def check(self) -> None:
        """Raise :class:`~devknow_jupyter.errors.RequestTimeout` once the deadline has passed."""
        if self.remaining() <= 0:
            raise self.expired()

    def allows_wait(self, seconds: float) -> bool:
        """Whether waiting ``seconds`` (a backoff, a ``Retry-After``) still leaves time for another try."""
        return seconds < self.remaining()

    def may_answer(self) -> bool:
        """Count one server request; False once :data:`MAX_SERVER_REQUESTS` have been answered."""
        if self.server_requests >= MAX_SERVER_REQUESTS:
            return False
        self.server_requests += 1
        return True

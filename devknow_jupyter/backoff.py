"""Skipping an unreachable service for a while, so that offline calls answer in milliseconds.

When a call could not reach the service (DNS failure, refused connection, connect or read timeout) and the
local index stood in, the next calls would each wait for the network to fail again (about a second with
retries). :class:`ServiceBackoff` remembers the failure: for a pause the service is not tried and the
local index answers at once; the first call after the pause tries the service again. Each failed try
doubles the pause (up to :data:`LONGEST_PAUSE`); any reply from the service ends the back-off.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import DevKnowError, TransportError

__all__ = ["FIRST_PAUSE", "LONGEST_PAUSE", "BackoffState", "ServiceBackoff"]

#: Seconds the service is skipped after the first failure to reach it.
FIRST_PAUSE = 15.0
#: The longest pause, however often the service failed in a row.
LONGEST_PAUSE = 300.0


@dataclass(frozen=True)
class BackoffState:
    """Where a back-off stands: since when the service is unreachable (epoch seconds), when it is tried next
    (epoch seconds), the error it failed with, and how many tries in a row failed."""

    down_since: float
    next_try: float
    reason: str
    failures: int

    def seconds_to_next_try(self, now: float | None = None) -> float:
        """Seconds until the next try (0 once the pause is over)."""
        return max(0.0, self.next_try - (time.time() if now is None else now))


class ServiceBackoff:
    """The pause after a failure to reach the service. Thread-safe.

    Args:
        first_pause: Seconds skipped after the first failure (0 turns the back-off off).
        longest_pause: The upper bound of the doubling pauses.
    """

    def __init__(self, first_pause: float = FIRST_PAUSE, longest_pause: float = LONGEST_PAUSE) -> None:
        self.first_pause = max(0.0, float(first_pause))
        self.longest_pause = max(self.first_pause, float(longest_pause))
        self._lock = threading.Lock()
        self._state: BackoffState | None = None
        self._resume_at = 0.0  # time.monotonic() of the next try: immune to clock changes

    def state(self) -> BackoffState | None:
        """The back-off in force, or None while the service is taken to be reachable."""
        with self._lock:
            return self._state

    def skip(self) -> TransportError | None:
        """Within the pause: the error a skipped call ends with (it says when the service is tried next).
        None when the service should be tried (no failure, or the pause is over)."""
        with self._lock:
            state = self._state
            if state is None or time.monotonic() >= self._resume_at:
                return None
            wait = self._resume_at - time.monotonic()
        message = f"{state.reason}; not tried again for {_seconds(wait)}"
        return TransportError(message, unreachable=True)

    def failed(self, exc: BaseException) -> None:
        """A try failed to reach the service: start the pause, or double it."""
        if self.first_pause <= 0:
            return
        reason = str(exc).strip().rstrip(".") or type(exc).__name__
        with self._lock:
            failures = self._state.failures + 1 if self._state is not None else 1
            pause = min(self.longest_pause, self.first_pause * 2 ** (failures - 1))
            since = self._state.down_since if self._state is not None else time.time()
            self._resume_at = time.monotonic() + pause
            self._state = BackoffState(since, time.time() + pause, reason, failures)

    def call(self, call: Callable[[], Any], *, watching: bool) -> Any:
        """``call`` on the service, unless it is being skipped after a failure to reach it (the caller's local
        index then answers at once); a failure to reach it starts or lengthens that pause, a reply ends it.
        ``watching``: whether the pause applies at all (only while a local index stands in)."""
        skipped = self.skip() if watching else None
        if skipped is not None:
            raise skipped
        try:
            value = call()
        except DevKnowError as exc:
            if watching and isinstance(exc, TransportError) and exc.unreachable:
                self.failed(exc)
            else:
                self.reached()  # the server's own refusal: it is there
            raise
        self.reached()
        return value

    def reached(self) -> None:
        """The service replied: try it on every call again."""
        with self._lock:
            self._state = None


def _seconds(value: float) -> str:
    return f"{max(1, round(value))} s"

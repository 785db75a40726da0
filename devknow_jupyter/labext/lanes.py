"""Worker lanes for the server extension: blocking work off tornado's event loop, bounded, under a deadline.

Each :class:`Lane` is a fixed set of threads with a bounded waiting line. The handlers keep cheap work
(status, building the client) in a lane of its own, so it never waits behind calls to a slow service; a
request that would overfill a lane is refused at once with :class:`ServerBusy` (503) instead of queueing
without bound; and every job carries its request's :class:`Deadline`, which counts the time spent waiting
for a worker, so a request never outlives ``c.DevKnowServer.timeout`` by its time in the queue.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, TypeVar

from ..errors import DevKnowError, RequestTimeout

__all__ = ["Deadline", "Lane", "ServerBusy"]

T = TypeVar("T")
#: How much lower a worker process's CPU priority is than the server's (``nice``; POSIX only).
WORKER_NICENESS = 10


class ServerBusy(DevKnowError):
    """A lane of the server extension is full: the request was refused rather than queued (HTTP 503)."""

    #: Seconds after which a refused request may try again (the reply's ``Retry-After``).
    retry_after = 2


class Deadline:
    """When one request must be answered: ``seconds`` after it arrived, queue time included."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.waited = 0.0  # seconds spent waiting for a free worker, over every lane

    def left(self) -> float:
        """Seconds left before the deadline (zero or less once it has passed)."""
        return self.end - time.monotonic()

    def expired(self) -> RequestTimeout:
        """The error for a request whose deadline passed."""
        waiting = f" ({self.waited:.1f} s of it waiting for a free worker)" if self.waited >= 0.05 else ""
        return RequestTimeout(
            f"No reply within {self.seconds:g} s{waiting}.",
            hint="The documentation service is slow or this server is busy: try again, or raise "
            "c.DevKnowServer.timeout.",
        )


class Lane:
    """``workers`` threads (or, with ``processes``, child processes) and room for ``max_waiting`` more jobs;
    a job beyond that raises :class:`ServerBusy`.

    A process lane is for CPU-bound work such as rendering a whole page: in a thread it would hold the GIL
    and slow the event loop and every other worker thread of the Jupyter server with it. Its calls and their
    arguments must pickle (module-level functions, the result models).
    """

    def __init__(self, name: str, workers: int, max_waiting: int, *, processes: bool = False) -> None:
        self.name = name
        self.workers = max(1, int(workers))
        self.max_waiting = max(0, int(max_waiting))
        self.processes = processes
        self._lock = threading.Lock()
        self._held = 0  # jobs admitted and not finished: running, or waiting for a worker
        self._executor = self._new_executor()

    async def run(self, deadline: Deadline, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)`` on one of this lane's workers, awaited until ``deadline``.

        Raises :class:`ServerBusy` when the lane is full (or its worker process died) and
        ``deadline.expired()`` when the deadline passes, waiting or running (a job still waiting then never
        starts; one running finishes unseen).
        """
        with self._lock:
            if self._held >= self.workers + self.max_waiting:
                raise ServerBusy(
                    f"This server is busy: {self._held} requests are already running or waiting for "
                    f"the {self.name} workers.",
                    hint="Try again in a moment (c.DevKnowServer.workers and max_waiting set the limits).",
                )
            self._held += 1
        queued, executor = time.monotonic(), self._executor
        try:
            try:
                future = executor.submit(_before_deadline, deadline.end, call, args, kwargs)
            except BrokenExecutor:  # a worker process died since the last job: this one never ran, so try anew
                executor = self._replace(executor)
                future = executor.submit(_before_deadline, deadline.end, call, args, kwargs)
        except BaseException:
            self._release()
            raise
        future.add_done_callback(self._release)  # also when cancelled while waiting
        try:
            started, value = await asyncio.wait_for(asyncio.wrap_future(future), max(0.0, deadline.left()))
        except asyncio.TimeoutError:
            if future.cancelled():  # it never left the queue
                deadline.waited += time.monotonic() - queued
            raise deadline.expired() from None
        except BrokenExecutor:
            raise self._lost(executor) from None
        deadline.waited += started - queued
        if started >= deadline.end:
            raise deadline.expired()
        return value

    def _new_executor(self) -> Executor:
        if self.processes:  # spawn: forking a process that runs threads can copy a held lock into the child
            context = multiprocessing.get_context("spawn")
            return ProcessPoolExecutor(max_workers=self.workers, mp_context=context, initializer=_lower_priority)
        return ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=f"devknow-{self.name}")

    def _replace(self, broken: Executor) -> Executor:
        """The executor to use instead of ``broken``, one of whose worker processes died (killed, out of memory)."""
        with self._lock:
            if self._executor is broken:  # not replaced already by another request that saw it break
                self._executor = self._new_executor()
            executor = self._executor
        broken.shutdown(wait=False, cancel_futures=True)
        return executor

    def _lost(self, broken: Executor) -> ServerBusy:
        """The error for a job whose worker process died while it ran; new workers start for the next job."""
        self._replace(broken)
        return ServerBusy(
            f"A {self.name} worker stopped before it finished.", hint="Try again: a new worker starts for it."
        )

    def _release(self, *_: Any) -> None:
        with self._lock:
            self._held -= 1

    def close(self) -> None:
        """Stop the workers: jobs still waiting are cancelled, running ones finish unseen (the server is stopping)."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def _lower_priority() -> None:
    """In a worker process: yield the CPU to the Jupyter server's own process (its event loop) when both want it."""
    if hasattr(os, "nice"):
        os.nice(WORKER_NICENESS)


def _before_deadline(end: float, call: Callable[..., T], args: tuple, kwargs: dict) -> tuple[float, T | None]:
    """When the job started and ``call``'s value, not called when it starts after ``end`` (a ``time.monotonic``
    reading: the clock is the system's, the same in a worker process)."""
    started = time.monotonic()
    return started, (None if started >= end else call(*args, **kwargs))

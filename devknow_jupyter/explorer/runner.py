"""The explorer's request runner: requests run on worker threads, and the newest one wins.

A request is a ``job`` that fetches (off the kernel thread) and returns an ``apply`` callable that shows
the result. ``apply`` runs only while its request is still the newest: a reply that arrives after a newer
request, or after :meth:`RequestRunner.supersede` (the user went back), is dropped; what it fetched stays
in the client's cache. No widgets here; the runner knows nothing about what a request is for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures

#: A request: fetch (on a worker thread), then return what shows the result.
Job = Callable[[], Callable[[], None]]


class RequestRunner:
    """Runs jobs on a small thread pool; only the newest job's ``apply`` runs.

    Args:
        on_error: Called (with the lock held) with what the newest job or its ``apply`` raised.
        workers: Worker threads (a slow request must not hold up the next one).
        lock: The lock that ``apply`` and ``on_error`` run under; share it to guard the caller's state.
    """

    def __init__(
        self,
        on_error: Callable[[BaseException], None],
        *,
        workers: int = 2,
        lock: threading.RLock | None = None,
        thread_name: str = "devknow-explorer",
    ) -> None:
        self.lock = lock if lock is not None else threading.RLock()
        self._on_error = on_error
        self._workers = workers
        self._thread_name = thread_name
        self._ticket = 0  # the newest request; replies for older ones are dropped
        self._pending: Hashable | None = None  # the key of the newest request in flight
        self._futures: set[Future] = set()
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    @property
    def pending(self) -> Hashable | None:
        """The key of the newest request while it is in flight, else None."""
        return self._pending

    @property
    def busy(self) -> bool:
        """True while any request (also a superseded one) is still running."""
        with self.lock:
            return any(not future.done() for future in self._futures)

    def submit(self, key: Hashable, job: Job, *, wait: bool = False) -> bool:
        """Run ``job`` (on this thread when ``wait``); False, and nothing runs, when ``key`` is in flight.

        ``key`` names what is asked for: asking again for what the newest request in flight asks for
        does nothing (a double click, a second Enter). Raises RuntimeError once closed.
        """
        with self.lock:
            if self._closed:
                raise RuntimeError("This explorer is closed.")
            if self._pending == key:
                return False
            self._ticket += 1
            ticket = self._ticket
            self._pending = key
        if wait:
            self._work(ticket, job)
            return True
        future = self._executor().submit(self._work, ticket, job)
        with self.lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)
        return True

    def supersede(self) -> None:
        """Drop the replies of the requests in flight (they still finish, and fill the cache)."""
        with self.lock:
            self._ticket += 1
            self._pending = None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the requests in flight are done (for scripts and tests). False on timeout."""
        with self.lock:
            pending = list(self._futures)
        if not pending:
            return True
        _done, not_done = wait_futures(pending, timeout=timeout)
        return not not_done

    def close(self) -> None:
        """Refuse new requests and stop the worker threads (running requests end on their own)."""
        with self.lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _work(self, ticket: int, job: Job) -> None:
        try:
            apply = job()
        except BaseException as exc:  # reported through on_error, if still the newest
            with self.lock:
                if ticket == self._ticket:
                    self._pending = None
                    self._on_error(exc)
            return
        with self.lock:
            if ticket != self._ticket:
                return
            self._pending = None
            try:
                apply()
            except BaseException as exc:
                self._on_error(exc)

    def _forget(self, future: Future) -> None:
        with self.lock:
            self._futures.discard(future)

    def _executor(self) -> ThreadPoolExecutor:
        with self.lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix=self._thread_name)
            return self._pool

"""The offline copy: documents fetched from the live service, saved to the on-disk store so that the local
index can search them when the service cannot be reached (``DevKnowClient(offline_store=True)``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from typing import Any

from .models import Document

__all__ = ["OfflineCopy"]


class OfflineCopy:
    """Saves documents to the default :class:`~devknow_jupyter.local.store.DocumentStore`, off the caller's thread.

    ``notices``: the list a failure to save is reported on (the client's ``notices``); saving never fails a
    fetch. With ``enabled=False`` nothing is saved. Thread-safe; the store is opened on the first save.
    """

    def __init__(self, notices: list[str], *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._notices = notices
        self._store: Any = None
        self._writer: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._lock = threading.Lock()
        self._closed = False

    def keep(self, documents: Iterable[Document]) -> None:
        """Save ``documents`` in the background (in order with earlier saves); nothing once closed."""
        if not self.enabled:
            return
        docs = list(documents)
        with self._lock:
            if self._closed:
                return
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="devknow-store")
            # The SQLite write happens off the caller's thread: a fetch returns once its reply is parsed.
            # One worker keeps the writes in order, so waiting for the last one waits for them all.
            self._pending = self._writer.submit(self._write, docs)

    def wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the saves under way (pages just fetched become searchable)."""
        pending = self._pending
        if pending is not None:
            futures_wait([pending], timeout=timeout)

    def close(self) -> None:
        """Finish the saves under way, then close the store. Safe to call twice."""
        with self._lock:
            self._closed = True
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)  # documents fetched are saved before the store closes
        if self._store is not None:
            self._store.close()

    def _open_store(self) -> Any:
        with self._lock:
            if self._store is None:
                from .local.store import DocumentStore

                self._store = DocumentStore.open_default()
            return self._store

    def _write(self, documents: list[Document]) -> None:
        try:
            self._open_store().add(documents)
        except Exception as exc:  # the offline copy is a convenience; never fail a fetch for it
            self._notices.append(f"Could not save documents offline: {exc}")

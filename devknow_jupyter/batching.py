"""Fetching documents by name in batches, as :meth:`DevKnowClient.get_documents
<devknow_jupyter.DevKnowClient.get_documents>` does: at most 20 names a ``get`` request, several calls
in parallel, each document cached under its name as it arrives.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor

from .cache import ResultCache, cache_key
from .errors import DevKnowError, DocumentNotFoundError, ToolError
from .models import Document, Documents
from .tools import MAX_NAMES_PER_CALL

__all__ = ["DocumentBatcher"]


class DocumentBatcher:
    """Documents by name through ``get`` (one backend ``get`` of at most 20 names), cached in ``cache`` under ``scope``.

    Thread-safe; its worker threads start on the first fetch of more than one batch.
    """

    def __init__(
        self,
        get: Callable[[list[str]], Documents],
        cache: ResultCache,
        scope: Hashable,
        max_workers: int,
    ) -> None:
        self._get = get
        self._cache = cache
        self._scope = scope
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def cached(self, names: list[str]) -> dict[str, Document]:
        """The documents of ``names`` the cache holds, by name."""
        found = {}
        for name in names:
            cached = self._cache.get(cache_key(self._scope, "document", name))
            if cached is not None:
                found[name] = cached
        return found

    def fetch(self, names: list[str]) -> dict[str, Document]:
        """The documents of ``names`` the server has, by name (unknown names are left out).

        The first error of a batch is raised once every batch has ended; the documents of the other
        batches are cached by then.
        """
        batches = [names[i : i + MAX_NAMES_PER_CALL] for i in range(0, len(names), MAX_NAMES_PER_CALL)]
        if not batches:
            return {}
        if len(batches) == 1:  # the common case stays on the calling thread (prompt Ctrl-C)
            return self._fetch_batch(batches[0])
        futures = [self._executor().submit(self._fetch_batch, batch) for batch in batches]
        fetched: dict[str, Document] = {}
        error: BaseException | None = None
        try:
            for future in futures:
                try:
                    fetched.update(future.result())
                except DevKnowError as exc:
                    error = error or exc
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        if error is not None:
            raise error  # the documents of the other batches are cached already
        return fetched

    def close(self) -> None:
        """Stop the worker threads; calls still queued are cancelled."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _fetch_batch(self, names: list[str]) -> dict[str, Document]:
        try:
            docs = list(self._get(names))
        except DocumentNotFoundError as exc:  # the backend told the unknown names apart already (REST)
            docs = list(exc.documents or Documents())
        except ToolError as exc:
            if not exc.not_found:  # decided where the reply was read (transport, local or REST backend)
                raise
            if len(names) > 1:
                # The server failed the whole batch for an unknown name: split to keep the known ones.
                middle = len(names) // 2
                return {**self._fetch_batch(names[:middle]), **self._fetch_batch(names[middle:])}
            return {}
        by_name = {doc.name: doc for doc in docs}
        if len(docs) == len(names) and not set(names) <= set(by_name):
            by_name = dict(zip(names, docs, strict=True))  # renamed by the server; order is kept
        result = {name: by_name[name] for name in names if name in by_name}
        for name, doc in result.items():
            self._cache.set(cache_key(self._scope, "document", name), doc)
        return result

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix="devknow")
            return self._pool

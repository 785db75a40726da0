"""``DocumentStore``: documents fetched from the live service, kept on disk for offline search.

:class:`~devknow_jupyter.DevKnowClient` adds every document it fetches from a remote server here, and
searches here when the server cannot be reached. The store lives in the default index (see
:mod:`.paths`), so ``DevKnowClient("local")`` finds these documents too. Only documents are stored:
never a key, a token or the endpoint they came from.

The store is bounded, as a hostile or merely generous upstream could otherwise fill the disk: its pages take
at most ``$DEVKNOW_OFFLINE_STORE_MB`` on disk (default :data:`STORE_MB`; their text, passages, term counts and
full-text entries, estimated), the least recently fetched pages going first, and a page whose text is over
``$DEVKNOW_OFFLINE_PAGE_MB`` (default :data:`PAGE_MB`) is not kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigurationError
from ..models import Document
from .index import IndexReport, LocalIndex
from .paths import default_index_path

__all__ = ["FETCHED", "PAGE_MB", "STORE_MB", "DocumentStore", "store_limits"]

#: The origin recorded for documents fetched from a live server.
FETCHED = "fetched"
#: The default limits: the fetched pages on disk in all (MB), and one page's text.
STORE_MB = 256
PAGE_MB = 4
_MB = 1024 * 1024


def store_limits() -> tuple[int, int]:
    """The store's limits in bytes, ``(all pages, one page)``, from ``$DEVKNOW_OFFLINE_STORE_MB`` and
    ``$DEVKNOW_OFFLINE_PAGE_MB`` (megabytes; 0 keeps nothing). A value that is not a number is a
    :class:`~devknow_jupyter.errors.ConfigurationError`."""
    return _megabytes("DEVKNOW_OFFLINE_STORE_MB", STORE_MB), _megabytes("DEVKNOW_OFFLINE_PAGE_MB", PAGE_MB)


def _megabytes(variable: str, default: int) -> int:
    text = os.environ.get(variable, "").strip()
    try:
        value = float(text) if text else float(default)
    except ValueError:
        value = -1.0
    if not 0 <= value < 2**40:  # NaN and inf fail this too
        raise ConfigurationError(f"{variable} must be a number of megabytes (it is {text[:40]!r}).")
    return int(value * _MB)


def _text_bytes(data: dict[str, Any]) -> int:
    """The size the store counts for a document: its text fields in UTF-8."""
    fields = ("name", "uri", "title", "description", "content")
    return sum(len(str(data.get(key) or "").encode("utf-8", "surrogatepass")) for key in fields)


class DocumentStore:
    """Fetched documents in a :class:`~.index.LocalIndex`, searchable like any indexed page."""

    def __init__(self, index: LocalIndex, *, max_bytes: int | None = None, max_page_bytes: int | None = None) -> None:
        """``max_bytes``: all stored pages on disk; ``max_page_bytes``: one page's text (default: store_limits())."""
        self.index = index
        if max_bytes is None or max_page_bytes is None:
            default_total, default_page = store_limits()
            max_bytes = default_total if max_bytes is None else max_bytes
            max_page_bytes = default_page if max_page_bytes is None else max_page_bytes
        self.max_bytes = max_bytes
        self.max_page_bytes = max_page_bytes

    @classmethod
    def open_default(cls) -> DocumentStore:
        """The store in the user cache dir (``$DEVKNOW_CACHE_DIR``, else the XDG cache dir)."""
        from .backend import open_cache_index

        # The kernel mostly writes here: a small page cache and no mmap keep its memory flat.
        return cls(open_cache_index(default_index_path(), cache_mb=4))

    def add(self, documents: Iterable[Document | dict[str, Any]]) -> IndexReport:
        """Keep these documents (models or service-shaped dicts); unchanged ones are not rewritten but count as
        used. A page over :attr:`max_page_bytes` is left out (in ``skipped``); then the least recently used
        pages go until the store is within :attr:`max_bytes` (counted in ``removed``)."""
        kept, too_large = [], []
        for item in documents:
            data = item.to_dict() if isinstance(item, Document) else dict(item)
            size = _text_bytes(data)
            (kept if size <= self.max_page_bytes else too_large).append((data, size))
        report = self.index.add_documents([data for data, _ in kept], origin=FETCHED)
        for data, size in too_large:
            reason = f"too large to keep offline ({size:,} bytes; at most {self.max_page_bytes / _MB:g} MB)"
            report.skipped.append((str(data.get("name") or "?"), reason))
        names = [str(data.get("name") or "") for data, _ in kept]
        report.removed += self.index.keep_recent(FETCHED, names, self.max_bytes)
        return report

    def search(self, query: str, limit: int = 10) -> dict[str, Any]:
        """Search the stored documents: ``{"results": [{"parent", "id", "content"}]}`` like the service."""
        return {"results": self.index.search(query, limit, origin=FETCHED)}

    def get(self, names: Iterable[str]) -> list[dict[str, str]]:
        """The stored documents with these names, in request order (unknown names are left out)."""
        return self.index.get(names)

    def names(self) -> list[str]:
        """The names of every stored document, sorted."""
        return self.index.names(FETCHED)

    def clear(self) -> int:
        """Forget every stored document; returns how many there were."""
        return self.index.remove_documents(FETCHED)

    def __len__(self) -> int:
        return self.index.count(FETCHED)

    def close(self) -> None:
        """Close the store's database connection. Safe to call twice."""
        self.index.close()

    def __repr__(self) -> str:
        return f"<DocumentStore {self.index.path!r}>"

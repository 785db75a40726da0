"""``DocumentStore``: documents fetched from the live service, kept on disk for offline search.

:class:`~devknow_jupyter.DevKnowClient` adds every document it fetches from a remote server here, and
searches here when the server cannot be reached. The store lives in the default index (see
:mod:`.paths`), so ``DevKnowClient("local")`` finds these documents too. Only documents are stored:
never a key, a token or the endpoint they came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models import Document
from .index import IndexReport, LocalIndex
from .paths import default_index_path

__all__ = ["FETCHED", "DocumentStore"]

#: The origin recorded for documents fetched from a live server.
FETCHED = "fetched"


class DocumentStore:
    """Fetched documents in a :class:`~.index.LocalIndex`, searchable like any indexed page."""

    def __init__(self, index: LocalIndex) -> None:
        self.index = index

    @classmethod
    def open_default(cls) -> DocumentStore:
        """The store in the user cache dir (``$DEVKNOW_CACHE_DIR``, else the XDG cache dir)."""
        from .backend import open_cache_index

        # The kernel mostly writes here: a small page cache and no mmap keep its memory flat.
        return cls(open_cache_index(default_index_path(), cache_mb=4))

    def add(self, documents: Iterable[Document | dict[str, Any]]) -> IndexReport:
        """Keep these documents (models or service-shaped dicts); unchanged ones are not rewritten."""
        return self.index.add_documents(documents, origin=FETCHED)

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

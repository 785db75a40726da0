"""``PackCredits``: which installed pack holds each page name, so a pack's licence line follows its pages.

A page a pack holds may be shown from another copy of the same name: the user's indexed file, which always
wins (installed before the pack, or indexed after it). The ``credits`` table (made on the first pack import)
remembers the pack of every name it brought, so such a page still ends with that pack's licence line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .pages import PageStore

__all__ = ["PackCredits"]

_TABLE = "CREATE TABLE IF NOT EXISTS credits (name TEXT PRIMARY KEY, origin TEXT NOT NULL)"


class PackCredits:
    """The pack origin to credit for each page name of a store."""

    def __init__(self, store: PageStore) -> None:
        self.store = store

    def record(self, origins: Mapping[str, str]) -> None:
        """Credit the names of the database attached as ``pack`` to the origins they get here (``origins``, as
        :meth:`~.index.LocalIndex.import_index` takes them); inside the caller's transaction."""
        db = self.store.db
        db.execute(_TABLE)
        for theirs, ours in origins.items():
            db.execute(
                "INSERT OR REPLACE INTO main.credits (name, origin)"
                " SELECT name, ? FROM pack.documents WHERE origin = ?",
                (ours, theirs),
            )

    def drop(self, origins: Iterable[str]) -> None:
        """Forget the names credited to these origins (inside the caller's transaction)."""
        db = self.store.db
        db.execute(_TABLE)
        db.executemany("DELETE FROM credits WHERE origin = ?", [(origin,) for origin in origins])

    def forget(self, origins: Iterable[str]) -> None:
        """Forget the names credited to these origins (a pack's, when it is removed): one transaction."""
        store = self.store
        with store.failures("write to the local index"), store.locked(), store.transaction():
            self.drop(list(origins))

    def credited_origins(self, names: Iterable[str]) -> dict[str, str]:
        """For each of these documents that exists, the origin to credit: for the user's indexed file, that of
        the pack that holds a page of that name too (when one does); else its own (a pack's, fetched)."""
        store = self.store
        with store.failures("read the local index"):
            found = store.origins(names)
            with store.locked() as db:
                if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'credits'").fetchone():
                    return found  # no pack was ever imported here (or a read-only pack)
                others = [name for name, origin in found.items() if origin == "file"]
                for start in range(0, len(others), 500):
                    part = others[start : start + 500]
                    marks = ",".join("?" * len(part))
                    found.update(db.execute(f"SELECT name, origin FROM credits WHERE name IN ({marks})", part))
            return found

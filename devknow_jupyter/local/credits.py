"""``PackCredits``: which installed pack holds each page name, so a pack's licence line follows its pages.

A page a pack holds may be shown from another copy of the same name: the user's indexed file, which always
wins (installed before the pack, or indexed after it). The ``credits`` table (made on the first pack import)
remembers the pack of every name it brought, so such a page still ends with that pack's licence line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .database import PageDatabase, _reports_failures

__all__ = ["PackCredits"]

_TABLE = "CREATE TABLE IF NOT EXISTS credits (name TEXT PRIMARY KEY, origin TEXT NOT NULL)"


class PackCredits(PageDatabase):
    """The pack origin to credit for each page name."""

    def _record_credits(self, origins: Mapping[str, str]) -> None:
        """Credit the names of the database attached as ``pack`` to the origins they get here (``origins``, as
        :meth:`~.index.LocalIndex.import_index` takes them); inside the caller's transaction."""
        self._db.execute(_TABLE)
        for theirs, ours in origins.items():
            self._db.execute(
                "INSERT OR REPLACE INTO main.credits (name, origin)"
                " SELECT name, ? FROM pack.documents WHERE origin = ?",
                (ours, theirs),
            )

    def _drop_credits(self, origins: Iterable[str]) -> None:
        """Forget the names credited to these origins (inside the caller's transaction)."""
        self._db.execute(_TABLE)
        self._db.executemany("DELETE FROM credits WHERE origin = ?", [(origin,) for origin in origins])

    @_reports_failures("write to the local index")
    def forget_credits(self, origins: Iterable[str]) -> None:
        """Forget the names credited to these origins (a pack's, when it is removed)."""
        with self._lock:
            self._check_open()
            with self._transaction():
                self._drop_credits(list(origins))

    @_reports_failures("read the local index")
    def credited_origins(self, names: Iterable[str]) -> dict[str, str]:
        """For each of these documents that exists, the origin to credit: for the user's indexed file, that of
        the pack that holds a page of that name too (when one does); else its own (a pack's, fetched)."""
        found = self.origins(names)
        with self._lock:
            self._check_open()
            if not self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'credits'").fetchone():
                return found  # no pack was ever imported here (or a read-only pack)
            others = [name for name, origin in found.items() if origin == "file"]
            for start in range(0, len(others), 500):
                part = others[start : start + 500]
                marks = ",".join("?" * len(part))
                found.update(self._db.execute(f"SELECT name, origin FROM credits WHERE name IN ({marks})", part))
        return found

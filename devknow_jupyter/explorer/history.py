"""The explorer's visits: one :class:`HistoryEntry` per search, page or answer, and the back/forward list.

No widgets here: :class:`Visits` is the back/forward list of one explorer, :class:`History` the kernel's
list of every explorer's visits (``_devknow_history`` in the IPython user namespace), which a new explorer
starts from, so Back returns to what an earlier explorer showed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

#: The name of the visit history in the IPython user namespace.
HISTORY_VARIABLE = "_devknow_history"
#: How many visits the history keeps (oldest dropped first).
HISTORY_LIMIT = 100


class HistoryEntry(NamedTuple):
    """One visit: ``kind`` ("search", "document" or "answer"), ``key`` (the query, or the document
    name) and the ``result`` shown (:class:`SearchResults`, :class:`Document` or :class:`Answer`).

    ``source`` is the site filter of a search; ``notice`` a line shown with it (e.g. the quota fallback).
    """

    kind: str
    key: str
    result: Any
    source: str | None = None
    notice: str | None = None

    @property
    def query(self) -> str | None:
        """The query of a search or the question of an answer (None for a document)."""
        return None if self.kind == "document" else self.key

    @property
    def name(self) -> str | None:
        """The document name of a document visit (None otherwise)."""
        return self.key if self.kind == "document" else None

    def same_place(self, other: HistoryEntry | None) -> bool:
        """True when ``other`` visits the same thing (kind, key and filter)."""
        return other is not None and (self.kind, self.key, self.source) == (other.kind, other.key, other.source)

    def label(self) -> str:
        """A short description, e.g. ``search: create a bucket``."""
        return f"{self.kind}: {self.key}" + (f" (site {self.source})" if self.source else "")


class History(list):
    """The visits of the explorers in this kernel, oldest first: a plain list of :class:`HistoryEntry`."""

    limit = HISTORY_LIMIT

    def record(self, entry: HistoryEntry) -> None:
        """Append ``entry``, dropping the oldest visits beyond :attr:`limit`."""
        self.append(entry)
        if len(self) > self.limit:
            del self[: len(self) - self.limit]

    def __repr__(self) -> str:
        shown = ", ".join(entry.label() for entry in self[-3:])
        return f"<History {len(self)} visit{'s' if len(self) != 1 else ''}{': … ' + shown if self else ''}>"


class Visits:
    """One explorer's back/forward list: a browser's history, starting from the kernel's :class:`History`.

    A new visit after going back drops the visits ahead; visiting the place shown again (the same
    search, say) replaces it instead of adding a visit. New visits are also recorded in ``kernel``.
    Not thread-safe: the explorer calls it under its lock.
    """

    def __init__(self, kernel: History | None = None, limit: int = HISTORY_LIMIT) -> None:
        self.kernel = kernel if kernel is not None else History()
        self.limit = limit
        self._stack: list[HistoryEntry] = list(self.kernel[-limit:])
        self.position = len(self._stack) - 1  # -1: nothing visited yet

    @property
    def entries(self) -> list[HistoryEntry]:
        """The visits, oldest first (a copy)."""
        return list(self._stack)

    @property
    def current(self) -> HistoryEntry | None:
        """The visit at the current position, or None before the first."""
        return self._stack[self.position] if self.position >= 0 else None

    @property
    def can_go_back(self) -> bool:
        """True when there is a visit before the current one."""
        return self.position > 0

    @property
    def can_go_forward(self) -> bool:
        """True after going back, until a new visit."""
        return self.position < len(self._stack) - 1

    def visit(self, entry: HistoryEntry) -> bool:
        """Make ``entry`` the current visit; True when it is a new visit (False: it replaced the current)."""
        if entry.same_place(self.current):
            self._stack[self.position] = entry
            return False
        del self._stack[self.position + 1 :]
        self._stack.append(entry)
        if len(self._stack) > self.limit:
            del self._stack[: len(self._stack) - self.limit]
        self.position = len(self._stack) - 1
        self.kernel.record(entry)
        return True

    def step(self, delta: int) -> HistoryEntry | None:
        """Move ``delta`` visits (negative: back) and return the visit there; None (and no move) past an end."""
        target = self.position + delta
        if not 0 <= target < len(self._stack):
            return None
        self.position = target
        return self._stack[target]

    def search_before(self, position: int | None = None) -> HistoryEntry | None:
        """The latest search at or before ``position`` (default: the current one): the hits beside a page.

        None when an answer came after it: a question replaces the hits of the search before it (its pages,
        and the pages opened from its references, show no hits of another question beside them).
        """
        end = self.position if position is None else position
        for entry in reversed(self._stack[: end + 1]):
            if entry.kind in ("search", "answer"):
                return entry if entry.kind == "search" else None
        return None

    def __len__(self) -> int:
        return len(self._stack)


def kernel_history(namespace: dict[str, Any] | None) -> History:
    """The kernel's ``_devknow_history`` (created if missing), or a private one outside IPython."""
    if namespace is None:
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:  # pragma: no cover - IPython is a dependency
            shell = None
        namespace = getattr(shell, "user_ns", None)
    if namespace is None:
        return History()
    history = namespace.get(HISTORY_VARIABLE)
    if not isinstance(history, History):
        history = History(entry for entry in (history or []) if isinstance(entry, HistoryEntry))
        namespace[HISTORY_VARIABLE] = history
    return history

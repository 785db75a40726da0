"""What an indexing run skipped, remembered for the next run of the same folder.

A file skipped for its content (a duplicate name, no front matter where the folder's pages have it, a broken
front matter block) and unchanged since (same size and mtime) is neither read nor reported again, while
nothing else in the folder changed before it in the run: a duplicate name may be free once its page is gone.
The records live in the index's meta as ``{file: [mtime_ns, size, skips]}``.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

__all__ = ["SkipMemory"]


class _Report(Protocol):
    skipped_before: int

    @property
    def changed(self) -> int: ...


class SkipMemory:
    """The skip records of one folder: those of the last run (``saved``, JSON) and those of this run."""

    def __init__(self, saved: str | None) -> None:
        self.saved = saved or "{}"
        try:
            before = json.loads(self.saved)
        except ValueError:
            before = {}
        self._before: dict[str, Any] = before if isinstance(before, dict) else {}
        self._now: dict[str, list[int]] = {}

    def as_before(self, file: str, stat: Any, report: _Report) -> bool:
        """Whether ``file`` was skipped last time, is unchanged and nothing in the folder changed so far: then its
        skips are counted in ``report.skipped_before`` (not listed) and it need not be read."""
        record = self.record(file, stat)
        if record is None or report.changed:
            return False
        self._now[file] = record
        report.skipped_before += record[2]
        return True

    def record(self, file: str, stat: Any) -> list[int] | None:
        """The last run's record of ``file``, when the file is unchanged since; else None."""
        record = self._before.get(file)
        if isinstance(record, list) and len(record) == 3 and record[:2] == [stat.st_mtime_ns, stat.st_size]:
            return record
        return None

    def mark(self, file: str, stat: Any, count: int) -> None:
        """Remember that ``count`` skips came from ``file`` as it is now."""
        if count > 0:
            self._now[file] = [stat.st_mtime_ns, stat.st_size, count]

    def dumps(self) -> str:
        """This run's records, as JSON for the index's meta."""
        return json.dumps(self._now, sort_keys=True)

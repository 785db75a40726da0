"""``IndexReport``: what one indexing run (or pack import) did, and its skips shown as lines for people."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["IndexReport", "skip_kind"]


@dataclass
class IndexReport:
    """What one indexing run did.

    ``added``/``updated`` documents were (re-)chunked; ``unchanged`` ones were not touched;
    ``removed`` ones are gone (their file was deleted); ``skipped`` lists ``(path, reason)`` for files
    that could not be indexed; ``warnings`` lists ``(path, note)`` for files indexed with a repair
    (e.g. invalid UTF-8 replaced). ``chunks`` counts passages written. ``skipped_before`` counts the skips of
    files unchanged since the run that reported them (not read, nor listed, again).
    """

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0
    skipped_before: int = 0

    @property
    def changed(self) -> int:
        """Documents added, updated or removed."""
        return self.added + self.updated + self.removed

    def summary(self) -> str:
        """One line: ``3 added, 1 updated, 0 removed, 40 unchanged, 1 skipped in 0.21 s``."""
        return (
            f"{self.added} added, {self.updated} updated, {self.removed} removed, {self.unchanged} unchanged, "
            f"{len(self.skipped)} skipped in {self.seconds:.2f} s"
        )

    def merge(self, other: IndexReport) -> None:
        """Add ``other``'s counts and lists to this report."""
        self.added += other.added
        self.updated += other.updated
        self.removed += other.removed
        self.unchanged += other.unchanged
        self.skipped += other.skipped
        self.warnings += other.warnings
        self.seconds += other.seconds
        self.skipped_before += other.skipped_before

    def skip_lines(self, *, verbose: bool = False) -> list[str]:
        """``skipped`` as lines to show: one per kind of reason with a count where several share it (say
        2,502 duplicate names), each file with ``verbose``, when alone of its kind, or when it was refused for
        what it is (a device, a symlink leading out, unreadable): those are each worth a look."""
        kinds: dict[str, list[tuple[str, str]]] = {}
        for path, reason in self.skipped:
            kinds.setdefault(skip_kind(reason), []).append((path, reason))
        lines = []
        for items in kinds.values():
            if verbose or len(items) == 1 or items[0][1].startswith(_REFUSALS):
                lines += [f"skipped {path}: {reason}" for path, reason in items]
                continue
            unit = "lines" if all(_LINE_OF_FILE.search(path) for path, _ in items) else "files"
            first, why = items[0]
            lines.append(f"skipped {len(items):,} {unit} alike, the first {first}: {why}")
        return lines


_REFUSALS = ("not a regular file", "a symlink", "a broken symlink", "cannot read")  # reading.py's refusals
_LINE_OF_FILE = re.compile(r":\d+$")  # "pages.jsonl:12": one line of a JSON Lines file


def skip_kind(reason: str) -> str:
    """The kind of a skip's reason, without the names and paths it quotes: ``duplicate name``, ``empty file``."""
    return re.split(r"[:']", reason, maxsplit=1)[0].strip() or reason

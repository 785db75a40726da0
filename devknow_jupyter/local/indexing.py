"""``Indexer``: indexing runs over folders of Markdown and JSON Lines files, and documents from elsewhere.

Reindexing a folder is incremental (a file whose size and mtime are unchanged is not read; one whose
bytes hash the same is not re-chunked; deleted files are removed; a file skipped before and unchanged since
is not read or reported again while nothing else in the folder changed) and transactional: documents are
written in batches, each batch one transaction with each document's row, passages and index entries,
so a crash or Ctrl-C at any moment leaves the index consistent, and the next run picks up where the
last committed batch ended. What a run did is an :class:`~.report.IndexReport`. The indexer writes through
a :class:`~.pages.PageStore` and, after a run that changed pages, builds the ranker snapshot at once.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..models import Document, name_to_uri
from .chunking import ChunkSizes, first_heading
from .documents import (
    LOCAL_PREFIX,
    PageMaker,
    content_digest,
    fetched_fields,
    front_matter_date,
    has_front_matter,
    jsonl_name,
    title_from_name,
)
from .frontmatter import page_date
from .pages import Batch, Page, PageStore, duplicate_reason
from .reading import (
    JSONL_MARK,
    JSONL_SUFFIXES,
    Unreadable,
    jsonl_documents,
    open_document,
    size_text,
    source_file,
    walk_folder,
)
from .records import FileRecords, Known
from .report import IndexReport
from .skips import SkipMemory
from .snapshot import RankerSnapshot

__all__ = ["BATCH_DOCUMENTS", "BATCH_SECONDS", "HOUSEKEEPING_NAMES", "MAX_FILE_BYTES", "Indexer", "ProgressHook"]

#: Files larger than this are skipped (with a reason): no documentation page is this big.
MAX_FILE_BYTES = 4 * 1024 * 1024
# Commit at least this often while indexing, so an interrupted run keeps most of its work.
BATCH_DOCUMENTS = 400
BATCH_SECONDS = 2.0

#: Markdown files with these names (any case, any suffix) and no front matter, in a folder whose pages mostly
#: have it, describe the folder rather than document anything: they are skipped (``not documentation``).
HOUSEKEEPING_NAMES = frozenset(
    {
        "readme",
        "manifest",
        "license",
        "licence",
        "changelog",
        "changes",
        "contributing",
        "code_of_conduct",
        "security",
        "notice",
        "authors",
        "copying",
    }
)
# The meta key of a folder's content skips: {file: [mtime_ns, size, skips]}, so an unchanged file is not re-read.
_SKIPS_KEY = "skipped_files:{root}"

ProgressHook = Callable[[str, int, int], None]


class Indexer:
    """Indexing runs into a store: folders (:meth:`add_folder`, :meth:`refresh_folders`) and documents given
    (:meth:`add_documents`).

    Args:
        store: Where the pages are written.
        snapshot: The ranker, built after a run that changed pages (not on the next process's first search).
        sizes: Passage sizes for chunking.
        max_file_bytes: Larger files are skipped with a reason.
        batch_documents: While indexing a folder, commit after this many written documents (and at least
            every two seconds), so an interrupted run keeps its committed batches.
    """

    def __init__(
        self,
        store: PageStore,
        snapshot: RankerSnapshot,
        *,
        sizes: ChunkSizes,
        max_file_bytes: int = MAX_FILE_BYTES,
        batch_documents: int = BATCH_DOCUMENTS,
    ) -> None:
        self.store = store
        self.snapshot = snapshot
        self.maker = PageMaker(sizes)
        self.records = FileRecords(store)
        self.max_file_bytes = max_file_bytes
        self.batch_documents = max(1, batch_documents)
        # The state of the run under way (add_folder sets it): the folder's symlink rule, its skip records,
        # the README-like files held back, and the open batch.
        self._follow_symlinks = False
        self._skips = SkipMemory(None)
        self._held: list[tuple[Path, Known | None]] = []
        self._batch = Batch(store, self.batch_documents, BATCH_SECONDS)

    def add_folder(
        self,
        folder: str | os.PathLike[str],
        *,
        exclude: Iterable[str] = (),
        progress: ProgressHook | None = None,
        follow_symlinks: bool | None = None,
    ) -> IndexReport:
        """Index (or reindex) the Markdown and JSON Lines files under ``folder``, or one ``.jsonl`` file;
        remember it for :meth:`refresh_folders`.

        Only files whose size, mtime and then content changed are re-chunked; documents whose files are
        gone are removed. ``exclude`` holds glob patterns of relative paths to leave out (e.g.
        ``"README.md"``, ``"drafts/*"``). ``progress(path, done, total)`` is called after each file.
        Only regular files inside the folder are read; ``follow_symlinks=True`` also reads symlinked files
        and folders that lead elsewhere (never devices, FIFOs or sockets), and is remembered for the folder
        (``None``: as last time). Every file left out is in ``report.skipped`` with its reason.
        """
        with self.store.failures(f"index {folder}"):
            return self._add_folder(folder, exclude, progress, follow_symlinks)

    def _add_folder(
        self,
        folder: str | os.PathLike[str],
        exclude: Iterable[str],
        progress: ProgressHook | None,
        follow_symlinks: bool | None,
    ) -> IndexReport:
        store = self.store
        started = time.perf_counter()
        root = _indexed_root(folder)
        report = IndexReport()
        files = [root]  # one JSON Lines file, unless root is a folder
        follow_key = f"follow_symlinks:{root}"
        if follow_symlinks is None:
            follow_symlinks = store.get_meta(follow_key) == "1"
        if root.is_dir():
            scan = walk_folder(root, exclude, follow_symlinks=follow_symlinks)
            files = scan.files
            report.skipped += scan.skipped
        with store.locked():
            self._follow_symlinks = follow_symlinks
            if (store.get_meta(follow_key) == "1") != follow_symlinks:
                store.set_meta(follow_key, "1" if follow_symlinks else "0")
            self.records.remember_folder(str(root))
            known = self.records.known()
            # Removals first: a file renamed to take over a deleted file's document name then just works.
            self._remove_missing(root, {str(path) for path in files}, report)
            skips_key = _SKIPS_KEY.format(root=root)
            self._skips, self._held = SkipMemory(store.get_meta(skips_key)), []
            self._index_files(root, files, known, report, progress)
            self.records.folder_indexed(str(root))
            if self._skips.dumps() != self._skips.saved:
                store.set_meta(skips_key, self._skips.dumps())
            self._tidy_after(report)
        report.seconds = time.perf_counter() - started
        return report

    def _tidy_after(self, report: IndexReport) -> None:
        """After a run that changed pages: compact the file and build the ranker."""
        if report.added + report.updated >= 200:
            self.store.optimize()
        elif report.changed:
            self.store.reclaim()
        if report.changed:
            self.store.release_memory()  # the pages written filled the page cache: free it before the ranker's peak
            self.snapshot.current()  # build and store the ranker now, not on the first search of the next process

    def _index_files(
        self,
        root: Path,
        files: list[Path],
        known: dict[str, Known],
        report: IndexReport,
        progress: ProgressHook | None,
    ) -> None:
        with Batch(self.store, self.batch_documents, BATCH_SECONDS) as self._batch:
            for done, path in enumerate(files, 1):
                if path.suffix.lower() in JSONL_SUFFIXES:
                    self._settle_held(root, report)  # Markdown first: a README-like page keeps its name too
                    self._index_jsonl(root, path, known, report)
                else:
                    self._batch.wrote(self._index_file(root, path, known.get(str(path)), report))
                if progress is not None:
                    progress(str(path), done, len(files))
            self._settle_held(root, report)

    def _index_file(
        self, root: Path, path: Path, known: Known | None, report: IndexReport, housekeeping: str = "hold"
    ) -> int:
        """Index one file inside the open transaction; returns 1 when it wrote something.

        ``housekeeping``: what to do with a README-like file (:data:`HOUSEKEEPING_NAMES`): ``"hold"`` it until
        the folder's pages are counted (:meth:`_settle_held`), ``"index"`` it, or ``"drop"`` it when it has no
        front matter (and remove the page it gave before).
        """
        shown = str(path)
        if housekeeping == "hold" and path.stem.lower() in HOUSEKEEPING_NAMES:
            self._held.append((path, known))
            return 0
        kept = " (the version indexed before is kept)" if known is not None else ""
        try:
            with open_document(path, root, follow_symlinks=self._follow_symlinks) as opened:
                stat = opened.stat
                if self._skips.as_before(shown, stat, report):
                    return 0
                unchanged = known is not None and known[1] == stat.st_mtime_ns and known[2] == stat.st_size
                if unchanged and housekeeping != "drop":
                    report.unchanged += 1
                    return 0
                if stat.st_size > self.max_file_bytes:  # said at once; the read below is bounded anyway
                    limit = size_text(self.max_file_bytes)
                    raise Unreadable(f"too large: {size_text(stat.st_size)}, the limit is {limit}")
                raw = opened.read(self.max_file_bytes)
        except Unreadable as exc:
            report.skipped.append((shown, f"{exc}{kept}"))
            return 0
        except OSError as exc:
            report.skipped.append((shown, f"cannot read: {exc.strerror or exc}{kept}"))
            return 0
        if housekeeping == "drop" and not has_front_matter(raw):
            return self._drop_housekeeping(path, known, stat, report)
        if unchanged:
            report.unchanged += 1
            return 0
        digest = hashlib.sha256(raw).hexdigest()
        if known is not None and known[3] == digest:  # touched but not changed: don't re-chunk
            self.records.touched(known[0], stat, front_matter_date(raw))
            report.unchanged += 1
            return 1
        skips = len(report.skipped)
        try:
            page = self.maker.from_file(root, path, raw, report.warnings)
        except Unreadable as exc:
            report.skipped.append((shown, f"{exc}{kept}"))
            self._skips.mark(shown, stat, 1)
            return 0
        wrote = self._write_file_page(page, digest, report, shown, root=str(root), path=shown, stat=stat)
        self._skips.mark(shown, stat, len(report.skipped) - skips)
        return wrote

    def _settle_held(self, root: Path, report: IndexReport) -> None:
        """Index the README-like files held back, or drop those without front matter when most of the folder's
        pages have it (named by their front matter, not after their path)."""
        held, self._held = self._held, []
        if not held:
            return
        paths = {str(path) for path, _ in held}
        rows = [(path, name) for path, name in self.records.markdown_names(str(root)) if path not in paths]
        named = sum(1 for _, name in rows if not name.startswith(LOCAL_PREFIX))
        mode = "drop" if named > len(rows) - named else "index"
        for path, known in held:
            self._batch.wrote(self._index_file(root, path, known, report, housekeeping=mode))

    def _drop_housekeeping(self, path: Path, known: Known | None, stat: Any, report: IndexReport) -> int:
        """Skip a README-like file without front matter, and remove the page it gave before; returns 1 if removed."""
        reason = "not documentation: no front matter, unlike most pages in this folder (add front matter to index it)"
        report.skipped.append((str(path), reason))
        self._skips.mark(str(path), stat, 1)
        if known is None:
            return 0
        self.store.delete(known[0])
        report.removed += 1
        return 1

    def _write_file_page(self, page: Page, digest: str, report: IndexReport, shown: str, **where: Any) -> int:
        """Write a page read from a file and count it; returns 1, or 0 when it was skipped (and reported)."""
        try:
            created = self.store.write(page, "file", digest, **where)
        except Unreadable as exc:
            report.skipped.append((shown, str(exc)))
            return 0
        if created:
            report.added += 1
        else:
            report.updated += 1
        report.chunks += len(page.chunks)
        return 1

    def _index_jsonl(self, root: Path, path: Path, known: dict[str, Known], report: IndexReport) -> None:
        """Index the documents of one JSON Lines file inside the open batch, line by line.

        The file's rows get its mtime and size only once all its lines are written, so an interrupted run
        leaves them looking changed and the next run reads the file again.
        """
        prefix = f"{path}{JSONL_MARK}"
        mine = {key: row for key, row in known.items() if key.startswith(prefix)}
        seen: dict[str, int] = {}
        skips = len(report.skipped)
        try:
            with open_document(path, root, follow_symlinks=self._follow_symlinks) as opened:
                stat = opened.stat
                rows_unchanged = all(row[1] == stat.st_mtime_ns and row[2] == stat.st_size for row in mine.values())
                if rows_unchanged and self._skips.as_before(str(path), stat, report):
                    report.unchanged += len(mine)
                    return
                if rows_unchanged and mine and self._skips.record(str(path), stat) is None:
                    report.unchanged += len(mine)
                    return
                lines = opened.lines(self.max_file_bytes)
                for line in jsonl_documents(lines, limit=self.max_file_bytes, name_of=jsonl_name):
                    where = f"{path}:{line.number}"
                    if line.fields is None:
                        report.skipped.append((where, str(line.reason)))
                        continue
                    name = line.fields["name"]
                    seen[name] = line.number
                    self._batch.wrote(self._index_record(prefix + name, line.fields, mine, root, where, report))
        except Unreadable as exc:
            report.skipped.append((str(path), f"{exc} (the documents indexed from it before are kept)"))
            return
        except OSError as exc:
            report.skipped.append((str(path), f"cannot read: {exc.strerror or exc}"))
            return
        self._skips.mark(str(path), stat, len(report.skipped) - skips)
        for key, row in mine.items():
            if key[len(prefix) :] not in seen:  # a line that is gone (or now bad)
                self.store.delete(row[0])
                report.removed += 1
        self.records.jsonl_read(prefix, stat)

    def _index_record(
        self,
        key: str,
        fields: dict[str, str],
        known: dict[str, Known],
        root: Path,
        where: str,
        report: IndexReport,
    ) -> int:
        """Write one JSON Lines document unless unchanged; returns 1 when it wrote something."""
        name, content = fields["name"], fields["content"]
        title = fields["title"] or first_heading(content) or title_from_name(name)
        uri = fields["uri"] or name_to_uri(name)
        updated_ns, problem = page_date(fields)
        if problem:
            report.warnings.append((where, problem))
        # The date joins the digest only when there is one, so lines without a date keep their old digests.
        parts = (uri, title, fields["description"], content) + ((str(updated_ns),) if updated_ns is not None else ())
        digest = content_digest(*parts)
        row = known.get(key)
        if row is not None and row[3] == digest:
            report.unchanged += 1
            return 0
        if row is None:  # a name new to this file: if another file has it, say so before chunking the page
            taken = self.records.file_with_name(name)
            if taken is not None:
                report.skipped.append((where, duplicate_reason(name, taken)))
                return 0
        page = self.maker.page(name, uri, title, fields["description"], content, updated_ns)
        return self._write_file_page(page, digest, report, where, root=str(root), path=key)

    def _remove_missing(self, root: Path, present: set[str], report: IndexReport) -> None:
        gone = [doc_id for doc_id, path in self.records.under(str(root)) if source_file(path) not in present]
        if not gone:
            return
        with self.store.transaction():
            for doc_id in gone:
                self.store.delete(doc_id)
        report.removed += len(gone)

    def refresh_folders(self, *, progress: ProgressHook | None = None) -> IndexReport:
        """Reindex every remembered folder (incrementally). A folder that is gone is reported, not emptied."""
        report = IndexReport()
        with self.store.failures("read the local index"):
            folders = self.store.folders()
        for folder in folders:
            if not Path(folder).exists():
                report.skipped.append((folder, "folder not found (its documents are kept)"))
                continue
            report.merge(self.add_folder(folder, progress=progress))
        return report

    def add_documents(self, documents: Iterable[Document | dict[str, Any]], origin: str = "fetched") -> IndexReport:
        """Add or update documents given as :class:`~devknow_jupyter.models.Document` or service-shaped dicts.

        Documents with the same content are left alone. A name that belongs to an indexed file keeps the
        file's version (the user's own folder wins) and is reported as skipped. All in one transaction.
        """
        started = time.perf_counter()
        report = IndexReport()
        with self.store.failures("save documents in the local index"):
            pages = []
            for item in documents:
                fields = fetched_fields(item)
                if len(fields) == 2:
                    report.skipped.append(fields)
                else:
                    pages.append(fields)
            with self.store.locked(), self.store.transaction() as db:
                for name, uri, title, description, content, digest in pages:
                    row = db.execute("SELECT sha256, origin FROM documents WHERE name = ?", (name,)).fetchone()
                    if row is not None and row[0] == digest:
                        report.unchanged += 1
                        continue
                    if row is not None and row[1] == "file":
                        report.skipped.append((name, "an indexed file has this name; the file's version is kept"))
                        continue
                    page = self.maker.page(name, uri, title, description, content)
                    try:
                        created = self.store.write(page, origin, digest)
                    except Unreadable as exc:
                        report.skipped.append((name, str(exc)))
                        continue
                    if created:
                        report.added += 1
                    else:
                        report.updated += 1
                    report.chunks += len(page.chunks)
        report.seconds = time.perf_counter() - started
        return report


# -- helpers ---------------------------------------------------------------------------------------


def _indexed_root(folder: str | os.PathLike[str]) -> Path:
    """The resolved folder (or single JSON Lines file) to index; a clear error for anything else."""
    root = Path(folder).expanduser()
    if (root.is_file() and root.suffix.lower() in JSONL_SUFFIXES) or root.is_dir():
        return root.resolve()
    raise ConfigurationError(
        f"Not a folder or a JSON Lines file: {root}",
        hint="Give a folder of Markdown (.md) or JSON Lines (.jsonl) files, or one .jsonl file.",
    )

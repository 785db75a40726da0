"""``FolderIndexing``: indexing runs over folders of Markdown and JSON Lines files, and documents from elsewhere.

Reindexing a folder is incremental (a file whose size and mtime are unchanged is not read; one whose
bytes hash the same is not re-chunked; deleted files are removed; a file skipped before and unchanged since
is not read or reported again while nothing else in the folder changed) and transactional: documents are
written in batches, each batch one transaction with each document's row, passages and index entries,
so a crash or Ctrl-C at any moment leaves the index consistent, and the next run picks up where the
last committed batch ended. What a run did is an :class:`IndexReport`.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..models import DOCUMENT_PREFIX, Document, name_to_uri
from .chunking import ChunkSizes, chunk_markdown, first_heading
from .database import _JSONL_MARK, _duplicate, _Page, _reports_failures, _Skip, _source_file
from .frontmatter import FrontMatterError, page_date, split_front_matter
from .ranker_cache import RankerCache
from .reading import JSONL_SUFFIXES, Unreadable, jsonl_documents, open_document, size_text, walk_folder
from .skips import SkipMemory

#: Files larger than this are skipped (with a reason): no documentation page is this big.
MAX_FILE_BYTES = 4 * 1024 * 1024
LOCAL_PREFIX = DOCUMENT_PREFIX + "local/"
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


class FolderIndexing(RankerCache):
    """Indexing runs: folders (``add_folder``, ``refresh_folders``) and documents given (``add_documents``)."""

    sizes: ChunkSizes
    max_file_bytes: int
    batch_documents: int
    _follow_symlinks = False  # of the folder being indexed (add_folder sets it)

    @_reports_failures("index {0}")
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
        started = time.perf_counter()
        root = _indexed_root(folder)
        report = IndexReport()
        files = [root]  # one JSON Lines file, unless root is a folder
        follow_key = f"follow_symlinks:{root}"
        if follow_symlinks is None:
            follow_symlinks = self.get_meta(follow_key) == "1"
        if root.is_dir():
            scan = walk_folder(root, exclude, follow_symlinks=follow_symlinks)
            files = scan.files
            report.skipped += scan.skipped
        with self._lock:
            self._check_open()
            self._follow_symlinks = follow_symlinks
            if (self.get_meta(follow_key) == "1") != follow_symlinks:
                self.set_meta(follow_key, "1" if follow_symlinks else "0")
            with self._transaction() as db:
                db.execute(
                    "INSERT INTO folders (path, added) VALUES (?, ?) ON CONFLICT (path) DO NOTHING",
                    (str(root), time.time()),
                )
            known = {
                row[0]: row[1:]
                for row in self._db.execute(
                    "SELECT path, id, mtime_ns, size, sha256 FROM documents WHERE path IS NOT NULL"
                )
            }
            # Removals first: a file renamed to take over a deleted file's document name then just works.
            self._remove_missing(root, {str(path) for path in files}, report)
            skips_key = _SKIPS_KEY.format(root=root)
            self._skips, self._held = SkipMemory(self.get_meta(skips_key)), []
            self._index_files(root, files, known, report, progress)
            with self._transaction() as db:
                db.execute("UPDATE folders SET indexed = ? WHERE path = ?", (time.time(), str(root)))
            if self._skips.dumps() != self._skips.saved:
                self.set_meta(skips_key, self._skips.dumps())
            self._tidy_after(report)
        report.seconds = time.perf_counter() - started
        return report

    def _tidy_after(self, report: IndexReport) -> None:
        """After a run that changed pages: compact the file and build the ranker."""
        if report.added + report.updated >= 200:
            self._optimize()
        elif report.changed:
            self._reclaim()
        if report.changed:
            self._release_memory()  # the pages written filled the page cache: free it before the ranker's peak
            self._page_search()  # build and store the ranker now, not on the first search of the next process

    def _index_files(
        self,
        root: Path,
        files: list[Path],
        known: dict[str, tuple[Any, ...]],
        report: IndexReport,
        progress: ProgressHook | None,
    ) -> None:
        db = self._db
        self._batch_started, self._in_batch = time.monotonic(), 0
        db.execute("BEGIN IMMEDIATE")
        try:
            for done, path in enumerate(files, 1):
                if path.suffix.lower() in JSONL_SUFFIXES:
                    self._settle_held(root, report)  # Markdown first: a README-like page keeps its name too
                    self._index_jsonl(root, path, known, report)
                else:
                    self._wrote(self._index_file(root, path, known.get(str(path)), report))
                if progress is not None:
                    progress(str(path), done, len(files))
            self._settle_held(root, report)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")  # this batch is lost; earlier batches are committed and consistent
            raise

    def _wrote(self, count: int) -> None:
        """Count documents written in the open batch; commit it and begin the next when it is due."""
        self._in_batch += count
        due = self._in_batch >= self.batch_documents or time.monotonic() - self._batch_started > BATCH_SECONDS
        if self._in_batch and due:
            self._db.execute("COMMIT")
            self._db.execute("BEGIN IMMEDIATE")
            self._batch_started, self._in_batch = time.monotonic(), 0

    def _index_file(
        self, root: Path, path: Path, known: tuple[Any, ...] | None, report: IndexReport, housekeeping: str = "hold"
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
        if housekeeping == "drop" and not _has_front_matter(raw):
            return self._drop_housekeeping(path, known, stat, report)
        if unchanged:
            report.unchanged += 1
            return 0
        digest = hashlib.sha256(raw).hexdigest()
        if known is not None and known[3] == digest:  # touched but not changed: don't re-chunk
            self._db.execute(
                "UPDATE documents SET mtime_ns = ?, size = ?, updated_ns = ? WHERE id = ?",
                (stat.st_mtime_ns, stat.st_size, _front_matter_date(raw), known[0]),
            )
            report.unchanged += 1
            return 1
        skips = len(report.skipped)
        try:
            page = self._read_page(root, path, raw, report)
        except _Skip as exc:
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
        sql = "SELECT path, name FROM documents WHERE root = ? AND instr(path, ?) = 0"
        rows = [(path, name) for path, name in self._db.execute(sql, (str(root), _JSONL_MARK)) if path not in paths]
        named = sum(1 for _, name in rows if not name.startswith(LOCAL_PREFIX))
        mode = "drop" if named > len(rows) - named else "index"
        for path, known in held:
            self._wrote(self._index_file(root, path, known, report, housekeeping=mode))

    def _drop_housekeeping(self, path: Path, known: tuple[Any, ...] | None, stat: Any, report: IndexReport) -> int:
        """Skip a README-like file without front matter, and remove the page it gave before; returns 1 if removed."""
        reason = "not documentation: no front matter, unlike most pages in this folder (add front matter to index it)"
        report.skipped.append((str(path), reason))
        self._skips.mark(str(path), stat, 1)
        if known is None:
            return 0
        self._delete(known[0])
        report.removed += 1
        return 1

    def _write_file_page(self, page: _Page, digest: str, report: IndexReport, shown: str, **where: Any) -> int:
        """Write a page read from a file and count it; returns 1, or 0 when it was skipped (and reported)."""
        try:
            created = self._write(page, "file", digest, **where)
        except _Skip as exc:
            report.skipped.append((shown, str(exc)))
            return 0
        if created:
            report.added += 1
        else:
            report.updated += 1
        report.chunks += len(page.chunks)
        return 1

    def _read_page(self, root: Path, path: Path, raw: bytes, report: IndexReport) -> _Page:
        if not raw.strip():
            raise _Skip("empty file")
        if b"\x00" in raw[:8192]:
            raise _Skip("binary file (contains NUL bytes), not Markdown")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            # Tolerant: a stray Latin-1 byte should not hide a whole page. Say so in the report.
            text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
            report.warnings.append((str(path), f"invalid UTF-8 at byte {exc.start}; bad bytes shown as U+FFFD"))
        try:
            front = split_front_matter(text)
        except FrontMatterError as exc:
            raise _Skip(str(exc)) from None
        relative = path.relative_to(root).with_suffix("").as_posix()
        name = _document_name(front.get("name"), front.get("uri")) or LOCAL_PREFIX + relative
        body = front.body
        if not body.strip():
            raise _Skip("no Markdown after the front matter")
        title = front.get("title") or first_heading(body) or _title_from_path(path)
        uri = front.get("uri") or (path.as_uri() if name.startswith(LOCAL_PREFIX) else name_to_uri(name))
        updated_ns, problem = page_date(front.meta)
        if problem:
            report.warnings.append((str(path), problem))
        return self._page(name, uri, title, front.get("description"), body, updated_ns)

    def _index_jsonl(self, root: Path, path: Path, known: dict[str, tuple[Any, ...]], report: IndexReport) -> None:
        """Index the documents of one JSON Lines file inside the open batch, line by line.

        The file's rows get its mtime and size only once all its lines are written, so an interrupted run
        leaves them looking changed and the next run reads the file again.
        """
        prefix = f"{path}{_JSONL_MARK}"
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
                for line in jsonl_documents(lines, limit=self.max_file_bytes, name_of=_jsonl_name):
                    where = f"{path}:{line.number}"
                    if line.fields is None:
                        report.skipped.append((where, str(line.reason)))
                        continue
                    name = line.fields["name"]
                    seen[name] = line.number
                    self._wrote(self._index_record(prefix + name, line.fields, mine, root, where, report))
        except Unreadable as exc:
            report.skipped.append((str(path), f"{exc} (the documents indexed from it before are kept)"))
            return
        except OSError as exc:
            report.skipped.append((str(path), f"cannot read: {exc.strerror or exc}"))
            return
        self._skips.mark(str(path), stat, len(report.skipped) - skips)
        for key, row in mine.items():
            if key[len(prefix) :] not in seen:  # a line that is gone (or now bad)
                self._delete(row[0])
                report.removed += 1
        self._db.execute(
            "UPDATE documents SET mtime_ns = ?, size = ? WHERE path >= ? AND path < ?",
            (stat.st_mtime_ns, stat.st_size, prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)),
        )

    def _index_record(
        self,
        key: str,
        fields: dict[str, str],
        known: dict[str, tuple[Any, ...]],
        root: Path,
        where: str,
        report: IndexReport,
    ) -> int:
        """Write one JSON Lines document unless unchanged; returns 1 when it wrote something."""
        name, content = fields["name"], fields["content"]
        title = fields["title"] or first_heading(content) or _title_from_name(name)
        uri = fields["uri"] or name_to_uri(name)
        updated_ns, problem = page_date(fields)
        if problem:
            report.warnings.append((where, problem))
        # The date joins the digest only when there is one, so lines without a date keep their old digests.
        parts = (uri, title, fields["description"], content) + ((str(updated_ns),) if updated_ns is not None else ())
        digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()
        row = known.get(key)
        if row is not None and row[3] == digest:
            report.unchanged += 1
            return 0
        if row is None:  # a name new to this file: if another file has it, say so before chunking the page
            sql = "SELECT path FROM documents WHERE name = ? AND origin = 'file'"
            taken = self._db.execute(sql, (name,)).fetchone()
            if taken is not None:
                report.skipped.append((where, _duplicate(name, taken[0])))
                return 0
        page = self._page(name, uri, title, fields["description"], content, updated_ns)
        return self._write_file_page(page, digest, report, where, root=str(root), path=key)

    def _page(
        self, name: str, uri: str, title: str, description: str, content: str, updated_ns: int | None = None
    ) -> _Page:
        chunks = chunk_markdown(content, title, self.sizes)
        return _Page(name, uri, " ".join(title.split()), description.strip(), content, chunks, updated_ns)

    def _remove_missing(self, root: Path, present: set[str], report: IndexReport) -> None:
        rows = self._db.execute("SELECT id, path FROM documents WHERE root = ?", (str(root),)).fetchall()
        gone = [doc_id for doc_id, path in rows if _source_file(path) not in present]
        if not gone:
            return
        with self._transaction():
            for doc_id in gone:
                self._delete(doc_id)
        report.removed += len(gone)

    def refresh_folders(self, *, progress: ProgressHook | None = None) -> IndexReport:
        """Reindex every remembered folder (incrementally). A folder that is gone is reported, not emptied."""
        report = IndexReport()
        for folder in self.folders():
            if not Path(folder).exists():
                report.skipped.append((folder, "folder not found (its documents are kept)"))
                continue
            report.merge(self.add_folder(folder, progress=progress))
        return report

    @_reports_failures("save documents in the local index")
    def add_documents(self, documents: Iterable[Document | dict[str, Any]], origin: str = "fetched") -> IndexReport:
        """Add or update documents given as :class:`~devknow_jupyter.models.Document` or service-shaped dicts.

        Documents with the same content are left alone. A name that belongs to an indexed file keeps the
        file's version (the user's own folder wins) and is reported as skipped. All in one transaction.
        """
        started = time.perf_counter()
        report = IndexReport()
        pages = []
        for item in documents:
            data = item.to_dict() if isinstance(item, Document) else dict(item)
            name = _document_name(str(data.get("name") or ""), str(data.get("uri") or ""))
            content = str(data.get("content") or "")
            if not name:
                report.skipped.append((str(data.get("name") or "?"), "no document name"))
                continue
            if not content.strip():
                report.skipped.append((name, "empty content"))
                continue
            title = str(data.get("title") or "") or first_heading(content) or _title_from_name(name)
            uri = str(data.get("uri") or "") or name_to_uri(name)
            description = str(data.get("description") or "")
            digest = hashlib.sha256("\x00".join((uri, title, description, content)).encode("utf-8")).hexdigest()
            pages.append((name, uri, title, description, content, digest))
        with self._lock:
            self._check_open()
            with self._transaction() as db:
                for name, uri, title, description, content, digest in pages:
                    row = db.execute("SELECT sha256, origin FROM documents WHERE name = ?", (name,)).fetchone()
                    if row is not None and row[0] == digest:
                        report.unchanged += 1
                        continue
                    if row is not None and row[1] == "file":
                        report.skipped.append((name, "an indexed file has this name; the file's version is kept"))
                        continue
                    page = self._page(name, uri, title, description, content)
                    try:
                        created = self._write(page, origin, digest)
                    except _Skip as exc:
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


def _front_matter_date(raw: bytes) -> int | None:
    """The date a file's front matter gives (None when none, or when it cannot be read)."""
    try:
        return page_date(split_front_matter(raw.decode("utf-8", errors="replace")).meta)[0]
    except FrontMatterError:
        return None


def _has_front_matter(raw: bytes) -> bool:
    """Whether a file's text opens with a front matter block (a broken one counts: it is reported as such)."""
    return re.match(rb"---[ \t]*\r?\n", raw.removeprefix(b"\xef\xbb\xbf")) is not None


def _indexed_root(folder: str | os.PathLike[str]) -> Path:
    """The resolved folder (or single JSON Lines file) to index; a clear error for anything else."""
    root = Path(folder).expanduser()
    if (root.is_file() and root.suffix.lower() in JSONL_SUFFIXES) or root.is_dir():
        return root.resolve()
    raise ConfigurationError(
        f"Not a folder or a JSON Lines file: {root}",
        hint="Give a folder of Markdown (.md) or JSON Lines (.jsonl) files, or one .jsonl file.",
    )


def _jsonl_name(fields: dict[str, str]) -> str:
    return _document_name(fields.get("name", ""), fields.get("uri", ""))


def _document_name(name: str, uri: str) -> str:
    """A ``documents/...`` name from front matter: the name as given, else derived from the URI."""
    name = name.strip()
    if name:
        if name.startswith(("https://", "http://")):
            return DOCUMENT_PREFIX + name.split("://", 1)[1].rstrip("/")
        return name if name.startswith(DOCUMENT_PREFIX) else DOCUMENT_PREFIX + name.lstrip("/")
    uri = uri.strip()
    if uri.startswith(("https://", "http://")):
        return DOCUMENT_PREFIX + uri.split("://", 1)[1].rstrip("/")
    return ""


def _title_from_path(path: Path) -> str:
    stem = path.stem if path.stem.lower() != "index" else path.parent.name or path.stem
    return stem.replace("-", " ").replace("_", " ").strip().capitalize() or path.name


def _title_from_name(name: str) -> str:
    last = name.rstrip("/").rsplit("/", 1)[-1]
    return last.replace("-", " ").replace("_", " ").strip().capitalize() or name

"""Reading documents for the index: walking a folder, reading one file safely, JSON Lines.

A folder given to ``devknow index`` may hold anything: symlinks to files elsewhere (``~/.ssh``),
to ``/dev/zero`` or ``/dev/urandom``, FIFOs that block whoever opens them, files that grow while they
are read. The rules here:

- Only *regular* files are read, and by default only those *inside* the folder: a symlink whose
  target lies outside it is skipped (``follow_symlinks=True`` allows it, still refusing anything that
  is not a regular file: devices, FIFOs, sockets). Symlinked folders are not walked unless allowed.
- A file is opened with ``O_NONBLOCK`` (a FIFO that slipped through can't block the open), checked
  with ``fstat`` on the open descriptor (what is read is what was checked), and read up to the size
  limit plus one byte, whatever its stat size said (``/proc`` files say 0; a file may grow).
- Every file left out is reported with its reason; nothing is skipped silently.

JSON Lines files (``.jsonl``) hold one document per line, ``{name, uri, title, description, content}``
like the service's document shape; :func:`jsonl_documents` yields each good line's fields and the
reason for each bad one, with its line number.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import stat as stat_module
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .frontmatter import DATE_FIELDS

__all__ = [
    "JSONL_MARK",
    "JSONL_SUFFIXES",
    "MARKDOWN_SUFFIXES",
    "SKIP_DIRS",
    "FolderScan",
    "JsonlLine",
    "SafeFile",
    "Unreadable",
    "jsonl_documents",
    "open_document",
    "size_text",
    "source_file",
    "walk_folder",
]

MARKDOWN_SUFFIXES = (".md", ".markdown")
JSONL_SUFFIXES = (".jsonl",)
#: A document read from a JSON Lines file is recorded in the index with the path ``FILE.jsonl::NAME``.
JSONL_MARK = "::"
# Folders never worth walking: version control, virtual environments, build output.
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})
_READ_CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class Unreadable(Exception):
    """A file that is not indexed; the message is the reason shown to the user."""


@dataclass
class FolderScan:
    """What walking a folder found: the files to index (Markdown, then JSON Lines, each sorted by path) and
    ``(path, reason)`` for those left out."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def is_document_file(name: str) -> bool:
    """True for a Markdown or JSON Lines file name (hidden files are not documents)."""
    lowered = name.lower()
    return not name.startswith(".") and lowered.endswith(MARKDOWN_SUFFIXES + JSONL_SUFFIXES)


def walk_folder(root: Path, exclude: Iterable[str] = (), *, follow_symlinks: bool = False) -> FolderScan:
    """The Markdown and JSON Lines files under ``root`` (an absolute, resolved folder), and what was left out.

    Hidden folders and tool folders (``node_modules``…) are not walked; ``exclude`` holds glob patterns
    of relative paths. A symlinked file is kept when its target is a regular file inside ``root`` (or
    anywhere, with ``follow_symlinks``); a symlinked folder is walked only with ``follow_symlinks``
    (each real folder once, so a link loop ends).
    """
    patterns = tuple(exclude)
    scan = FolderScan()
    seen_dirs: set[tuple[int, int]] = set()
    for directory, subdirs, filenames in os.walk(root, followlinks=follow_symlinks):
        here = Path(directory)
        if follow_symlinks:
            info = here.stat()
            if (info.st_dev, info.st_ino) in seen_dirs:
                subdirs[:] = []
                continue
            seen_dirs.add((info.st_dev, info.st_ino))
        kept_dirs = []
        for name in subdirs:
            if name.startswith(".") or name in SKIP_DIRS:
                continue
            if not follow_symlinks and (here / name).is_symlink():
                scan.skipped.append((str(here / name), "a symlinked folder, not followed (see --follow-symlinks)"))
                continue
            kept_dirs.append(name)
        subdirs[:] = sorted(kept_dirs)
        for filename in filenames:
            if not is_document_file(filename):
                continue
            path = here / filename
            relative = path.relative_to(root).as_posix()
            if any(fnmatch.fnmatch(relative, pattern) for pattern in patterns):
                continue
            reason = _refusal(path, root, follow_symlinks)
            if reason:
                scan.skipped.append((str(path), reason))
            else:
                scan.files.append(path)
    # Markdown first: when a page file and a JSON line carry the same name, the page file keeps it.
    scan.files.sort(key=lambda path: (path.suffix.lower() in JSONL_SUFFIXES, path))
    return scan


def _refusal(path: Path, root: Path, follow_symlinks: bool) -> str | None:
    """Why ``path`` may not be read (None when it may), judged without opening it."""
    try:
        info = path.lstat()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if stat_module.S_ISLNK(info.st_mode):
        target = Path(os.path.realpath(path))
        if not follow_symlinks and not _inside(target, root):
            return f"a symlink to {target}, outside the folder (not followed; see --follow-symlinks)"
        try:
            info = path.stat()
        except OSError:
            return f"a broken symlink (to {target})"
    if not stat_module.S_ISREG(info.st_mode):
        return f"not a regular file ({_kind(info.st_mode)})"
    return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _kind(mode: int) -> str:
    kinds = (
        (stat_module.S_ISDIR, "a folder"),
        (stat_module.S_ISFIFO, "a FIFO"),
        (stat_module.S_ISSOCK, "a socket"),
        (stat_module.S_ISCHR, "a character device"),
        (stat_module.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


class SafeFile:
    """A document file opened for reading without blocking, checked to be regular on the open descriptor.

    ``stat`` is the open file's ``fstat``. Use as a context manager; :meth:`read` returns at most the
    limit, and :meth:`lines` iterates over lines of at most the limit.
    """

    def __init__(self, path: Path, descriptor: int, info: os.stat_result) -> None:
        self.path = path
        self.stat = info
        self._handle: BinaryIO = os.fdopen(descriptor, "rb", buffering=_READ_CHUNK)

    def read(self, limit: int) -> bytes:
        """The whole file, or :class:`Unreadable` as soon as more than ``limit`` bytes have been read."""
        data = self._handle.read(limit + 1)  # never more, whatever the stat size said
        if len(data) > limit:
            raise Unreadable(f"too large: more than {size_text(limit)}, the limit")
        return data

    def lines(self, limit: int) -> Iterator[tuple[int, bytes | None]]:
        """``(line number, bytes)`` per line; ``bytes`` is None for a line longer than ``limit`` (not kept)."""
        number = 0
        while True:
            line = self._handle.readline(limit + 1)
            if not line:
                return
            number += 1
            if len(line) > limit and not line.endswith(b"\n"):
                while line and not line.endswith(b"\n"):  # drop the rest of the long line, a chunk at a time
                    line = self._handle.readline(_READ_CHUNK)
                yield number, None
                continue
            yield number, line

    def close(self) -> None:
        """Close the file. Safe to call twice."""
        self._handle.close()

    def __enter__(self) -> SafeFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_document(path: Path, root: Path | None = None, *, follow_symlinks: bool = False) -> SafeFile:
    """Open ``path`` for reading, or raise :class:`Unreadable` saying why not.

    Without ``follow_symlinks`` the file's real path must lie inside ``root`` (checked again here, in
    case the folder changed since it was walked). The open never blocks and never follows a FIFO or
    device: the descriptor is checked to be a regular file before anything is read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        # Most files are not links: O_NOFOLLOW opens them without resolving the path (one syscall), and
        # refuses a file that became a link since the walk; a link is then judged by where it leads.
        try:
            descriptor = os.open(path, flags | _NOFOLLOW)
        except OSError as exc:
            if not _NOFOLLOW or exc.errno != errno.ELOOP:
                raise
            target = Path(os.path.realpath(path))
            if root is not None and not follow_symlinks and not _inside(target, root):
                raise Unreadable(f"a symlink to {target}, outside the folder (not followed)") from None
            descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO with no writer, or a socket
            raise Unreadable("not a regular file (a FIFO or socket)") from None
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(descriptor)
        if not stat_module.S_ISREG(info.st_mode):
            raise Unreadable(f"not a regular file ({_kind(info.st_mode)})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(descriptor, True)  # a regular file: plain reads from here on
    except BaseException:
        os.close(descriptor)
        raise
    return SafeFile(path, descriptor, info)


@dataclass
class JsonlLine:
    """One line of a JSON Lines file: its number, and either the document's fields or why it was skipped."""

    number: int
    fields: dict[str, str] | None = None
    reason: str | None = None


_TEXT_FIELDS = ("name", "uri", "title", "description", "content")


def jsonl_documents(
    lines: Iterable[tuple[int, bytes | None]], *, limit: int, name_of: Callable[[dict[str, str]], str]
) -> Iterator[JsonlLine]:
    """The documents of a JSON Lines file, line by line (blank lines are ignored).

    A good line is an object with ``content`` and a ``name`` or ``uri`` (``title`` and ``description``
    optional), all strings, and optionally a date field (``updated``, ``lastmod``, ``date``, ...:
    :data:`~.frontmatter.DATE_FIELDS`); ``name_of(fields)`` makes its document name, which replaces ``fields["name"]``.
    A bad line gives its reason: longer than ``limit`` bytes, not JSON, not an object, a missing field, a
    field that is not a string, no usable name, or a name already used on an earlier line.
    """
    first_line: dict[str, int] = {}
    for number, raw in lines:
        if raw is None:
            yield JsonlLine(number, reason=f"too large: the line is longer than {size_text(limit)}, the limit")
            continue
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8", errors="replace").strip())
        except ValueError as exc:
            yield JsonlLine(number, reason=f"not valid JSON ({_json_problem(exc)})")
            continue
        reason, fields = _document_fields(record)
        if fields is None:
            yield JsonlLine(number, reason=reason)
            continue
        key = fields["name"] = name_of(fields)
        if not key:
            yield JsonlLine(number, reason=f"no usable document name (name {fields['name']!r}, uri {fields['uri']!r})")
            continue
        if key in first_line:
            yield JsonlLine(number, reason=f"duplicate name {key!r}: line {first_line[key]} has it already")
            continue
        first_line[key] = number
        yield JsonlLine(number, fields=fields)


def _document_fields(record: Any) -> tuple[str, dict[str, str] | None]:
    if not isinstance(record, dict):
        return f"not a JSON object (a {type(record).__name__})", None
    wrong = [key for key in _TEXT_FIELDS if record.get(key) is not None and not isinstance(record.get(key), str)]
    if wrong:
        return f"{', '.join(wrong)}: not a string", None
    fields = {key: record.get(key) or "" for key in _TEXT_FIELDS}
    # A date the record gives (as front matter would): kept as text, read by ``page_date``.
    fields.update({key: str(record[key]) for key in DATE_FIELDS if record.get(key) not in (None, "")})
    for key in ("name", "uri", "title", "description"):
        fields[key] = fields[key].strip()
    if not fields["name"] and not fields["uri"]:
        return "missing field: name (or uri)", None
    if not fields["content"].strip():
        return "missing field: content (or it is empty)", None
    return "", fields


def _json_problem(exc: ValueError) -> str:
    message = getattr(exc, "msg", None) or str(exc)
    column = getattr(exc, "colno", None)
    return f"{message} at column {column}" if column else message


def size_text(count: int) -> str:
    """A byte count for people: ``4.0 MB``, ``12 KB``."""
    if count >= 1024 * 1024:
        return f"{count / 1024 / 1024:.1f} MB"
    return f"{count / 1024:.0f} KB" if count >= 1024 else f"{count} bytes"


def source_file(path: str) -> str:
    """The file a document was read from: its recorded path, or the JSON Lines file of ``FILE.jsonl::NAME``."""
    at = path.lower().find(".jsonl" + JSONL_MARK)
    return path[: at + len(".jsonl")] if at >= 0 else path

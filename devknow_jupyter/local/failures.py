"""One clear line for a local index that can't be used: what failed, where, and what to do.

SQLite and the file system report a damaged file, a full disk, a read-only folder or a file in the
way of the cache folder with terse codes; :func:`index_failure` turns each into a
:class:`~devknow_jupyter.errors.LocalIndexError` the CLI prints as one line (and exits non-zero) and
IPython shows without a traceback. Writes are transactions, so after any of these the index is as the
last committed batch left it.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from ..errors import LocalIndexError

__all__ = ["index_failure", "is_damage"]

_CACHE_ADVICE = "set DEVKNOW_CACHE_DIR to a folder you can write"


def _sqlite_name(exc: BaseException) -> str:
    # sqlite_errorname exists from Python 3.11; older versions only have the message.
    return str(getattr(exc, "sqlite_errorname", "") or "")


def is_damage(exc: BaseException) -> bool:
    """True when SQLite says the file is damaged or is not a database at all."""
    text = str(exc).lower()
    name = _sqlite_name(exc)
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text or "not a database" in text


def index_failure(exc: BaseException, path: str, doing: str) -> LocalIndexError:
    """The :class:`LocalIndexError` for ``exc``, raised while ``doing`` (e.g. "index /docs") on ``path``."""
    text = str(exc).strip() or type(exc).__name__
    name = _sqlite_name(exc)
    lowered = text.lower()
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        return _os_failure(exc, path, doing)
    if is_damage(exc):
        kind, problem = "damaged", f"the local index {path} is damaged ({text})"
        advice = "move it aside or delete it, then run `devknow index` again (the default index rebuilds itself)"
    elif name == "SQLITE_FULL" or "disk is full" in lowered:
        kind, problem = "full", f"the disk holding {path} is full"
        advice = f"free some space, or {_CACHE_ADVICE} on another disk; the index is as the last complete batch left it"
    elif name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")) or "readonly" in lowered or (
        "unable to open" in lowered
    ):
        kind, problem = "read-only", f"the local index {path} can't be written ({text})"
        advice = f"check the permissions of its folder, or {_CACHE_ADVICE}"
    elif name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in lowered:
        kind, problem = "busy", f"the local index {path} is locked by another program"
        advice = "wait for the other `devknow index` (or notebook) to finish, then try again"
    elif name.startswith("SQLITE_IOERR") or "i/o error" in lowered:
        kind, problem = "full", f"writing {path} failed ({text}): the disk may be full or failing"
        advice = f"free some space or check the disk, or {_CACHE_ADVICE}"
    else:
        kind, problem = "unusable", f"the local index {path} failed ({text})"
        advice = "move it aside or delete it, then run `devknow index` again"
    return LocalIndexError(f"Could not {doing}: {problem}; {advice}.", kind=kind, path=path)


def _os_failure(exc: OSError, path: str, doing: str) -> LocalIndexError:
    where = exc.filename or path
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        where = _in_the_way(Path(where))
        return LocalIndexError(
            f"Could not {doing}: {where} is a file, where the local index's folder should be; "
            f"move that file away, or {_CACHE_ADVICE}.",
            kind="unusable",
            path=str(where),
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return LocalIndexError(
            f"Could not {doing}: the folder {where} can't be written ({reason}); {_CACHE_ADVICE}.",
            kind="read-only",
            path=str(where),
        )
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return LocalIndexError(
            f"Could not {doing}: no space left for {where} ({reason}); free some space, or {_CACHE_ADVICE}.",
            kind="full",
            path=str(where),
        )
    return LocalIndexError(
        f"Could not {doing}: {where} can't be used ({reason}); {_CACHE_ADVICE}.", kind="unusable", path=str(where)
    )


def _in_the_way(path: Path) -> Path:
    """The file that stands where a folder on the way to ``path`` should be (``path`` when none is found)."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return path if candidate.is_dir() else candidate
    return path

"""``LocalBackend``: the three Developer Knowledge tools over a :class:`~.index.LocalIndex`.

It keeps the remote service's contract: the same result shapes, the same limits (at most 20 names per
``get_documents`` call, names up to 500 characters) and the same kinds of errors (``INVALID_ARGUMENT``,
``NOT_FOUND`` naming the unknown documents), so :class:`~devknow_jupyter.DevKnowClient` treats both alike.
``answer_query`` has no model to write with: it quotes the best passages and says so
(``"extractive": True``).

``LocalBackend.from_spec`` understands the endpoint strings:

- ``"local"``: the default index in the user cache dir, holding the starter pack (reindexed
  incrementally on open), the folders added with ``devknow index PATH`` and the documents fetched from
  the live service;
- ``"local:/path/to/folder"``: that folder of Markdown, indexed on the fly into a cached index;
- ``"local:/path/to/index.sqlite3"``: an index file made by ``devknow index``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, ToolError
from ..names import MAX_NAME_LENGTH, normalize_source
from ..tools import MAX_NAMES_PER_CALL, tool_definitions
from .index import IndexReport, LocalIndex
from .paths import STARTER_DIR, default_index_path, folder_index_path

__all__ = ["DEFAULT_LIMIT", "LocalBackend", "open_cache_index"]

#: Passages returned by one search, as many as the service returns.
DEFAULT_LIMIT = 10
INVALID_PARAMS = -32602
_SQLITE_MAGIC = b"SQLite format 3\x00"


class LocalBackend:
    """A backend answering the three tools from a local index. Thread-safe (the index serialises access).

    Args:
        index: The index to serve.
        endpoint: How the endpoint is shown (``"local"`` or ``"local:PATH"``); never holds a secret.
        limit: Passages per search.
        report: What indexing did while the backend was opened (for ``%devknow`` / ``devknow status``).
    """

    kind = "local"

    def __init__(
        self,
        index: LocalIndex,
        endpoint: str = "local",
        *,
        limit: int = DEFAULT_LIMIT,
        report: IndexReport | None = None,
    ) -> None:
        self.index = index
        self.endpoint = endpoint
        self.limit = limit
        self.report = report or IndexReport()
        self._closed = False
        self._lock = threading.Lock()

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_spec(cls, spec: str = "local") -> LocalBackend:
        """Open the backend an endpoint string names: ``"local"``, ``"local:FOLDER"`` or ``"local:INDEX_FILE"``.

        Raises :class:`~devknow_jupyter.errors.ConfigurationError` for a path that is neither a folder nor
        an index.
        """
        spec = (spec or "local").strip()
        target = spec[len("local:") :].strip() if spec.startswith("local:") else ""
        if spec != "local" and not spec.startswith("local:"):
            raise ConfigurationError(f"Not a local endpoint: {spec!r}", hint="Use 'local' or 'local:/path'.")
        if not target:
            index = open_cache_index(default_index_path())
            report = _refresh_default(index)
            return cls(index, "local", report=report)
        path = Path(os.path.expandvars(target)).expanduser()
        if path.is_dir():
            index = open_cache_index(folder_index_path(path))
            report = index.add_folder(path)
            return cls(index, f"local:{target}", report=report)
        if path.is_file():
            if not _is_sqlite(path):
                raise ConfigurationError(
                    f"{path} is neither a folder of Markdown files nor a devknow index.",
                    hint="Use local:/path/to/folder, or an index file made by `devknow index`.",
                )
            return cls(LocalIndex(path), f"local:{target}")
        raise ConfigurationError(
            f"No such folder or index file: {path}",
            hint="Use local:/path/to/folder (Markdown files) or local:/path/to/index.sqlite3.",
        )

    # -- the Backend protocol -------------------------------------------------------------------

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool on the index and return its result in the service's JSON shape."""
        if self._closed:
            raise ConfigurationError("This local backend is closed; create a new client.")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _invalid(name, "the arguments must be an object")
        try:
            if name == "search_documents":
                query, source = _query(arguments, name), _source(arguments, name)
                return self.index.search_results(query, self.limit, source=source)
            if name == "get_documents":
                return self._get_documents(arguments.get("names"))
            if name == "answer_query":
                return self.index.answer(_query(arguments, name))
        except sqlite3.Error as exc:  # a damaged or vanished index file: one clear error, not a traceback
            raise ToolError(
                f"{name} failed: the local index {self.index.path} could not be read ({exc}).",
                tool=name,
                hint="Rebuild it: delete the file and run `devknow index PATH` (the default index rebuilds itself).",
            ) from None
        raise ToolError(f"Unknown tool: {name}", code=INVALID_PARAMS, tool=name)

    def list_tools(self) -> list[dict[str, Any]]:
        """The three tools with the service's schemas and annotations; ``search_documents`` also takes a
        ``source`` site filter (applied inside the ranking) and may return ``notices`` (a weak match)."""
        return tool_definitions(local=True)

    def close(self) -> None:
        """Close the index. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.index.close()

    def __repr__(self) -> str:
        return f"<LocalBackend {self.endpoint!r} index={self.index.path!r}>"

    # -- tools ----------------------------------------------------------------------------------

    def _get_documents(self, names: Any) -> dict[str, Any]:
        tool = "get_documents"
        if not isinstance(names, list) or not all(isinstance(item, str) for item in names):
            raise _invalid(tool, "names must be a list of strings")
        if not names:
            raise _invalid(tool, "names is empty")
        if len(names) > MAX_NAMES_PER_CALL:
            raise _invalid(tool, f"at most {MAX_NAMES_PER_CALL} names per call ({len(names)} given)")
        for item in names:
            if len(item) > MAX_NAME_LENGTH:
                raise _invalid(tool, f"a name is longer than {MAX_NAME_LENGTH} characters: {item[:60]}…")
        documents = self.index.get(names)
        found = {doc["name"] for doc in documents}
        missing = list(dict.fromkeys(item for item in names if item not in found))
        if missing:
            # Like the service: the whole call fails; the client splits the batch to keep the known ones.
            shown = ", ".join(missing)
            plural = "s" if len(missing) > 1 else ""
            raise ToolError(f"{tool} failed: NOT_FOUND: document{plural} not found: {shown}", tool=tool, not_found=True)
        return {"documents": documents}


def open_cache_index(path: Path, *, cache_mb: int = 64) -> LocalIndex:
    """Open an index that lives in the cache: a damaged file is moved aside and rebuilt, an unwritable
    cache dir falls back to an in-memory index (everything still works, nothing is kept)."""
    try:
        return LocalIndex(path, cache_mb=cache_mb)
    except ConfigurationError:
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        try:
            path.replace(aside)
            for suffix in ("-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            return LocalIndex(path, cache_mb=cache_mb)
        except (OSError, ConfigurationError):
            return LocalIndex(":memory:")
    except OSError:
        return LocalIndex(":memory:")


def _refresh_default(index: LocalIndex) -> IndexReport:
    """Bring the default index up to date: the starter pack, then every folder the user added."""
    report = IndexReport()
    starter = str(STARTER_DIR)
    try:
        previous = index.get_meta("starter_folder")
        if previous and previous != starter:
            # The package moved (reinstalled elsewhere): the old copy's pages would shadow the new one's names.
            index.remove_folder(previous)
        if previous != starter:
            index.set_meta("starter_folder", starter)
    except sqlite3.OperationalError as exc:  # locked by another writer for too long
        report.skipped.append((starter, f"not refreshed: {exc}"))
        return report
    folders = [starter] if STARTER_DIR.is_dir() else []
    folders += [folder for folder in index.folders() if folder != starter]
    for folder in folders:
        if not Path(folder).is_dir():
            report.skipped.append((folder, "folder not found (its documents are kept)"))
            continue
        try:
            report.merge(index.add_folder(folder, exclude=("README.md",) if folder == starter else ()))
        except (ConfigurationError, sqlite3.OperationalError) as exc:
            # e.g. `devknow index` holds the write lock for long: search what is there, refresh next time
            report.skipped.append((folder, f"not refreshed: {exc}"))
    return report


def _query(arguments: dict[str, Any], tool: str) -> str:
    query = arguments.get("query")
    if query is not None and not isinstance(query, str):
        raise _invalid(tool, "query must be a string")
    if not query or not query.strip():
        raise ConfigurationError("The query is empty.", hint="Say what to look for, e.g. 'create a bucket'.")
    return query.strip()


def _source(arguments: dict[str, Any], tool: str) -> str | None:
    source = arguments.get("source")
    if source is None:
        return None
    if not isinstance(source, str):
        raise _invalid(tool, "source must be a string, e.g. adk.dev")
    return normalize_source(source) or None


def _invalid(tool: str, message: str) -> ToolError:
    """The error the service gives for bad arguments (JSON-RPC -32602, INVALID_ARGUMENT)."""
    return ToolError(f"{tool} failed: INVALID_ARGUMENT: {message}", code=INVALID_PARAMS, tool=tool)


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except OSError:
        return False
    return head == _SQLITE_MAGIC or (path.stat().st_size == 0 and path.suffix in (".sqlite3", ".sqlite", ".db"))

"""``LocalBackend``: the typed backend contract (search, get, answer) over a :class:`~.index.LocalIndex`.

It keeps the remote service's contract: the same result shapes, the same limits (at most 20 names per
``get_documents`` call, names up to 500 characters) and the same kinds of errors (``INVALID_ARGUMENT``,
``NOT_FOUND`` naming the unknown documents), so :class:`~devknow_jupyter.DevKnowClient` treats both alike.
``answer_query`` has no model to write with: it quotes the best passages and says so
(``"extractive": True``).

``LocalBackend.from_spec`` understands the endpoint strings:

- ``"local"``: the default index in the user cache dir, holding the starter pack (reindexed
  incrementally on open), the folders added with ``devknow index PATH`` and the documents fetched from
  the live service;
- ``"local:/path/to/folder"``: that folder of Markdown (or one ``.jsonl`` file), indexed on the fly into a
  cached index;
- ``"local:/path/to/index.sqlite3"``: an index file made by ``devknow index``;
- ``"local:/path/to/docs.pack"``: a knowledge pack made by ``devknow pack build``, opened read-only.

Pages from a knowledge pack say so: a search hit ends with a line naming the pack and the licence, and a
fetched document ends with the source's attribution (the JSON shapes stay the service's).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..contract import AnswerQuery, Capabilities, SearchQuery
from ..errors import ConfigurationError, LocalIndexError, ToolError
from ..models import Answer, DocumentChunk, Documents, ResultInfo, SearchResults
from ..names import MAX_NAME_LENGTH
from ..registry import invalid, serve_tool, tool_definitions
from ..tools import MAX_NAMES_PER_CALL, MAX_PAGE_SIZE
from .failures import index_failure
from .index import IndexReport, LocalIndex
from .paging import decode_token, encode_token, since_nanoseconds, stale_token, undated_notice
from .paths import STARTER_DIR, default_index_path, folder_index_path

__all__ = ["DEFAULT_LIMIT", "LocalBackend", "open_cache_index"]

#: Passages returned by one search, as many as the service returns.
DEFAULT_LIMIT = 10
INVALID_PARAMS = -32602
_SQLITE_MAGIC = b"SQLite format 3\x00"
_CACHE_DIR_ADVICE = "set DEVKNOW_CACHE_DIR to a folder you can write"
# Failures to refresh that still leave the index searchable (the refresh is tried again next time).
_SEARCHABLE_ANYWAY = frozenset({"busy", "read-only", "full"})


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
            report = IndexReport()
            index = open_cache_index(default_index_path(), report=report)
            report.merge(_refresh_default(index))
            return cls(index, "local", report=report)
        path = Path(os.path.expandvars(target)).expanduser()
        if path.is_dir() or (path.is_file() and path.suffix.lower() == ".jsonl"):
            report = IndexReport()
            index = open_cache_index(folder_index_path(path), report=report)
            report.merge(index.add_folder(path))
            return cls(index, f"local:{target}", report=report)
        if path.is_file() and (path.suffix == ".pack" or _is_pack(path)):
            from ..packs.pack import open_pack

            index, _ = open_pack(path)
            return cls(index, f"local:{target}")
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

    # -- the Backend contract -------------------------------------------------------------------

    #: One site (a path too) and dates inside the ranking, pages; extractive answers take one site and dates.
    capabilities = Capabilities(
        search_sites="one", search_dates=True, paging=True, answer_sites="one", answer_dates=True
    )

    def search(self, request: SearchQuery) -> SearchResults:
        """One page of hits: ``page_size`` of them (default :attr:`limit`) from where ``page_token`` says, of
        the pages updated ``since`` a time where the index knows a date; ``next_page_token`` when more follow."""
        with self._running("search_documents"):
            page = self._search(request)
            hits = self._credit_hits(page)["results"]
            info = ResultInfo(notices=page["notices"])
            return SearchResults(request.query, map(DocumentChunk.from_dict, hits), info, page.get("token"))

    def get(self, names: Sequence[str]) -> Documents:
        """The documents of ``names`` (1 to 20), in request order; an unknown name fails the whole call with
        ``NOT_FOUND``, as on the service (the client splits the batch to keep the known ones)."""
        with self._running("get_documents"):
            return Documents.from_dict(self._credit_documents(self._get_documents(list(names))))

    def answer(self, request: AnswerQuery) -> Answer:
        """An extractive answer: the best passages quoted (one site, dates where the index knows them)."""
        with self._running("answer_query"):
            source = request.sources[0] if request.sources else None
            data = self.index.answer(request.query, source=source, since=request.since)
            return Answer.from_dict(data, query=request.query)

    def invoke(self, operation: str, request: Any) -> Any:
        """A registry tool's ``operation`` served by this backend (a method of that name)."""
        if operation not in self.capabilities.operations:
            raise ToolError(f"The local index does not serve {operation!r}.", code=INVALID_PARAMS, tool=operation)
        return getattr(self, operation)(request)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call as ``devknow serve`` receives it, in the service's JSON shape (:func:`serve_tool`)."""
        return serve_tool(self, name, arguments)

    def details(self) -> dict[str, Any]:
        """Its protocol and the documentation hint (see :meth:`documentation_hint`), for ``status()``."""
        return {"protocol": "local", "documentation_hint": self.documentation_hint()}

    @contextmanager
    def _running(self, tool: str) -> Iterator[None]:
        if self._closed:
            raise ConfigurationError("This local backend is closed; create a new client.")
        try:
            yield
        except sqlite3.Error as exc:  # a damaged or vanished index file: one clear error, not a traceback
            raise index_failure(exc, self.index.path, f"run {tool}") from None

    def documentation_hint(self) -> str | None:
        """How to add documentation, when this index holds only the starter guide (no pack, no folder); else None."""
        try:
            folders = [folder for folder in self.index.folders() if folder != str(STARTER_DIR)]
            if folders or self.index.get_meta("installed_packs") not in (None, "{}"):
                return None
            if self.index.get_meta("pack_manifest") or self.endpoint != "local":
                return None
        except (sqlite3.Error, ConfigurationError):
            return None
        return (
            "Only the starter guide is offline: add documentation with `devknow pack build go -o go.pack` and "
            "`devknow pack add go.pack` (recipes: `devknow pack recipes`), or `devknow index DIR`."
        )

    def list_tools(self) -> list[dict[str, Any]]:
        """The three tools with the service's schemas and annotations; ``search_documents`` also takes a
        ``source`` site filter (applied inside the ranking), ``since``, ``page_size`` and ``page_token``, and
        may return ``notices`` (a weak match) and ``nextPageToken``."""
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

    def _credit_hits(self, result: dict[str, Any]) -> dict[str, Any]:
        """Each hit from a pack ends with a line naming the pack, the source and its licence."""
        credits = _pack_attributions(self.index)  # read per call: `devknow pack add` may run meanwhile
        if not credits:
            return result
        origins = self.index.credited_origins(hit["parent"] for hit in result.get("results", []))
        for hit in result.get("results", []):
            credit = credits.get(origins.get(hit["parent"], ""))
            if credit:
                hit["content"] = hit["content"].rstrip("\n") + f"\n\n{pack_line(credit)}\n"
        return result

    def _credit_documents(self, result: dict[str, Any]) -> dict[str, Any]:
        """Each document from a pack ends with its source's attribution and licence."""
        credits = _pack_attributions(self.index)
        if not credits:
            return result
        origins = self.index.credited_origins(doc["name"] for doc in result["documents"])
        for doc in result["documents"]:
            credit = credits.get(origins.get(doc["name"], ""))
            if credit:
                notice = f"{pack_line(credit)} {credit['attribution']}"
                doc["content"] = doc["content"].rstrip("\n") + f"\n\n---\n\n{notice}\n"
        return result

    def _search(self, request: SearchQuery) -> dict[str, Any]:
        tool = "search_documents"
        query, source = request.query, (request.sources[0] if request.sources else None)
        size = request.page_size if request.page_size is not None else self.limit
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise invalid(tool, "page_size must be a positive integer")
        size = min(size, MAX_PAGE_SIZE)
        since_ns, moment = since_nanoseconds(request.since) if request.since else (None, None)
        token = request.page_token
        offset, generation = decode_token(token, query, source, moment) if token else (0, None)
        page = self.index.search_page(query, size, offset=offset, source=source, since_ns=since_ns)
        if generation is not None and generation != page.generation:
            raise stale_token()
        result: dict[str, Any] = {"results": page.results}
        notices = list(page.notices)
        if moment:
            said = undated_notice(moment, page.undated, bool(page.dated))
            if not page.results and not offset and page.dated:
                said = f"No matching page was updated since {moment} ({page.dated} older ones left out)."
            notices.extend([said] if said else [])
        result["notices"] = notices
        if page.more:  # the token names the generation of this ranking: the order the next page continues
            result["token"] = encode_token(offset + size, page.generation, query, source, moment)
        return result

    def _get_documents(self, names: Any) -> dict[str, Any]:
        tool = "get_documents"
        if not isinstance(names, list) or not all(isinstance(item, str) for item in names):
            raise invalid(tool, "names must be a list of strings")
        if not names:
            raise invalid(tool, "names is empty")
        if len(names) > MAX_NAMES_PER_CALL:
            raise invalid(tool, f"at most {MAX_NAMES_PER_CALL} names per call ({len(names)} given)")
        for item in names:
            if len(item) > MAX_NAME_LENGTH:
                raise invalid(tool, f"a name is longer than {MAX_NAME_LENGTH} characters: {item[:60]}…")
        documents = self.index.get(names)
        found = {doc["name"] for doc in documents}
        missing = list(dict.fromkeys(item for item in names if item not in found))
        if missing:
            # Like the service: the whole call fails; the client splits the batch to keep the known ones.
            shown = ", ".join(missing)
            plural = "s" if len(missing) > 1 else ""
            raise ToolError(f"{tool} failed: NOT_FOUND: document{plural} not found: {shown}", tool=tool, not_found=True)
        return {"documents": documents}


def pack_line(credit: dict[str, str]) -> str:
    """The one line naming where a pack page comes from: ``_From the pack docs (Go, CC-BY-4.0)._``"""
    licence = f", {credit['license']}" if credit.get("license") else ""
    return f"_From the pack {credit['pack']} ({credit['source']}{licence})._"


def _pack_attributions(index: LocalIndex) -> dict[str, dict[str, str]]:
    """Who to credit for the pack pages in ``index``: its own manifest (a pack) or those of installed packs."""
    import json

    from ..packs.pack import attributions

    try:
        own = index.get_meta("pack_manifest")
        installed = index.get_meta("installed_packs")
        manifests = [json.loads(own)] if own else []
        manifests += list(json.loads(installed).values()) if installed else []
        return attributions(manifests)
    except (ValueError, AttributeError, TypeError, sqlite3.Error, ConfigurationError):
        return {}


def _is_pack(path: Path) -> bool:
    """An SQLite file whose meta says it is a knowledge pack."""
    if not _is_sqlite(path) or path.stat().st_size == 0:
        return False
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            # The catalogue first: a pack's meta could be a view of the author's choosing (see packs.checks).
            kind = db.execute("SELECT type FROM sqlite_master WHERE name = 'meta'").fetchone()
            if kind is None or kind[0] != "table":
                return kind is not None  # a view named meta: opened as a pack, so the pack checks refuse it
            return db.execute("SELECT 1 FROM meta WHERE key = 'user:pack_format'").fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return False


def open_cache_index(path: Path, *, cache_mb: int = 64, report: IndexReport | None = None) -> LocalIndex:
    """Open an index that lives in the cache; a file there that is not an index is moved aside and rebuilt
    (said in ``report.warnings``, when given).

    Raises :class:`~devknow_jupyter.errors.LocalIndexError` (one line: what, where, what to do) when the
    cache folder can't be used (a file in its place, a read-only folder, a full disk): an index kept only
    in memory would lose the user's work without a word.
    """
    try:
        return LocalIndex(path, cache_mb=cache_mb)
    except ConfigurationError as exc:
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        try:
            path.replace(aside)
            for suffix in ("-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        except OSError as moving:
            raise index_failure(moving, str(path), "move the damaged local index aside") from None
        try:
            rebuilt = LocalIndex(path, cache_mb=cache_mb)
        except ConfigurationError:
            message = f"Could not rebuild the local index {path} ({exc}); {_CACHE_DIR_ADVICE}."
            raise LocalIndexError(message, kind="damaged", path=str(path)) from None
        if report is not None:
            report.warnings.append((str(path), f"{exc.message}; moved aside to {aside.name} and rebuilt"))
        return rebuilt


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
    except LocalIndexError as exc:
        if exc.kind not in _SEARCHABLE_ANYWAY:
            raise
        report.skipped.append((starter, f"not refreshed: {exc}"))
        return report
    folders = [starter] if STARTER_DIR.is_dir() else []
    folders += [folder for folder in index.folders() if folder != starter]
    for folder in folders:
        if not Path(folder).exists():
            report.skipped.append((folder, "folder not found (its documents are kept)"))
            continue
        try:
            report.merge(index.add_folder(folder, exclude=("README.md",) if folder == starter else ()))
        except LocalIndexError as exc:
            if exc.kind not in _SEARCHABLE_ANYWAY:
                raise
            # e.g. `devknow index` holds the write lock for long: search what is there, refresh next time
            report.skipped.append((folder, f"not refreshed: {exc}"))
        except ConfigurationError as exc:
            report.skipped.append((folder, f"not refreshed: {exc}"))
    return report


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except OSError:
        return False
    return head == _SQLITE_MAGIC or (path.stat().st_size == 0 and path.suffix in (".sqlite3", ".sqlite", ".db"))

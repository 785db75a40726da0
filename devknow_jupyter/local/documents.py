"""Turning what the indexer reads into pages ready to write: a Markdown file's bytes, a JSON Lines record,
or a document fetched from the service, each cut into passages (:mod:`.chunking`) as a :class:`~.pages.Page`.

A page's name comes from its front matter (``name``, else ``uri``); a file without one is named after its
path under the folder (``documents/local/...``). Its title is the front matter's, else its first heading,
else its file or last name part.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..models import DOCUMENT_PREFIX, Document, name_to_uri
from .chunking import ChunkSizes, chunk_markdown, first_heading
from .frontmatter import FrontMatterError, page_date, split_front_matter
from .pages import Page
from .reading import Unreadable

__all__ = [
    "LOCAL_PREFIX",
    "PageMaker",
    "content_digest",
    "document_name",
    "fetched_fields",
    "front_matter_date",
    "has_front_matter",
    "jsonl_name",
    "title_from_name",
]

LOCAL_PREFIX = DOCUMENT_PREFIX + "local/"


class PageMaker:
    """Pages cut into passages of the given sizes."""

    def __init__(self, sizes: ChunkSizes) -> None:
        self.sizes = sizes

    def page(
        self, name: str, uri: str, title: str, description: str, content: str, updated_ns: int | None = None
    ) -> Page:
        """A page of these fields, its content cut into passages."""
        chunks = chunk_markdown(content, title, self.sizes)
        return Page(name, uri, " ".join(title.split()), description.strip(), content, chunks, updated_ns)

    def from_file(self, root: Path, path: Path, raw: bytes, warnings: list[tuple[str, str]]) -> Page:
        """The page of a Markdown file's bytes; repairs made (bad UTF-8, a bad date) are added to ``warnings``.

        Raises :class:`~.reading.Unreadable` with the reason when the file is no page (empty, binary, a
        broken front matter block, nothing after the front matter)."""
        if not raw.strip():
            raise Unreadable("empty file")
        if b"\x00" in raw[:8192]:
            raise Unreadable("binary file (contains NUL bytes), not Markdown")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            # Tolerant: a stray Latin-1 byte should not hide a whole page. Say so in the report.
            text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
            warnings.append((str(path), f"invalid UTF-8 at byte {exc.start}; bad bytes shown as U+FFFD"))
        try:
            front = split_front_matter(text)
        except FrontMatterError as exc:
            raise Unreadable(str(exc)) from None
        relative = path.relative_to(root).with_suffix("").as_posix()
        name = document_name(front.get("name"), front.get("uri")) or LOCAL_PREFIX + relative
        body = front.body
        if not body.strip():
            raise Unreadable("no Markdown after the front matter")
        title = front.get("title") or first_heading(body) or _title_from_path(path)
        uri = front.get("uri") or (path.as_uri() if name.startswith(LOCAL_PREFIX) else name_to_uri(name))
        updated_ns, problem = page_date(front.meta)
        if problem:
            warnings.append((str(path), problem))
        return self.page(name, uri, title, front.get("description"), body, updated_ns)


def fetched_fields(item: Document | dict[str, Any]) -> tuple[str, str, str, str, str, str] | tuple[str, str]:
    """A fetched document as ``(name, uri, title, description, content, digest)``, or ``(shown name, reason)``
    when it cannot be kept (no name, empty content)."""
    data = item.to_dict() if isinstance(item, Document) else dict(item)
    name = document_name(str(data.get("name") or ""), str(data.get("uri") or ""))
    content = str(data.get("content") or "")
    if not name:
        return str(data.get("name") or "?"), "no document name"
    if not content.strip():
        return name, "empty content"
    title = str(data.get("title") or "") or first_heading(content) or title_from_name(name)
    uri = str(data.get("uri") or "") or name_to_uri(name)
    description = str(data.get("description") or "")
    return name, uri, title, description, content, content_digest(uri, title, description, content)


def content_digest(*parts: str) -> str:
    """The SHA-256 of a document's fields, NUL-joined: an unchanged document is not written again."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def front_matter_date(raw: bytes) -> int | None:
    """The date a file's front matter gives (None when none, or when it cannot be read)."""
    try:
        return page_date(split_front_matter(raw.decode("utf-8", errors="replace")).meta)[0]
    except FrontMatterError:
        return None


def has_front_matter(raw: bytes) -> bool:
    """Whether a file's text opens with a front matter block (a broken one counts: it is reported as such)."""
    return re.match(rb"---[ \t]*\r?\n", raw.removeprefix(b"\xef\xbb\xbf")) is not None


def jsonl_name(fields: dict[str, str]) -> str:
    """The document name of a JSON Lines record (its ``name``, else its ``uri``), or ``""``."""
    return document_name(fields.get("name", ""), fields.get("uri", ""))


def document_name(name: str, uri: str) -> str:
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


def title_from_name(name: str) -> str:
    """A title made of a document name's last part: ``documents/a/get-started`` gives ``Get started``."""
    last = name.rstrip("/").rsplit("/", 1)[-1]
    return last.replace("-", " ").replace("_", " ").strip().capitalize() or name

"""YAML front matter of a Markdown page: the block between two ``---`` lines at the very top.

Four fields name and describe the page (``name``, ``uri``, ``title``, ``description``), and a date field
(:data:`DATE_FIELDS`, as static site generators write them) says when it was last updated; others are kept
in ``meta`` but unused. A broken block raises :class:`FrontMatterError` with a reason a user can act on,
because silently indexing a page under a different name would be worse than skipping it.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..dates import epoch_nanoseconds
from ..errors import ConfigurationError

__all__ = ["DATE_FIELDS", "FIELDS", "FrontMatter", "FrontMatterError", "page_date", "split_front_matter"]

#: The fields the index reads, all strings.
FIELDS = ("name", "uri", "title", "description")
#: Where a page says when it was last updated, first found wins: Hugo's ``lastmod``, Jekyll's
#: ``last_modified_at``, MkDocs' ``updated``; ``date`` (often the first publication) comes last.
DATE_FIELDS = ("updated", "last_updated", "lastmod", "last_modified", "last_modified_at", "modified", "date")

# The C loader is several times faster; fall back to the pure-Python one where libyaml is missing.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


class FrontMatterError(ValueError):
    """The front matter block cannot be read; the message says why (and where, for YAML errors)."""


@dataclass(frozen=True)
class FrontMatter:
    """A page split into its front matter fields and its Markdown body."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""

    def get(self, key: str) -> str:
        """A field as a stripped string (``""`` when absent)."""
        value = self.meta.get(key)
        return "" if value is None else str(value).strip()


def split_front_matter(text: str) -> FrontMatter:
    """Split ``text`` into front matter and body.

    Text without a leading ``---`` line has no front matter (the whole text is the body). Raises
    :class:`FrontMatterError` when the block is not closed, is not valid YAML, is not a mapping, or
    gives one of :data:`FIELDS` as a list or mapping.
    """
    text = text.removeprefix("\ufeff")
    opening = _OPEN.match(text)
    if not opening:
        return FrontMatter({}, text)
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        raise FrontMatterError("front matter is not closed: the first line is '---' but no closing '---' line follows")
    block = text[opening.end() : closing.start()]
    body = text[closing.end() :].lstrip("\r\n")
    try:
        meta = yaml.load(block, Loader=_Loader)  # a safe loader (CSafeLoader or SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FrontMatterError(f"front matter is not valid YAML{where}: {problem}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontMatterError(f"front matter is a {type(meta).__name__}, not a mapping of fields")
    for key in FIELDS:
        value = meta.get(key)
        if isinstance(value, (list, dict, set)):
            raise FrontMatterError(f"front matter field {key!r} must be text, not a {type(value).__name__}")
        if isinstance(value, (datetime.date, datetime.datetime)):
            meta[key] = value.isoformat()
    return FrontMatter({str(key): value for key, value in meta.items()}, body)


def page_date(meta: dict[str, Any]) -> tuple[int | None, str]:
    """When a page was last updated by its front matter (or a JSON Lines record): nanoseconds since the
    epoch (None when it says nothing usable) and, for a date field that is not a date, the reason to report."""
    for key in DATE_FIELDS:
        value = meta.get(key)
        if value is None or value == "":
            continue
        try:
            return epoch_nanoseconds(value)[0], ""
        except ConfigurationError:
            return None, f"the date field {key!r} is not a date ({str(value)[:40]!r}); the file's time dates the page"
    return None, ""

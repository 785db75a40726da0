"""The checks a pack file passes before anything reads its rows: a pack is data from a stranger.

:func:`check_tables` runs before the first row is read: every object is a plain table (no view, no trigger)
with the schema's columns; :func:`check_rows` then bounds the values the index relies on (ids, passage
numbers, term-count sizes, the origins of the pages) and :func:`check_manifest` holds the manifest to its
schema. Each failure is one :class:`~.pack.PackError` line naming what is wrong.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from typing import Any

from ..errors import ConfigurationError
from ..local.ranker import FIELDS
from ..local.schema import MAX_DOC_ID, PAGE_SHIFT, PASSAGES_PER_PAGE, fts_declaration, schema_columns
from ..names import MAX_NAME_LENGTH

__all__ = [
    "MAX_MANIFEST_BYTES",
    "SOURCE_FIELDS",
    "Damaged",
    "check_manifest",
    "check_name",
    "check_rows",
    "check_tables",
]

#: A manifest is a few lines per source; a longer one is refused before it is parsed.
MAX_MANIFEST_BYTES = 1 << 20
MAX_SOURCES = 1000
MAX_TEXT = 10_000  # a manifest string (title, licence, attribution, repository)
# Written by older builds (the date column came later); its absence is allowed.
_OPTIONAL_COLUMNS = {"documents": {"updated_ns"}}
#: The text fields of each source in a manifest.
SOURCE_FIELDS = ("title", "repository", "commit", "license", "attribution")


class Damaged(ConfigurationError):
    """Raised here; :func:`~.pack.read_manifest` words it as a :class:`~.pack.PackError` with the file's name."""


def check_name(name: Any, what: str = "pack name") -> str:
    """``name`` when it can name a pack or a source: 1 to 80 printable characters, no ``/`` or ``\\``
    (a name is part of each page's origin ``pack:PACK/SOURCE``: a slash would let one pack pose as another)."""
    if not isinstance(name, str) or not name.strip():
        raise Damaged(f"its {what} is missing")
    if len(name) > 80 or name != name.strip() or name in (".", ".."):
        raise Damaged(f"its {what} {name[:80]!r} is not a name (1 to 80 characters, no spaces around)")
    if any(ch in "/\\" or unicodedata.category(ch).startswith("C") for ch in name):
        raise Damaged(f"its {what} {name!r} holds a slash or a control character")
    return name


def check_manifest(manifest: Any, *, pack_format: int) -> dict[str, Any]:
    """``manifest`` when it has the pack manifest's shape: ``name``, ``format``, a list of ``sources`` each with
    a unique ``name``, text fields and a page count; else :class:`Damaged` naming the first problem."""
    if not isinstance(manifest, dict):
        raise Damaged("its manifest is not an object")
    check_name(manifest.get("name"))
    if manifest.get("format", pack_format) != pack_format or isinstance(manifest.get("format"), bool):
        raise Damaged(f"its manifest says format {str(manifest.get('format'))[:20]!r}, its meta {pack_format}")
    for key in ("built", "devknow_jupyter"):
        if key in manifest and not _short_text(manifest[key]):
            raise Damaged(f"its manifest's {key} is not a short text")
    sources = manifest.get("sources")
    if not isinstance(sources, list) or not sources or len(sources) > MAX_SOURCES:
        raise Damaged(f"its manifest lists no sources (or more than {MAX_SOURCES})")
    seen = set()
    for number, source in enumerate(sources, 1):
        if not isinstance(source, dict):
            raise Damaged(f"source {number} of its manifest is not an object")
        name = check_name(source.get("name"), f"source {number}'s name")
        if name in seen:
            raise Damaged(f"its manifest lists the source {name!r} twice")
        seen.add(name)
        for key in SOURCE_FIELDS:
            if not _short_text(source.get(key, "")):
                raise Damaged(f"the {key} of source {name!r} is not a short text")
        pages = source.get("pages")
        if not isinstance(pages, int) or isinstance(pages, bool) or not 0 <= pages <= MAX_DOC_ID:
            raise Damaged(f"the page count of source {name!r} is not a count")
    return manifest


def _short_text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT


def check_tables(db: sqlite3.Connection, schema: str = "main") -> None:
    """Every object of the database ``schema`` is a plain table or index (no view, no trigger, which would run
    SQL of the pack's choosing on read), the schema's tables hold its columns, and the full-text table is the
    one this version declares. Reads the catalogue only, never a row."""
    kinds: dict[str, tuple[str, str]] = {}
    for kind, name, sql in db.execute(f"SELECT type, name, sql FROM {schema}.sqlite_master"):
        if kind not in ("table", "index"):
            raise Damaged(f"it holds a {kind} ({str(name)[:60]!r}); a pack holds only tables")
        kinds[name] = (kind, sql or "")
    for table, columns in schema_columns().items():
        if kinds.get(table, ("",))[0] != "table":
            raise Damaged(f"its table {table} is missing")
        found = tuple(
            (row[1], str(row[2]).upper(), row[3], row[5], row[6])
            for row in db.execute(f"PRAGMA {schema}.table_xinfo({table})")
        )
        optional = _OPTIONAL_COLUMNS.get(table, set())
        if found != tuple(column for column in columns if column[0] not in optional or column in found):
            raise Damaged(f"its table {table} does not have the expected columns")
    declared = kinds.get("chunks_fts", ("", ""))[1]
    if " ".join(declared.split()) != fts_declaration():
        raise Damaged("its full-text table is missing or not the one devknow makes")
    if not _unique(db, schema, "documents", "name"):
        raise Damaged("its documents' names are not unique")


def _unique(db: sqlite3.Connection, schema: str, table: str, column: str) -> bool:
    """Whether ``table`` has a unique index on ``column`` alone."""
    for row in db.execute(f"PRAGMA {schema}.index_list({table})"):
        if row[2] and [info[2] for info in db.execute(f"PRAGMA {schema}.index_info({row[1]!r})")] == [column]:
            return True
    return False


def check_rows(db: sqlite3.Connection, origins: set[str], schema: str = "main") -> None:
    """The rows the index relies on are in range: page ids (so passage ids fit 64 bits), text fields that are
    text, names of a sane length, passages numbered as the index numbers them and belonging to a page, term
    counts of the size their terms say, and every page of one of ``origins`` (the manifest's sources)."""
    fields = len(FIELDS)
    bad = db.execute(
        f"SELECT count(*), min(id), max(id) FROM {schema}.documents"
        " WHERE id NOT BETWEEN 1 AND ? OR typeof(name) != 'text' OR length(name) NOT BETWEEN 1 AND ?"
        " OR typeof(uri) != 'text' OR typeof(title) != 'text' OR typeof(description) != 'text'"
        " OR typeof(content) != 'text' OR typeof(sha256) != 'text'",
        (MAX_DOC_ID, MAX_NAME_LENGTH),
    ).fetchone()
    if bad[0]:
        raise Damaged(f"{bad[0]} of its pages have an id out of range or a field of the wrong type")
    found = {row[0] for row in db.execute(f"SELECT DISTINCT origin FROM {schema}.documents")}
    foreign = sorted(str(origin)[:60] for origin in found - origins)
    if foreign:
        raise Damaged(f"it holds pages of an origin its manifest does not list ({foreign[0]!r})")
    bad = db.execute(
        f"SELECT count(*) FROM {schema}.chunks WHERE seq NOT BETWEEN 0 AND ? OR id != ((doc_id << {PAGE_SHIFT}) | seq)"
        " OR typeof(breadcrumb) != 'text' OR typeof(title) != 'text' OR typeof(headings) != 'text'"
        f" OR typeof(body) != 'text' OR doc_id NOT IN (SELECT id FROM {schema}.documents)",
        (PASSAGES_PER_PAGE,),
    ).fetchone()[0]
    if bad:
        raise Damaged(f"{bad} of its passages are misnumbered or belong to no page")
    # The counts' rows are matched to the terms when the ranker is built (a page whose rows and terms disagree
    # is left unranked there): counting the terms here would read every page's terms once more.
    bad = db.execute(
        f"SELECT count(*) FROM {schema}.page_terms WHERE typeof(terms) != 'text' OR typeof(counts) != 'blob'"
        " OR typeof(lengths) != 'blob' OR length(lengths) != ? OR length(counts) % ? != 0"
        f" OR doc_id NOT IN (SELECT id FROM {schema}.documents)",
        (4 * fields, 2 * fields),
    ).fetchone()[0]
    if bad:
        raise Damaged(f"{bad} of its pages' term counts are damaged")

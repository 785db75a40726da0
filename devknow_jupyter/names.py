"""Turn what users pass to ``get_documents`` into document names.

Accepted: names (``documents/host/path``), page URLs (``https://host/path``), bare ``host/path``,
:class:`~devknow_jupyter.models.DocumentChunk`, :class:`~devknow_jupyter.models.Document`,
:class:`~devknow_jupyter.models.SearchResults` and any iterable of these.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigurationError
from .models import DOCUMENT_PREFIX, Document, DocumentChunk, SearchResults

__all__ = ["MAX_NAME_LENGTH", "normalize_name", "normalize_names", "normalize_source", "source_matches"]

#: The service rejects longer names (INVALID_ARGUMENT).
MAX_NAME_LENGTH = 500


def normalize_name(item: Any) -> str:
    """One document name from a name, URL, hit or document."""
    if isinstance(item, DocumentChunk):
        return item.parent
    if isinstance(item, Document):
        return item.name
    if not isinstance(item, str):
        raise ConfigurationError(f"Cannot read a document name from {type(item).__name__}: {item!r:.80}")
    text = item.strip()
    if not text:
        raise ConfigurationError("A document name is empty.")
    if text.startswith(("https://", "http://")):
        parts = urlsplit(text)  # the fragment is a place in the page, not part of its name
        text = DOCUMENT_PREFIX + parts.netloc + parts.path.rstrip("/") + (f"?{parts.query}" if parts.query else "")
    elif not text.startswith(DOCUMENT_PREFIX):
        host = text.split("/", 1)[0]
        if "." not in host or " " in text:
            raise ConfigurationError(
                f"Not a document name or page URL: {text!r:.120}",
                hint="Names look like documents/developers.google.com/knowledge; URLs start with https://.",
            )
        text = DOCUMENT_PREFIX + text.rstrip("/")
    if len(text) > MAX_NAME_LENGTH:
        raise ConfigurationError(f"A document name is longer than {MAX_NAME_LENGTH} characters: {text[:60]}…")
    return text


def normalize_names(items: Any) -> list[str]:
    """Names for every item, flattened, with duplicates removed and the first-seen order kept."""
    if isinstance(items, (str, DocumentChunk, Document)):
        items = [items]
    names: list[str] = []
    for item in items if isinstance(items, Iterable) else [items]:
        if isinstance(item, SearchResults) or (isinstance(item, (list, tuple)) and not isinstance(item, str)):
            names.extend(normalize_names(item))
        else:
            names.append(normalize_name(item))
    return list(dict.fromkeys(names))


def normalize_source(source: str) -> str:
    """A site filter as compared with page URLs: ``"https://ADK.dev/"`` -> ``"adk.dev"``; a path may follow."""
    return source.strip().lower().removeprefix("https://").removeprefix("http://").strip("/")


def source_matches(uri: str, source: str) -> bool:
    """Whether a page URL is on the site ``source`` (a normalized host, or host/path prefix); subdomains count."""
    try:
        parts = urlsplit(uri)
        host = (parts.hostname or "").lower()
    except ValueError:  # a URI urllib can't read is on no site
        return False
    domain, _, path = source.partition("/")
    if not (host == domain or host.endswith("." + domain)):
        return False
    return not path or parts.path.lstrip("/").startswith(path)

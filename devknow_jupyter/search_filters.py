"""The sites and dates a search or answer is limited to (``--source``, ``--since``), and the AIP-160 filter the
REST surface takes for them.

Core, not in ``rest/``: every backend's search reads ``source`` through :func:`normalize_sources`, and a base
install (no ``rest`` extra) imports this. The service compares ``data_source`` (a site such as
``firebase.google.com``) exactly and ``update_time`` as an RFC 3339 timestamp; ``OR`` binds tighter than ``AND``;
a filter may not exceed 500 characters. Pure functions; no I/O and no Google library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .dates import rfc3339
from .errors import ConfigurationError

__all__ = ["MAX_FILTER_CHARS", "build_filter", "normalize_sources"]

MAX_FILTER_CHARS = 500
_SITE = re.compile(r"^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?:/[^\s\"\\]*)?$")


def normalize_sources(source: str | Iterable[str] | None) -> list[str]:
    """Sites as typed (``"firebase.google.com"``, ``"https://web.dev/"``, ``"a.dev, b.dev"``) → ``["a.dev", ...]``."""
    if not source:
        return []
    items = re.split(r"[\s,]+", source) if isinstance(source, str) else [str(item) for item in source]
    sites = []
    for item in items:
        site = item.strip().lower().removeprefix("https://").removeprefix("http://").strip("/")
        if not site:
            continue
        if not _SITE.match(site):
            raise ConfigurationError(f"Not a site: {item!r}.", hint="Give a site such as firebase.google.com.")
        sites.append(site)
    return list(dict.fromkeys(sites))


def build_filter(sources: list[str], since: Any = None) -> str:
    """``data_source = "a" OR data_source = "b"`` (hosts only: a path can't be filtered by the service), then
    ``AND update_time >= "…"``; empty when there is nothing to filter."""
    hosts = list(dict.fromkeys(site.split("/", 1)[0] for site in sources))
    terms = []
    if hosts:
        either = " OR ".join(f'data_source = "{host}"' for host in hosts)
        terms.append(f"({either})" if len(hosts) > 1 and since is not None else either)
    if since is not None and since != "":
        terms.append(f'update_time >= "{rfc3339(since)}"')
    expression = " AND ".join(terms)
    if len(expression) > MAX_FILTER_CHARS:
        raise ConfigurationError(
            f"The filter would be {len(expression)} characters; the service takes at most {MAX_FILTER_CHARS}.",
            hint="Name fewer sites.",
        )
    return expression


"""AIP-160 filters for the REST surface's search and answers, built from ``--source`` and ``--since``.

The service compares ``data_source`` (a site such as ``firebase.google.com``) exactly and ``update_time`` as
an RFC 3339 timestamp; ``OR`` binds tighter than ``AND``; a filter may not exceed 500 characters. Pure
functions; no I/O and no Google library.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigurationError

__all__ = ["MAX_FILTER_CHARS", "build_filter", "normalize_sources", "rfc3339"]

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


def rfc3339(since: Any) -> str:
    """A date (``"2026-03-01"``, a ``date``), a time (``"2026-03-01T12:00:00Z"``, a ``datetime``) as RFC 3339 in
    UTC, the form ``update_time`` filters need. A date means its start (00:00 UTC)."""
    if isinstance(since, dt.datetime):
        moment = since
    elif isinstance(since, dt.date):
        moment = dt.datetime(since.year, since.month, since.day)
    else:
        text = str(since or "").strip()
        try:
            moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ConfigurationError(
                f"Not a date: {text!r}.", hint="Use YYYY-MM-DD, or a time such as 2026-03-01T12:00:00Z."
            ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_nanoseconds(moment: Any) -> tuple[int, str]:
    """A date or time (as :func:`rfc3339` reads it) as nanoseconds since the epoch, and its RFC 3339 form.

    Raises :class:`ConfigurationError` when it is not a date."""
    text = rfc3339(moment)
    parsed = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    return int(parsed.timestamp()) * 1_000_000_000, text


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


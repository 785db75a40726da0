"""Dates as users and pages give them (``"2026-03-01"``, ``2026-03-01T12:00:00Z``, a ``date``): one reading
for the ``since`` filters (REST, the local index) and the dates pages carry in their front matter. Pure."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .errors import ConfigurationError

__all__ = ["epoch_nanoseconds", "rfc3339"]


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

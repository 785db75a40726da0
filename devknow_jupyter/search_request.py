"""One search or answer, as :class:`~devknow_jupyter.DevKnowClient` plans it: the typed request for the backend,
the filters the backend can't apply (applied here to its hits, with a notice), and the notices.

What a backend applies it says in its :class:`~devknow_jupyter.contract.Capabilities`: the REST surface any
hosts, dates and pages; the local index one site, dates and pages; MCP servers what their schemas take.
"""

from __future__ import annotations

from typing import Any

from .contract import AnswerQuery, Capabilities, SearchQuery
from .dates import rfc3339
from .errors import ConfigurationError
from .models import DocumentChunk
from .names import source_matches

__all__ = ["keep_hits", "plan_answer", "plan_search"]


def plan_search(
    query: str,
    sources: list[str],
    since: Any,
    page_size: int | None,
    page_token: str | None,
    can: Capabilities,
) -> tuple[SearchQuery, list[str], list[str]]:
    """The request for a backend that ``can`` do what its capabilities say, the sites left to filter here,
    and notices on what it can't do. Sites, dates and pages go to the backend when it applies them."""
    notices: list[str] = []
    when = rfc3339(since) if since else None
    sent: tuple[str, ...] = ()
    if can.search_sites == "hosts" and (sources or when):
        sent, filter_here = tuple(sources), [site for site in sources if "/" in site]  # whole sites only
    elif can.search_sites == "one" and len(sources) == 1:
        sent, filter_here = tuple(sources), []
    else:
        filter_here = list(sources)
    if when and not can.search_dates:
        notices.append(f"Not applied: since {when} (this server's search takes no date filter).")
        when = None
    size = None
    if page_size and can.paging:
        if page_size > can.max_page_size:
            notices.append(
                f"The service returns at most {can.max_page_size} hits a page; use client.next_page(results) for more."
            )
        size = min(int(page_size), can.max_page_size)
    if page_token and not can.paging:
        raise ConfigurationError(
            "This server's search has no pages.",
            hint="Use protocol='rest' or the local index for paging, or a larger -n.",
        )
    return SearchQuery(query, sent, when, size, page_token or None), filter_here, notices


def plan_answer(query: str, sources: list[str], since: Any, can: Capabilities) -> tuple[AnswerQuery, list[str]]:
    """The request for an answer grounded in ``sources`` and pages updated ``since``, and one-line notices on
    what the backend's answers can't apply. REST's AnswerQuery takes whole hosts and dates; the local index
    (and `devknow serve`) one site and dates."""
    when = rfc3339(since) if since is not None and since != "" else None
    if not sources and not when:
        return AnswerQuery(query), []
    if can.answer_sites == "hosts":
        paths = ", ".join(site for site in sources if "/" in site)
        said = f"Not applied to the answer: the path of {paths} (the service filters by site)."
        return AnswerQuery(query, tuple(sources), when), [said] if paths else []
    left = []
    one = can.answer_sites == "one"
    sent: tuple[str, ...] = ()
    if one and len(sources) == 1:
        sent = tuple(sources)
    elif sources:
        left.append(f"source {', '.join(sources)}")
    if when and not can.answer_dates:
        left.append(f"since {when}")
        when = None
    request = AnswerQuery(query, sent, when)
    if not left:
        return request, []
    why = "this server's answers take one site" if one else "this server's answers take no filter"
    return request, [f"Not applied: {' and '.join(left)} ({why})."]


def keep_hits(
    hits: tuple[DocumentChunk, ...], filter_here: list[str], page_size: int | None, notices: list[str]
) -> tuple[list[DocumentChunk], bool]:
    """The hits from the sites in ``filter_here`` (all, when empty), at most ``page_size`` of them, and whether
    some were cut to that size; a notice on ``notices`` says how many the filter kept."""
    chunks: list[DocumentChunk] = list(hits)
    if filter_here:
        chunks = [hit for hit in hits if any(source_matches(hit.uri, site) for site in filter_here)]
        notices.append(_filtered_here(", ".join(filter_here), len(chunks), len(hits)))
    if page_size and len(chunks) > page_size:
        return chunks[:page_size], True
    return chunks, False


def _filtered_here(source: str, kept: int, scanned: int) -> str:
    """The notice for hits filtered by site here, because the server's search has no such filter."""
    if not kept:
        return (
            f"No {source} hits among the first {scanned}: the server's search has no source filter, "
            "so its hits were filtered here. Try other words, or drop the source."
        )
    return (
        f"Filtered here to {source}: the server's search has no source filter ({kept} of {scanned} hits kept)."
    )

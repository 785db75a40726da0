"""One ``search_documents`` call, as :class:`~devknow_jupyter.DevKnowClient` makes it: the tool's arguments, the
filters the server can't apply (applied here to its hits, with a notice), and the page read from its reply.

What a server's search takes is read from its tool schema: the REST backend takes a ``filter`` expression,
paging and a page size; MCP servers may take a site field; the rest is done here or said in a notice.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .dates import rfc3339
from .errors import ConfigurationError
from .models import DocumentChunk
from .names import source_matches
from .search_filters import build_filter
from .tools import MAX_PAGE_SIZE

__all__ = ["answer_arguments", "keep_hits", "parse_page", "search_arguments", "search_input_names"]


def search_input_names(tools: Iterable[dict[str, Any]], tool: str = "search_documents") -> set[str]:
    """The argument names a server's ``tool`` (``search_documents``) takes, from its input schema in ``tools``."""
    for item in tools:
        if item.get("name") == tool:
            return set((item.get("inputSchema") or {}).get("properties") or {})
    return set()


def search_arguments(
    query: str,
    sources: list[str],
    since: Any,
    page_size: int | None,
    page_token: str | None,
    accepts: set[str],
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The tool's arguments for a search, the sites left to filter here, and notices on what the server
    can't do. Filters and paging go to the server when its search schema takes them (``accepts``: the
    search tool's argument names)."""
    arguments: dict[str, Any] = {"query": query}
    notices: list[str] = []
    if "filter" in accepts and (sources or since):
        arguments["filter"] = build_filter(sources, since)
        filter_here = [site for site in sources if "/" in site]  # the service filters by whole sites only
    else:
        field = _source_field(accepts) if sources else None
        filter_here = sources if len(sources) != 1 or not field else []
        if field and not filter_here:
            arguments[field] = sources[0]
        if since and "since" in accepts:  # the local index (and `devknow serve`): by the dates it knows
            arguments["since"] = rfc3339(since)
        elif since:
            notices.append(f"Not applied: since {rfc3339(since)} (this server's search takes no date filter).")
    if page_size and "page_size" in accepts:
        if page_size > MAX_PAGE_SIZE:
            notices.append(
                f"The service returns at most {MAX_PAGE_SIZE} hits a page; use client.next_page(results) for more."
            )
        arguments["page_size"] = min(int(page_size), MAX_PAGE_SIZE)
    if page_token:
        if "page_token" not in accepts:
            raise ConfigurationError(
                "This server's search has no pages.",
                hint="Use protocol='rest' or the local index for paging, or a larger -n.",
            )
        arguments["page_token"] = page_token
    return arguments, filter_here, notices


def answer_arguments(query: str, sources: list[str], since: Any, accepts: set[str]) -> tuple[dict[str, Any], list[str]]:
    """The tool's arguments for an answer grounded in ``sources`` and pages updated ``since``, and one-line
    notices on what the server's ``answer_query`` can't apply (``accepts``: its argument names). REST's
    AnswerQuery takes a ``filter``; the local index (and `devknow serve`) one site and ``since``."""
    arguments: dict[str, Any] = {"query": query}
    when = rfc3339(since) if since is not None and since != "" else None
    if not sources and not when:
        return arguments, []
    if "filter" in accepts:
        arguments["filter"] = build_filter(sources, since)
        paths = ", ".join(site for site in sources if "/" in site)
        said = f"Not applied to the answer: the path of {paths} (the service filters by site)."
        return arguments, [said] if paths else []
    left = []
    field = _source_field(accepts) if sources else None
    if field and len(sources) == 1:
        arguments[field] = sources[0]
    elif sources:
        left.append(f"source {', '.join(sources)}")
    if when and "since" in accepts:
        arguments["since"] = when
    elif when:
        left.append(f"since {when}")
    if not left:
        return arguments, []
    why = "this server's answers take one site" if field else "this server's answers take no filter"
    return arguments, [f"Not applied: {' and '.join(left)} ({why})."]


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


def parse_page(data: dict[str, Any]) -> tuple[tuple[DocumentChunk, ...], str | None, tuple[str, ...]]:
    """The hits, the next page's token, and the one-line ``notices`` a server may send beside them (the
    local index's weak match)."""
    hits = tuple(DocumentChunk.from_dict(item) for item in data.get("results") or [])
    notices = data.get("notices") if isinstance(data.get("notices"), list) else []
    return hits, data.get("nextPageToken") or None, tuple(str(n) for n in notices if str(n).strip())


def _source_field(inputs: set[str]) -> str | None:
    """The site filter argument among a search tool's argument names, if it has one."""
    return next((field for field in ("source", "data_source", "site") if field in inputs), None)


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

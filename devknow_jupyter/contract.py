"""The typed requests a backend takes and the capabilities it states, below :class:`~devknow_jupyter.DevKnowClient`.

The cut httpx makes between its API and its transports: the client turns what a user asked into a request
object (:class:`SearchQuery`, :class:`AnswerQuery`, or document names), hands it to the backend, and gets the
models back (:class:`~devknow_jupyter.models.SearchResults`, :class:`~devknow_jupyter.models.Documents`,
:class:`~devknow_jupyter.models.Answer`). What the backend can apply itself it says in its
:class:`Capabilities`; the client applies the rest to the hits, or says in a notice that it could not.
No tool name and no wire format appears here. Plain data: frozen dataclasses, hashable (cache keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NO_FILTERS", "AnswerQuery", "Capabilities", "SearchQuery"]

#: How a backend filters by site: not at all, one site (a path too, e.g. ``firebase.google.com/docs/auth``),
#: or any number of whole hosts (the REST surface's ``data_source``; a path it can't filter).
SITE_FILTERS = ("none", "one", "hosts")


@dataclass(frozen=True)
class SearchQuery:
    """One page of a search: the words, the sites and date it is limited to, and which page.

    ``sources``: normalized sites (``normalize_sources``); ``since``: an RFC 3339 time; ``page_size``: hits
    wanted (None: the backend's default); ``page_token``: the previous page's ``next_page_token``.
    """

    query: str
    sources: tuple[str, ...] = ()
    since: str | None = None
    page_size: int | None = None
    page_token: str | None = None


@dataclass(frozen=True)
class AnswerQuery:
    """A question, and the sites and date its answer should be grounded in."""

    query: str
    sources: tuple[str, ...] = ()
    since: str | None = None


@dataclass(frozen=True)
class Capabilities:
    """What a backend applies itself; the client does or says the rest.

    Attributes:
        search_sites: ``"none"``, ``"one"`` or ``"hosts"`` (see :data:`SITE_FILTERS`).
        search_dates: Whether a search applies ``since``.
        paging: Whether a search takes ``page_size`` and ``page_token`` and returns ``next_page_token``.
        max_page_size: The most hits one page holds.
        answer_sites, answer_dates: The same for answers.
        citations: Whether answers carry citations.
        operations: The backend methods it serves: ``search``, ``get``, ``answer`` and any a registry tool names.
    """

    search_sites: str = "none"
    search_dates: bool = False
    paging: bool = False
    max_page_size: int = 100
    answer_sites: str = "none"
    answer_dates: bool = False
    citations: bool = False
    operations: frozenset[str] = field(default_factory=lambda: frozenset({"search", "get", "answer"}))


#: A backend that filters nothing and has no pages (what the client assumes when it need not ask).
NO_FILTERS = Capabilities()

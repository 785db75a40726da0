"""What a view may do beyond showing its result: open a page, fetch the next page of hits.

Results are plain data and hold no client; the caller that builds a view hands it a
:class:`ResultActions`. ``display()`` in a kernel hands the session's (the shared client of the magics,
see :func:`devknow_jupyter.session.default_actions`); a program hands :class:`ClientActions` over its
own client, or any object with ``get_documents`` (a :class:`~devknow_jupyter.DevKnowClient`), which
:func:`as_actions` wraps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..models import Document, SearchResults

__all__ = ["ClientActions", "ResultActions", "as_actions"]


@runtime_checkable
class ResultActions(Protocol):
    """The requests a view can make on its user's behalf."""

    def open(self, name: str) -> Document:
        """The whole document ``name`` (raises a DevKnowError when it can't be had)."""
        ...

    def next_page(self, results: SearchResults) -> SearchResults:
        """The page of hits after ``results`` (same query and filters)."""
        ...


class ClientActions:
    """:class:`ResultActions` over a client, or over a function returning one (looked up at each action, so
    a client rebuilt after ``%devknow --endpoint`` is the one used)."""

    def __init__(self, client: Any) -> None:
        self._get: Callable[[], Any] = client if callable(client) and not hasattr(client, "get_documents") else (
            lambda: client
        )

    def __repr__(self) -> str:
        return "<ClientActions>"

    @property
    def client(self) -> Any:
        """The client the next action goes through."""
        return self._get()

    def open(self, name: str) -> Document:
        """Fetch one document through the client (its cache serves a page opened before)."""
        return self.client.get_documents([name])[0]

    def next_page(self, results: SearchResults) -> SearchResults:
        """The next page of ``results`` through the client."""
        return self.client.next_page(results)


def as_actions(value: Any) -> ResultActions | None:
    """``value`` as actions: None stays None, actions stay as they are, a client is wrapped."""
    if value is None or isinstance(value, ResultActions):
        return value
    if hasattr(value, "get_documents"):
        return ClientActions(value)
    raise TypeError(f"Not a client or ResultActions: {type(value).__name__}")

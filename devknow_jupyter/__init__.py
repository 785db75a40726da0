"""devknow_jupyter: search and read Google's developer documentation from Jupyter.

In a notebook::

    %load_ext devknow_jupyter
    %devsearch create a Cloud Storage bucket
    %devget _devsearch
    %%devask
    How do I create a bucket?

From Python::

    from devknow_jupyter import DevKnowClient
    with DevKnowClient() as client:
        hits = client.search_documents("create a Cloud Storage bucket")

Exports are imported lazily so that ``import devknow_jupyter`` and ``%load_ext`` stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import display_hook
from ._version import __version__

if TYPE_CHECKING:
    from .client import DevKnowClient
    from .errors import (
        AuthenticationError,
        ConfigurationError,
        DevKnowError,
        DocumentNotFoundError,
        LocalIndexError,
        ProtocolError,
        QuotaExceededError,
        RequestTimeout,
        ToolError,
        TransportError,
    )
    from .explorer import explore
    from .models import Answer, Citation, Document, DocumentChunk, Documents, SearchResults

__all__ = [
    "Answer",
    "AuthenticationError",
    "Citation",
    "ConfigurationError",
    "DevKnowClient",
    "DevKnowError",
    "Document",
    "DocumentChunk",
    "DocumentNotFoundError",
    "Documents",
    "LocalIndexError",
    "ProtocolError",
    "QuotaExceededError",
    "RequestTimeout",
    "SearchResults",
    "ToolError",
    "TransportError",
    "__version__",
    "explore",
    "load_ipython_extension",
    "unload_ipython_extension",
]

_LAZY = {
    "DevKnowClient": ".client",
    "AuthenticationError": ".errors",
    "ConfigurationError": ".errors",
    "DevKnowError": ".errors",
    "DocumentNotFoundError": ".errors",
    "LocalIndexError": ".errors",
    "ProtocolError": ".errors",
    "QuotaExceededError": ".errors",
    "RequestTimeout": ".errors",
    "ToolError": ".errors",
    "TransportError": ".errors",
    "Answer": ".models",
    "Citation": ".models",
    "Document": ".models",
    "DocumentChunk": ".models",
    "Documents": ".models",
    "SearchResults": ".models",
    "explore": ".explorer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'devknow_jupyter' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def _display_bundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The mimebundle of a result (models' ``_repr_mimebundle_`` comes here through :mod:`.display_hook`): the
    package, above every layer, plugs the display layer into the plain data, so models.py imports no renderer."""
    from .display import mimebundle

    return mimebundle(obj, include=include, exclude=exclude)


display_hook.install(_display_bundle)


def load_ipython_extension(ipython: Any) -> None:
    """Register %devsearch, %devget, %%devask, %devknow and %deverror (``%load_ext devknow_jupyter``)."""
    from .deverror import register
    from .magics import load_ipython_extension as load

    load(ipython)
    register(ipython)  # after the others: it shares DevKnowMagics' settings and client


def unload_ipython_extension(ipython: Any) -> None:
    """Close the shared client (``%unload_ext devknow_jupyter``)."""
    from .deverror import unregister
    from .magics import unload_ipython_extension as unload

    unregister(ipython)
    unload(ipython)

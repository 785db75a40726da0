"""The Developer Knowledge API's REST surface as a backend (optional: ``pip install 'devknow-jupyter[rest]'``).

Importing this package is cheap; Google's client library loads when a :class:`RestBackend` is built.
"""

from __future__ import annotations

from .backend import DEFAULT_REST_ENDPOINT, MAX_PAGE_SIZE, REST_EXTRA_HINT, RestBackend, rest_available

__all__ = ["DEFAULT_REST_ENDPOINT", "MAX_PAGE_SIZE", "REST_EXTRA_HINT", "RestBackend", "rest_available"]

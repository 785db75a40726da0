"""The seam through which plain results reach the display layer, plugged in from above.

A result in :mod:`.models` displays itself (``_repr_mimebundle_``) by calling :func:`mimebundle` here. The
package root (``devknow_jupyter/__init__.py``), which Python runs before any module of the package, plugs the
display layer in with :func:`install`. So the models import neither a renderer nor the package root, and the
import graph has no cycle through either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["install", "mimebundle"]

Renderer = Callable[..., dict[str, Any]]
_installed: list[Renderer] = []  # the one renderer, set once by the package root


def install(renderer: Renderer) -> None:
    """Make ``renderer(obj, include=, exclude=)`` the function that turns a result into its mimebundle."""
    _installed[:] = [renderer]


def mimebundle(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
    """The mimebundle of ``obj`` from the installed display layer (IPython's ``include``/``exclude`` as given)."""
    if not _installed:  # cannot happen through an import: the package root installs it first
        raise RuntimeError("devknow_jupyter's display layer is not installed (import devknow_jupyter first)")
    return _installed[0](obj, include=include, exclude=exclude)

"""What ``%devget``'s arguments refer to: document names, page URLs, or variables holding results.

A token that is a variable reference (``hits``, ``_devsearch[0]``, ``hits[:3]``, ``answer.references``) whose
variable exists is evaluated in the user namespace; any other token is a document name or page URL, which the
client checks. Nothing here is imported at ``%load_ext``: the models load on first use.
"""

from __future__ import annotations

import re
from typing import Any

from IPython.core.error import UsageError

__all__ = ["any_names", "names_from"]

# A variable, then any subscripts or attributes: `_devsearch[0]`, `hits[:3]`, `answer.references`.
_VARIABLE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\[[^\]\n]*\]|\.[A-Za-z_]\w*)*")


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


def names_from(tokens: list[str], shell: Any) -> list[Any]:
    """Document names, URLs, or the values of namespace variables referred to in ``tokens``.

    A token that is a variable reference (``hits``, ``_devsearch[0]``, ``hits[:3]``,
    ``answer.references``) whose variable exists is evaluated in the user namespace; any other
    token is a document name or page URL, which the client checks.
    """
    from .models import Answer

    items: list[Any] = []
    namespace = shell.user_ns
    for token in map(_unquote, tokens):
        reference = _VARIABLE_REFERENCE.fullmatch(token)
        base = re.match(r"\w+", token).group(0) if reference else ""
        if not reference or (base not in namespace and "[" not in token and not token.isidentifier()):
            # A name or URL (`documents/...`, `https://...`, even `firebase.google.com`); the client checks it.
            items.append(token)
            continue
        if base not in namespace:
            raise UsageError(f"{token!r} is neither a variable nor a document name or page URL.")
        value = _evaluate(token, shell) if token != base else namespace[token]
        if isinstance(value, Answer):
            value = value.references
        if not _names_value(value):
            what = f"Variable {token} holds" if token == base else f"{token} gives"
            raise UsageError(
                f"{what} a {type(value).__name__}; %devget takes search hits, "
                "documents, an answer, or document names and page URLs."
            )
        items.append(value)
    return items


def _evaluate(reference: str, shell: Any) -> Any:
    """The value of ``reference`` (e.g. ``_devsearch[0]``) in the user namespace; a failure is a UsageError."""
    try:
        return shell.ev(reference)
    except Exception as exc:  # IndexError, KeyError, AttributeError, ...: say which reference failed
        raise UsageError(f"Could not evaluate {reference}: {type(exc).__name__}: {exc}") from None


def _names_value(value: Any) -> bool:
    """True when ``value`` is something %devget can fetch: names, hits, documents, or a list of them."""
    from .models import Document, DocumentChunk, Documents, SearchResults

    kinds = (str, SearchResults, DocumentChunk, Document, Documents)
    return isinstance(value, kinds) or (isinstance(value, (list, tuple)) and all(isinstance(v, kinds) for v in value))


def any_names(items: list[Any]) -> bool:
    """True when ``items`` (from :func:`names_from`) hold at least one name: ``_devsearch`` of a search that
    found nothing holds none."""
    from .models import Document, DocumentChunk

    for item in items:
        if isinstance(item, (str, DocumentChunk, Document)):
            return True
        if len(item):
            return True
    return False

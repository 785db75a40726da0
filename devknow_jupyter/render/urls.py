"""Which URLs a rendered page may link to: the one rule shared by the HTML renderer and the Markdown twin.

:func:`safe_url` judges a link or image destination (http, https and mailto only, relative ones resolved
against the page's own URL); :func:`usable_base` says whether a page URL can be such a base. Both
:mod:`.markdown` (HTML) and :mod:`.twin` (the ``text/markdown`` twin) import them from here, so neither
imports the other for it.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin, urlsplit

__all__ = ["SAFE_URL_SCHEMES", "absolute_ok", "safe_url", "usable_base"]

#: URL schemes allowed in links and images; everything else (``javascript:``, ``data:``, …) is dropped.
SAFE_URL_SCHEMES = frozenset({"http", "https", "mailto"})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def usable_base(base_url: str | None) -> str | None:
    """``base_url`` stripped, when it is an http(s) URL with a host that relative links can resolve against."""
    base = (base_url or "").strip()
    return base if base and absolute_ok(base, ("http", "https")) else None


def absolute_ok(url: str, schemes: tuple[str, ...] | frozenset[str]) -> bool:
    """True when ``url`` has one of ``schemes`` and, unless it is a mailto link, a host and a valid port.

    Odd URLs (``http://[::1``, ``https://x:99999/``) make ``urlsplit`` or ``.port`` raise ValueError;
    here they are simply not usable, so callers show a name without a link instead of failing.
    """
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in schemes:
            return False
        if scheme == "mailto":
            return True
        _ = parts.port  # raises ValueError when the port is not a number in 0-65535
        return bool(parts.hostname)
    except ValueError:
        return False


def safe_url(url: str, base_url: str | None = None) -> str | None:
    """``url`` if it is safe to link to (http, https, mailto; relative ones resolved against ``base_url``).

    Entities and control characters are decoded first, the way a browser would, so ``java&#115;cript:``
    or ``java\\tscript:`` cannot slip through. Returns None for anything else.
    """
    decoded = re.sub(r"[\t\n\r]", "", _CONTROL.sub("", html.unescape(url or ""))).strip()
    # The scheme is judged with every space removed (stricter than a browser); the URL keeps them, encoded.
    squeezed, cleaned = decoded.replace(" ", ""), decoded.replace(" ", "%20")
    if not squeezed:
        return None
    if ":" in re.split(r"[/?#]", squeezed, maxsplit=1)[0]:  # a scheme (a later colon is part of a path)
        return cleaned if absolute_ok(squeezed, SAFE_URL_SCHEMES) and absolute_ok(cleaned, SAFE_URL_SCHEMES) else None
    base = usable_base(base_url)
    if base:
        try:
            joined = urljoin(base, cleaned)
        except ValueError:
            return None
        return joined if absolute_ok(joined, SAFE_URL_SCHEMES) else None
    return cleaned if cleaned.startswith("#") else None

"""The extension's request input, checked before any of it reaches the client: JSON bodies and query text.

The panel sends small, flat JSON objects; anything else is refused with one
:class:`~devknow_jupyter.errors.ConfigurationError` (HTTP 400): a body over :data:`MAX_BODY_BYTES`, one nested
deeper than :data:`MAX_DEPTH` (a 100,000-deep array would exhaust the decoder's recursion), and text that is
not valid Unicode (a lone surrogate such as ``"\\ud800"`` is legal JSON but can't be encoded for the service,
SQLite or the reply).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ConfigurationError

__all__ = ["MAX_BODY_BYTES", "MAX_DEPTH", "read_json_object"]

#: The largest request body accepted (50 page URLs or a long question fit many times over).
MAX_BODY_BYTES = 64 * 1024
#: The deepest nesting accepted; the panel's bodies are one object holding strings or a list of them.
MAX_DEPTH = 8
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')  # a JSON string, escapes included
_BRACKET = re.compile(rb"[][{}]")


def read_json_object(raw: bytes) -> dict[str, Any]:
    """The JSON object in ``raw`` (an empty body is ``{}``), or :class:`ConfigurationError` saying what is wrong."""
    if len(raw) > MAX_BODY_BYTES:
        raise ConfigurationError(f"The request body is {len(raw):,} bytes; at most {MAX_BODY_BYTES:,} are accepted.")
    _check_depth(raw)
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too
        raise ConfigurationError("The request body is not JSON.") from None
    if not isinstance(data, dict):
        raise ConfigurationError("The request body must be a JSON object.")
    _check_strings(data)
    return data


def _check_text(text: str, what: str) -> str:
    """``text`` if it can be encoded as UTF-8 (no lone surrogates), else :class:`ConfigurationError` naming ``what``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError(f"The {what} holds text that is not valid Unicode (a lone surrogate).") from None
    return text


def _check_depth(raw: bytes) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` before decoding (brackets inside strings don't count)."""
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub(b"", raw)):
        depth += 1 if bracket[0] in b"[{" else -1
        if depth > MAX_DEPTH:
            raise ConfigurationError(f"The request body is nested more than {MAX_DEPTH} levels deep.")


def _check_strings(data: Any) -> None:
    """Every key and string value in ``data`` (at most :data:`MAX_DEPTH` deep) must be valid Unicode."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            _check_text(item, "request body")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)

"""Text bound for a terminal, with every character that could drive the terminal shown visibly escaped.

Titles, passages and error messages come from documents and servers. Printed as they are, an escape sequence
in them clears the screen, writes the clipboard (OSC 52), or shows one link and opens another (OSC 8); a bidi
override reorders what the reader sees. :func:`terminal_safe` turns C0 and C1 controls, DEL, bidi embeddings,
overrides and isolates (U+202A–U+202E, U+2066–U+2069) and lone surrogates (which cannot even be encoded)
into visible escapes such as ``\\x1b`` and ``\\u202e``. Newlines and tabs stay where they are layout.

Backslashes are not doubled: the point is that nothing reaches the terminal as a control, not a reversible
encoding. :func:`json_safe` does the same for JSON text while keeping it exactly the same data.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

__all__ = ["TerminalWriter", "json_safe", "terminal_safe"]

# Everything unsafe except tab and newline; the one-line pattern takes those too.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# What json.dumps(ensure_ascii=False) leaves raw: it escapes only U+0000-U+001F.
_UNSAFE_IN_JSON = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_safe(text: Any, *, one_line: bool = False) -> str:
    """``text`` with every control character, DEL, bidi control and lone surrogate visibly escaped.

    Newlines and tabs are kept (a CRLF line end becomes a newline); with ``one_line`` they are escaped too,
    so a message can't start a line of its own.
    """
    text = str(text)
    pattern = _UNSAFE_ONE_LINE if one_line else _UNSAFE
    if not pattern.search(text):
        return text
    if not one_line:
        text = text.replace("\r\n", "\n")
    return pattern.sub(_escape, text)


def json_safe(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the characters it leaves raw as ``\\uXXXX``.

    Those characters can only stand inside strings, where the escape means the same character: the data a
    JSON parser reads back is unchanged.
    """
    if not _UNSAFE_IN_JSON.search(dumped):
        return dumped
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group(0)):04x}", dumped)


class TerminalWriter:
    """A text stream that passes everything written through :func:`terminal_safe` to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text``, escaped; returns the number of characters written."""
        return self._stream.write(terminal_safe(text))

    def flush(self) -> None:
        """Flush the underlying stream."""
        self._stream.flush()

"""Message templates: the pages that state a diagnostic's message with placeholders, matched by a user's message.

A diagnostic page states its message as a template (``The function '{0}' isn't defined.``); the user pastes it
with their own names (``The function 'fetchUsers' isn't defined.``). Word matching cannot tell that page from
the hundred others that say "function" and "defined", and the user's names are on no page. So each template
line is compiled into a pattern whose placeholders match any name, and a message that matches a page's template
is an exact match of a different kind from BM25: :class:`MessageTemplates` says which pages it matches, and how
much of their template's wording it covered.

A template line is a line outside code blocks with a ``{0}``-style placeholder and at least
:data:`MIN_LITERAL_WORDS` words of its own (so ``'{0}'`` alone matches nothing), at most :data:`MAX_LINE` long.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["MAX_LINE", "MIN_LITERAL_WORDS", "MessageTemplates", "template_lines"]

MAX_LINE = 300
MIN_LITERAL_WORDS = 3
#: At most this many template lines are read from one page (a page of format strings is not a diagnostic).
MAX_PER_PAGE = 8

_PLACEHOLDER = re.compile(r"""['"`]?\{\d\}['"`]?""")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_MARKUP = re.compile(r"^[\s>*_-]+|[\s*_]+$")
_WORD = re.compile(r"[^\W\d_]{2,}")
# What stands for a placeholder in a user's message: a quoted name, or one run of non-blank characters.
_ANY_NAME = r"""(?:'[^'\n]{1,120}'|"[^"\n]{1,120}"|`[^`\n]{1,120}`|[^\s'"`]{1,120})"""


def template_lines(text: str) -> list[str]:
    """The template lines of one page's Markdown, markup (``_``, ``*``, ``>``) trimmed."""
    found: list[str] = []
    in_code = False
    for line in (text or "").splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code or "{" not in line or len(line) > MAX_LINE or not _PLACEHOLDER.search(line):
            continue
        line = _MARKUP.sub("", line)
        if len(_WORD.findall(_PLACEHOLDER.sub(" ", line))) >= MIN_LITERAL_WORDS:
            found.append(line)
            if len(found) >= MAX_PER_PAGE:
                break
    return found


def _pattern(line: str) -> str:
    """A regular expression for ``line``: placeholders match a name, blanks any blanks, the rest as written."""
    parts = []
    for piece in re.split(f"({_PLACEHOLDER.pattern})", line):
        if _PLACEHOLDER.fullmatch(piece):
            parts.append(_ANY_NAME)
        elif piece:
            words = piece.strip(" .").split()
            parts.append(r"\s+".join(re.escape(word) for word in words) if words else r"\s*")
    return r"\s*".join(part for part in parts if part)


class MessageTemplates:
    """The template lines of an index's pages, by page position (as the ranker orders its pages)."""

    def __init__(self, lines: Iterable[tuple[int, str]]) -> None:
        self._patterns: list[tuple[int, tuple[str, ...], re.Pattern[str], int]] = []
        for position, line in lines:
            literal = _PLACEHOLDER.sub(" ", line)
            words = tuple(dict.fromkeys(word.lower() for word in _WORD.findall(literal)))
            self._patterns.append((position, words, re.compile(_pattern(line), re.IGNORECASE), len(literal.strip())))

    def __len__(self) -> int:
        return len(self._patterns)

    def matches(self, message: str) -> dict[int, int]:
        """The page positions whose template ``message`` matches, each with its template's literal length (the
        longer the wording matched, the more specific the template)."""
        message = " ".join((message or "").split())[:2000]
        lowered = message.lower()
        found: dict[int, int] = {}
        for position, words, pattern, literal in self._patterns:
            # Every word of the template's own must be in the message: a cheap test before the pattern's.
            if literal > found.get(position, 0) and all(word in lowered for word in words) and pattern.search(message):
                found[position] = literal
        return found

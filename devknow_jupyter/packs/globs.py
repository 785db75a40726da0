"""Recipe path globs matched in linear time: ``**/`` spans folders (or none), ``*`` and ``?`` stay in one,
``{a,b}`` picks one of fixed alternatives.

A glob translated naively to a backtracking regex (``[^/]*a[^/]*a...b``) takes time exponential in its stars
on a long name that almost matches; a recipe is someone else's data, so that would hang ``pack build``. Here
the pattern is cut at its stars into fixed-length chunks, and every chunk between two stars is matched at its
first place after the star and never retried (a later place could only leave less room for the rest, which
starts with a star of the same kind and can absorb the difference). Python's ``re`` has no atomic groups, so
the "never retried" part is a lookahead that captures the chunk's first place plus a backreference to it.
The same holds one level up for ``**/``: runs of whole folders between two ``**/`` are placed first-fit.
Braces are expanded first (into at most :data:`MAX_ALTERNATIVES` patterns) so every chunk has a fixed length.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["MAX_ALTERNATIVES", "MAX_PATTERN_CHARS", "GlobError", "compile_glob"]

#: A glob's brace alternatives, all combinations counted, and its length are bounded.
MAX_ALTERNATIVES = 64
MAX_PATTERN_CHARS = 500

_DIRS = "(?:[^/]*/)*"  # any whole folders, or none: what ``**/`` spans


class GlobError(ValueError):
    """A glob that is too long, has too many brace alternatives, or uses ``**`` inside a name (``a**``)."""


def compile_glob(pattern: str) -> re.Pattern[str]:
    """One compiled regex that ``fullmatch``-es exactly the paths ``pattern`` names, in linear time."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise GlobError(f"the glob {pattern[:40]!r}... is longer than {MAX_PATTERN_CHARS} characters")
    names = itertools.count()
    variants = [_whole(variant, names) for variant in _expand(pattern)]
    return re.compile(variants[0] if len(variants) == 1 else "(?:" + "|".join(variants) + ")", re.DOTALL)


def _expand(pattern: str) -> list[str]:
    """The pattern once per choice of its ``{a,b}`` groups (a ``{`` with no ``}`` after it is a plain character)."""
    parts: list[list[str]] = []
    i = 0
    while i < len(pattern):
        end = pattern.find("}", i) if pattern[i] == "{" else -1
        if end == -1:
            start = i
            while i < len(pattern) and not (pattern[i] == "{" and "}" in pattern[i:]):
                i += 1
            parts.append([pattern[start:i]])
        else:
            parts.append(pattern[i + 1 : end].split(","))
            i = end + 1
    count = 1
    for choices in parts:
        count *= len(choices)
        if count > MAX_ALTERNATIVES:
            raise GlobError(f"the glob {pattern!r} has over {MAX_ALTERNATIVES} brace alternatives")
    return ["".join(choice) for choice in itertools.product(*parts)]


def _whole(pattern: str, names: itertools.count) -> str:
    """A brace-free glob as a regex: its runs of folders between ``**/`` placed first-fit."""
    if re.search(r"[^/]\*\*|\*\*[^/]", pattern):
        raise GlobError(f"the glob {pattern!r} has ** inside a name; ** stands for whole folders (docs/**/*.md)")
    trailing_any = pattern == "**" or pattern.endswith("/**")
    if trailing_any:  # `docs/**`: everything below; nothing follows it, so nothing to retry
        pattern = pattern[:-2]
    runs = pattern.split("**/")  # each run is whole folder and file names, between two ``**/``
    out = [_segments(runs[0], names)]
    for position, run in enumerate(runs[1:], 1):
        last = position == len(runs) - 1 and not trailing_any
        body = _segments(run, names)
        out.append(_DIRS + body if last else _first_fit(_DIRS, body, names))
    if trailing_any:
        out.append(".*")
    return "".join(out)


def _segments(run: str, names: itertools.count) -> str:
    """Folder and file names with ``*`` and ``?`` (no ``**``) as a regex: their stars' chunks placed first-fit."""
    chunks = run.split("*")
    out = [_chunk(chunks[0])]
    for position, chunk in enumerate(chunks[1:], 1):
        body = _chunk(chunk)
        last = position == len(chunks) - 1
        out.append("[^/]*" + body if last else _first_fit("[^/]*?", body, names))
    return "".join(out)


def _first_fit(gap: str, body: str, names: itertools.count) -> str:
    """``gap`` then ``body`` at the first place it fits, never retried: a lookahead captures it, a backreference
    consumes it (Python's ``re`` does not backtrack into a lookahead)."""
    name = f"g{next(names)}"
    lazy = gap if gap.endswith("?") else gap + "?"
    return f"(?=(?P<{name}>{lazy}{body}))(?P={name})"


def _chunk(text: str) -> str:
    return "".join("[^/]" if ch == "?" else re.escape(ch) for ch in text)

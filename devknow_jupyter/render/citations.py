"""Citation markers in an answer's text: ``[1]``, ``[2]`` after each cited segment, numbered by reference.

A marker's number is the reference's place in ``answer.references`` (the numbered list under the answer),
so a segment backed by two documents reads ``…segment.[1][3]``. In Markdown and HTML each marker links
to its reference's page. An answer without citations (the MCP tool and the offline index send none)
comes back unchanged.

Markers go in the answer's Markdown source, so they must not break it: a citation ending inside a code
block, a code span, a link, a raw tag or a bare URL gets its markers just after that construct instead
(after a fenced block, on a line of their own). Pure functions over :class:`~devknow_jupyter.models.Answer`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import quote

from .markdown import safe_url

if TYPE_CHECKING:
    from ..models import Answer

__all__ = ["cited_markdown", "cited_plain", "marker_positions"]

# Constructs a marker must not land inside. A fenced block runs to its closing fence (or the end).
_FENCED = re.compile(
    r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[`~]*[ \t]*$\n?"  # a closed block, with its closing line
    r"|^ {0,3}(?:`{3,}|~{3,}).*\Z",  # a block never closed runs to the end
    re.MULTILINE | re.DOTALL,
)
_INLINE = re.compile(
    r"(`+).+?\1"  # a code span
    # a link or image, with one level of brackets in its text and of parentheses in its target
    r"|!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\((?:[^()\n]|\([^()\n]*\))*\)"
    r"|<[^<>\n]+>"  # an autolink or a raw tag
    r"|https?://[^\s<>]+",  # a bare URL, which a linkifier would extend over a marker glued to it
    re.DOTALL,
)


def _regions(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_fenced_block) of every construct a marker must stay out of, in text order."""
    regions = [(m.start(), m.end(), True) for m in _FENCED.finditer(text)]
    position = 0
    for start, end, _ in [*regions, (len(text), len(text), True)]:
        regions += [(position + m.start(), position + m.end(), False) for m in _INLINE.finditer(text[position:start])]
        position = end
    return sorted(regions)


def marker_positions(answer: Answer) -> list[tuple[int, list[int], bool]]:
    """Where markers go: ``(string index, reference numbers, on a line of their own)``, in text order.

    Each citation's markers go at its end, moved past any construct that end falls inside; citations
    whose markers meet at one place share it (each number once, in ascending order).
    """
    text = answer.answer_text
    regions = _regions(text)
    places: dict[int, tuple[list[int], bool]] = {}
    for citation in answer.citations:
        position, own_line = min(max(citation.end, 0), len(text)), False
        for start, end, fenced in regions:
            if start < position < end or (fenced and start == position < end):
                position, own_line = end, fenced
        numbers = [answer.references.index(name) + 1 for name in citation.references if name in answer.references]
        if not numbers:
            continue
        have, line = places.setdefault(position, ([], own_line))
        have.extend(number for number in numbers if number not in have)
        places[position] = (have, line or own_line)
    return [(position, sorted(numbers), own_line) for position, (numbers, own_line) in sorted(places.items())]


def _insert(text: str, marks: list[tuple[int, str, bool]]) -> str:
    out, position = [], 0
    for at, mark, own_line in marks:
        out.append(text[position:at])
        if own_line:  # after a fenced block: a paragraph of its own
            out.append(("" if at == 0 or text[at - 1] == "\n" else "\n") + mark + "\n\n")
        else:
            out.append((" " if at and text[at - 1] == "\\" else "") + mark)  # a trailing "\" would escape it
        position = at
    out.append(text[position:])
    return "".join(out)


def cited_plain(answer: Answer) -> str:
    """The answer's text with plain ``[n]`` markers, for terminals and the CLI."""
    if not answer.citations:
        return answer.answer_text
    marks = [(at, "".join(f"[{n}]" for n in numbers), own) for at, numbers, own in marker_positions(answer)]
    return _insert(answer.answer_text, marks)


def _marker_link(number: int, name: str) -> str:
    from ..models import name_to_uri

    label = rf"\[{number}\]"
    target = safe_url(name_to_uri(name))
    if not target:
        return label
    # Quotes, brackets and parentheses encoded: Python-Markdown reads a quote in a target as a title's start.
    target = quote(target, safe=":/?#@!$&+,;=%~-._")
    return f"[{label}]({target})"


def cited_markdown(answer: Answer) -> str:
    """The answer's Markdown with ``[n]`` markers, each a link to its reference's page (Markdown and HTML)."""
    if not answer.citations:
        return answer.answer_text
    marks = [
        (at, "".join(_marker_link(n, answer.references[n - 1]) for n in numbers), own)
        for at, numbers, own in marker_positions(answer)
    ]
    return _insert(answer.answer_text, marks)

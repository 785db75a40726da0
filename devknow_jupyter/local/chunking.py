"""Cut a Markdown page into passages along its headings, each carrying its heading path.

A page becomes sections (one per ATX or setext heading, outside fenced code). Long sections are split
at paragraph breaks (then at line breaks, then at spaces), never inside a fence when it can be helped;
tiny sections are merged into their neighbours so that a hit has enough text to read. Each passage
keeps the path of headings above it (``Title › Section › Subsection``), which both ranks (the index
weighs headings above body text) and reads well as the hit's first line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Chunk", "ChunkSizes", "chunk_markdown", "clean_heading", "first_heading", "split_blocks"]

SEPARATOR = " › "

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATTRS = re.compile(r"\s*\{[#:.][^}]*\}\s*$")  # "## Title {#anchor}" and kramdown "{: .class}"
# Emphasis and code marks; an underscore inside a word is part of it ("get_documents"), not emphasis.
_INLINE = re.compile(r"\*+|`+|(?<!\w)_+|_+(?!\w)")
_BLOCK_START = re.compile(r"^\s*([-*+>]|\d+[.)])(\s|$)")  # list items and quotes are not setext text
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class ChunkSizes:
    """Passage sizes in characters: aim for ``target``, never above ``maximum``, merge below ``minimum``."""

    target: int = 1000
    maximum: int = 1700
    minimum: int = 250


@dataclass(frozen=True)
class Chunk:
    """One passage: its heading path, the heading texts inside it, and its Markdown."""

    path: tuple[str, ...]
    headings: str
    text: str

    @property
    def breadcrumb(self) -> str:
        """The heading path on one line: ``Title › Section › Subsection``."""
        return SEPARATOR.join(self.path)

    @property
    def content(self) -> str:
        """What a search hit shows: the heading path as a heading, then the passage."""
        return f"## {self.breadcrumb}\n\n{self.text}" if self.text else f"## {self.breadcrumb}\n"


@dataclass
class _Section:
    level: int  # 0 for text before the first heading
    path: tuple[str, ...]
    heading_line: str  # the heading as written, shown inside a merged passage
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


def clean_heading(text: str) -> str:
    """A heading's readable text: no ``{#anchor}`` attributes, emphasis marks or link targets."""
    text = _ATTRS.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _INLINE.sub("", text)
    return " ".join(text.split())


def first_heading(markdown: str) -> str:
    """The text of the first heading outside code fences, or ``""``."""
    for section in _sections(markdown, ""):
        if section.level:
            return section.path[-1]
    return ""


def chunk_markdown(body: str, title: str, sizes: ChunkSizes | None = None) -> list[Chunk]:
    """Cut ``body`` (Markdown without front matter) into passages; ``title`` heads every heading path."""
    sizes = sizes or ChunkSizes()
    title = " ".join(title.split()) or "Untitled"
    pieces: list[tuple[_Section, str]] = []
    for section in _sections(body, title):
        text = section.text
        if len(text) <= sizes.maximum:
            pieces.append((section, text))
        else:
            pieces.extend((section, part) for part in _split_long(text, sizes))
    return _merge_small(pieces, sizes)


# -- sections ---------------------------------------------------------------------------------------


def _sections(body: str, title: str) -> Iterator[_Section]:
    """Split at headings outside fenced code; each section knows its heading path."""
    stack: list[tuple[int, str]] = []
    current = _Section(0, (title,) if title else (), "", [])
    fence: str | None = None
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in lines:
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = None
            current.lines.append(line)
            continue
        if fence_match:
            fence = fence_match.group(1)
            current.lines.append(line)
            continue
        level, text = _heading(line, current.lines)
        if not level:
            current.lines.append(line)
            continue
        if _SETEXT.match(line):
            current.lines.pop()  # the previous line was the heading's text
        if current.lines or current.level:
            yield current
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        path = tuple(heading for _, heading in stack)
        # A page's H1 usually repeats its title: don't say it twice.
        if title and path and path[0].casefold() == title.casefold():
            path = path[1:]
        full = ((title,) if title else ()) + path
        current = _Section(level, full, line if not _SETEXT.match(line) else f"{'#' * level} {text}", [])
    if current.lines or current.level:
        yield current


def _heading(line: str, previous: list[str]) -> tuple[int, str]:
    """(level, text) when ``line`` is a heading, else (0, "")."""
    atx = _ATX.match(line)
    if atx:
        text = clean_heading(atx.group(2) or "")
        return (len(atx.group(1)), text) if text else (0, "")
    setext = _SETEXT.match(line)
    if setext and previous:
        above = previous[-1]
        # Setext needs paragraph text right above; list items, tables and quotes don't count.
        if above.strip() and "|" not in above and not _ATX.match(above) and not _BLOCK_START.match(above):
            text = clean_heading(above)
            if text:
                return (1 if setext.group(1)[0] == "=" else 2), text
    return 0, ""


# -- splitting and merging -------------------------------------------------------------------------


def split_blocks(text: str) -> list[str]:
    """Paragraph-sized blocks: split at blank lines, keeping each fenced code block whole."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is not None:
            current.append(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            current.append(line)
            continue
        if not line.strip():
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _split_long(text: str, sizes: ChunkSizes) -> list[str]:
    """Split an over-long section into parts near ``target`` at block, then line, then word breaks."""
    units: list[str] = []
    for block in split_blocks(text):
        if len(block) <= sizes.maximum:
            units.append(block)
            continue
        units.extend(_split_lines(block, sizes))
    parts: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + 2 + len(unit) > sizes.target:
            parts.append(current)
            current = unit
        else:
            current = f"{current}\n\n{unit}" if current else unit
    if current:
        parts.append(current)
    return parts


def _split_lines(block: str, sizes: ChunkSizes) -> list[str]:
    """Split one huge block (a long code listing or a paragraph without breaks) at lines, then spaces."""
    parts: list[str] = []
    current: list[str] = []
    length = 0
    for line in block.split("\n"):
        while len(line) > sizes.maximum:  # a single monster line: cut at the last space before the limit
            cut = line.rfind(" ", 0, sizes.target)
            cut = cut if cut > sizes.target // 2 else sizes.target
            head, line = line[:cut], line[cut:].lstrip()
            if current:
                parts.append("\n".join(current))
                current, length = [], 0
            parts.append(head)
        if current and length + len(line) + 1 > sizes.target:
            parts.append("\n".join(current))
            current, length = [], 0
        current.append(line)
        length += len(line) + 1
    if current:
        parts.append("\n".join(current))
    return [part for part in parts if part.strip()]


def _merge_small(pieces: list[tuple[_Section, str]], sizes: ChunkSizes) -> list[Chunk]:
    """Merge passages below ``minimum`` into a neighbour while the result stays within ``target``."""
    chunks: list[tuple[tuple[str, ...], list[str], str]] = []  # (path, heading texts, text)
    previous_section: _Section | None = None
    for section, text in pieces:
        continued = section is previous_section  # a later part of a split section
        previous_section = section
        heading = [] if continued or not section.level else [section.path[-1]]
        if chunks:
            path, headings, last = chunks[-1]
            small = len(last) < sizes.minimum or len(text) < sizes.minimum
            if small and len(last) + len(text) + len(section.heading_line) + 4 <= sizes.target:
                shown = text if continued or not section.heading_line else f"{section.heading_line}\n\n{text}"
                merged = f"{last}\n\n{shown}".strip("\n") if last else shown.strip("\n")
                chunks[-1] = (path, headings + heading, merged)
                continue
        chunks.append((section.path, heading, text))
    result = []
    for path, headings, text in chunks:
        inner = [h for h in headings if h not in path]
        result.append(Chunk(path, " ".join([*path[1:], *inner]), text.strip("\n")))
    return [chunk for chunk in result if chunk.text.strip() or len(result) == 1]

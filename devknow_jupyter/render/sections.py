"""Big pages by section: the first part rendered now, every later section rendered when it is asked for.

Rendering a 1 MB page (Python-Markdown, Pygments, nh3) takes about a second; what a reader sees first is
its first screens. So a page longer than :data:`FIRST_CHARS` is cut into sections at its headings
(:func:`outline`, one cheap pass over the text) and:

* the contents list is built from that pass, so it reaches the last heading at once;
* heading ids are the page's, chosen once for the whole page (duplicates numbered ``_1``, ``_2`` as
  Python-Markdown's ``toc`` does), so the contents list, in-page ``#anchor`` links and a section rendered
  later all agree, whichever section holds the link and whichever the heading;
* the first sections (:data:`FIRST_CHARS` characters) are rendered now; each later one is a placeholder
  holding its heading (with its id, so anchors land) and its Markdown source as escaped text (readable,
  searchable with the browser's find), until :func:`section_html` renders it (cached by the page's content
  hash and the section's number: each section is rendered once).

Each section is rendered on its own with the page's reference-style link definitions appended, so
``[text][ref]`` links still resolve. Fenced code is found where Python-Markdown's fenced_code finds it (the
same blocks as its pattern on every page of the shared corpus, at a tenth of the time), so a ``#`` line
inside code never starts a section.

Who fills the placeholders: the widget's page module (``esm/results.js``) asks the kernel for each section
as it nears the screen; the JupyterLab panel asks ``devknow/api/section``. The static outputs keep the
placeholders' source text (see :func:`~devknow_jupyter.render.static.document_html`).
"""

from __future__ import annotations

import hashlib
import html
import re
from dataclasses import dataclass
from functools import lru_cache

from .markdown import (
    CONTROL_CHARS,
    ID_PREFIX,
    TocEntry,
    converter,
    flatten_toc,
    image_placeholders,
    in_page_links,
    plain_code_after,
    prefixed_ids,
    public_links,
    sanitize_html,
)
from .urls import usable_base

__all__ = ["FIRST_CHARS", "SECTION_CHARS", "Outline", "outline", "page_parts", "section_html"]

#: Characters of a page rendered at once (whole sections, at least one); the rest waits for its turn.
FIRST_CHARS = 4_000
#: Sections are at least about this long (short sections are merged with the next ones).
SECTION_CHARS = 3_000
#: The class of a section not rendered yet (its ``data-dk-section`` attribute holds its number).
PENDING_CLASS = "devknow-pending"

# Python-Markdown's ATX heading: "#" at the very start of a line (no indent, a space is not required).
# A list item may start with one ("2. ### Step"): a heading of the contents, never where a section starts.
_ATX = re.compile(r"^((?:\d+[.)]|[-*+])[ ]+)?(#{1,6})(?!#)(.*?)#*[ \t]*$")
_SETEXT = re.compile(r"^(=+|-+)[ \t]*$")
_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S.*$", re.MULTILINE)
_ATTRS = re.compile(r"\s*\{:?\s*([^}]*)\}\s*$")
_GIVEN_ID = re.compile(r"(?:^|\s)#([\w-]+)")
# What a heading's text loses on the way to its contents entry and slug (as Python-Markdown's toc sees it:
# raw HTML keeps its text there): link and image syntax, emphasis and code marks, backslash escapes.
_INLINE_MARK = re.compile(
    r"!?\[([^\]]*)\]\([^)]*\)|(?<![\w_])_{1,3}(?=\S)(.+?)(?<=\S)_{1,3}(?![\w_])|[*`]+|~~|\\(?=[^\w\s])"
)
_NOT_PROSE = re.compile(r"^(?:\s|[-*+>|<]|\d+[.)])")
_HEADING_TAG = re.compile(r'(<h[1-6][^>]*?\bid=")([^"]*)(")')


@dataclass(frozen=True)
class Section:
    """One section: ``text[start:end]`` of the page, and the headings in it (indexes into ``Outline.toc``)."""

    start: int
    end: int
    headings: tuple[int, ...]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: outline() caches one per page
class Outline:
    """A page cut into sections, with every heading and its id (before the output's number is added)."""

    key: str
    text: str
    base_url: str | None
    prefix: str
    sections: tuple[Section, ...]
    toc: tuple[TocEntry, ...]
    offsets: tuple[int, ...]
    definitions: str

    def source(self, index: int) -> str:
        """The Markdown of section ``index``."""
        section = self.sections[index]
        return self.text[section.start : section.end]


_FENCE_OPEN = re.compile(r"^(~{3,}|`{3,})[ ]*(.*)$", re.MULTILINE)
# What may follow an opening fence for Python-Markdown's fenced_code: {attrs}, or (.)lang and hl_lines.
_FENCE_INFO = re.compile(r"""(\{[^\n]*\})|(\.?[\w#.+-]*[ ]*)?(hl_lines=("|').*?\4[ ]*)?$""")


def _fenced_spans(text: str) -> list[tuple[int, int]]:
    """Where Python-Markdown's fenced_code finds code blocks (start and end offsets): a fence at the start
    of a line, closed by the same fence alone on a later line. (Its own pattern takes ~70 ms on 1 MB.)"""
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        opening = _FENCE_OPEN.search(text, position)
        if opening is None:
            return spans
        fence = opening.group(1)
        if not _FENCE_INFO.fullmatch(opening.group(2)):
            position = opening.end()
            continue
        closing = re.compile("^" + re.escape(fence) + "[ ]*$", re.MULTILINE).search(text, opening.end() + 1)
        if closing is None:
            position = opening.end()
            continue
        spans.append((opening.start(), closing.end()))
        position = closing.end()


def _heading_text(raw: str) -> tuple[str, str | None]:
    """A heading's plain text (markup dropped, as its contents entry shows it) and the id it gives itself."""
    given = None
    attrs = _ATTRS.search(raw)
    if attrs:
        found = _GIVEN_ID.search(attrs.group(1))
        given = found.group(1) if found else None
        raw = raw[: attrs.start()]
    plain = _INLINE_MARK.sub(lambda m: m.group(1) or m.group(2) or "", raw)
    return " ".join(html.unescape(plain).split()), given


def _unique(ident: str, seen: set[str]) -> str:
    # Python-Markdown's toc.unique: "x", "x_1", "x_2", ...
    while ident in seen or not ident:
        match = re.match(r"^(.*)_([0-9]+)$", ident)
        ident = f"{match.group(1)}_{int(match.group(2)) + 1}" if match else f"{ident}_1"
    seen.add(ident)
    return ident


def _scan(text: str) -> tuple[list[tuple[int, int, str, str | None, bool]], list[int]]:
    """The headings outside fenced code, as (offset, level, text, given id, starts a block), and the offsets
    of paragraphs that start a block of their own (where a long run without headings may be cut)."""
    spans = _fenced_spans(text)
    found: list[tuple[int, int, str, str | None, bool]] = []
    breaks: list[int] = []
    offset, previous, before_previous, span = 0, "", "", 0
    for line in text.split("\n"):
        while span < len(spans) and spans[span][1] <= offset:
            span += 1
        in_code = span < len(spans) and spans[span][0] <= offset < spans[span][1]
        if not in_code and line:
            atx = _ATX.match(line)
            if atx:
                label, given = _heading_text(atx.group(3))
                found.append((offset, len(atx.group(2)), label, given, not previous.strip() and not atx.group(1)))
            elif _SETEXT.match(line) and previous.strip() and not before_previous.strip() \
                    and not _NOT_PROSE.match(previous):
                label, given = _heading_text(previous)
                found.append((offset - len(previous) - 1, 1 if line[0] == "=" else 2, label, given, False))
            elif not previous.strip() and not _NOT_PROSE.match(line):
                breaks.append(offset)
        before_previous, previous = previous, line
        offset += len(line) + 1
    return found, breaks


def _slug(label: str) -> str:
    from markdown.extensions.toc import slugify_unicode

    return slugify_unicode(label, "-") or "section"


@lru_cache(maxsize=16)
def outline(text: str, base_url: str | None = None) -> Outline:
    """Cut ``text`` into sections at headings that start a block (see the module docstring); cached."""
    base = usable_base(base_url)
    text = CONTROL_CHARS.sub("", text)
    key = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()
    digest = hashlib.sha1((base or text[:4000]).encode("utf-8", "replace")).hexdigest()[:6]
    prefix = f"{ID_PREFIX}{digest}-"
    headings, breaks = _scan(text)
    seen: set[str] = set()
    toc: list[TocEntry] = []
    offsets: list[int] = []
    starts: list[tuple[int, list[int]]] = [(0, [])]
    pending = iter(breaks)
    cut = next(pending, None)
    for offset, level, label, given, splits in [*headings, (len(text), 0, "", None, False)]:
        while cut is not None and cut <= offset:  # a long run without headings: cut it at paragraphs
            run = cut - starts[-1][0]
            if run >= 2 * SECTION_CHARS or (run >= SECTION_CHARS and not starts[-1][1]):
                starts.append((cut, []))
            cut = next(pending, None)
        if not level:
            break
        ident = prefix + (given if given else _unique(_slug(label), seen))
        if given:
            seen.add(given)
        if splits and offset - starts[-1][0] >= SECTION_CHARS:
            starts.append((offset, []))
        starts[-1][1].append(len(toc))
        toc.append(TocEntry(level, ident, label))
        offsets.append(offset)
    ends = [start for start, _ in starts[1:]] + [len(text)]
    sections = tuple(Section(start, end, tuple(heads)) for (start, heads), end in zip(starts, ends, strict=True))
    definitions = "\n".join(_DEFINITION.findall(text)) if "]:" in text else ""
    return Outline(key, text, base, prefix, sections, tuple(toc), tuple(offsets), definitions)


@lru_cache(maxsize=512)
def _rendered(page: Outline, index: int, remote_images: bool) -> str:
    """Section ``index`` of ``page`` as sanitized HTML with the page's heading ids (without output number)."""
    from .inline_budget import defuse_openers
    from .markdown import HIGHLIGHT_CHARS

    section = page.sections[index]
    source = page.source(index)
    if page.definitions:
        source += "\n\n" + page.definitions + "\n"
    md, state = converter()
    state["prefix"] = page.prefix
    md.reset()
    raw = md.convert(plain_code_after(defuse_openers(source), max(0, HIGHLIGHT_CHARS - section.start)))
    raw, local = prefixed_ids(raw, tuple(flatten_toc(getattr(md, "toc_tokens", []))), page.prefix)
    wanted = [page.toc[i].id for i in section.headings]
    if len(local) == len(wanted):  # the headings this pass found are the ones the page pass found
        renames = {entry.id: ident for entry, ident in zip(local, wanted, strict=True)}
        raw = _HEADING_TAG.sub(lambda m: m.group(1) + renames.get(m.group(2), m.group(2)) + m.group(3), raw)
    slugs = {entry.id.removeprefix(page.prefix): entry.id for entry in page.toc}
    cleaned = in_page_links(sanitize_html(public_links(raw, slugs), base_url=page.base_url), set(slugs.values()))
    return cleaned if remote_images else image_placeholders(cleaned)


def numbered(fragment: str, page: Outline, number: int) -> str:
    """``fragment`` with the output's ``number`` in its heading ids and anchors (as ``render_markdown`` does)."""
    return fragment.replace(f'id="{page.prefix}', f'id="{page.prefix}{number:x}-').replace(
        f'href="#{page.prefix}', f'href="#{page.prefix}{number:x}-'
    )


def _placeholder(page: Outline, index: int, number: int, sources: bool = True) -> str:
    """A section not rendered yet: its headings (ids kept, so anchors land), each followed by its Markdown
    source as escaped text (with ``sources``; without, the headings alone: less to send and sanitize)."""
    section = page.sections[index]
    parts = [f'<section class="{PENDING_CLASS}" data-dk-section="{index}">']
    cuts = [page.offsets[i] for i in section.headings]
    if sources and (not cuts or cuts[0] > section.start):
        parts.append(_source_block(page.text[section.start : cuts[0] if cuts else section.end]))
    for position, i in enumerate(section.headings):
        entry = page.toc[i]
        ident = html.escape(entry.id.replace(page.prefix, f"{page.prefix}{number:x}-", 1), quote=True)
        parts.append(f'<h{entry.level} id="{ident}">{html.escape(entry.text)}</h{entry.level}>')
        if not sources:
            continue
        end = cuts[position + 1] if position + 1 < len(cuts) else section.end
        _, _, body = page.text[cuts[position] : end].partition("\n")
        if _SETEXT.match(body.partition("\n")[0]):  # the heading's underline
            body = body.partition("\n")[2]
        parts.append(_source_block(body))
    parts.append("</section>")
    return "".join(parts)


def _source_block(source: str) -> str:
    source = source.strip("\n")
    return f'<pre class="devknow-source">{html.escape(source)}</pre>' if source.strip() else ""


def section_html(page: Outline, index: int, number: int) -> str:
    """Section ``index`` of ``page`` rendered, for output ``number`` (what fills its placeholder)."""
    from .settings import options

    return numbered(_rendered(page, index, options.remote_images), page, number)


@dataclass(frozen=True)
class PageParts:
    """What a sectioned page shows at first: ``html`` (rendered sections then placeholders), its whole
    contents list, the output's ``number`` (for :func:`section_html`) and the sections still pending."""

    html: str
    toc: tuple[TocEntry, ...]
    number: int
    pending: tuple[int, ...]
    shown_chars: int
    total_chars: int


def page_parts(
    text: str, *, base_url: str | None = None, first_chars: int = FIRST_CHARS, max_chars: int | None = None,
    sources: bool = True,
) -> PageParts:
    """The page with its first sections rendered (whole sections within ``first_chars`` characters, at least
    one) and the others as placeholders (holding their source, with ``sources``), up to about ``max_chars``
    characters (whole sections; None: all)."""
    from .markdown import output_numbers

    page = outline(text or "", base_url)
    number = next(output_numbers)
    parts: list[str] = []
    pending: list[int] = []
    toc: list[TocEntry] = []
    for index, section in enumerate(page.sections):
        if max_chars and index and section.start >= max_chars:
            break
        if index == 0 or section.end <= first_chars:
            parts.append(section_html(page, index, number))
        else:
            parts.append(_placeholder(page, index, number, sources))
            pending.append(index)
        shown = section.end
        toc += [page.toc[i] for i in section.headings]
    toc_numbered = tuple(
        TocEntry(e.level, e.id.replace(page.prefix, f"{page.prefix}{number:x}-", 1), e.text) for e in toc
    )
    return PageParts("".join(parts), toc_numbered, number, tuple(pending), shown, len(page.text))


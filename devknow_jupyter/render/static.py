"""Static views of results: HTML, Markdown and plain text, readable without any widget frontend.

These are the "static twin" of the widgets (GitHub, nbviewer, nbconvert, VS Code, Colab, consoles), and the
widgets reuse the HTML pieces. Every service string is escaped (``html.escape`` in HTML,
:func:`~devknow_jupyter.render.markdown.escape_markdown` in Markdown); every service Markdown body goes
through :func:`~devknow_jupyter.render.markdown.render_markdown` (sanitized) or
:func:`~devknow_jupyter.render.markdown.safe_markdown`. Pieces named ``*_html`` return inner HTML without
the stylesheet; :func:`page` wraps a piece into a complete output with the ``<style>`` block.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..terminal import terminal_safe
from .citations import cited_markdown, cited_plain
from .labels import tells_for
from .markdown import (
    escape_markdown,
    fenced_source,
    plain_excerpt,
    preview_markdown,
    render_markdown,
    safe_markdown,
    safe_url,
    source_html,
    toc_html,
    truncate_markdown,
    without_leading_labels,
)
from .sections import FIRST_CHARS, PageParts, outline, page_parts
from .style import ROOT_CLASS, style_block
from .twin import code_span, link_destination

if TYPE_CHECKING:
    from ..models import Answer, Document, DocumentChunk, Documents, ResultInfo, SearchResults

__all__ = [
    "EXTRACTIVE_NOTE",
    "answer_header_html",
    "answer_html",
    "answer_markdown",
    "answer_plain",
    "answer_text_html",
    "document_body_html",
    "document_header_html",
    "document_html",
    "document_markdown",
    "document_plain",
    "documents_html",
    "documents_markdown",
    "documents_plain",
    "hit_html",
    "hit_markdown",
    "hit_plain",
    "hits_header_html",
    "hits_html",
    "hits_markdown",
    "hits_plain",
    "info_summary",
    "link_html",
    "notices_html",
    "page",
    "path_html",
    "reference_html",
    "sectioned_page_html",
    "truncation_note",
]

EXTRACTIVE_NOTE = "Extractive answer from the offline index: passages quoted, not generated."
#: What the "more" cue under a shortened passage says to screen readers and on hover.
PREVIEW_NOTE = "Passage shortened; open the page to read it all."
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


# -- shared pieces -------------------------------------------------------------------------------------


def page(inner: str, *classes: str) -> str:
    """A complete HTML output: our stylesheet, then ``inner`` inside the ``.devknow`` root element."""
    names = " ".join((ROOT_CLASS, *classes))
    return f'{style_block()}\n<div class="{names}">{inner}</div>'


def path_html(text: str) -> str:
    """``text`` escaped, with line breaks allowed after each ``/`` and not inside a hyphenated path segment.

    Browsers break long names at hyphens (``get-documents-`` / ``tool``); here a name wraps at its
    slashes instead (``<wbr>``), and only a segment too long for any line still breaks where it must.
    """
    segments = str(text).split("/")
    parts = [
        f'<span class="devknow-nobr">{html.escape(segment)}</span>'
        if "-" in segment and len(segment) <= 40
        else html.escape(segment)
        for segment in segments
    ]
    # No break opportunity inside "//" (https://): only before a segment with text.
    return "".join(
        part + ("" if i == len(parts) - 1 else "/<wbr>" if segments[i + 1] else "/") for i, part in enumerate(parts)
    )


def link_html(url: str, text: str | None = None, *, base_url: str | None = None, path: bool = False) -> str:
    """An escaped link opening in a new tab, or just the escaped text when ``url`` is not safe.

    ``path``: the label is a URL or document name, wrapped at its slashes (:func:`path_html`).
    """
    target = safe_url(url, base_url)
    shown = text if text is not None else url
    label = path_html(shown) if path else html.escape(shown)
    if not target or target.startswith("#"):
        return label
    return f'<a href="{html.escape(target, quote=True)}" target="_blank" rel="noopener noreferrer">{label}</a>'


def info_summary(info: ResultInfo | None) -> list[str]:
    """Provenance as short phrases: backend (and host), time taken, whether it came from the cache."""
    if info is None:
        return []
    parts = []
    if info.backend:
        host = ""
        if info.backend == "remote" and info.endpoint:
            try:
                parts_ = urlsplit(info.endpoint)
                host = parts_.hostname or ""
                if host and parts_.port:
                    host = f"{host}:{parts_.port}"
            except ValueError:
                host = ""
        parts.append(f"{info.backend} ({host})" if host else info.backend)
    if info.elapsed > 0:
        ms = info.elapsed * 1000
        parts.append("<1 ms" if ms < 1 else f"{ms:.0f} ms" if ms < 1000 else f"{info.elapsed:.2f} s")
    if info.from_cache:
        parts.append("from cache")
    return parts


def truncation_note(shown: int, total: int, *, static: bool = True) -> str:
    """The "truncated, N of M characters" line (plain text); ``static`` adds how to see the rest."""
    text = f"Truncated: showing the first {shown:,} of {total:,} characters."
    if static:
        text += (
            " The full Markdown is in the document's .content; set"
            " devknow_jupyter.display.options.max_chars = 0 to render everything."
        )
    return text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _md_link(text: str, url: str, base_url: str | None = None) -> str:
    target = safe_url(url, base_url)
    if not target or target.startswith("#"):
        return escape_markdown(text)
    return f"[{escape_markdown(text)}]({link_destination(target)})"


def _md_code(text: str) -> str:
    return code_span(" ".join(str(text).split()))


def _clip(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters at a line end; returns the text and how many were left out."""
    if limit <= 0 or len(text) <= limit:
        return text, 0
    cut = text.rfind("\n", int(limit * 0.8), limit)
    cut = cut if cut > 0 else limit
    return text[:cut].rstrip(), len(text) - cut


def _chunk_body(hit: DocumentChunk) -> str:
    """The passage without its first line when that heading is already the hit's title."""
    content = hit.content.strip("\n")
    first, _, rest = content.partition("\n")
    match = _HEADING_LINE.match(first)
    if match and match.group(1).strip().strip("*_`") == hit.title:
        return rest.lstrip("\n")
    return content


# -- search hits ----------------------------------------------------------------------------------------


def hits_header_html(results: SearchResults) -> str:
    """Header line (hit count, query, provenance) and the notices, as inner HTML."""
    count = len(results)
    head = f"<b>{html.escape(_plural(count, 'hit'))}</b>"
    if results.query:
        head += f" for <q>{html.escape(results.query)}</q>"
    html_out = _header_with_notices(head, results.info)
    if not count:
        html_out += '<div class="devknow-notice">No results. Try other or fewer words.</div>'
    return html_out


def _passage(hit: DocumentChunk, preview_chars: int | None) -> tuple[str, bool]:
    """The passage's Markdown, shortened to a preview when ``preview_chars`` is set; and whether it was."""
    body = _chunk_body(hit)
    # A preview starts where the passage says something, not at a bare "Returns:".
    return preview_markdown(without_leading_labels(body), preview_chars) if preview_chars else (body, False)


def hit_html(
    hit: DocumentChunk,
    number: int | None = None,
    *,
    max_chars: int | None = None,
    preview_chars: int | None = None,
    tell: str = "",
) -> str:
    """One hit as inner HTML: numbered title linking to the page, document name, rendered passage.

    ``preview_chars``: show only the start of the passage (:func:`~.markdown.preview_markdown`), fading
    out at the bottom, as hit lists do; None shows all of it. ``tell``: what tells this hit apart from
    others with its title (:func:`~.labels.tell_apart`), shown after the title.
    """
    prefix = f"{number}. " if number is not None else ""
    passage, shortened = _passage(hit, preview_chars)
    body = render_markdown(passage, base_url=hit.uri, max_chars=max_chars)
    note = ""
    if body.truncated:
        note = f'<div class="devknow-note">{html.escape(truncation_note(body.shown_chars, body.total_chars))}</div>'
    chunk_class = "devknow-chunk devknow-body devknow-clamped" if shortened else "devknow-chunk devknow-body"
    more = ""
    if shortened:
        label = html.escape(PREVIEW_NOTE, quote=True)
        more = f'<div class="devknow-more" title="{label}" aria-label="{label}">…</div>'
    told = f' <span class="devknow-tell">{path_html(tell)}</span>' if tell else ""
    return (
        f'<div class="devknow-hit-title">{html.escape(prefix)}{link_html(hit.uri, hit.title)}{told}</div>'
        f'<div class="devknow-meta">{path_html(hit.parent)}</div>'
        f'<div class="{chunk_class}">{body.html}{more}</div>{note}'
    )


def hits_html(
    results: SearchResults,
    *,
    max_chars: int | None = None,
    preview_chars: int | None = None,
    items: list[dict] | None = None,
) -> str:
    """All hits as a complete HTML output (stylesheet included); ``preview_chars`` as for :func:`hit_html`;
    ``items``: the hits rendered already (:func:`~.payload.hit_items`), whose HTML is used as it is."""
    if items is not None:
        parts = [item["html"] for item in items]
    else:
        tells = tells_for(results)
        parts = [
            hit_html(hit, i, max_chars=max_chars, preview_chars=preview_chars, tell=tell)
            for (i, hit), tell in zip(enumerate(results, 1), tells, strict=True)
        ]
    items_html = "".join(f'<div class="devknow-hit">{part}</div>' for part in parts)
    return page(hits_header_html(results) + items_html, "devknow-hits")


def hit_markdown(
    hit: DocumentChunk,
    number: int | None = None,
    *,
    max_chars: int | None = None,
    preview_chars: int | None = None,
    tell: str = "",
) -> str:
    """One hit as safe Markdown; ``preview_chars`` shortens the passage (ending it with "…"); ``tell`` as for
    :func:`hit_html`."""
    prefix = f"{number}. " if number is not None else ""
    passage, shortened = _passage(hit, preview_chars)
    body = safe_markdown(passage, base_url=hit.uri, max_chars=max_chars).strip()
    more = "\n\n…" if shortened else ""
    told = f" · {_md_code(tell)}" if tell else ""
    return f"### {prefix}{_md_link(hit.title, hit.uri)}{told}\n\n{_md_code(hit.parent)}\n\n{body}{more}\n"


def hits_markdown(results: SearchResults, *, max_chars: int | None = None, preview_chars: int | None = None) -> str:
    """All hits as safe Markdown, with the header line and notices."""
    head = f"**{_plural(len(results), 'hit')}**"
    if results.query:
        head += f" for *{escape_markdown(results.query)}*"
    extra = info_summary(results.info)
    if extra:
        head += " · " + " · ".join(escape_markdown(part) for part in extra)
    lines = [head, ""]
    lines += [f"> {escape_markdown(notice)}\n" for notice in results.info.notices]
    if not len(results):
        lines.append("No results. Try other or fewer words.\n")
    tells = tells_for(results)
    lines += [
        hit_markdown(hit, i, max_chars=max_chars, preview_chars=preview_chars, tell=tell)
        for (i, hit), tell in zip(enumerate(results, 1), tells, strict=True)
    ]
    return "\n".join(lines)


def _line(text: str) -> str:
    """One line for a terminal: controls, newlines included, visibly escaped (:mod:`devknow_jupyter.terminal`)."""
    return terminal_safe(text, one_line=True)


def hit_plain(hit: DocumentChunk, number: int | None = None, *, width: int = 100) -> str:
    """One hit for a terminal: number and title, URL, first line of the passage (controls escaped)."""
    prefix = f"{number:>2}. " if number is not None else ""
    pad = " " * len(prefix)
    lines = [f"{prefix}{_line(hit.title)}", f"{pad}{_line(hit.uri)}"]
    excerpt = plain_excerpt(_chunk_body(hit), width)
    if excerpt:
        lines.append(f"{pad}{_line(excerpt)}")
    return "\n".join(lines)


def hits_plain(results: SearchResults) -> str:
    """All hits for a terminal: a header line, then numbered hits (controls escaped)."""
    head = _plural(len(results), "hit")
    if results.query:
        head += f" for {_line(repr(results.query))}"
    extra = info_summary(results.info)
    if extra:
        head += f" ({_line(', '.join(extra))})"
    lines = [head]
    lines += [f"Note: {_line(notice)}" for notice in results.info.notices]
    lines += [hit_plain(hit, i) for i, hit in enumerate(results, 1)]
    return "\n".join(lines)


# -- documents ----------------------------------------------------------------------------------------------


def document_header_html(doc: Document) -> str:
    """Title (linking to the page), description and document name, as inner HTML."""
    parts = [f'<div class="devknow-doc-title">{link_html(doc.uri, doc.title or doc.name)}</div>']
    if doc.description:
        parts.append(f'<div class="devknow-description">{html.escape(doc.description)}</div>')
    parts.append(f'<div class="devknow-meta">{path_html(doc.name)}</div>')
    return "".join(parts)


def document_body_html(
    doc: Document,
    *,
    max_chars: int | None = None,
    toc_min_headings: int = 4,
    raw: bool = False,
    static: bool = True,
) -> tuple[str, bool]:
    """The document's rendered Markdown as inner HTML, with a contents list when it has enough headings.

    Returns the HTML and whether it was truncated. ``static`` words the truncation note for outputs
    without a "Show all" button; ``raw`` shows the Markdown source instead of rendering it.
    """
    if raw:
        shown = truncate_markdown(doc.content, max_chars)[1]
        body, truncated = source_html(doc.content, max_chars=max_chars), shown < len(doc.content)
        note = truncation_note(shown, len(doc.content), static=static) if truncated else ""
        return body + (f'<div class="devknow-note">{html.escape(note)}</div>' if note else ""), truncated
    if _in_sections(doc, max_chars):
        return _sectioned_body(doc, max_chars=max_chars, toc_min_headings=toc_min_headings, static=static)[:2]
    rendered = render_markdown(doc.content, base_url=doc.uri, max_chars=max_chars)
    toc = toc_html(rendered.toc) if toc_min_headings and len(rendered.toc) >= toc_min_headings else ""
    out = f'{toc}<div class="devknow-body">{rendered.html}</div>'
    if rendered.truncated:
        note = truncation_note(rendered.shown_chars, rendered.total_chars, static=static)
        out += f'<div class="devknow-note">{html.escape(note)}</div>'
    return out, rendered.truncated


#: A long page's contents list goes down to level 3 headings unless that makes more entries than this.
TOC_ENTRIES = 500


def _in_sections(doc: Document, max_chars: int | None) -> bool:
    """Whether the static views show ``doc`` in sections: when it is long and the cut (``max_chars``) is past
    the first part. No cut (0 or None) asks for the whole page rendered, whatever it costs."""
    return bool(max_chars) and len(doc.content) > FIRST_CHARS and max_chars > FIRST_CHARS  # type: ignore[operator]


def _sectioned_body(
    doc: Document, *, max_chars: int | None, toc_min_headings: int, static: bool, sources: bool = True
) -> tuple[str, bool, PageParts]:
    """A long page's first sections rendered, the rest as placeholders (:mod:`.sections`), its whole contents
    (down to level 3, or 2 when that would list more than :data:`TOC_ENTRIES`)."""
    parts = page_parts(doc.content, base_url=doc.uri, max_chars=max_chars, sources=sources)
    depth = 3 if sum(entry.level <= 3 for entry in parts.toc) <= TOC_ENTRIES else 2
    toc = toc_html(parts.toc, max_level=depth, limit=None) if toc_min_headings and len(
        parts.toc) >= toc_min_headings else ""
    out = f'{toc}<div class="devknow-body">{parts.html}</div>'
    truncated = parts.shown_chars < parts.total_chars
    if truncated:
        note = truncation_note(parts.shown_chars, parts.total_chars, static=static)
        out += f'<div class="devknow-note">{html.escape(note)}</div>'
    return out, truncated, parts


def sectioned_page_html(
    doc: Document, *, toc_min_headings: int = 4, sources: bool = True
) -> tuple[str, PageParts | None]:
    """A page as the live views show it: the whole page, long ones in sections filled on demand (the parts
    say which are pending, and the output number :func:`.sections.section_html` needs). ``sources``: the
    placeholders hold their Markdown source as text (False: their headings only)."""
    head = document_header_html(doc)
    if len(doc.content) <= FIRST_CHARS:
        body, _ = document_body_html(doc, toc_min_headings=toc_min_headings, static=False)
        return f'<div class="devknow-doc">{head}{body}</div>', None
    body, _, parts = _sectioned_body(doc, max_chars=None, toc_min_headings=toc_min_headings, static=False,
                                     sources=sources)
    return f'<div class="devknow-doc">{head}{body}</div>', parts


def document_html(doc: Document, *, max_chars: int | None = None, toc_min_headings: int = 4, raw: bool = False) -> str:
    """One document as inner HTML: header, contents, rendered body, truncation note."""
    body, _ = document_body_html(doc, max_chars=max_chars, toc_min_headings=toc_min_headings, raw=raw)
    return f'<div class="devknow-doc">{document_header_html(doc)}{body}</div>'


def documents_html(
    docs: Iterable[Document], *, max_chars: int | None = None, toc_min_headings: int = 4, raw: bool = False
) -> str:
    """Documents as a complete HTML output (stylesheet included)."""
    notices = notices_html(getattr(docs, "info", None))
    items = [document_html(doc, max_chars=max_chars, toc_min_headings=toc_min_headings, raw=raw) for doc in docs]
    if not items:
        return page(notices + '<div class="devknow-notice">No documents.</div>', "devknow-docs")
    return page(notices + "<hr>".join(items), "devknow-docs")


def document_markdown(doc: Document, *, max_chars: int | None = None, raw: bool = False) -> str:
    """One document as safe Markdown: linked title, description, name, then its content."""
    lines = [f"## {_md_link(doc.title or doc.name, doc.uri)}", ""]
    if doc.description:
        lines += [f"*{escape_markdown(doc.description)}*", ""]
    lines += [_md_code(doc.name), ""]
    shown = ""
    if raw:
        shown, _ = _clip(doc.content, max_chars or 0)
        lines.append(fenced_source(shown, "markdown", char="~").rstrip("\n"))
    elif _in_sections(doc, max_chars):
        lines.append(_sectioned_markdown(doc, max_chars))
    else:
        lines.append(safe_markdown(doc.content, base_url=doc.uri, max_chars=max_chars).strip())
    if max_chars and max_chars > 0 and len(doc.content) > max_chars:
        kept = len(shown) if raw else truncate_markdown(doc.content, max_chars)[1]
        lines += ["", f"*{escape_markdown(truncation_note(kept, len(doc.content)))}*"]
    return "\n".join(lines) + "\n"


def _sectioned_markdown(doc: Document, max_chars: int | None) -> str:
    """A long page's Markdown twin at the cost of its first part: the first sections re-emitted safely
    (:func:`safe_markdown`), each later one as its heading and its source in a fenced block (inert, readable)."""
    page = outline(doc.content, doc.uri)
    parts = []
    for index, section in enumerate(page.sections):
        if max_chars and index and section.start >= max_chars:
            break
        source = page.source(index)
        if index == 0 or section.end <= FIRST_CHARS:
            parts.append(safe_markdown(source + ("\n\n" + page.definitions if page.definitions else ""),
                                       base_url=doc.uri).strip())
            continue
        heading = page.toc[section.headings[0]] if section.headings else None
        if heading is not None and source.startswith("#"):
            parts.append("#" * heading.level + " " + escape_markdown(heading.text))
            source = source.partition("\n")[2]
        if source.strip():
            parts.append(fenced_source(source.strip("\n"), "markdown", char="~").rstrip("\n"))
    return "\n\n".join(part for part in parts if part)


def documents_markdown(docs: Iterable[Document], *, max_chars: int | None = None, raw: bool = False) -> str:
    """Documents as safe Markdown, separated by rules."""
    info = getattr(docs, "info", None)
    notices = "".join(f"> {escape_markdown(notice)}\n\n" for notice in (info.notices if info else []))
    items = [document_markdown(doc, max_chars=max_chars, raw=raw) for doc in docs]
    return notices + ("\n---\n\n".join(items) if items else "*No documents.*\n")


def document_plain(doc: Document, *, max_chars: int = 2000) -> str:
    """One document for a terminal: title, URL, description, then the start of its Markdown (controls escaped)."""
    lines = [_line(doc.title or doc.name), _line(doc.uri)]
    if doc.description:
        lines.append(_line(doc.description))
    body, left = _clip(doc.content.strip(), max_chars)
    lines += ["", terminal_safe(body)]
    if left:
        lines.append(f"… {left:,} more characters (the document's .content has them all)")
    return "\n".join(lines)


def documents_plain(docs: Documents | list[Document], *, max_chars: int = 2000) -> str:
    """Documents for a terminal, separated by rules."""
    info = getattr(docs, "info", None)
    notes = [f"Note: {_line(notice)}" for notice in (info.notices if info else [])]
    docs = list(docs)
    if not docs:
        return "\n".join([*notes, "No documents."])
    head = [*([_plural(len(docs), "document")] if len(docs) > 1 else []), *notes]
    rule = "\n\n" + "─" * 40 + "\n"
    body = rule.join(document_plain(doc, max_chars=max_chars) for doc in docs)
    return "\n".join([*head, body])


# -- answers ----------------------------------------------------------------------------------------------


def answer_header_html(answer: Answer) -> str:
    """The answer's header line: question, "extractive" label, provenance."""
    head = "<b>Answer</b>"
    if answer.query:
        head += f" to <q>{html.escape(answer.query)}</q>"
    if answer.extractive:
        head += f' <span class="devknow-label" title="{html.escape(EXTRACTIVE_NOTE, quote=True)}">extractive</span>'
    return _header_with_notices(head, answer.info)


def _header_with_notices(head: str, info: ResultInfo) -> str:
    """A header line (``head`` is inner HTML) with the provenance appended, then one line per notice."""
    extra = info_summary(info)
    if extra:
        head += " · " + " · ".join(html.escape(part) for part in extra)
    return f'<div class="devknow-header">{head}</div>{notices_html(info)}'


def notices_html(info: ResultInfo | None) -> str:
    """One line per notice (e.g. "the local index answered"), as inner HTML; empty without notices."""
    notices = info.notices if info is not None else []
    return "".join(f'<div class="devknow-notice">{_code_spans(html.escape(notice))}</div>' for notice in notices)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _code_spans(escaped: str) -> str:
    """A notice's `command` spans (already HTML-escaped text) as ``<code>``, not raw backticks."""
    return _CODE_SPAN.sub(r"<code>\1</code>", escaped)


def answer_text_html(answer: Answer, *, max_chars: int | None = None) -> str:
    """The answer's Markdown, rendered and sanitized, as inner HTML."""
    rendered = render_markdown(cited_markdown(answer), max_chars=max_chars)
    note = ""
    if rendered.truncated:
        note = f'<div class="devknow-note">{html.escape(truncation_note(rendered.shown_chars, rendered.total_chars))}'
        note += "</div>"
    return f'<div class="devknow-body">{rendered.html}</div>{note}'


def reference_html(name: str, number: int) -> str:
    """One numbered reference: the page link and the document name."""
    from ..models import name_to_uri

    uri = name_to_uri(name)
    return (
        f'<div class="devknow-ref">{number}. {link_html(uri, path=True)} '
        f'<span class="devknow-meta">{path_html(name)}</span></div>'
    )


def answer_html(answer: Answer, *, max_chars: int | None = None) -> str:
    """The answer as a complete HTML output: header, rendered answer, numbered references."""
    parts = [answer_header_html(answer), answer_text_html(answer, max_chars=max_chars)]
    if answer.references:
        parts.append('<div class="devknow-refs">References</div>')
        parts += [reference_html(name, i) for i, name in enumerate(answer.references, 1)]
    return page("".join(parts), "devknow-answer")


def answer_markdown(answer: Answer, *, max_chars: int | None = None) -> str:
    """The answer as safe Markdown: a header line (question, "extractive", provenance), the answer, references."""
    from ..models import name_to_uri

    head = "**Answer**"
    if answer.query:
        head += f" to *{escape_markdown(answer.query)}*"
    extra = (["*extractive*"] if answer.extractive else []) + [escape_markdown(p) for p in info_summary(answer.info)]
    if extra:
        head += " · " + " · ".join(extra)
    lines = [head, ""]
    lines += [f"> {escape_markdown(notice)}\n" for notice in answer.info.notices]
    lines.append(safe_markdown(cited_markdown(answer), max_chars=max_chars).strip())
    if answer.references:
        lines += ["", "**References**", ""]
        lines += [f"{i}. {_md_link(name_to_uri(ref), name_to_uri(ref))}" for i, ref in enumerate(answer.references, 1)]
    return "\n".join(lines) + "\n"


def answer_plain(answer: Answer, *, max_chars: int = 2000) -> str:
    """The answer for a terminal: a header line, its text, then numbered reference URLs (controls escaped)."""
    from ..models import name_to_uri

    head = "Answer" + (f" to {_line(repr(answer.query))}" if answer.query else "")
    extra = (["extractive"] if answer.extractive else []) + info_summary(answer.info)
    if extra:
        head += f" ({_line(', '.join(extra))})"
    body, left = _clip(cited_plain(answer).strip(), max_chars)
    lines = [head, *(f"Note: {_line(notice)}" for notice in answer.info.notices), "", terminal_safe(body)]
    if left:
        lines.append(f"… {left:,} more characters (.answer_text has them all)")
    if answer.references:
        lines += ["", "References:"]
        lines += [f"{i:>2}. {_line(name_to_uri(ref))}" for i, ref in enumerate(answer.references, 1)]
    return "\n".join(lines)

"""Markdown from the service → safe HTML (and safe Markdown) for notebook outputs.

* :func:`render_markdown` converts with Python-Markdown (fenced code highlighted by codehilite + Pygments
  as CSS classes, tables, heading ids from the ``toc`` extension), cuts very long documents at a paragraph
  boundary (``max_chars``) and sanitizes the result with :func:`sanitize_html`. Results are cached, so
  the widget and its static twin share one conversion. Code blocks past the first
  :data:`HIGHLIGHT_CHARS` characters are shown without colours (Pygments is the dearest part of a very
  long page; the default view stays within that).
* :func:`sanitize_html` is the one gate for HTML built from service content: an allow-list of tags and
  attributes (nh3/ammonia), http/https/mailto URLs only, relative links resolved against the page's URL,
  ``target="_blank" rel="noopener noreferrer"`` on links, ``id`` values prefixed with ``dk-``.
* :func:`safe_markdown` is the same policy for the ``text/markdown`` twin: raw HTML tags are shown as text,
  unsafe link targets dropped, relative ones resolved.

``markdown``, ``pygments`` and ``nh3`` are imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import itertools
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from types import EllipsisType
from typing import Any
from urllib.parse import urljoin, urlsplit

from .inline_budget import defuse_openers
from .style import HIGHLIGHT_CLASS
from .urls import SAFE_URL_SCHEMES, safe_url, usable_base

#: Fenced-code languages of shell commands, and the class their block's ``div`` gets: commands to run
#: (``devknow-shell``), or a session with ``$`` prompts and output (``devknow-console``).
SHELL_BLOCK_CLASSES = {
    **dict.fromkeys(("bash", "sh", "shell", "zsh"), "devknow-shell"),
    **dict.fromkeys(("console", "shell-session", "terminal"), "devknow-console"),
}

__all__ = [
    "ALLOWED_TAGS",
    "HIGHLIGHT_CHARS",
    "ID_PREFIX",
    "REMOTE_IMAGE_CLASS",
    "SAFE_URL_SCHEMES",
    "RenderedMarkdown",
    "TocEntry",
    "absolute_links",
    "escape_markdown",
    "fenced_source",
    "image_placeholders",
    "plain_excerpt",
    "preview_markdown",
    "render_markdown",
    "safe_markdown",
    "safe_url",
    "sanitize_html",
    "source_html",
    "toc_html",
    "truncate_markdown",
]

#: Every ``id`` in sanitized HTML starts with this, so documents cannot clobber the page's own ids.
ID_PREFIX = "dk-"
#: Fenced code blocks starting within this many characters of a text are highlighted; later ones show as
#: plain code. Highlighting is ~40% of rendering a 1 MB page; the default cut (100,000 chars) is all in colour.
HIGHLIGHT_CHARS = 200_000

#: Tags kept by :func:`sanitize_html` (their text is kept for any other tag, except the dropped ones below).
# fmt: off
ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details", "div",
    "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd",
    "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
})
# Tags removed together with their content: code, frames, styles and embedded documents.
_DROP_WITH_CONTENT = frozenset({
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "template",
    "noscript", "textarea", "select", "button", "form", "input", "link", "meta", "base", "title",
})
# fmt: on
_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "abbr": {"title"},
    "ol": {"start"},
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan"},
    "col": {"span"},
    **{f"h{level}": {"id"} for level in range(1, 7)},
}
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_local = threading.local()


@dataclass(frozen=True)
class TocEntry:
    """One heading of a rendered document: its level (1-6), element ``id`` and plain text."""

    level: int
    id: str
    text: str


@dataclass(frozen=True)
class RenderedMarkdown:
    """A sanitized rendering: ``html`` (the body), the headings (``toc``) and how much of the text it shows."""

    html: str
    toc: tuple[TocEntry, ...]
    shown_chars: int
    total_chars: int

    @property
    def truncated(self) -> bool:
        """True when only the first ``shown_chars`` of ``total_chars`` characters were rendered."""
        return self.shown_chars < self.total_chars


# -- sanitizing --------------------------------------------------------------------------------------


def sanitize_html(fragment: str, *, base_url: str | None = None) -> str:
    """Clean an HTML fragment from the service with the allow-list (see the module docstring).

    Args:
        fragment: HTML built from service content.
        base_url: The page the content comes from; relative links and images resolve against it. Without
            one (or when it is not an http(s) URL), relative URLs are removed.
    """
    try:
        cleaner = _cleaner(usable_base(base_url))
    except ValueError:  # a base that nh3's URL parser refuses although ours took it: relative URLs go
        cleaner = _cleaner(None)
    return cleaner.clean(fragment)


@lru_cache(maxsize=256)
def _cleaner(base_url: str | None) -> Any:
    import nh3

    return nh3.Cleaner(
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(_DROP_WITH_CONTENT),
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        allowed_classes={"div": {HIGHLIGHT_CLASS, *SHELL_BLOCK_CLASSES.values()}, "span": _token_classes()},
        set_tag_attribute_values={"a": {"target": "_blank"}, "img": {"loading": "lazy"}},
        url_schemes=set(SAFE_URL_SCHEMES),
        url_relative=("rewrite_with_base", base_url) if base_url else "deny",
        link_rel="noopener noreferrer",
        id_prefix=ID_PREFIX,
        strip_comments=True,
    )


@lru_cache(maxsize=1)
def _token_classes() -> set[str]:
    # The short CSS classes Pygments gives tokens ("k", "s2", ...): the only classes allowed on <span>.
    from pygments.token import STANDARD_TYPES

    return {name for name in STANDARD_TYPES.values() if name}


# -- Markdown → HTML ------------------------------------------------------------------------------------


def render_markdown(
    text: str, *, base_url: str | None = None, max_chars: int | EllipsisType | None = ...
) -> RenderedMarkdown:
    """Convert Markdown to sanitized HTML; the result is cached.

    Args:
        text: The Markdown (a document's ``content``, a search passage, an answer).
        base_url: The page's URL, for relative links and images and for the heading-id prefix.
        max_chars: Render only about this many characters (cut at a paragraph boundary); None or 0 for
            all of it. By default, ``devknow_jupyter.render.settings.options.max_chars`` (100,000): long pages
            render quickly and say they were cut, rather than freezing the notebook.
    """
    if max_chars is ...:
        from .settings import options

        max_chars = options.max_chars
    limit = max_chars if max_chars and max_chars > 0 else None
    from .settings import options

    return _unique_ids(_render(text or "", usable_base(base_url), limit, options.remote_images))


#: Numbers each rendered output's heading ids, so a page shown twice keeps two working contents lists.
output_numbers = itertools.count(1)
_ID_OR_ANCHOR = re.compile(r'\b(id="|href="#)(' + re.escape(ID_PREFIX) + r"[0-9a-f]{6})-")


def _unique_ids(rendered: RenderedMarkdown) -> RenderedMarkdown:
    """The rendering with heading ids (and the links to them) unique to this output: the same page shown
    twice in a notebook keeps each contents list pointing into its own copy."""
    number = next(output_numbers)
    marked = _ID_OR_ANCHOR.sub(lambda m: f"{m.group(1)}{m.group(2)}-{number:x}-", rendered.html)
    toc = tuple(
        TocEntry(entry.level, re.sub(r"^(" + re.escape(ID_PREFIX) + r"[0-9a-f]{6})-", rf"\1-{number:x}-", entry.id),
                 entry.text)
        for entry in rendered.toc
    )
    return dataclasses.replace(rendered, html=marked, toc=toc)


_HREF = re.compile(r'(<a\b[^>]*?\bhref=")([^"]*)(")')
_SOURCE_SUFFIX = re.compile(r"^([^?#]*?)(?:\.md|\.markdown)(?=$|[?#])", re.IGNORECASE)


def public_links(raw: str, slugs: dict[str, str]) -> str:
    """Relative links as the page's public site has them, before the sanitizer resolves them: a ``.md``
    source suffix dropped (``auth.credential.md#x`` is the page ``auth.credential#x``), and ``#anchor``
    pointed at the heading's id in this rendering (``slugs``: anchor as written → our id)."""

    def fix(match: re.Match[str]) -> str:
        url = html.unescape(match.group(2))
        if url.startswith("#"):
            target = slugs.get(url[1:])
            url = f"#{target}" if target else url
        elif not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//", url):
            url = _SOURCE_SUFFIX.sub(r"\1", url)
        return f"{match.group(1)}{html.escape(url, quote=True)}{match.group(3)}"

    return _HREF.sub(fix, raw)


@lru_cache(maxsize=32)
def _render(text: str, base_url: str | None, max_chars: int | None, remote_images: bool = False) -> RenderedMarkdown:
    shown, kept = truncate_markdown(text, max_chars)
    md, state = converter()
    # Heading ids get a per-document prefix: two documents in one notebook keep distinct anchors.
    digest = hashlib.sha1((base_url or text[:4000]).encode("utf-8", "replace")).hexdigest()[:6]
    state["prefix"] = f"{ID_PREFIX}{digest}-"
    md.reset()
    raw = md.convert(plain_code_after(defuse_openers(CONTROL_CHARS.sub("", shown)), HIGHLIGHT_CHARS))
    raw, toc = prefixed_ids(raw, tuple(flatten_toc(getattr(md, "toc_tokens", []))), state["prefix"])
    slugs = {entry.id.removeprefix(state["prefix"]): entry.id for entry in toc}
    cleaned = in_page_links(sanitize_html(public_links(raw, slugs), base_url=base_url), set(slugs.values()))
    if not remote_images:
        cleaned = image_placeholders(cleaned)
    return RenderedMarkdown(cleaned, toc, kept, len(text))


_IMG = re.compile(r"<img\b([^>]*)>")
_ATTRIBUTE = re.compile(r'\b(src|alt)="([^"]*)"')
#: The class of the link that stands in for a remote image until it is clicked.
REMOTE_IMAGE_CLASS = "dk-remote-image"


def image_placeholders(cleaned: str) -> str:
    """Sanitized HTML with each image from the web as a link that loads it on click (no request until then).

    Offline, a remote image is a broken icon; online, it is a request off the machine that the reader never
    asked for. The link names the image and its host; the result views' ES module swaps in the image when
    it is clicked, and anywhere else (a saved notebook, nbviewer) it opens the image.
    """

    def placeholder(match: re.Match[str]) -> str:
        attributes = dict(_ATTRIBUTE.findall(match.group(1)))
        src, alt = attributes.get("src", ""), attributes.get("alt", "")
        if not src.startswith(("https://", "http://")):  # no source left after sanitizing: nothing to fetch
            return match.group(0)
        host = html.escape(urlsplit(html.unescape(src)).hostname or "the web")
        label = f"Image: {alt}" if alt.strip() else "Image"
        return (
            f'<a class="{REMOTE_IMAGE_CLASS}" href="{src}" data-alt="{alt}" target="_blank" '
            f'rel="noopener noreferrer" title="Load the image from {host}">{label} (click to load from {host})</a>'
        )

    return _IMG.sub(placeholder, cleaned) if "<img" in cleaned else cleaned


def prefixed_ids(raw: str, toc: tuple[TocEntry, ...], prefix: str) -> tuple[str, tuple[TocEntry, ...]]:
    """Heading ids given in the page (MkDocs' ``{ #anchor }``) with the document's prefix, like the made ones,
    so they stay unique per output and the page's links to ``#anchor`` still land on them."""
    given = {entry.id.removeprefix(ID_PREFIX) for entry in toc if not entry.id.startswith(prefix)}
    if not given:
        return raw, toc

    def prefixed(match: re.Match[str]) -> str:
        value = html.unescape(match.group(2))
        return match.group(1) + (html.escape(prefix + value) if value in given else match.group(2)) + match.group(3)

    raw = re.sub(r'(<h[1-6][^>]*?\bid=")([^"]*)(")', prefixed, raw)
    return raw, tuple(
        entry
        if entry.id.startswith(prefix)
        else TocEntry(entry.level, prefix + entry.id.removeprefix(ID_PREFIX), entry.text)
        for entry in toc
    )


def in_page_links(cleaned: str, ids: set[str]) -> str:
    """Sanitized HTML whose links to one of ``ids`` stay in the notebook (no new tab, no page URL)."""
    # The sanitizer resolves "#dk-…" against the page's URL and opens links in a new tab; a link to a heading
    # of this output stays in the notebook.
    def local(match: re.Match[str]) -> str:
        if match.group(3) not in ids:
            return match.group(0)
        rest = re.sub(r'\s*target="_blank"', "", match.group(1) + match.group(4))
        return f'<a {rest.strip()} href="#{match.group(3)}">'.replace("  ", " ")

    return re.sub(r'<a ([^>]*?)href="([^"#]*)#([^"]+)"([^>]*)>', local, cleaned)


def plain_code_after(text: str, start: int) -> str:
    """``text`` with the language dropped from fenced code blocks that begin at or after ``start``.

    Without a language, codehilite uses Pygments' plain-text lexer: the block looks the same, without
    colours, at a fraction of the cost. Blocks are found with fenced_code's own pattern, so exactly its
    blocks change; texts with tabs or carriage returns (which Python-Markdown normalizes first, shifting
    what that pattern sees) are left as they are.
    """
    if len(text) <= start or "\t" in text or "\r" in text:
        return text
    from markdown.extensions.fenced_code import FencedBlockPreprocessor

    pieces: list[str] = []
    position = 0
    for match in FencedBlockPreprocessor.FENCED_BLOCK_RE.finditer(text):
        if match.start() < start or not match.group("lang") or match.group("attrs") or match.group("hl_lines"):
            continue
        pieces += [text[position : match.start()], match.group("fence")]
        position = text.index("\n", match.start())  # the rest of the opening line: the language
    pieces.append(text[position:])
    return "".join(pieces)


def converter() -> tuple[Any, dict[str, str]]:
    """This thread's Markdown converter and its state (built once per thread)."""
    # Python-Markdown instances are not thread-safe but are costly to build: keep one per thread.
    cached = getattr(_local, "converter", None)
    if cached is not None:
        return cached
    import markdown
    from markdown.extensions.codehilite import CodeHiliteExtension
    from markdown.extensions.tables import TableExtension
    from markdown.extensions.toc import TocExtension, slugify_unicode

    state = {"prefix": ID_PREFIX}

    def slugify(value: str, separator: str) -> str:
        return state["prefix"] + (slugify_unicode(value, separator) or "section")

    md = markdown.Markdown(
        extensions=[
            _backslash_breaks(),
            "fenced_code",
            "attr_list",
            "sane_lists",
            TableExtension(use_align_attribute=True),
            CodeHiliteExtension(
                css_class=HIGHLIGHT_CLASS, guess_lang=False, pygments_formatter=_formatter_class(), wrapcode=True
            ),
            TocExtension(slugify=slugify, permalink=False),
        ],
        output_format="html",
    )
    _local.converter = (md, state)
    return md, state


def _backslash_breaks() -> Any:
    """A Python-Markdown extension for CommonMark's hard line break written as a backslash at the end of a line
    (go.dev's pages use it), which Python-Markdown alone shows as a literal backslash."""
    from markdown.extensions import Extension
    from markdown.inlinepatterns import SubstituteTagInlineProcessor

    class BackslashBreaks(Extension):
        def extendMarkdown(self, md: Any) -> None:
            # Before "escape" (180), which would otherwise leave the backslash and the newline as they are.
            md.inlinePatterns.register(SubstituteTagInlineProcessor(r"(?<!\\)\\\n", "br"), "backslash_break", 185)

    return BackslashBreaks()


@lru_cache(maxsize=1)
def _formatter_class() -> type:
    from pygments.formatters.html import HtmlFormatter

    class CachedStyleHtmlFormatter(HtmlFormatter):
        """Pygments' HTML formatter, building its token→class table once rather than for every code block;
        a shell block's ``div`` also says so (``devknow-shell``, ``devknow-console``: what "Insert into
        notebook" turns into a cell that runs it)."""

        _tables: tuple[dict, dict] | None = None

        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            language = str(options.get("lang_str") or "").removeprefix("language-").lower()
            kind = SHELL_BLOCK_CLASSES.get(language)
            if kind:
                self.cssclass = f"{self.cssclass} {kind}"

        def _create_stylesheet(self) -> None:
            tables = type(self)._tables
            if tables is None or self.classprefix or self.noclasses:
                super()._create_stylesheet()
                if not (self.classprefix or self.noclasses):
                    type(self)._tables = (dict(self.ttype2class), dict(self.class2style))
                return
            self.ttype2class, self.class2style = dict(tables[0]), dict(tables[1])

    return CachedStyleHtmlFormatter


def flatten_toc(tokens: list[dict[str, Any]]) -> list[TocEntry]:
    """Python-Markdown's nested contents tokens as one list of entries, in page order."""
    entries: list[TocEntry] = []

    def walk(items: list[dict[str, Any]]) -> None:
        for item in items:
            ident = str(item.get("id", ""))
            if not ident.startswith(ID_PREFIX):
                ident = ID_PREFIX + ident  # what the sanitizer turns it into
            text = " ".join(html.unescape(str(item.get("name", ""))).split())
            entries.append(TocEntry(int(item.get("level", 1)), ident, text))
            walk(item.get("children") or [])

    walk(tokens)
    return entries


def toc_html(
    entries: tuple[TocEntry, ...] | list[TocEntry], *, max_level: int = 3, label: str = "Contents",
    limit: int | None = 300,
) -> str:
    """A collapsible table of contents (``<details>``) linking to the headings; our own, escaped HTML.
    At most ``limit`` entries (None: all of them, as a long page in sections lists them)."""
    shown = [entry for entry in entries if entry.level <= max_level][:limit]
    if not shown:
        return ""
    parts = [f'<details class="devknow-toc"><summary>{html.escape(label)} ({len(shown)})</summary>']
    stack: list[int] = []
    for entry in shown:
        link = f'<a href="#{html.escape(entry.id, quote=True)}">{html.escape(entry.text)}</a>'
        if not stack or entry.level > stack[-1]:
            parts.append(f"<ul><li>{link}")
            stack.append(entry.level)
            continue
        while len(stack) > 1 and entry.level < stack[-1]:
            parts.append("</li></ul>")
            stack.pop()
        parts.append(f"</li><li>{link}")
    parts.append("</li></ul>" * len(stack))
    parts.append("</details>")
    return "".join(parts)


def source_html(text: str, *, max_chars: int | None = None) -> str:
    """The Markdown source itself, escaped into a ``<pre>`` (for raw display)."""
    shown, _ = truncate_markdown(text or "", max_chars)
    return f'<pre class="devknow-source"><code>{html.escape(shown)}</code></pre>'


# -- truncation -----------------------------------------------------------------------------------------


def truncate_markdown(text: str, max_chars: int | None) -> tuple[str, int]:
    """Cut ``text`` to about ``max_chars`` characters, at a paragraph (else line) boundary.

    Returns the text to render and how many characters of the original it keeps. A code fence left open
    by the cut is closed, so the tail does not turn into one code block.
    """
    if not max_chars or max_chars <= 0 or len(text) <= max_chars:
        return text, len(text)
    floor = int(max_chars * 0.8)
    cut = text.rfind("\n\n", floor, max_chars)
    if cut == -1:
        cut = text.rfind("\n", floor, max_chars)
    if cut == -1:
        cut = max_chars
    head = text[:cut]
    fence = _open_fence(head)
    return (f"{head}\n{fence}\n" if fence else head), cut


def preview_markdown(text: str, max_chars: int = 600, max_lines: int | None = None) -> tuple[str, bool]:
    """The start of ``text`` as a short preview: at most ``max_chars`` characters and ``max_lines`` non-blank
    lines (default: one per 75 characters, at least 4), cut at a block boundary where that keeps at least
    half of it, else inside the block (code keeps whole lines and its fence is closed; prose is cut
    between words).

    Returns the preview and whether anything was left out (callers add their own "more" cue).
    """
    if not max_chars or max_chars <= 0:
        return text, False
    max_lines = max_lines if max_lines is not None else max(4, max_chars // 75)
    lines = text.splitlines()
    kept: list[str] = []
    used = nonblank = block_end = block_chars = 0
    fence: str | None = None
    stopped_at: str | None = None
    too_long = False  # stopped by the character budget (not the line budget): the line may be cut
    for line in lines:
        blank = not line.strip()
        too_long = used + len(line) + 1 > max_chars
        if too_long or (not blank and nonblank + 1 > max_lines):
            stopped_at = line
            break
        kept.append(line)
        used += len(line) + 1
        nonblank += not blank
        marker = _FENCE_LINE.match(line)
        closed_fence = False
        if marker is not None:
            mark, rest = marker.group(1), marker.group(2)
            if fence is None and not (mark[0] == "`" and "`" in rest):
                fence = mark
            elif fence is not None and mark[0] == fence[0] and len(mark) >= len(fence) and not rest.strip():
                fence, closed_fence = None, True
        if (blank and fence is None) or closed_fence:
            block_end, block_chars = len(kept), used
    if stopped_at is None or not any(line.strip() for line in lines[len(kept) :]):
        return text, False
    if block_end and block_chars >= max_chars // 2:
        return _without_trailing_headings(kept[:block_end]), True
    if fence is not None:
        if _FENCE_LINE.match(kept[-1]):  # not one line of the code fits: leave the block out
            return _without_trailing_headings(kept[:-1]), True
        return "\n".join([*kept, fence]), True
    room = max_chars - used
    prose = stopped_at.strip() and not stopped_at.lstrip().startswith(("|", "#", "<"))
    if too_long and ((prose and room >= 40) or not kept):
        head = stopped_at[:room]
        cut = head.rfind(" ")
        kept.append((head[:cut] if cut > len(stopped_at) - len(stopped_at.lstrip()) else head).rstrip())
    return _without_trailing_headings(kept), True


def _without_trailing_headings(lines: list[str]) -> str:
    # A preview must not end on a heading whose section it leaves out.
    end = len(lines)
    while end and (not lines[end - 1].strip() or _HEADING.match(lines[end - 1])):
        end -= 1
    return "\n".join(lines[:end] if end else lines).rstrip()


def _open_fence(text: str) -> str | None:
    opened: str | None = None
    for match in _FENCE_LINE.finditer(text):
        opened = _next_fence(opened, match)
    return opened


def _next_fence(opened: str | None, match: re.Match[str]) -> str | None:
    """The fence open after the fence line ``match`` (None: none), given the one ``opened`` before it."""
    marker, rest = match.group(1), match.group(2)
    if opened is None:
        return opened if marker[0] == "`" and "`" in rest else marker
    return None if marker[0] == opened[0] and len(marker) >= len(opened) and not rest.strip() else opened


# -- a page's Markdown as it is, its links made absolute ------------------------------------------------

_INLINE_TARGET = re.compile(r"(\]\()(<[^>\n]*>|[^)\s]+)")
_DEFINITION = re.compile(r"^( {0,3}\[[^\]]+\]:[ \t]*)(<[^>\n]*>|\S+)")
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def absolute_links(text: str, base_url: str | None) -> str:
    """The Markdown with its relative link and image targets resolved against ``base_url`` (the page's URL),
    as its site would have them (a ``.md`` source suffix dropped, as on the rendered page), and nothing else
    changed: code blocks and code spans are left alone. For ``devknow get``, whose output is the page itself.
    """
    base = usable_base(base_url)
    if not base or ("](" not in text and "]:" not in text):
        return text

    def resolve(target: str) -> str:
        bare = target[1:-1] if target.startswith("<") else target
        if not bare or bare.startswith("#") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//", bare):
            return target
        try:
            return urljoin(base, _SOURCE_SUFFIX.sub(r"\1", bare))
        except ValueError:
            return target

    def in_prose(segment: str) -> str:
        return _INLINE_TARGET.sub(lambda m: m.group(1) + resolve(m.group(2)), segment)

    out, fence = [], None
    for line in text.split("\n"):
        marker = _FENCE_LINE.match(line)
        if marker or fence is not None:
            fence = _next_fence(fence, marker) if marker else fence
        else:
            line = _DEFINITION.sub(lambda m: m.group(1) + resolve(m.group(2)), line)
            spans = list(_CODE_SPAN.finditer(line))
            pieces, position = [], 0
            for span in spans:
                pieces += [in_prose(line[position : span.start()]), span.group(0)]
                position = span.end()
            line = "".join(pieces) + in_prose(line[position:])
        out.append(line)
    return "\n".join(out)


# -- the Markdown twin ------------------------------------------------------------------------------------


def safe_markdown(text: str, *, base_url: str | None = None, max_chars: int | None = None) -> str:
    """Markdown that a frontend can render without running anything, for the ``text/markdown`` twin.

    The text is parsed as CommonMark and written out again (:mod:`.twin`): raw HTML is shown as text
    (``<`` becomes ``&lt;``), link and image targets must be http/https/mailto (an unsafe link keeps its
    text and points to ``#``, an unsafe image shows its alt text), relative targets resolve against
    ``base_url``, code keeps its fences. Text longer than ``max_chars`` is cut like :func:`truncate_markdown`.
    """
    from .twin import markdown_twin

    shown, _ = truncate_markdown(CONTROL_CHARS.sub("", text or ""), max_chars)
    return markdown_twin(shown, base_url=usable_base(base_url))


def escape_markdown(text: str) -> str:
    """Escape a service string (title, description, query) for use as inline Markdown text.

    Whitespace is collapsed to single spaces, so the text stays on the line our own markup puts it on.
    """
    from .twin import escape_text

    return escape_text(" ".join(CONTROL_CHARS.sub("", str(text or "")).split()))


def fenced_source(text: str, info: str = "", *, char: str = "`") -> str:
    """``text`` verbatim as a fenced code block (for showing Markdown source): the fence (backticks, or
    tildes with ``char="~"``) is longer than any run of its character inside, so nothing in ``text`` can
    close it."""
    from .twin import fenced_block

    return "\n".join(fenced_block(text, info, char=char)) + "\n"


# -- plain text -------------------------------------------------------------------------------------------

_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARKS = re.compile(r"(\*\*|__|`+|~~)")
_HTML_TAG = re.compile(r"<[^>]{0,500}>")


#: A line that only labels what follows ("Returns:", "Parameters:", "**Example:**"): no excerpt starts there.
_BARE_LABEL = re.compile(r"^\W*(?:\w[\w ()`.-]{0,30}?)\W*:\W*$")


def is_bare_label(line: str) -> bool:
    """True for a line that only labels what follows (``Returns:``), which says nothing on its own."""
    text = line.strip()
    return bool(text) and len(text.split()) <= 4 and bool(_BARE_LABEL.match(text))


def without_leading_labels(text: str) -> str:
    """``text`` from its first line that says something: leading bare labels (``Returns:``) and blank lines go."""
    lines = (text or "").splitlines()
    start = 0
    while start < len(lines) and (not lines[start].strip() or is_bare_label(lines[start])):
        start += 1
    return "\n".join(lines[start:]) if start < len(lines) else text


def plain_excerpt(text: str, width: int = 100) -> str:
    """The first line of prose in Markdown ``text`` (no headings, fences, markup, bare labels such as
    ``Returns:``), cut to ``width``."""
    in_fence = False
    for raw_line in (text or "").splitlines():
        line = raw_line.strip()
        if _FENCE_LINE.match(raw_line):
            in_fence = not in_fence
            continue
        if in_fence or not line or line.startswith(("#", "|", "---", "===", "<!--")):
            continue
        line = _HTML_TAG.sub("", _MD_MARKS.sub("", _MD_LINK.sub(r"\1", line))).lstrip(">*-+ ").strip()
        line = " ".join(line.split())
        if line and not is_bare_label(line):
            return line if len(line) <= width else line[: width - 1].rstrip() + "…"
    return ""

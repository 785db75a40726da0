"""The ``text/markdown`` twin: service Markdown re-emitted from a CommonMark parse, inert by construction.

Regular expressions cannot tell where CommonMark puts code spans, link reference definitions, HTML blocks
or autolinks (backslash-escaped backticks, spans that would cross a blank line, definitions inside block
quotes, ...). So the service's Markdown is parsed with markdown-it-py (CommonMark plus GFM tables and
strikethrough) and written out again from the token stream, where every piece has a known role:

* text is escaped (``<`` and ``&`` as entities, Markdown punctuation with backslashes, line starts that
  could open a block), so no text can become HTML, a link, an autolink or a code span;
* raw HTML (inline or block) is shown as escaped text; HTML comments are left out;
* link and image destinations go through :func:`~devknow_jupyter.render.urls.safe_url` (http, https,
  mailto; relative ones resolved against the page), then are percent-encoded: an unsafe link keeps its
  text with ``#`` as target, an unsafe image shows its alt text;
* code spans and fenced blocks use a run of backticks longer than any run inside, so they close where
  we mean them to; indented code becomes fenced code;
* headings become ATX headings, lists keep their markers and numbers, tables keep their alignment.

What comes out is Markdown we wrote, holding escaped text and checked URLs, whatever the input was.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

__all__ = ["code_span", "escape_text", "fenced_block", "link_destination", "markdown_twin"]

# Text: entities for what could start HTML or an entity, backslashes for Markdown punctuation.
# ``>`` is harmless inside a line (HTML and autolinks need ``<``), so it is escaped at line starts only.
_TEXT = str.maketrans(
    {
        "<": "&lt;",
        "&": "&amp;",
        **{char: "\\" + char for char in "\\`*_[]|~#$"},
    }
)
_TITLE = str.maketrans({"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;", "\\": "&#92;", "|": "&#124;"})
_LINE_START = re.compile(r"([-+=>])|(\d{1,9})([.)])")
_BACKTICKS = re.compile(r"`+")
_TILDES = re.compile(r"~+")
_INFO_WORD = re.compile(r"[\w.+#-]{1,40}")
_URL_SAFE = ":/?#[]@!$&'*+,;=%~-._"
_HR = "***"


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    # maxNesting: commonmark's 20 levels drop the rest of a page below ~9 nested lists; 40 keeps real pages whole.
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": 40}).enable(["table", "strikethrough"])
    # Every destination reaches us as written (entities decoded): safe_url judges it, not markdown-it's
    # own list, and an unsafe link stays a link token so its text can be kept.
    md.validateLink = lambda url: True
    md.normalizeLink = lambda url: url
    md.normalizeLinkText = lambda url: url
    return md


def escape_text(text: str) -> str:
    """``text`` as inline Markdown that renders as exactly that text (no markup, HTML or links)."""
    return text.translate(_TEXT)


def _line_start(escaped: str) -> str:
    """Escape what would open a block at the start of a line (list markers, setext underlines, quotes)."""
    escaped = escaped.lstrip(" \t")
    match = _LINE_START.match(escaped)
    if match is None:
        return escaped
    if match.group(1):
        return ("&gt;" if match.group(1) == ">" else "\\" + match.group(1)) + escaped[1:]
    return match.group(2) + "\\" + match.group(3) + escaped[match.end() :]


def code_span(text: str) -> str:
    """``text`` as an inline code span: delimited by more backticks than any run inside, padded if needed."""
    text = " ".join(text.split("\n"))
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip()):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def fenced_block(code: str, info: str = "", *, char: str = "`") -> list[str]:
    """``code`` as the lines of a fenced code block whose fence (of ``char``: backticks or tildes) is
    longer than any run of that character inside, so no line of ``code`` can close it."""
    runs = _BACKTICKS.findall(code) if char == "`" else _TILDES.findall(code)
    fence = char * max(3, max((len(run) for run in runs), default=0) + 1)
    word = _INFO_WORD.match(info.strip()) if info else None
    lines = code.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [fence + (word.group(0) if word else ""), *lines, fence]


def link_destination(url: str) -> str:
    """A checked URL written as a Markdown link destination."""
    # Percent-encode what could end or bend a destination (spaces, <, >, parentheses, quotes, backslashes,
    # non-ASCII); "&" as an entity, so the renderer's entity decoding gives back exactly this URL.
    return quote(url, safe=_URL_SAFE).replace("&", "&amp;")


def _title(attrs: dict[str, Any]) -> str:
    title = str(attrs.get("title") or "")
    return f' "{" ".join(title.split()).translate(_TITLE)}"' if title.strip() else ""


def _plain(tokens: list[Any]) -> str:
    """The text of inline tokens, without markup (an image's alt text)."""
    parts = []
    for token in tokens:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token.type == "image":
            parts.append(_plain(token.children or []))
    return "".join(parts)



# An attribute list after a heading's text (MkDocs and Python-Markdown's ``{ #id .class }``): markup, not text.
_ATTRIBUTE = r'(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|\S+))'
_ATTRIBUTE_LIST = re.compile(r"\s*\{:?\s*" + _ATTRIBUTE + r"(?:\s+" + _ATTRIBUTE + r")*\s*\}\s*$")


def _drop_attribute_list(inline: Any) -> None:
    """Remove a trailing ``{ #anchor }`` from a heading's inline token (its last text child)."""
    children = getattr(inline, "children", None) or []
    if children and children[-1].type == "text":
        children[-1].content = _ATTRIBUTE_LIST.sub("", children[-1].content)


class _Writer:
    """Writes one parsed document back as Markdown (see the module docstring)."""

    def __init__(self, base_url: str | None) -> None:
        from .settings import options
        from .urls import safe_url

        self._safe_url = safe_url
        self._base_url = base_url
        self._remote_images = options.remote_images

    def url(self, raw: str) -> str | None:
        target = self._safe_url(raw, self._base_url)
        return link_destination(target) if target else None

    # -- inline ---------------------------------------------------------------------------------------

    def inline(self, tokens: list[Any], *, in_table: bool = False) -> str:
        out: list[str] = []
        at_start = True  # at the start of a line: what could open a block there gets escaped
        i = 0
        while i < len(tokens):
            token = tokens[i]
            kind = token.type
            piece = ""
            if kind == "text":
                piece = escape_text(token.content)
                if at_start:
                    piece = _line_start(piece)
                    if not piece:
                        i += 1
                        continue
            elif kind == "softbreak":
                piece = " "  # renders the same, and no text ever starts a line where a block could open
                if at_start:
                    i += 1
                    continue
            elif kind == "hardbreak":
                out.append("  \n")  # two spaces: the hard break every Markdown dialect knows
                at_start = True
                i += 1
                continue
            elif kind == "code_inline":
                # In a table, GFM splits cells at "|" before it sees code spans: such code is shown as text.
                piece = escape_text(token.content) if in_table and "|" in token.content else code_span(token.content)
            elif kind == "html_inline":
                if token.content.startswith("<!--"):
                    i += 1
                    continue
                piece = escape_text(" ".join(token.content.split()))
            elif kind in ("em_open", "em_close", "strong_open", "strong_close", "s_open", "s_close"):
                piece = token.markup
            elif kind == "link_open":
                piece, i = self._link(tokens, i, in_table=in_table)
            elif kind == "image":
                alt = escape_text(" ".join(_plain(token.children or []).split()))
                target = self.url(str(token.attrs.get("src") or ""))
                if target and not self._remote_images:  # a link to it: no request until the reader asks
                    piece = f"[Image: {alt}]({target})" if alt else f"[Image]({target})"
                else:
                    piece = f"![{alt}]({target}{_title(token.attrs)})" if target else alt
            else:  # a token this writer does not know: its text, escaped
                piece = escape_text(" ".join((token.content or "").split()))
            if piece:
                if piece[0] in "[!" and kind in ("link_open", "image") and out and out[-1].endswith("!"):
                    out[-1] = out[-1][:-1] + "\\!"  # "!" then our "[": not an image the page did not have
                out.append(piece)
                at_start = False
            i += 1
        return "".join(out).rstrip(" ")

    def _link(self, tokens: list[Any], i: int, *, in_table: bool) -> tuple[str, int]:
        """The link opened at ``tokens[i]``, written out, and the index of its ``link_close``."""
        token = tokens[i]
        end = i + 1
        while end < len(tokens) and tokens[end].type != "link_close":
            end += 1
        href = str(token.attrs.get("href") or "")
        target = self.url(href)
        inner = tokens[i + 1 : end]
        if token.markup == "autolink" and target and "&" not in target and _plain(inner) == href:
            return f"<{target}>", end  # an autolink stays one (its text is its URL)
        label = self.inline(inner, in_table=in_table)
        return f"[{label}]({target + _title(token.attrs) if target else '#'})", end

    # -- blocks ---------------------------------------------------------------------------------------
    # The block tokens are walked by index: ``self._end[i]`` is the index of the token closing token i.

    def document(self, tokens: list[Any]) -> list[str]:
        self._tokens = tokens
        self._end = list(range(len(tokens)))  # an opening token never closed holds nothing (never loops back)
        opened: list[int] = []
        for index, token in enumerate(tokens):
            if token.nesting == 1:
                opened.append(index)
            elif token.nesting == -1 and opened:
                self._end[opened.pop()] = index
        return self.blocks(0, len(tokens))

    def blocks(self, start: int, stop: int, *, tight: bool = False) -> list[str]:
        lines: list[str] = []
        index = start
        while index < stop:
            token = self._tokens[index]
            end = self._end[index] if token.nesting == 1 else index
            block = self.block(token, index + 1, end)
            index = end + 1
            if not block:
                continue
            if lines and not tight:
                lines.append("")
            lines.extend(block)
        return lines

    def block(self, token: Any, start: int, stop: int) -> list[str]:
        """The lines of one block: ``token`` opens it, its content is ``self._tokens[start:stop]``."""
        kind = token.type
        if kind in ("paragraph_open", "heading_open"):
            if kind == "heading_open" and start < stop:
                _drop_attribute_list(self._tokens[start])
            text = self._inline_lines(start, stop)
            if kind == "paragraph_open":
                return text
            level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
            return ["#" * level + (" " + " ".join(text) if text else "")]
        if kind in ("fence", "code_block"):
            return fenced_block(token.content, token.info if kind == "fence" else "")
        if kind == "hr":
            return [_HR]
        if kind == "html_block":
            content = token.content.strip()
            if content.startswith("<!--") and content.endswith("-->"):
                return []
            # Raw HTML shown as text, its lines kept apart by hard breaks.
            shown = [_line_start(escape_text(line.strip())) for line in content.split("\n") if line.strip()]
            return [line + "  " for line in shown[:-1]] + shown[-1:]
        if kind == "blockquote_open":
            return [f"> {line}" if line else ">" for line in self.blocks(start, stop)]
        if kind in ("bullet_list_open", "ordered_list_open"):
            return self._list(token, start, stop)
        if kind == "table_open":
            return self._table(start, stop)
        if token.nesting == 1:  # a container this writer does not know: its content
            return self.blocks(start, stop)
        if kind == "inline":
            return self._inline_lines(start - 1, start)
        # A leaf this writer does not know: its text, escaped, as a paragraph.
        text = _line_start(escape_text(" ".join((token.content or "").split())))
        return [text] if text else []

    def _inline_lines(self, start: int, stop: int) -> list[str]:
        inline = self._tokens[start] if start < stop else None
        if inline is None or inline.type != "inline":
            return []
        text = self.inline(inline.children or [])
        return text.split("\n") if text else []

    def _list(self, token: Any, start: int, stop: int) -> list[str]:
        ordered = token.type == "ordered_list_open"
        number = int(token.attrs.get("start", 1)) if ordered else 0
        items = []
        index = start
        while index < stop:
            end = self._end[index] if self._tokens[index].nesting == 1 else index
            if self._tokens[index].type == "list_item_open":
                items.append((index + 1, end))
            index = end + 1
        # markdown-it hides the paragraphs of a tight list: keep it tight (no blank lines between items).
        tight = not any(
            t.type == "paragraph_open" and not t.hidden and t.level == token.level + 2
            for t in self._tokens[start:stop]
        )
        lines: list[str] = []
        for item_start, item_stop in items:
            marker = f"{number}{token.markup or '.'}" if ordered else (token.markup or "-")
            number += 1
            body = self.blocks(item_start, item_stop, tight=tight)
            if lines and not tight:
                lines.append("")
            if not body:
                lines.append(marker)
                continue
            pad = " " * (len(marker) + 1)
            lines.append(f"{marker} {body[0]}")
            lines += [pad + line if line else "" for line in body[1:]]
        return lines

    def _table(self, start: int, stop: int) -> list[str]:
        rows: list[tuple[list[str], list[str]]] = []
        cells: list[str] = []
        aligns: list[str] = []
        for index in range(start, stop):
            token = self._tokens[index]
            if token.type == "tr_open":
                cells, aligns = [], []
            elif token.type == "tr_close":
                rows.append((cells, aligns))
            elif token.type in ("th_open", "td_open"):
                style = str(token.attrs.get("style") or "")
                aligns.append(style.rsplit(":", 1)[-1] if "text-align" in style else "")
                inline = self._tokens[index + 1]
                text = self.inline(inline.children or [], in_table=True) if inline.type == "inline" else ""
                cells.append(text.replace("\n", " "))
        if not rows:
            return []
        header, header_aligns = rows[0]
        rule = {"left": ":---", "center": ":---:", "right": "---:"}
        lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule.get(a, "---") for a in header_aligns) + " |"]
        lines += ["| " + " | ".join(cells) + " |" for cells, _ in rows[1:]]
        return lines


def markdown_twin(text: str, *, base_url: str | None = None) -> str:
    """Re-emit Markdown ``text`` as inert Markdown (see the module docstring); ends with a newline."""
    lines = _Writer(base_url).document(_parser().parse(text))
    return "\n".join(lines) + "\n" if lines else ""

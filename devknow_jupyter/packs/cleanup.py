"""The clean-up steps a recipe lists: site template syntax out, documentation text in.

Each step is a function of the page text; code blocks are left alone by the steps that would otherwise
eat code (HTML comments, template actions). Notebooks and HTML pages are turned into Markdown here too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

__all__ = ["clean", "html_to_markdown", "notebook_to_markdown"]

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})", re.MULTILINE)
_LIQUID_COMMENT = re.compile(r"\{%-?\s*comment\s*-?%\}.*?\{%-?\s*endcomment\s*-?%\}", re.DOTALL)
_LIQUID_TAG = re.compile(r"\{%-?.*?-?%\}", re.DOTALL)
_GO_ACTION = re.compile(r"\{\{-?.*?-?\}\}", re.DOTALL)
_CODE_EXCERPT = re.compile(r"^[ \t]*<\?code-excerpt[^>]*\?>[ \t]*\n?", re.MULTILINE)
_MDX_IMPORT = re.compile(r"^import\s+[^\n]*?\s+from\s+['\"][^'\"]+['\"];?[ \t]*\n?", re.MULTILINE)
_DEVSITE_HEADER = re.compile(r"^(?:Project|Book|page_type|refresh_date):[^\n]*\n?", re.MULTILINE)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SITE_VARIABLE = re.compile(r"\{\{\s*(site\.[\w.-]+)\s*\}\}")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """Apply ``change`` to the text between fenced code blocks only."""
    out, position, fence = [], 0, None
    for match in _FENCE.finditer(text):
        marker = match.group(2)
        if fence is None:
            out.append(change(text[position : match.start()]))
            position, fence = match.start(), marker
        elif marker[0] == fence[0] and len(marker) >= len(fence):
            end = text.find("\n", match.end())
            end = len(text) if end < 0 else end
            out.append(text[position:end])
            position, fence = end, None
    tail = text[position:]
    out.append(tail if fence is not None else change(tail))
    return "".join(out)


def clean(text: str, steps: tuple[str, ...], variables: dict[str, str] | None = None) -> str:
    """``text`` after the recipe's clean-up ``steps`` (see :data:`~.recipe.CLEANUP_STEPS`)."""
    variables = variables or {}
    for step in steps:
        if step == "site_variables":
            text = _SITE_VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), text)
        elif step == "liquid":
            text = _LIQUID_TAG.sub("", _LIQUID_COMMENT.sub("", text))
        elif step == "go_template":
            text = _outside_code(text, lambda part: _GO_ACTION.sub("", part))
        elif step == "code_excerpt":
            text = _CODE_EXCERPT.sub("", text)
        elif step == "mdx_imports":
            text = _outside_code(text, lambda part: _MDX_IMPORT.sub("", part))
        elif step == "devsite_header":
            head, gap, rest = text.partition("\n\n")  # only the header block at the top
            text = _DEVSITE_HEADER.sub("", head) + gap + rest
        elif step == "html_comments":
            text = _outside_code(text, lambda part: _HTML_COMMENT.sub("", part))
        elif step == "blank_lines":
            text = _BLANK_RUNS.sub("\n\n", text).strip() + "\n"
    return text


def html_to_markdown(html: str) -> str:
    """An HTML page as Markdown: ``markdownify`` when installed (ATX headings, fenced code), else tags dropped."""
    try:
        from markdownify import markdownify
    except ImportError:
        return _strip_tags(html)
    return markdownify(html, heading_style="ATX", code_language="", escape_underscores=False)


def _strip_tags(html: str) -> str:
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []
            self.pre = 0

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag == "pre":
                self.pre += 1
                self.parts.append("\n```\n")
            elif tag in ("h1", "h2", "h3", "h4"):
                self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
            elif tag in ("p", "div", "br", "li", "tr"):
                self.parts.append("\n\n" if tag in ("p", "div") else "\n")
                if tag == "li":
                    self.parts.append("- ")

        def handle_endtag(self, tag: str) -> None:
            if tag == "pre":
                self.pre -= 1
                self.parts.append("\n```\n")
            elif tag in ("h1", "h2", "h3", "h4", "p"):
                self.parts.append("\n\n")

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = Text()
    parser.feed(html)
    return "".join(parser.parts)


def notebook_to_markdown(raw: str) -> str:
    """A Jupyter notebook's Markdown cells, and its code cells as fenced ``python`` blocks (outputs dropped).

    Cells that only hold a licence header or a "Run in Colab" button table are left out.
    """
    notebook = json.loads(raw)
    parts = []
    for cell in notebook.get("cells", []):
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        if not text.strip():
            continue
        if cell.get("cell_type") == "markdown":
            if "Licensed under the Apache License" in text or 'class="tfo-notebook-buttons"' in text:
                continue
            parts.append(text.strip())
        elif cell.get("cell_type") == "code":
            if text.lstrip().startswith("#@title Licensed"):
                continue
            parts.append(f"```python\n{text.strip()}\n```")
    return "\n\n".join(parts) + "\n"

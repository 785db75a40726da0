"""Big pages by section (render/sections.py): the first part rendered at once, the rest on demand.

What must hold whatever the cut: the contents list reaches the last heading, every in-page anchor lands on
an element of the output (placeholders carry their headings' ids), a section filled later has the ids the
contents list promised, reference-style links resolve in any section, and the saved twins (text/html,
text/markdown) stay readable and inert.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from markdown_it import MarkdownIt

from devknow_jupyter.models import Document
from devknow_jupyter.render import sections, static
from devknow_jupyter.render.markdown import render_markdown
from devknow_jupyter.render.widgets import DocumentView
from tests.docgen import generate_markdown

BASE = "https://docs.example.dev/big"


def big_page(size: int = 120_000, seed: int = 3) -> str:
    """Generated Markdown (headings, prose, code, tables) with a link to the last section, a reference-style
    link used at the top and defined at the bottom, and headings repeated across sections."""
    body = generate_markdown(size, seed=seed)
    repeated = "".join(f"\n\n## Examples\n\nExample {i}: text text text. " + "More words. " * 400 for i in range(3))
    return (
        "# The big guide\n\nSee [the last part](#the-very-last-part) and the [reference][ref].\n\n"
        + body + repeated
        + "\n\n## The very last part\n\nThe end.\n\n[ref]: https://docs.example.dev/reference\n"
    )


def ids_and_anchors(fragment: str) -> tuple[set[str], list[str]]:
    return set(re.findall(r'\bid="([^"]+)"', fragment)), re.findall(r'href="#([^"]+)"', fragment)


def test_a_long_page_renders_its_first_part_and_lists_every_heading() -> None:
    text = big_page()
    doc = Document(name="documents/docs.example.dev/big", uri=BASE, content=text, title="Big")
    html, parts = static.sectioned_page_html(doc)
    assert parts is not None and parts.pending, "a 120 KB page should come in sections"
    rendered = html.count("<h2") - html.count('class="devknow-pending"')
    assert len(re.findall(r"<p>", html.split('class="devknow-pending"')[0])) > 0  # the first part is rendered
    assert 'class="devknow-toc"' in html and ">The very last part</a>" in html  # the contents reach the end
    ids, anchors = ids_and_anchors(html)
    assert anchors and not [a for a in anchors if a not in ids], "every in-page anchor lands in the output"
    first = html.split('class="devknow-pending"')[0]
    assert len(first) < 0.25 * len(html) and rendered > 0
    # The link at the top points at the last heading's id, which a placeholder holds until it is filled.
    top_link = re.search(r'<a [^>]*href="#([^"]+)">the last part</a>', html)
    assert top_link and top_link.group(1).endswith("the-very-last-part") and top_link.group(1) in ids
    assert 'href="https://docs.example.dev/reference"' in first  # defined at the bottom, used at the top


def test_filled_sections_have_the_ids_the_contents_list_promised() -> None:
    text = big_page()
    page = sections.outline(text, BASE)
    parts = sections.page_parts(text, base_url=BASE)
    filled = "".join(sections.section_html(page, i, parts.number) for i in range(len(page.sections)))
    headings = re.findall(r'<h[1-6][^>]*\bid="([^"]+)"', filled)
    assert headings == [entry.id for entry in parts.toc]
    assert len(set(headings)) == len(headings), "repeated headings get distinct ids (_1, _2)"
    assert sum(entry.text == "Examples" for entry in parts.toc) == 3
    # The same ids a whole-page rendering gives (each output numbers its ids: compare without the number).
    whole = render_markdown(text, base_url=BASE, max_chars=None)
    strip = re.compile(r"^(dk-[0-9a-f]{6})-[0-9a-f]+-")
    assert [strip.sub(r"\1-", e.id) for e in parts.toc] == [strip.sub(r"\1-", e.id) for e in whole.toc]


def test_sections_are_rendered_once_and_cover_the_page() -> None:
    text = big_page(60_000, seed=8)
    page = sections.outline(text, BASE)
    assert "".join(page.source(i) for i in range(len(page.sections))) == text
    assert all(s.start < s.end for s in page.sections)
    sections._rendered.cache_clear()
    sections.section_html(page, 1, 7)
    sections.section_html(page, 1, 8)  # another output of the same page: no second rendering
    assert sections._rendered.cache_info().misses == 1 and sections._rendered.cache_info().hits == 1


def test_a_hash_line_in_fenced_code_starts_no_section() -> None:
    code = "```python\n" + "# a comment, not a heading\nx = 1\n" * 600 + "```\n"
    text = "# Top\n\n" + "Words here. " * 600 + "\n\n" + code + "\n## After\n\nEnd.\n"
    page = sections.outline(text, BASE)
    assert [entry.text for entry in page.toc] == ["Top", "After"]
    assert not any(code.find(page.text[s.start : s.start + 20]) > 0 for s in page.sections[1:])


def test_the_saved_twins_are_readable_and_inert() -> None:
    hostile = "\n\n## Late section\n\n<script>alert(1)</script> and <img src=x onerror=alert(2)>\n"
    text = big_page(60_000) + hostile
    doc = Document(name="documents/docs.example.dev/big", uri=BASE, content=text, title="Big")
    twin = static.document_markdown(doc, max_chars=100_000)  # the default cut: the first part as Markdown
    tokens = MarkdownIt("commonmark", {"html": True}).parse(twin)
    assert not [t for t in tokens if t.type == "html_block"], "no raw HTML in the Markdown twin"
    inline = [c for t in tokens if t.type == "inline" for c in (t.children or []) if c.type == "html_inline"]
    assert not inline
    assert "# The big guide" in twin and "## The very last part" in twin and "## Late section" in twin
    assert "See [the last part]" in twin  # the first part is Markdown, not a code block
    html = static.document_html(doc, max_chars=100_000)
    assert "<script>" not in html and "&lt;script&gt;" in html  # a later section's source, as text


def test_the_static_html_is_cut_at_max_chars_and_says_so() -> None:
    text = big_page()
    doc = Document(name="documents/docs.example.dev/big", uri=BASE, content=text, title="Big")
    body, truncated = static.document_body_html(doc, max_chars=30_000)
    assert truncated and "Truncated" in body and "The very last part</h2>" not in body


class Frontend:
    """Stands in for the page's end of the comm: what the view sends to it."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def send(self, content: dict[str, Any], buffers: Any = None) -> None:
        self.messages.append(content)


@pytest.fixture
def frontend(monkeypatch: pytest.MonkeyPatch) -> Frontend:
    seen = Frontend()
    monkeypatch.setattr(DocumentView, "send", lambda self, content, buffers=None: seen.send(content, buffers))
    return seen


def test_the_widget_fills_a_section_when_its_page_asks(frontend: Frontend) -> None:
    doc = Document(name="documents/docs.example.dev/big", uri=BASE, content=big_page(), title="Big")
    view = DocumentView(doc)
    assert view.page["sections"] > 0 and not view.truncated
    pending = re.findall(r'data-dk-section="(\d+)"', view.page["html"])
    last = int(pending[-1])

    def ask(index: object) -> dict:
        # What the module's invoke("page_section", {name, index}) sends; the answer goes back with its id.
        view._handle_msg({"content": {"data": {"method": "custom", "content": {
            "id": f"s{index}", "kind": "anywidget-command", "name": "page_section",
            "msg": {"name": doc.name, "index": index}}}}, "buffers": []})
        answer = frontend.messages[-1]
        assert answer["id"] == f"s{index}" and answer["kind"] == "anywidget-command-response"
        return answer["response"]

    message = ask(last)
    assert message["section"] == last and message["name"] == doc.name
    assert "The end." in message["html"] and "<p>" in message["html"]
    ids, _ = ids_and_anchors(view.page["html"])
    last_id = re.search(r'<h2 id="([^"]+)">The very last part', message["html"])
    assert last_id and last_id.group(1) in ids  # the id the contents list links to
    for index in (-1, 10_000, "2", True):  # out of range, or not a number: an empty answer
        assert ask(index) == {}

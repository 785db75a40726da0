"""Hostile service content never becomes live markup, in any output we produce.

The payloads come from ``tests/fixtures/docs/xss.md`` (body, title and description) plus queries, notices,
answers and document names carrying more. Every HTML output (the ``text/html`` of each result, every
``widgets.HTML`` value of each live view, the documents shown after clicking Open) is parsed and checked
element by element; the ``text/markdown`` twin is rendered the way a frontend would (raw HTML passed
through) and checked the same way. ``text/plain`` is text, never interpreted, so it is not checked.

Escaped payloads stay visible as text (``&lt;img … onerror=…&gt;`` is what the reader should see), so the
checks look at markup, not at the words: no element with an ``on*`` attribute, no ``javascript:``/``data:``
URL, no ``<script>``/``<iframe>``/``<svg>``, and no ``<style>`` except our own stylesheet, exactly.
"""

from __future__ import annotations

import html as html_module
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import ipywidgets
import pytest

from devknow_jupyter import display
from devknow_jupyter.client import DevKnowClient
from devknow_jupyter.models import Answer, Document, DocumentChunk, Documents, ResultInfo, SearchResults
from devknow_jupyter.render.style import style_block
from tests.servers.sdk_server import load_docs

XSS_NAME = "documents/docs.example.dev/evil/page"
XSS = load_docs()[XSS_NAME]
PAYLOAD = "<script>alert('q')</script><img src=x onerror=alert('q')>"
FORBIDDEN_TAGS = {"script", "iframe", "svg", "style", "object", "embed", "math", "form", "input", "link", "meta",
                  "base", "frame", "template"}
SAFE_SCHEMES = ("http://", "https://", "mailto:")
STYLE_RE = re.compile(r"<style\b.*?</style>", re.DOTALL | re.IGNORECASE)


class MarkupCheck(HTMLParser):
    """Records every problem in a piece of HTML: forbidden elements, handlers, unsafe URLs, unsafe links."""

    def __init__(self, *, links_in_new_tab: bool = True) -> None:
        super().__init__(convert_charrefs=True)
        self.links_in_new_tab = links_in_new_tab
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}> element")
        values = dict(attrs)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{name} handler on <{tag}>")
            if name == "style":
                self.problems.append(f"style attribute on <{tag}>")
            if name in ("href", "src", "action", "formaction", "xlink:href", "srcset", "poster", "data"):
                url = re.sub(r"[\x00-\x20]", "", html_module.unescape(value or "")).lower()
                if not (url.startswith(SAFE_SCHEMES) or url.startswith("#")):
                    self.problems.append(f"{name}={value!r} on <{tag}>")
        external = tag == "a" and (values.get("href") or "").startswith(("http://", "https://"))
        rel = set((values.get("rel") or "").split())
        new_tab = values.get("target") == "_blank" and rel == {"noopener", "noreferrer"}
        if self.links_in_new_tab and external and not new_tab:
            self.problems.append(f"link without target/rel: {values}")

    handle_startendtag = handle_starttag


def assert_safe_html(
    fragment: str, *, styles: int | None = None, quoted_text: bool = False, links_in_new_tab: bool = True
) -> None:
    """No live markup from the service in ``fragment``; its only <style> blocks are ours, verbatim.

    ``quoted_text``: the fragment may show hostile words as text (the Markdown twin shows raw HTML as
    text, raw mode shows the source), so ``javascript:`` is only searched for inside tags.
    ``links_in_new_tab``: every http(s) link must carry target="_blank" rel="noopener noreferrer".
    """
    blocks = STYLE_RE.findall(fragment)
    for block in blocks:
        assert block == style_block(), "a <style> block that is not ours"
    if styles is not None:
        assert len(blocks) == styles
    rest = STYLE_RE.sub("", fragment)
    lowered = rest.lower()
    needles = ["<script", "<iframe", "<style", "<svg"]
    if not quoted_text:
        needles += ["javascript:", "data:text/html"]
    for needle in needles:
        assert needle not in lowered, needle
    assert not re.search(r"<[^>]*(javascript|data):", rest, re.IGNORECASE)
    # A handler can only run from inside a tag; escaped text (&lt;img onerror=…&gt;) has no tag.
    assert not re.search(r"<[^>]*\son\w+\s*=", rest, re.IGNORECASE)
    checker = MarkupCheck(links_in_new_tab=links_in_new_tab)
    checker.feed(rest)
    checker.close()
    assert checker.problems == []


def assert_safe_markdown(text: str, *, source_in_fence: bool = False) -> None:
    """Render the Markdown twin like a frontend (raw HTML passes through), then check the HTML.

    ``source_in_fence``: raw mode quotes the page's Markdown inside a code fence, payloads included.
    """
    import markdown

    if source_in_fence:
        assert not re.search(r"^\s*(```|~~~)\s*$", text.split("~~~markdown", 1)[-1].rsplit("~~~", 1)[0], re.M)
    else:  # no link or image target may be unsafe, in inline or reference form
        assert not re.search(r"\]\(\s*<?\s*(javascript|data|vbscript):", text, re.IGNORECASE)
        assert not re.search(r"^\s*\[[^\]]+\]:\s*<?(javascript|data|vbscript):", text, re.IGNORECASE | re.M)
    # Opening links in a new tab is the frontend's business for Markdown.
    rendered = markdown.markdown(text, extensions=["tables", "fenced_code"])
    assert_safe_html(rendered, styles=0, quoted_text=True, links_in_new_tab=False)


def html_values(widget: Any) -> Iterator[str]:
    """Every piece of HTML a live view hands its page (the header, each item, the opened page), which the
    page's module puts into the DOM with ``innerHTML`` unfiltered."""
    assert isinstance(widget, ipywidgets.DOMWidget)
    if widget.header:
        yield widget.header
    for item in widget.items:
        yield item["html"]
    if widget.page:
        yield widget.page["html"]


def assert_safe_widget(widget: Any, *, quoted_text: bool = False) -> None:
    values = list(html_values(widget))
    assert values
    for value in values:
        assert_safe_html(value, quoted_text=quoted_text)
    # No view carries a stylesheet: the one StyleSheet model of the kernel has it, ours verbatim.
    assert sum(len(STYLE_RE.findall(value)) for value in values) == 0
    from devknow_jupyter.render.style import CSS
    from devknow_jupyter.render.widgets import StyleSheet

    assert StyleSheet._css.startswith(CSS + "\n")


# -- hostile results built from the fixture -----------------------------------------------------------------


def hostile_document() -> Document:
    return Document.from_dict(XSS)


def hostile_results() -> SearchResults:
    info = ResultInfo("remote", "http://127.0.0.1:1/mcp", 0.2, False, [f"Notice {PAYLOAD}"])
    chunks = [
        DocumentChunk(XSS_NAME, "0", XSS["content"]),
        DocumentChunk("documents/docs.example.dev/<script>x</script>", "1", f"## Title {PAYLOAD}\n\n{PAYLOAD}"),
        DocumentChunk(XSS_NAME, "2", "[x](javascript:alert(1)) <a href=javascript:alert(2)>y</a>"),
    ]
    return SearchResults(f"query {PAYLOAD}", chunks, info)


def hostile_answer() -> Answer:
    return Answer(
        answer_text=XSS["content"] + f"\n\nMore: {PAYLOAD} [z](data:text/html;base64,PHNjcmlwdD4=)",
        references=[XSS_NAME, "documents/evil.example/\"><script>alert(1)</script>"],
        query=f"question {PAYLOAD}",
        extractive=True,
    )


HOSTILE = {
    "search results": hostile_results,
    "one hit": lambda: hostile_results()[1],
    "document": hostile_document,
    "documents": lambda: Documents([hostile_document(), hostile_document()]),
    "answer": hostile_answer,
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_static_html_and_markdown_are_inert(kind: str) -> None:
    bundle = display.mimebundle(HOSTILE[kind](), widgets=False)
    assert_safe_html(bundle["text/html"], styles=1)
    assert_safe_markdown(bundle["text/markdown"])


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_widget_html_is_inert(kind: str) -> None:
    view = display.widget_for(HOSTILE[kind]())
    assert_safe_widget(view)


def test_hostile_title_and_description_are_shown_as_text() -> None:
    bundle = display.mimebundle(hostile_document(), widgets=False)
    assert "Evil page &lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in bundle["text/html"]
    assert "&lt;img src=x onerror=&quot;alert(&#x27;desc&#x27;)&quot;&gt;" in bundle["text/html"]
    assert "Evil page &lt;script>" in bundle["text/markdown"]


def test_the_safe_link_in_the_page_survives_without_its_handler() -> None:
    html = display.mimebundle(hostile_document(), widgets=False)["text/html"]
    assert ('<a href="https://docs.example.dev/safe" target="_blank" rel="noopener noreferrer">'
            "a safe-looking link</a>") in html


def test_truncated_and_raw_views_are_inert_too() -> None:
    doc = hostile_document()
    for overrides in ({"max_chars": 120}, {"raw": True}, {"raw": True, "max_chars": 120}):
        raw = overrides.get("raw", False)  # the source, shown as escaped text, names the payloads
        bundle = display.mimebundle(doc, widgets=False, **overrides)
        assert_safe_html(bundle["text/html"], styles=1, quoted_text=raw)
        assert_safe_markdown(bundle["text/markdown"], source_in_fence=raw)
        assert_safe_widget(display.widget_for(doc, **overrides), quoted_text=raw)


def test_show_all_rerender_is_inert() -> None:
    from tests.test_widgets import send_from_page

    view = display.widget_for(hostile_document(), max_chars=120)
    assert view.truncated
    send_from_page(view, do="all", name=view.document.name)
    assert not view.truncated
    assert "Sanitizing checklist" in view.page["html"]
    assert_safe_widget(view)


def test_messages_escape_their_text() -> None:
    for kind in ("info", "warning", "error"):
        bundle = display.message_bundle(PAYLOAD, kind)
        assert_safe_html(bundle["text/html"], styles=1)
        assert "&lt;script&gt;" in bundle["text/html"]
    assert_safe_html(display.placeholder(PAYLOAD)["text/html"], styles=0)  # styled inline
    assert_safe_html(display.placeholder(PAYLOAD, spinner=True)["text/html"], styles=1)  # the ring's animation


def test_documents_opened_from_the_live_service_are_inert(sdk_server: Any) -> None:
    """Search the test server for the hostile page, Open it in place, check everything on screen."""
    from tests.test_widgets import send_from_page

    with DevKnowClient(sdk_server.url) as client:
        results = client.search_documents("hostile sanitizing checklist")
        view = display.widget_for(results, actions=client)
        assert XSS_NAME in [item["name"] for item in view.items]
        send_from_page(view, do="open", name=XSS_NAME)
        assert view.error == ""
        assert "Nothing above may run in the notebook." in view.page["html"]
        assert_safe_widget(view)
        answer = client.answer_query("hostile content sanitizing")
        answer_view = display.widget_for(answer, actions=client)
        opened = 0
        for item in answer_view.items:
            send_from_page(answer_view, do="open", name=item["name"])
            opened += answer_view.page.get("name") == item["name"]
            assert_safe_widget(answer_view)  # each page in turn, as the page shows one at a time
        assert opened
        assert_safe_html(display.mimebundle(answer, widgets=False)["text/html"], styles=1)

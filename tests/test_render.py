"""Markdown rendering: highlighting, tables, heading ids, contents, links, truncation, the Markdown twin.

Everything goes through the public functions of ``devknow_jupyter.render.markdown`` and
``devknow_jupyter.render.static``, on the committed fixture documents and small texts written here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from devknow_jupyter.models import Document, DocumentChunk
from devknow_jupyter.render import static
from devknow_jupyter.render.markdown import (
    HIGHLIGHT_CHARS,
    ID_PREFIX,
    escape_markdown,
    plain_excerpt,
    preview_markdown,
    render_markdown,
    safe_markdown,
    safe_url,
    sanitize_html,
    toc_html,
    truncate_markdown,
)
from devknow_jupyter.render.style import CSS, HIGHLIGHT_CLASS, style_block
from tests.servers.sdk_server import load_docs

DOCS = load_docs()
BUCKETS = DOCS["documents/docs.example.dev/storage/buckets"]
UNICODE = DOCS["documents/docs.example.dev/i18n/strings"]


def fixture_document(name: str) -> Document:
    """A committed fixture document as a Document."""
    return Document.from_dict(DOCS[name])


class Elements(HTMLParser):
    """Collects (tag, attributes) of every start tag, and the text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


# -- code, tables, headings ------------------------------------------------------------------------------


def test_fenced_code_is_highlighted_with_css_classes() -> None:
    text = '# Code\n\n```python\ndef greet(name):\n    return f"hi {name}"  # say hi\n```\n'
    html = render_markdown(text, base_url="https://docs.example.dev/code").html
    assert f'<div class="{HIGHLIGHT_CLASS}">' in html
    assert '<span class="k">def</span>' in html  # keyword
    assert '<span class="nf">greet</span>' in html  # function name
    assert 'class="c1"' in html  # comment
    assert "style=" not in html  # colours come from our CSS classes, not inline styles


def test_highlight_classes_are_styled_from_jupyterlab_variables() -> None:
    assert f".{HIGHLIGHT_CLASS} .k," in CSS and "--jp-mirror-editor-keyword-color" in CSS
    # Every colour variable has a fallback for frontends without JupyterLab's variables.
    assert re.findall(r"var\((--jp-[\w-]+)\)", CSS) == []
    assert "var(--jp-layout-color2," in CSS and "var(--jp-content-link-color," in CSS


def test_code_far_into_a_very_long_page_is_shown_plain() -> None:
    code = '```python\ndef greet(name):\n    return "hi"\n```\n\n'
    quoted = "~~~markdown\n```python\nx = 1\n```\n~~~\n\n"  # a fence shown as code must stay as written
    filler = "".join(f"Paragraph {i} of filler text for a long page.\n\n" for i in range(HIGHLIGHT_CHARS // 40))
    text = code + filler + code + quoted
    assert len(code + filler) > HIGHLIGHT_CHARS
    html = render_markdown(text, max_chars=None).html
    first, _, rest = html.partition("Paragraph 0 ")
    assert '<span class="k">def</span>' in first  # near the top: in colour
    assert '<span class="k">def</span>' not in rest and "def greet(name):" in rest  # far down: plain, all there
    assert rest.count(f'<div class="{HIGHLIGHT_CLASS}">') == 2 and "```python\nx = 1\n```" in rest
    shorter = filler[: filler.index("\n\n", 50_000) + 2]
    assert render_markdown(code + shorter + code).html.count('<span class="k">def</span>') == 2  # all in colour


def test_unknown_or_missing_language_still_renders_as_code() -> None:
    html = render_markdown("```no-such-language\n<b>x</b> & y\n```\n\n```\nplain\n```\n").html
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in html
    assert "plain" in html and html.count(f'class="{HIGHLIGHT_CLASS}"') == 2


def test_tables_render_with_alignment_attributes() -> None:
    text = "| Setting | Count |\n|:--------|------:|\n| Storage class | 3 |\n"
    elements = Elements(render_markdown(text).html)
    assert [tag for tag, _ in elements.tags if tag in ("table", "thead", "tbody", "th", "td")][:1] == ["table"]
    assert {"align": "left"} in elements.find("th") and {"align": "right"} in elements.find("td")


def test_headings_get_prefixed_unique_ids() -> None:
    rendered = render_markdown(BUCKETS["content"], base_url=BUCKETS["uri"])
    ids = [attrs["id"] for tag, attrs in Elements(rendered.html).tags if tag in ("h1", "h2")]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert all(ident.startswith(ID_PREFIX) for ident in ids)
    assert ids[1].endswith("-choose-a-region")
    assert [entry.id for entry in rendered.toc] == ids
    assert [entry.text for entry in rendered.toc] == ["Create a storage bucket", "Choose a region",
                                                      "Create it from the command line"]


def test_two_documents_get_different_heading_ids() -> None:
    first = render_markdown("## Setup\n", base_url="https://docs.example.dev/a")
    second = render_markdown("## Setup\n", base_url="https://docs.example.dev/b")
    assert first.toc[0].id != second.toc[0].id


def test_raw_html_ids_are_prefixed_so_they_cannot_clobber_the_page() -> None:
    html = render_markdown('<h2 id="jupyterapp">Clobber</h2>\n').html
    assert 'id="jupyterapp"' not in html and f'id="{ID_PREFIX}jupyterapp"' in html


def test_non_ascii_headings_keep_readable_ids() -> None:
    rendered = render_markdown("# こんにちは 🚀\n\n## Braces {name} and $HOME\n", base_url=UNICODE["uri"])
    assert "こんにちは" in rendered.toc[0].id
    assert "こんにちは 🚀" in rendered.html


# -- links and images ---------------------------------------------------------------------------------------


def test_relative_links_and_images_resolve_against_the_document_uri() -> None:
    from devknow_jupyter.render.settings import using

    text = "See [access](../access/overview), [top](/root), ![diagram](img/flow.png) and [below](#region).\n"
    with using(remote_images=True):  # (by default an image is a click-to-load link: test_page_rough_edges.py)
        elements = Elements(render_markdown(text, base_url="https://docs.example.dev/storage/buckets").html)
    hrefs = [attrs["href"] for attrs in elements.find("a")]
    assert hrefs == [
        "https://docs.example.dev/access/overview",
        "https://docs.example.dev/root",
        "https://docs.example.dev/storage/buckets#region",
    ]
    assert elements.find("img")[0]["src"] == "https://docs.example.dev/storage/img/flow.png"


def test_without_a_base_relative_links_are_dropped() -> None:
    elements = Elements(render_markdown("[rel](../x) and [abs](https://example.dev/y)\n").html)
    assert [attrs.get("href") for attrs in elements.find("a")] == [None, "https://example.dev/y"]


def test_links_open_in_a_new_tab_without_opener() -> None:
    html = render_markdown(BUCKETS["content"], base_url=BUCKETS["uri"]).html
    links = Elements(html).find("a")
    assert links
    for attrs in links:
        assert attrs["target"] == "_blank"
        assert set((attrs["rel"] or "").split()) == {"noopener", "noreferrer"}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://docs.example.dev/a?b=1&c=2", "https://docs.example.dev/a?b=1&c=2"),
        ("mailto:docs@example.dev", "mailto:docs@example.dev"),
        ("../up", "https://docs.example.dev/up"),
        ("javascript:alert(1)", None),
        ("JavaScript:alert(1)", None),
        ("java&#115;cript:alert(1)", None),
        ("java\tscript:alert(1)", None),
        ("data:text/html;base64,PHNjcmlwdD4=", None),
        ("vbscript:msgbox", None),
        ("http://[broken", None),
    ],
)
def test_safe_url(url: str, expected: str | None) -> None:
    assert safe_url(url, "https://docs.example.dev/storage/buckets") == expected


def test_sanitize_html_keeps_the_allow_list_only() -> None:
    dirty = (
        '<p onclick="x()">text<script>alert(1)</script><style>p{}</style></p>'
        '<iframe src="https://evil.example"></iframe><svg onload="x()"><circle/></svg>'
        '<a href="javascript:alert(1)">j</a><img src="data:image/png;base64,AAAA" onerror="x()">'
        '<span class="k evil-class">k</span><form action="https://evil.example"><input></form>'
    )
    clean = sanitize_html(dirty)
    for needle in ("onclick", "<script", "alert(1)", "<style", "<iframe", "<svg", "onload", "javascript:", "data:",
                   "onerror", "evil-class", "<form", "<input"):
        assert needle not in clean, needle
    assert '<span class="k">k</span>' in clean and "<p>text</p>" in clean


# -- contents and truncation ------------------------------------------------------------------------------------


def long_document(sections: int = 8, paragraph: str = "Words about buckets and regions. " * 20) -> Document:
    parts = ["# Long guide", ""]
    for i in range(1, sections + 1):
        parts += [f"## Part {i}", "", paragraph, "", "```python", f"value_{i} = {i}", "```", ""]
    return Document(name="documents/docs.example.dev/long", uri="https://docs.example.dev/long",
                    content="\n".join(parts), title="Long guide")


def test_long_documents_get_a_table_of_contents_linking_to_their_headings() -> None:
    doc = long_document()
    body, truncated = static.document_body_html(doc, toc_min_headings=4)
    assert not truncated
    elements = Elements(body)
    toc_targets = [attrs["href"] for attrs in elements.find("a")]
    heading_ids = [attrs["id"] for tag, attrs in elements.tags if tag in ("h1", "h2")]
    assert 'class="devknow-toc"' in body
    assert toc_targets == [f"#{ident}" for ident in heading_ids]
    # Contents links stay in the page: no new tab.
    assert all("target" not in attrs for attrs in elements.find("a"))


def test_short_documents_have_no_table_of_contents() -> None:
    body, _ = static.document_body_html(fixture_document(BUCKETS["name"]), toc_min_headings=4)
    assert "devknow-toc" not in body
    assert toc_html([]) == ""


def test_truncation_cuts_at_a_paragraph_and_says_how_much_is_shown() -> None:
    doc = long_document(sections=40)
    body, truncated = static.document_body_html(doc, max_chars=3_000)
    assert truncated
    rendered = render_markdown(doc.content, base_url=doc.uri, max_chars=3_000)
    assert rendered.truncated and rendered.shown_chars <= 3_000 and rendered.total_chars == len(doc.content)
    assert doc.content[rendered.shown_chars - 1] != " "  # cut at a boundary, not inside a word
    assert f"Truncated: showing the first {rendered.shown_chars:,} of {len(doc.content):,} characters." in body
    assert "Part 40" not in body and "Part 1" in body


def test_truncation_closes_an_open_code_fence() -> None:
    text = "Intro paragraph.\n\n```python\n" + "\n".join(f"line_{i} = {i}" for i in range(400)) + "\n```\n\nAfter.\n"
    shown, kept = truncate_markdown(text, 1_000)
    assert kept < len(text) and shown.rstrip().endswith("```")
    html = render_markdown(text, max_chars=1_000).html
    assert html.count("<pre>") == 1 and html.rstrip().endswith("</div>")


def test_no_limit_renders_everything() -> None:
    doc = long_document(sections=40)
    for limit in (None, 0):
        assert not render_markdown(doc.content, base_url=doc.uri, max_chars=limit).truncated


def test_renders_are_cached_so_views_share_one_conversion() -> None:
    from devknow_jupyter.render.markdown import _render

    text = "# Cached\n\nOnce.\n"
    first = render_markdown(text, base_url="https://x.dev/a")
    hits = _render.cache_info().hits
    second = render_markdown(text, base_url="https://x.dev/a")
    assert _render.cache_info().hits == hits + 1  # one conversion; each output only gets its own heading ids
    unnumbered = re.compile(r"(dk-[0-9a-f]{6})-[0-9a-f]+-")
    assert first.html != second.html and unnumbered.sub(r"\1-", first.html) == unnumbered.sub(r"\1-", second.html)


def test_raw_mode_shows_the_markdown_source_escaped() -> None:
    doc = Document(name="documents/x.dev/raw", uri="https://x.dev/raw", content="# Title\n\n<b>bold</b>\n")
    body, _ = static.document_body_html(doc, raw=True)
    assert "# Title" in body and "&lt;b&gt;bold&lt;/b&gt;" in body and "<h1" not in body


# -- the Markdown twin ------------------------------------------------------------------------------------------


def test_safe_markdown_shows_raw_html_as_text_and_drops_unsafe_links() -> None:
    text = (
        'Hi <img src=x onerror="alert(1)"> [bad](javascript:alert(1)) [rel](../access) <https://ok.dev/x>\n\n'
        "[used][ref]\n\n[ref]: data:text/html;base64,xx\n"
    )
    out = safe_markdown(text, base_url="https://docs.example.dev/storage/buckets")
    assert "<img" not in out and "&lt;img" in out
    assert "javascript:" not in out and "data:" not in out
    assert "[bad](#)" in out and "[rel](https://docs.example.dev/access)" in out and "[used](#)" in out
    assert "<https://ok.dev/x>" in out  # autolinks stay links


def test_safe_markdown_leaves_code_alone() -> None:
    text = "Use `<b>` tags.\n\n```html\n<script src='x.js'></script>\n```\n\nThen <b>stop</b>.\n"
    out = safe_markdown(text)
    assert "`<b>`" in out and "<script src='x.js'></script>" in out and "Then &lt;b>stop&lt;/b>." in out


def test_safe_markdown_entity_tricks_do_not_turn_into_javascript() -> None:
    out = safe_markdown("[x](java&#115;cript:alert(1)) [y](https://ok.dev/?a=1&amp;b=2)")
    assert "[x](#)" in out and "[y](https://ok.dev/?a=1&amp;b=2)" in out


def test_escape_markdown_and_plain_excerpt() -> None:
    assert escape_markdown("Title [x] <b>*y*</b> & $5") == r"Title \[x\] &lt;b>\*y\*&lt;/b> &amp; \$5"
    assert plain_excerpt("## Heading\n\n```\ncode\n```\n\nSee [the guide](x) for **more** help.\n") == (
        "See the guide for more help."
    )
    assert plain_excerpt("word " * 100, width=20).endswith("…")


# -- static views --------------------------------------------------------------------------------------------------


def test_hit_html_has_title_link_name_and_passage_without_repeating_the_title() -> None:
    hit = DocumentChunk(parent=BUCKETS["name"], id="1", content="## Choose a region\n\nKeep the bucket close.")
    elements = Elements(static.hit_html(hit, 3))
    text = "".join(elements.text)
    assert text.startswith("3. Choose a region") and text.count("Choose a region") == 1
    assert elements.find("a")[0]["href"] == "https://docs.example.dev/storage/buckets"
    assert BUCKETS["name"] in text and "Keep the bucket close." in text


# -- passage previews and names -------------------------------------------------------------------------------


def test_preview_keeps_short_passages_whole() -> None:
    text = "## Choose a region\n\nKeep the bucket close.\n"
    assert preview_markdown(text, 600) == (text, False)
    assert preview_markdown("x " * 2000, 0) == ("x " * 2000, False)  # 0: no preview, all of it


def test_preview_cuts_at_a_block_boundary_within_the_budget() -> None:
    text = "".join(f"Paragraph {i} says something useful about buckets here.\n\n" for i in range(40))
    shown, cut = preview_markdown(text, 600)
    assert cut and len(shown) <= 600 and shown.endswith("buckets here.") and "Paragraph 3 " in shown
    assert text.startswith(shown)  # whole blocks, nothing rewritten
    lines, _ = preview_markdown("\n\n".join(f"- item {i}" for i in range(40)), 600, max_lines=5)
    assert lines.count("- item") == 5  # the line budget holds for short lines too


def test_preview_inside_a_long_code_block_keeps_whole_lines_and_closes_the_fence() -> None:
    text = "Run:\n\n```python\n" + "\n".join(f"value_{i} = compute({i})" for i in range(200)) + "\n```\n\nDone.\n"
    shown, cut = preview_markdown(text, 600)
    assert cut and shown.endswith("\n```") and shown.count("```") == 2 and "Done." not in shown
    assert all(line.startswith(("value_", "```", "Run:")) or not line for line in shown.splitlines())
    html = render_markdown(shown).html
    assert html.count("<pre>") == 1 and "value_0" in html


def test_preview_does_not_end_on_a_heading_whose_section_it_leaves_out() -> None:
    text = "Intro " * 60 + "\n\n## Create it with the CLI\n\n```sh\n" + "tool create --flag\n" * 60 + "```\n"
    shown, cut = preview_markdown(text, 600)
    assert cut and shown == ("Intro " * 60).rstrip()


def test_preview_of_one_long_paragraph_ends_between_words() -> None:
    text = " ".join(f"word{i}" for i in range(400))
    shown, cut = preview_markdown(text, 600)
    assert cut and len(shown) <= 600 and text.startswith(shown) and text[len(shown)] == " "


def test_hit_html_and_markdown_show_the_preview_with_a_cue() -> None:
    content = "## Steps\n\n" + "".join(f"Step {i} of the guide, with enough words to count.\n\n" for i in range(60))
    hit = DocumentChunk(parent=BUCKETS["name"], id="1", content=content)
    html = static.hit_html(hit, 1, preview_chars=600)
    assert "Step 2 of" in html and "Step 59 of" not in html
    assert 'class="devknow-chunk devknow-body devknow-clamped"' in html
    assert '<div class="devknow-more" title="Passage shortened; open the page to read it all."' in html
    assert ".devknow-clamped {" in CSS and "mask-image" in CSS and ".devknow-clamped .devknow-more" in CSS
    markdown = static.hit_markdown(hit, 1, preview_chars=600)
    assert "Step 2 of" in markdown and "Step 59 of" not in markdown and markdown.endswith("\n\n…\n")
    full = static.hit_html(hit, 1)
    assert "Step 59 of" in full and "devknow-clamped" not in full and "devknow-more" not in full


def test_names_wrap_at_slashes_not_at_hyphens() -> None:
    name = "documents/devknow-jupyter.dev/guide/get-documents-tool"
    assert static.path_html(name) == (
        'documents/<wbr><span class="devknow-nobr">devknow-jupyter.dev</span>/<wbr>guide/<wbr>'
        '<span class="devknow-nobr">get-documents-tool</span>'
    )
    assert static.path_html("a/<b>-x") == 'a/<wbr><span class="devknow-nobr">&lt;b&gt;-x</span>'
    assert "devknow-nobr" not in static.path_html("x/" + "-" * 41)  # a segment longer than a line may still break
    ref = static.reference_html(name, 1)
    assert 'href="https://devknow-jupyter.dev/guide/get-documents-tool"' in ref
    assert ref.count("<wbr>") == 3 + 3 and "".join(Elements(ref).text).startswith(
        "1. https://devknow-jupyter.dev/guide/get-documents-tool documents/devknow-jupyter.dev/guide/get-documents-tool"
    )
    assert ".devknow-nobr { white-space: nowrap; }" in CSS
    # Words break only when they cannot fit a line, never to squeeze a table column ("Argumen" / "t").
    assert "overflow-wrap: break-word" in CSS and "overflow-wrap: anywhere" not in CSS


def test_every_page_has_exactly_our_style_block() -> None:
    out = static.page("<p>x</p>", "devknow-extra")
    assert out.startswith(style_block()) and out.count("<style") == 1
    assert '<div class="devknow devknow-extra"><p>x</p></div>' in out


def test_importing_the_package_does_not_load_the_renderer_libraries() -> None:
    code = (
        "import sys, devknow_jupyter, devknow_jupyter.models, devknow_jupyter.render, devknow_jupyter.display\n"
        "print(sorted(m for m in ('markdown', 'nh3', 'pygments', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

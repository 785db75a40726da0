"""Documents with odd URIs show in every view, their names without a link, instead of raising ValueError.

``urlsplit`` raises on a broken IPv6 host (``http://[::1``) and ``.port`` on a port out of range or not a
number; nh3 refuses such a base URL. The documents come from a real local folder whose front matter gives
these ``uri`` values, read through ``DevKnowClient("local:FOLDER")``; they are shown through
``display.mimebundle`` with live widgets and through the explorer, driven as the browser drives it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from IPython.utils.capture import capture_output

from devknow_jupyter import DevKnowClient, display, explore

# Ten pages: one search returns them all (the local backend gives at most ten hits).
ODD_URIS = {
    "no scheme": "docs.example.dev/no-scheme",
    "javascript": "javascript:alert(1)",
    "spaces": "https://docs.example.dev/with some spaces/",
    "unicode": "https://例え.テスト/ページ?q=ü",
    "ipv6": "http://[::1]:8080/page",
    "port out of range": "https://x.example:99999/",
    "port not a number": "https://x.example:http/",
    "broken ipv6": "http://[::1",
    "empty": "",
    "very long": "https://docs.example.dev/" + "long-segment/" * 400,
}


def _write_folder(folder: Path) -> None:
    for number, (label, uri) in enumerate(ODD_URIS.items()):
        name = f"\nname: documents/odd.example/page-{number}" if label in ("very long", "javascript") else ""
        (folder / f"page-{number}.md").write_text(
            f'---\ntitle: "Odd zebra {label}"\nuri: "{uri}"{name}\n---\n'
            f"# Odd zebra {label}\n\nA zebra page whose address is odd ({label}). See [below](#more) and [up](../up).\n"
            "\n## More\n\nMore zebra words.\n",
            encoding="utf-8",
        )


@pytest.fixture
def client(tmp_path: Path):
    folder = tmp_path / "odd"
    folder.mkdir()
    _write_folder(folder)
    with DevKnowClient(f"local:{folder}") as client:
        yield client


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("a", "img"):
            self.hrefs += [value or "" for name, value in attrs if name in ("href", "src")]


def assert_links_are_usable(page: str) -> None:
    """Every link and image URL in ``page`` parses, with a valid port, and is http(s)/mailto or a fragment."""
    parser = _Links()
    parser.feed(page)
    for href in parser.hrefs:
        if href.startswith(("#", "mailto:")):
            continue
        parts = urlsplit(href)  # raises ValueError on a broken host
        assert parts.scheme in ("http", "https") and parts.hostname, href
        _ = parts.port  # raises ValueError on a bad port


def test_hits_and_documents_with_odd_uris_display_with_widgets(client: DevKnowClient) -> None:
    results = client.search_documents("odd zebra")
    assert len(results) == len(ODD_URIS)
    documents = client.get_documents(results.names)
    shown_uris = {doc.uri for doc in documents}
    assert {uri for uri in ODD_URIS.values() if uri} <= shown_uris  # the odd URIs really reach the views
    for obj in [results, *results, documents, *documents]:
        with capture_output() as captured:
            bundle = display.mimebundle(obj, widgets=True, widgets_outside_kernel=True)
        assert captured.stderr == "", captured.stderr  # no "could not render" / "widgets unavailable"
        assert display.WIDGET_MIME in bundle and {"text/plain", "text/markdown", "text/html"} <= set(bundle)
        assert_links_are_usable(bundle["text/html"])
        view = display.widget_for(obj, widgets_outside_kernel=True)
        for value in _html_values(view):
            assert_links_are_usable(value)


def test_odd_uris_show_the_title_without_a_link(client: DevKnowClient) -> None:
    results = client.search_documents("odd zebra")
    documents = {doc.title: doc for doc in client.get_documents(results.names)}
    for label in ("port out of range", "port not a number", "broken ipv6", "javascript", "no scheme"):
        doc = documents[f"Odd zebra {label}"]
        header = display.mimebundle(doc, widgets=False)["text/html"].split('class="devknow-doc-title">', 1)[1]
        header = header.split("</div>", 1)[0]
        assert header == f"Odd zebra {label}", header  # the title as text, no <a>
        markdown = display.mimebundle(doc, widgets=False)["text/markdown"]
        assert markdown.startswith(f"## Odd zebra {label}\n"), markdown[:200]
    # A URI with spaces or non-ASCII characters is still a link (encoded), and relative links resolve against it.
    spaced = display.mimebundle(documents["Odd zebra spaces"], widgets=False)["text/html"]
    assert 'href="https://docs.example.dev/with%20some%20spaces/"' in spaced
    assert 'href="https://docs.example.dev/up"' in spaced
    assert re.search(r'href="#dk-[0-9a-f]{6}-[0-9a-f]+-more"', spaced)  # an in-page anchor stays in the page


def _html_values(widget: Any) -> list[str]:
    import ipywidgets

    values = [widget.value] if isinstance(widget, ipywidgets.HTML) else []
    for child in getattr(widget, "children", ()):
        values += _html_values(child)
    return values


def test_the_explorer_searches_and_opens_documents_with_odd_uris(client: DevKnowClient) -> None:
    app = explore("odd zebra", client=client)
    try:
        assert app.wait(timeout=30)
        widget = app.widget
        assert widget.status["kind"] != "error", widget.status
        assert len(widget.hits) == len(ODD_URIS)
        for number, row in enumerate(widget.hits):
            app.open(number, wait=True)
            assert widget.status["kind"] != "error", (row["label"], widget.status)
            title = re.sub(r"<[^>]+>", "", widget.title_html)
            assert "Odd zebra" in title, (row["label"], title)
            for value in (widget.title_html, widget.page_html, widget.hits_header_html):
                assert_links_are_usable(value)
        bundle = app._repr_mimebundle_()
        assert {"text/plain", "text/markdown", "text/html"} <= set(bundle)
    finally:
        app.close()

"""Rough edges of shown pages (issue 14): heading ids unique per output, relative links as the public site
has them, in-page anchors kept. Through the public interface: display's mimebundle of a Document."""

from __future__ import annotations

import re

from devknow_jupyter import display
from devknow_jupyter.models import Document

PAGE = Document(
    "documents/docs.lantern.test/reference/relay",
    "https://docs.lantern.test/reference/relay",
    "# Relay\n\nSee [the credential](relay.credential.md#token), [the guide](../guide/setup.md) and "
    "[usage below](#usage).\n\n## Usage\n\nStart it.\n\n## Options\n\nSet them.\n\n## Limits\n\nKnow them.\n\n"
    "## Errors\n\nRead them.\n",
)


def _html() -> str:
    return display.mimebundle(PAGE, widgets=False)["text/html"]


def test_the_same_page_shown_twice_has_distinct_heading_ids_and_each_contents_list_points_into_its_own() -> None:
    first, second = _html(), _html()
    ids_first = set(re.findall(r'id="(dk-[^"]+)"', first))
    ids_second = set(re.findall(r'id="(dk-[^"]+)"', second))
    assert len(ids_first) >= 5 and not ids_first & ids_second
    for html, ids in ((first, ids_first), (second, ids_second)):
        anchors = set(re.findall(r'href="#([^"]+)"', html))
        assert anchors and anchors <= ids  # every contents link (and in-page link) lands in this output


def test_relative_links_point_to_the_public_page_without_the_source_suffix() -> None:
    links = re.findall(r'<a [^>]*href="([^"]+)"', _html())
    assert "https://docs.lantern.test/reference/relay.credential#token" in links
    assert "https://docs.lantern.test/guide/setup" in links
    assert not any(".md" in link for link in links)


def test_an_in_page_anchor_stays_in_the_page() -> None:
    html = _html()
    usage = re.search(r'id="(dk-[^"]+-usage)"', html).group(1)
    link = re.search(r'<a [^>]*href="#' + re.escape(usage) + r'"[^>]*>usage below</a>', html)
    assert link and "_blank" not in link.group(0)


def test_excerpts_start_at_a_sentence_that_says_something_not_a_bare_label() -> None:
    from devknow_jupyter.models import DocumentChunk, SearchResults

    hit = DocumentChunk(
        "documents/docs.lantern.test/reference/relay", "1", "Returns:\n\nThe relay's address once it runs."
    )
    plain = display.mimebundle(SearchResults("relay address", [hit]), widgets=False)["text/plain"]
    assert "The relay's address once it runs." in plain and "Returns:" not in plain
    preview = display.mimebundle(SearchResults("relay address", [hit]), widgets=False, preview_chars=200)["text/html"]
    assert "address once it runs" in preview and "Returns:" not in preview
    alone = display.mimebundle(hit, widgets=False)["text/plain"]
    assert alone.splitlines()[-1].strip() == "The relay's address once it runs."

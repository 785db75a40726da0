"""Citation markers in every view of an answer: plain, Markdown, HTML, the AnswerView widget, the CLI.

Markers ``[n]`` follow the cited segments, numbered like the references listed below, and link to the
reference's page (Markdown, HTML, widget). They never land inside code, links, tags or URLs, and the XSS
gallery of ``tests/test_xss.py`` stays inert with markers placed at every character of a hostile answer.
"""

from __future__ import annotations

import re

import pytest

from devknow_jupyter import display
from devknow_jupyter.models import Answer
from devknow_jupyter.render import citations, static
from tests.test_xss import PAYLOAD, XSS_NAME, assert_safe_html, assert_safe_markdown, assert_safe_widget, hostile_answer

REFS = ["documents/docs.example.dev/buckets", "documents/docs.example.dev/regions"]
TEXT = "Créez un bucket 📦. Choisissez 東京 ou une autre région."


def span(text: str, segment: str, *refs: int) -> dict:
    """A citation of ``segment`` in the service's shape (UTF-8 byte offsets)."""
    start = len(text[: text.index(segment)].encode())
    end = start + len(segment.encode())
    return {"startIndex": start, "endIndex": end, "sources": [{"referenceIndex": i} for i in refs]}


def answer(text: str = TEXT, cited: tuple[tuple[str, tuple[int, ...]], ...] | None = None) -> Answer:
    cited = cited if cited is not None else (("Créez un bucket 📦.", (0,)), ("東京", (1, 0)))
    data = {"answerText": text, "citations": [span(text, seg, *refs) for seg, refs in cited], "references": REFS}
    return Answer.from_dict(data, query="Où créer un bucket ?")


def test_plain_view_puts_numbers_after_the_segments() -> None:
    text = static.answer_plain(answer())
    assert "Créez un bucket 📦.[1] Choisissez 東京[1][2] ou une autre région." in text
    assert " 1. https://docs.example.dev/buckets" in text and " 2. https://docs.example.dev/regions" in text


def test_markdown_view_links_each_marker_to_its_reference() -> None:
    text = static.answer_markdown(answer())
    one, two = r"[\[1\]](https://docs.example.dev/buckets)", r"[\[2\]](https://docs.example.dev/regions)"
    assert f"bucket 📦.{one} Choisissez 東京{one}{two} ou" in text
    assert "1. [https://docs.example.dev/buckets](https://docs.example.dev/buckets)" in text


def test_html_view_and_widget_show_linked_markers() -> None:
    html = static.answer_html(answer())
    marker = re.compile(r'bucket 📦\.<a href="https://docs\.example\.dev/buckets"[^>]*>\[1\]</a> Choisissez 東京'
                        r'<a href="https://docs\.example\.dev/buckets"[^>]*>\[1\]</a>'
                        r'<a href="https://docs\.example\.dev/regions"[^>]*>\[2\]</a> ou')  # fmt: skip
    assert marker.search(html), html
    view = display.widget_for(answer())
    assert marker.search(view.header)
    assert len(view.items) == 2  # one row per reference, numbered like the markers


def test_an_answer_without_citations_is_shown_as_before() -> None:
    plain = Answer(TEXT, references=REFS, query="q")
    assert citations.cited_markdown(plain) == TEXT == citations.cited_plain(plain)
    assert "[1]" not in static.answer_html(plain).split("References")[0]
    assert "1. https://docs.example.dev/buckets" in static.answer_plain(plain)


# (case, text, cited segment, expected Markdown with the plain marker)
PLACEMENT = [
    ("prose", "Run it. Done.", "Run it.", "Run it.[1] Done."),
    ("inside a code span", "Use `gsutil mb` now.", "gsutil", "Use `gsutil mb`[1] now."),
    ("inside a link", "See [the guide](https://g.example/x) here.", "the guide",
     "See [the guide](https://g.example/x)[1] here."),
    ("inside a bare URL", "Open https://g.example/a/b today.", "https://g.example/a",
     "Open https://g.example/a/b[1] today."),
    ("inside a tag", "Press <kbd>Enter</kbd> now.", "<kb", "Press <kbd>[1]Enter</kbd> now."),
    ("inside a fenced block", "Run:\n\n```sh\nmake bucket\n```\nThen wait.", "make",
     "Run:\n\n```sh\nmake bucket\n```\n[1]\n\nThen wait."),
    ("a block never closed", "Run:\n\n```sh\nmake bucket", "make", "Run:\n\n```sh\nmake bucket\n[1]\n\n"),
    ("after a backslash", "Path C:\\ end", "Path C:\\", "Path C:\\ [1] end"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "segment", "expected"), [c[1:] for c in PLACEMENT], ids=[c[0] for c in PLACEMENT])
def test_markers_never_break_the_markdown(text: str, segment: str, expected: str) -> None:
    assert citations.cited_plain(answer(text, ((segment, (0,)),))) == expected


def test_markers_that_meet_share_one_place() -> None:
    text = "Use `a b` now."
    shown = citations.cited_plain(answer(text, (("a", (1,)), ("b", (0,)))))
    assert shown == "Use `a b`[1][2] now."


def test_cli_ask_over_rest_shows_markers(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")
    from devknow_jupyter.cli import main
    from tests.servers.rest_server import RestServer

    with RestServer() as server:
        monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
        assert main(["--endpoint", server.url, "--protocol", "rest", "ask", "Où", "créer", "un", "bucket"]) == 0
    out = capsys.readouterr().out
    assert "avec un nom unique.[1] 東京 est une région.[1][2] Then upload objects[3] into it." in out
    assert "**References**" in out and "3. [https://docs.cloud.google.com/storage/docs/objects]" in out


# -- the XSS gallery through the citation view ---------------------------------------------------------------


def cited_everywhere(base: Answer) -> Answer:
    """``base`` with a one-character citation ending at every character, cycling through its references
    and adding hostile ones, so markers land in every construct of the hostile text."""
    evil = ['documents/evil.example/"><img src=x onerror=alert(1)>', f"documents/x.example/{PAYLOAD}"]
    refs = [*base.references, *evil]
    data, offset, cites = base.answer_text.encode(), 0, []
    for number, char in enumerate(base.answer_text):
        size = len(char.encode())
        cites.append({"startIndex": offset, "endIndex": offset + size, "sources": [{"referenceIndex": number % 4}]})
        offset += size
    assert offset == len(data)
    return Answer.from_dict({"answerText": base.answer_text, "citations": cites, "references": refs}, query=base.query)


def test_the_xss_gallery_stays_inert_through_the_citation_view() -> None:
    hostile = cited_everywhere(hostile_answer())
    assert len(hostile.citations) == len(hostile.answer_text) and not hostile.info.notices
    bundle = display.mimebundle(hostile, widgets=False)
    assert_safe_html(bundle["text/html"], styles=1)
    assert_safe_markdown(bundle["text/markdown"])
    assert_safe_widget(display.widget_for(hostile))
    assert "[4]" in bundle["text/plain"] and XSS_NAME in hostile.references[0]


def test_devask_magic_over_rest_shows_linked_markers(ip, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("google.developer_knowledge_v1", reason="the rest extra is not installed")
    from tests.servers.rest_server import RestServer

    with RestServer() as server:
        monkeypatch.setenv("DEVKNOW_API_KEY", server.api_key)
        monkeypatch.setenv("DEVKNOW_ENDPOINT", server.url)
        monkeypatch.setenv("DEVKNOW_PROTOCOL", "rest")
        result = ip.run_cell_magic("devask", "", "Où créer un bucket ?")
    assert isinstance(result, Answer) and len(result.citations) == 3
    bundle = display.mimebundle(result, widgets=False)
    assert r"un nom unique.[\[1\]](https://docs.cloud.google.com/storage/docs/buckets) 東京" in bundle["text/markdown"]
    assert "une région.[1][2] Then upload objects[3] into it." in bundle["text/plain"]

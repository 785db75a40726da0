"""Hostile runs of link and tag openers render in bounded time; real pages are not touched by the guard."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from devknow_jupyter.render.inline_budget import defuse_openers
from devknow_jupyter.render.markdown import render_markdown

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "corpus.jsonl"

# Each costs Python-Markdown time quadratic in its length without the guard (10,000 of them: 5-25 s).
HOSTILE = {
    "brackets": "[" * 10_000,
    "images": "![" * 10_000,
    "unclosed links": "[a](" * 10_000,
    "tags": "<a " * 10_000,
    "autolinks": "<http://" * 10_000,
    "brackets and backticks": "`[" * 10_000,
    "escaped brackets": "\\[" * 10_000,
    "one per line": "\n".join(["[x" for _ in range(10_000)]),
    "many blocks": "\n\n".join(["[" * 900 for _ in range(30)]),
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_openers_render_in_bounded_time(text: str) -> None:
    started = time.process_time()
    rendered = render_markdown(f"# Title\n\n{text}\n\nthe end", max_chars=None)
    assert time.process_time() - started < 5  # 5-25 s of CPU each without the guard
    assert "the end" in rendered.html and 'id="dk-' in rendered.html  # the rest of the page still renders


def test_a_defused_block_shows_its_characters_as_text() -> None:
    html = render_markdown("[" * 3000 + " [link](https://example.com/x)\n\n[kept](https://example.com/y)").html
    assert html.count("[") >= 3000  # shown, as text
    assert 'href="https://example.com/y"' in html  # the cheap block keeps its link
    assert 'href="https://example.com/x"' not in html  # the hostile block is text throughout


def test_fenced_code_is_left_alone() -> None:
    text = "```\n" + "[" * 5000 + "\n```\n\n" + "<a " * 5000
    assert "[" * 5000 in defuse_openers(text)
    assert "<a " not in defuse_openers(text)


def test_cheap_text_is_returned_unchanged() -> None:
    text = "see [a](b) and <b>bold</b>\n\n" * 200
    assert defuse_openers(text) is text


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is not beside the repository")
def test_no_page_of_the_shared_corpus_is_touched() -> None:
    with CORPUS.open(encoding="utf-8") as handle:
        pages = [json.loads(line) for line in handle]
    touched = [page["name"] for page in pages if defuse_openers(page["content"]) != page["content"]]
    assert touched == []

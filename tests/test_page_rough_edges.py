"""Rough edges of shown pages (issue 24): go.dev's backslash line breaks, MkDocs heading attributes, images
from the web that load only on a click, and `devknow get` with its relative links made absolute.

Through the public interface: a Document's mimebundle (every MIME type a notebook saves), `%config` in a real
IPython shell, and the `devknow` command over a folder of pages written here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from devknow_jupyter import display
from devknow_jupyter.models import Document
from tests.conftest import ROOT

PAGE = Document(
    "documents/go.dev/doc/relay",
    "https://go.dev/doc/relay/",
    "# Relay\n\n## 2. Create Agent Project { #create-agent-project }\n\n"
    "The first line\\\nthe second line, after a hard break.\n\n"
    "![The relay's diagram](/images/relay.png) and ![](https://cdn.example.org/pixel.gif)\n\n"
    "See [the guide](../guide/setup.md#start) and [options](#create-agent-project).\n\n"
    "```\nkeep\\\n[code](literal.md)\n```\n",
)


def _bundle(**options) -> dict[str, str]:
    return display.mimebundle(PAGE, widgets=False, **options)


def test_a_backslash_at_a_line_end_is_a_line_break_not_a_backslash() -> None:
    html = _bundle()["text/html"]
    assert re.search(r"The first line<br\s*/?>\s*the second line", html)
    assert "line\\" not in html.split("<pre")[0]  # outside code; the code block keeps its backslash
    assert "keep\\" in html


def test_mkdocs_heading_attributes_are_an_anchor_not_text() -> None:
    bundle = _bundle()
    for mime in ("text/html", "text/markdown"):  # text/plain is the page's Markdown source, as it is
        assert "{ #create-agent-project }" not in bundle[mime] and "\\#create-agent-project" not in bundle[mime], mime
    html = bundle["text/html"]
    anchor = re.search(r'<h2 id="(dk-[^"]*create-agent-project)">2\. Create Agent Project</h2>', html)
    assert anchor and f'href="#{anchor.group(1)}"' in html  # the in-page link lands on it
    assert "## 2\\. Create Agent Project\n" in bundle["text/markdown"]


def test_images_from_the_web_wait_for_a_click_in_every_mime_type() -> None:
    bundle = _bundle()
    html, markdown = bundle["text/html"], bundle["text/markdown"]
    assert "<img" not in html  # nothing is fetched as the output shows
    placeholder = re.search(r'<a class="dk-remote-image" href="https://go.dev/images/relay.png"[^>]*>([^<]*)</a>', html)
    assert placeholder and "The relay's diagram" in placeholder.group(1) and "go.dev" in placeholder.group(1)
    assert 'href="https://cdn.example.org/pixel.gif"' in html
    assert "![" not in markdown  # a saved notebook's Markdown would fetch it too
    assert "[Image: The relay's diagram](https://go.dev/images/relay.png)" in markdown


def test_remote_images_can_be_turned_on_with_config(ip) -> None:
    ip.run_line_magic("config", "DevKnowMagics.remote_images = True")
    try:
        html = display.mimebundle(PAGE, widgets=False)["text/html"]
        assert '<img alt="The relay\'s diagram" src="https://go.dev/images/relay.png"' in html
        assert "![The relay's diagram](https://go.dev/images/relay.png)" in display.mimebundle(PAGE, widgets=False)[
            "text/markdown"
        ]
    finally:
        ip.run_line_magic("config", "DevKnowMagics.remote_images = False")
    assert "<img" not in display.mimebundle(PAGE, widgets=False)["text/html"]


def test_devknow_get_prints_the_page_with_its_relative_links_made_absolute(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "relay.md").write_text(
        "---\nname: documents/go.dev/doc/relay\nuri: https://go.dev/doc/relay/\ntitle: Relay\n---\n"
        + PAGE.content,
        encoding="utf-8",
    )
    env = {**os.environ, "DEVKNOW_CACHE_DIR": str(tmp_path / "cache")}
    for name in ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "devknow_jupyter", "--endpoint", f"local:{docs}", "get", "documents/go.dev/doc/relay"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=env,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[the guide](https://go.dev/doc/guide/setup#start)" in out
    assert "![The relay's diagram](https://go.dev/images/relay.png)" in out  # the page's Markdown, as it is
    assert "[options](#create-agent-project)" in out  # in-page anchors stay
    assert "[code](literal.md)" in out  # code is left alone

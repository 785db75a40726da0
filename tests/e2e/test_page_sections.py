"""A long page's widget in JupyterLab (headless Chromium): first sections at once, the rest as they near view.

The notebook displays a ~500 KB page (render/sections.py cuts it into sections): the first part is rendered,
the contents list reaches the last heading, the later sections are placeholders. Following the contents
link to the last heading scrolls there, and the page's module (render/esm/results.js) asks the kernel for
that section, which replaces its placeholder with the rendered HTML. Offline, no console or page error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import lab_server as e2e
from tests.e2e.lab_server import LONG, LabServer

pytestmark = pytest.mark.e2e

CELLS = [
    "%load_ext devknow_jupyter\nfrom devknow_jupyter.models import Document",
    "parts = [f'## Part {i}\\n\\n' + f'Words of part {i}. ' * 60 + f'\\n\\n```python\\nx = {i}\\n```'\n"
    "         for i in range(400)]\n"
    "end = '\\n\\n## The very last part\\n\\nThe end of the page.\\n'\n"
    "content = '# A long guide\\n\\n' + '\\n\\n'.join(parts) + end\n"
    "Document(name='documents/docs.example.dev/long', uri='https://docs.example.dev/long', title='Long guide',"
    " content=content)",
]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[LabServer]:
    root = tmp_path / "root"
    root.mkdir()
    notebook = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
                  for source in CELLS],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "long.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    started = e2e.start_lab(root, tmp_path / "state", env={**os.environ, **e2e.OFFLINE_ENV})
    try:
        yield started
    finally:
        assert started.shutdown() is not None, "the server did not stop"


def test_a_long_page_fills_the_section_its_contents_link_goes_to(lab: LabServer) -> None:
    with e2e.browser_page("long-page") as (page, log):
        from playwright.sync_api import expect

        e2e.open_notebook(page, lab.url("lab/tree/long.ipynb"))
        e2e.run_all(page)
        view = page.locator(".dkv-document")
        expect(view.locator(".devknow-doc-title")).to_have_text("Long guide", timeout=LONG)
        pending = view.locator("section.devknow-pending")
        before = pending.count()
        assert before > 10, f"{before} placeholders: the page should come in sections"
        expect(view.locator(".devknow-body > h2").first).to_have_text("Part 0")  # the first part, rendered
        toc = view.locator("details.devknow-toc")
        toc.locator("summary").click()
        link = toc.get_by_role("link", name="The very last part")
        target = (link.get_attribute("href") or "#").removeprefix("#")
        link.click()
        last = view.locator("section.devknow-section p", has_text="The end of the page.")
        expect(last).to_be_visible(timeout=LONG)
        assert pending.count() < before
        heading = view.locator(f'section.devknow-section h2[id="{target}"]')
        expect(heading).to_have_text("The very last part")  # the filled section kept the id the link points at
        expect(view.locator("section.devknow-section pre.devknow-source")).to_have_count(0)
        expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert log.page_errors == []
    assert log.errors() == []
    assert log.outside == [], "the page went online"

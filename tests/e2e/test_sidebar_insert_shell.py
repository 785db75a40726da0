"""The panel's "Insert into notebook" of a shell block in a real JupyterLab: a cell that runs it.

A one-line ```bash block becomes ``!command``, a longer one a ``%%bash`` cell; a ```console block keeps its
``$ `` command lines without the prompt and leaves out the output shown between them. The console
cell is then run in the notebook's kernel: its commands' output shows.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.lab_server import LONG, OFFLINE_ENV, LabServer, browser_page, open_notebook
from tests.e2e.test_sidebar import PANEL, notebook_lab

pytestmark = pytest.mark.e2e

CONSOLE_PAGE = """---
name: documents/docs.example.org/shell/console-session
uri: https://docs.example.org/shell/console-session
title: A console session to copy
description: Commands shown with their prompts and output.
---
# A console session to copy

One command:

```console
$ echo alone
alone
```

Two commands, each with its output:

```console
$ echo first line
first line
$ echo second line
second line
```
"""
SOURCE = "() => window.jupyterapp.shell.currentWidget.content.activeCell.model.sharedModel.getSource()"


@pytest.fixture
def shell_lab(tmp_path: Path) -> Iterator[LabServer]:
    """JupyterLab whose offline index holds the starter pack and a page with console blocks."""
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "console.md").write_text(CONSOLE_PAGE)
    indexed = subprocess.run([sys.executable, "-m", "devknow_jupyter", "index", str(pages)], capture_output=True,
                             text=True, timeout=120, env={**os.environ, **OFFLINE_ENV})
    assert indexed.returncode == 0, indexed.stderr
    with notebook_lab(tmp_path) as server:
        yield server


def test_insert_makes_shell_blocks_cells_that_run(shell_lab: LabServer) -> None:
    from playwright.sync_api import expect

    with browser_page("sidebar-insert-shell") as (page, log):
        open_notebook(page, shell_lab.url("lab/tree/notes.ipynb"))
        page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
        panel = page.locator(PANEL)
        expect(panel).to_be_visible(timeout=LONG)

        def insert(query: str, title: str, block_text: str) -> str:
            box = panel.locator(".jp-DevKnow-query")
            box.fill(query)
            box.press("Enter")
            panel.locator(".jp-DevKnow-hit", has_text=title).first.click()
            doc = panel.locator(".jp-DevKnow-page")
            expect(doc.locator(".devknow-doc-title")).to_have_text(title, timeout=LONG)
            block = doc.locator(".devknow-hl", has_text=block_text).first
            block.locator(".jp-DevKnow-insert").click()
            page.wait_for_function(f"() => ({SOURCE})().length > 0 && ({SOURCE})() !== 'quotas\\n'", timeout=LONG)
            return page.evaluate(SOURCE)

        assert insert("install devknow jupyter quickstart", "Quickstart for Jupyter",
                      "pip install devknow-jupyter") == "!pip install devknow-jupyter"
        assert insert("devknow command line tool", "The devknow command line tool", "devknow search").startswith(
            '%%bash\ndevknow search "answer quota" -n 3\ndevknow get ')
        assert insert("console session to copy", "A console session to copy", "echo alone") == "!echo alone"
        assert insert("console session to copy", "A console session to copy", "echo first") == (
            "%%bash\necho first line\necho second line")

        # The console cell runs: its two commands print their lines.
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-cell')")
        cells = page.locator(".jp-Notebook .jp-Cell")
        expect(cells.nth(4).locator(".jp-OutputArea-output")).to_have_text("first line\nsecond line", timeout=LONG)
    assert log.page_errors == []
    assert log.outside == [], "the page went online"



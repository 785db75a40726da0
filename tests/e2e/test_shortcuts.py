"""JupyterLab's shortcuts with the focus in a devknow view (issue 24, item 1), in JupyterLab and Notebook 7.

A notebook with a ``%devsearch`` hit list and an explorer runs on the offline index (no key, no network).
For each view: a Markdown cell's text is changed (the notebook is dirty), the focus goes into the view (the
hit list; the explorer's hit button), and Ctrl+S is pressed: the notebook is saved (the file on disk holds the
new text, the document is no longer dirty). The views keep their own keys: ArrowDown moves the highlight
in the view and not the notebook's active cell.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import lab_server as e2e
from tests.e2e.lab_server import LONG, LabServer

pytestmark = pytest.mark.e2e

QUERY = "create an API key"
CELLS = ["%load_ext devknow_jupyter", f"%devsearch -n 5 {QUERY}", "%devknow explore"]
NAME = "keys.ipynb"
_ACTIVE_CELL = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
_DIRTY = "() => window.jupyterapp.shell.currentWidget.context.model.dirty"
# Change the last (Markdown) cell's text through the model, as typing would: the document becomes dirty.
_EDIT = """(text) => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  cells[cells.length - 1].model.sharedModel.setSource(text);
}"""
# Notebook 7.6 raises this itself while loading, also for an empty notebook with our extensions disabled.
NOTEBOOK7_OWN = "Cannot read properties of undefined (reading 'schema')"


@pytest.fixture(params=["lab", "notebook"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, LabServer, Path]]:
    """JupyterLab or Notebook 7 serving a notebook with a hit list, an explorer and a Markdown cell below."""
    root = tmp_path / "root"
    root.mkdir()
    cells: list[dict[str, Any]] = [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
        for source in CELLS
    ]
    cells.append({"cell_type": "markdown", "metadata": {}, "source": "Notes."})
    notebook = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    (root / NAME).write_text(json.dumps(notebook), encoding="utf-8")
    app = request.param
    started = e2e.start_lab(root, tmp_path / "state", env={**os.environ, **e2e.OFFLINE_ENV}, app=app)
    try:
        yield app, started, root / NAME
    finally:
        assert started.shutdown() is not None, "the server did not stop"


def _saved_text(path: Path) -> str:
    source = json.loads(path.read_text(encoding="utf-8"))["cells"][-1]["source"]
    return "".join(source) if isinstance(source, list) else source


def _ctrl_s_saves(page: Any, path: Path, focus: Any, text: str) -> None:
    """Make the notebook dirty, put the focus on ``focus``, press Ctrl+S: the file on disk holds ``text``."""
    page.evaluate(_EDIT, text)
    page.wait_for_function(_DIRTY, timeout=LONG)
    focus.focus()
    assert focus.evaluate("node => node === document.activeElement"), "the view did not take the focus"
    page.keyboard.press("Control+s")
    page.wait_for_function(f"() => !({_DIRTY})()", timeout=15_000)
    assert _saved_text(path) == text


def test_ctrl_s_saves_with_the_focus_in_each_view(server: tuple[str, LabServer, Path]) -> None:
    app, lab, path = server
    url = lab.url(f"notebooks/{NAME}" if app == "notebook" else f"lab/tree/{NAME}")
    with e2e.browser_page(f"shortcuts-{app}") as (page, log):
        from playwright.sync_api import expect

        e2e.open_notebook(page, url)
        e2e.run_all(page)
        hit_list = page.locator(".jp-OutputArea-output .dkv-hits .dkv-list")
        expect(hit_list.locator(".dkv-item").first).to_be_visible(timeout=LONG)
        explorer = page.locator(".jp-OutputArea-output .devknow-explorer")
        box = explorer.locator(".dkx-search input")
        box.click()
        box.press_sequentially(QUERY)
        box.press("Enter")
        hit_button = explorer.locator(".dkx-hit-list button").first
        expect(hit_button).to_be_visible(timeout=LONG)

        # The views' own keys stay theirs: ArrowDown moves within the list, not to another cell.
        hit_list.focus()
        cell = page.evaluate(_ACTIVE_CELL)
        page.keyboard.press("ArrowDown")
        expect(hit_list.locator(".dkv-item").nth(1)).to_have_class("dkv-item dkv-active")
        assert page.evaluate(_ACTIVE_CELL) == cell, "ArrowDown in the hit list moved the notebook's active cell"

        _ctrl_s_saves(page, path, hit_list, "Saved from the hit list.")
        _ctrl_s_saves(page, path, hit_button, "Saved from the explorer.")

    assert [text for text in log.page_errors if not (app == "notebook" and text == NOTEBOOK7_OWN)] == []
    assert log.errors() == []
    assert log.outside == [], "the page went online"

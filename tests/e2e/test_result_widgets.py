"""The widget views of ``%devsearch`` hits and a ``%%devask`` answer in JupyterLab and Notebook 7 (headless Chromium).

Each output is one anywidget model (render/widgets.py, render/esm/results.js). On the offline index, with
no key and no network:

* **Keys**: focus the hit list, ArrowDown, ArrowDown, ArrowUp, Enter: the second hit's page shows in place
  of the list, the notebook's active cell did not move (its ↑/↓ shortcuts did not fire); Escape goes back to
  the list, which has the focus again.
* **Open and Back**: a hit's Open button shows its page; Back shows the list again; a reference of the
  answer opens the same way.
* **Show all**: a ``%devget`` page cut at ``max_chars`` renders whole in place.
* **More**: with ``page_size = 3``, 5 hits show 3, then "More (2 left)" shows the other two.

And against a loopback server speaking the REST surface (which pages its hits), in JupyterLab: "More"
fetches the next page through the kernel; once the server is gone, "More" shows one short error line.
No console error, no page error, no request leaves 127.0.0.1.
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
QUESTION = "How do I create an API key?"
PAGE_SIZE = 3
CELLS = [
    f"%load_ext devknow_jupyter\nfrom devknow_jupyter import display\ndisplay.options.page_size = {PAGE_SIZE}",
    f"%devsearch -n 5 {QUERY}",
    f"%%devask\n{QUESTION}",
    "display.options.max_chars = 400\n%devget _devsearch[0]",
]
_ACTIVE_CELL = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
_FOCUSED = "() => document.activeElement?.className || ''"
# Notebook 7.6 raises this itself while loading, also for an empty notebook with our extensions disabled.
NOTEBOOK7_OWN = "Cannot read properties of undefined (reading 'schema')"


def _write_notebook(root: Path, cells: list[str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "views.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


@pytest.fixture(params=["lab", "notebook"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, LabServer]]:
    """JupyterLab or Notebook 7 serving a notebook with a search cell and a question cell."""
    _write_notebook(tmp_path / "root", CELLS)
    app = request.param
    started = e2e.start_lab(tmp_path / "root", tmp_path / "state", env={**os.environ, **e2e.OFFLINE_ENV}, app=app)
    try:
        yield app, started
    finally:
        assert started.shutdown() is not None, "the server did not stop"


def _expected() -> dict[str, Any]:
    """Titles of the pages behind the hits and the answer's references, from the same offline index."""
    from devknow_jupyter import DevKnowClient

    with DevKnowClient("local") as client:
        hits = client.search_documents(QUERY)[:5]
        answer = client.answer_query(QUESTION)
        wanted = [hits[0].parent, hits[1].parent, answer.references[0]]
        pages = {doc.name: doc.title or doc.name for doc in client.get_documents(wanted)}
    return {"hits": hits, "titles": [pages[name] for name in wanted]}


def _url(app: str, server: LabServer) -> str:
    return server.url("notebooks/views.ipynb" if app == "notebook" else "lab/tree/views.ipynb")


def _output(page: Any, text: str) -> Any:
    cell = page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor", has_text=text))
    return cell.locator(".jp-OutputArea")


def test_keys_open_back_and_more(server: tuple[str, LabServer]) -> None:
    app, lab = server
    expected = _expected()
    with e2e.browser_page(f"views-{app}") as (page, log):
        from playwright.sync_api import expect

        e2e.open_notebook(page, _url(app, lab))
        e2e.run_all(page)
        hits = _output(page, QUERY)
        view = hits.locator(".dkv-hits")
        rows = view.locator(".dkv-list > .dkv-item")
        count = len(expected["hits"])
        assert count > PAGE_SIZE, "the offline index has too few hits for this query; pick another"
        expect(rows).to_have_count(PAGE_SIZE, timeout=LONG)
        expect(rows.first).to_contain_text(expected["hits"][0].title.split(" › ")[0])
        more = view.locator(".dkv-more")
        expect(more).to_have_text(f"More ({count - PAGE_SIZE} left)")
        more.click()
        expect(rows).to_have_count(count)
        expect(more).to_be_hidden()

        # Keys: focus the list, down, down, up, Enter opens the second hit; the notebook's cell stays put.
        active_cell = page.evaluate(_ACTIVE_CELL)
        view.locator(".dkv-list").focus()
        for key in ("ArrowDown", "ArrowDown", "ArrowUp"):
            page.keyboard.press(key)
        expect(rows.nth(1)).to_have_class("dkv-item dkv-active")
        page.keyboard.press("Enter")
        title = view.locator(".dkv-page .devknow-doc-title")
        expect(title).to_have_text(expected["titles"][1], timeout=LONG)
        expect(view.locator(".dkv-list-view")).to_be_hidden()
        assert page.evaluate(_ACTIVE_CELL) == active_cell, "the notebook took the arrow keys"
        assert "dkv-back" in page.evaluate(_FOCUSED)
        _shot(page, f"views-{app}-opened", view)
        page.keyboard.press("Escape")
        expect(view.locator(".dkv-list-view")).to_be_visible()
        expect(rows).to_have_count(count)
        assert "dkv-list" in page.evaluate(_FOCUSED)

        # Open with the mouse, then Back.
        rows.first.locator(".dkv-open").click()
        expect(title).to_have_text(expected["titles"][0], timeout=LONG)
        view.locator(".dkv-back").click()
        expect(rows.first).to_be_visible()

        # The answer's first reference opens in place of the references.
        answer = _output(page, QUESTION).locator(".dkv-answer")
        expect(answer.locator(".devknow-refs")).to_have_text("References")
        answer.locator(".dkv-list > .dkv-item").first.locator(".dkv-open").click()
        expect(answer.locator(".dkv-page .devknow-doc-title")).to_have_text(expected["titles"][2], timeout=LONG)
        expect(answer.locator(".devknow-body").first).to_be_visible()
        _shot(page, f"views-{app}-answer", answer)

        # %devget cut at 400 characters: "Show all" renders the whole page in place.
        document = _output(page, "%devget").locator(".dkv")  # %devget shows Documents: one page here
        expect(document.locator(".devknow-note")).to_contain_text("Truncated", timeout=LONG)
        expect(document.locator(".dkv-back")).to_be_hidden()  # no list to go back to
        cut = len(document.locator(".devknow-body").inner_text())
        show_all = document.locator(".dkv-item .dkv-show-all")
        show_all.click()
        expect(document.locator(".devknow-note")).to_have_count(0, timeout=LONG)
        expect(show_all).to_have_count(0)
        assert len(document.locator(".devknow-body").inner_text()) > cut
        expect(page.get_by_text("Error displaying widget")).to_have_count(0)
    assert [text for text in log.page_errors if not (app == "notebook" and text == NOTEBOOK7_OWN)] == []
    assert log.errors() == []
    assert log.outside == [], "the page went online"


def test_more_fetches_the_next_page_and_a_lost_server_shows_one_line(tmp_path: Path) -> None:
    from tests.servers.rest_server import RestServer

    with RestServer() as rest:
        service = {"DEVKNOW_API_KEY": rest.api_key, "DEVKNOW_ENDPOINT": rest.url, "DEVKNOW_PROTOCOL": "rest"}
        _write_notebook(tmp_path / "root", ["%load_ext devknow_jupyter", "%devsearch -n 2 storage bucket"])
        env = {**os.environ, **e2e.OFFLINE_ENV}
        lab = e2e.start_lab(tmp_path / "root", tmp_path / "state", env=env, service=service)
        try:
            with e2e.browser_page("views-more") as (page, log):
                from playwright.sync_api import expect

                e2e.open_notebook(page, _url("lab", lab))
                e2e.run_all(page)
                view = _output(page, "%devsearch").locator(".dkv-hits")
                rows = view.locator(".dkv-list > .dkv-item")
                expect(rows).to_have_count(2, timeout=LONG)
                searches = len(rest.calls_to("searchDocumentChunks"))
                more = view.locator(".dkv-more")
                expect(more).to_have_text("More")
                more.click()
                expect(rows).to_have_count(4, timeout=LONG)
                expect(rows.nth(2)).to_contain_text("3. ")
                assert len(rest.calls_to("searchDocumentChunks")) == searches + 1
                rest.__exit__(None, None, None)  # the server goes away
                more.click()
                error = view.locator(".dkv-error")
                expect(error).to_be_visible(timeout=LONG)
                text = error.inner_text()
                assert "\n" not in text.strip() and "Traceback" not in text, text
                expect(rows).to_have_count(4)
        finally:
            lab.shutdown()
    assert log.page_errors == []
    assert log.outside == [], "the page went online"


def _shot(page: Any, name: str, element: Any) -> None:
    e2e.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    element.evaluate("node => node.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(150)
    page.screenshot(path=str(e2e.ARTIFACTS / f"{name}.png"))

"""The "Developer docs" sidebar in a real JupyterLab, driven by headless Chromium (Playwright).

With no key the server extension serves the starter pack from the offline index. The test opens the panel
by its command, searches, moves through the hits with the arrow keys, opens one, follows a link of its
contents list, asks a question, goes back and forward; searches for a word selected in a notebook cell;
inserts a page's code block into the notebook as a new cell; takes light and dark screenshots into
``test-artifacts/e2e/``. No console errors, no page errors, and no request leaves 127.0.0.1.

The extension is loaded from this environment (``share/jupyter/labextensions/devknow-jupyter``, which
``pip install`` puts there); in a checkout whose environment lacks it (a shared venv), the bundle built in
``devknow_jupyter/labextension`` is linked into the test's own Jupyter data dir instead.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunningServer, start_sdk_server
from tests.e2e.lab_server import ARTIFACTS, LONG, OFFLINE_ENV, LabServer, browser_page, enable_devknow, start_lab

pytestmark = pytest.mark.e2e

QUERY = "restrict an API key"
QUESTION = "How do I restrict an API key?"
WORD = "quotas"  # alone on the first line of the notebook's cell, so a double click selects it
PANEL = "#devknow-docs"
KEY = "dk-test-browser-quota-key-0123456789abcdefgh"  # what the SDK test server wants; never shown in the page


def _notebook() -> dict[str, Any]:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": WORD + "\n"}
    return {"cells": [cell], "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                         "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}


@contextlib.contextmanager
def notebook_lab(tmp_path: Path, **options: Any) -> Iterator[LabServer]:
    """JupyterLab with our server extension enabled, serving one notebook (``notes.ipynb``) offline;
    ``options`` go to :func:`start_lab`. Stopped on leaving."""
    state, root = tmp_path / "state", tmp_path / "root"
    root.mkdir()
    (root / "notes.ipynb").write_text(json.dumps(_notebook()))
    enable_devknow(state)
    server = start_lab(root, state, env={**os.environ, **OFFLINE_ENV}, **options)
    try:
        yield server
    finally:
        assert server.shutdown() is not None, "JupyterLab did not stop"


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[LabServer]:
    """JupyterLab with our server extension enabled and the panel's bundle available, serving one notebook."""
    with notebook_lab(tmp_path) as server:
        yield server


@pytest.fixture
def quota_lab(tmp_path: Path) -> Iterator[tuple[LabServer, RunningServer]]:
    """JupyterLab whose server extension talks to the SDK test server with a key and no answer quota left."""
    (tmp_path / "sdk").mkdir()
    mcp = start_sdk_server(tmp_path / "sdk", "--api-key", KEY, "--answer-quota", "0")
    state, root = tmp_path / "state", tmp_path / "root"
    root.mkdir()
    (root / "notes.ipynb").write_text(json.dumps(_notebook()))
    enable_devknow(state)
    try:
        server = start_lab(root, state, env={**os.environ, **OFFLINE_ENV}, service={"DEVKNOW_API_KEY": KEY},
                           extra_args=(f"--DevKnowServer.endpoint={mcp.url}",))
        try:
            yield server, mcp
        finally:
            assert server.shutdown() is not None, "JupyterLab did not stop"
    finally:
        mcp.stop()


def test_ask_box_falls_back_to_search_when_the_answer_quota_is_used_up(
    quota_lab: tuple[LabServer, RunningServer],
) -> None:
    from playwright.sync_api import expect

    from devknow_jupyter.client import QUOTA_FALLBACK_NOTICE

    lab, mcp = quota_lab
    with browser_page("sidebar-quota") as (page, log):
        page.goto(lab.url("lab/tree/notes.ipynb"))
        page.wait_for_function("() => window.jupyterapp?.commands.hasCommand('devknow:open')", timeout=LONG)
        page.evaluate("() => window.jupyterapp.restored")  # the layout is restored before the panel is placed
        page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
        panel = page.locator(PANEL)
        expect(panel).to_be_visible(timeout=LONG)
        expect(panel.locator(".jp-DevKnow-status")).to_contain_text(mcp.url.split("//", 1)[1], timeout=LONG)
        question = panel.locator(".jp-DevKnow-question")
        question.fill("How do I create a bucket?")
        question.press("Enter")
        hits = panel.locator(".jp-DevKnow-hit")
        expect(hits.first).to_be_visible(timeout=LONG)
        notice = panel.locator(".devknow-notice", has_text=QUOTA_FALLBACK_NOTICE)
        expect(notice).to_have_count(1, timeout=LONG)
        assert "\n" not in notice.inner_text().strip(), "the notice takes more than one line"
        expect(panel.locator(".jp-DevKnow-answer")).to_have_count(0)
        expect(panel.locator(".jp-DevKnow-error")).to_have_text("")
        _shot(page, "sidebar-06-quota-light")
        assert KEY not in page.content()
    assert mcp.calls("answer_query") and mcp.calls("search_documents"), "the panel did not ask the service"
    assert log.errors() == [] and log.page_errors == []
    assert log.outside == [], "the page went online"


def _code_page() -> tuple[str, str, str]:
    """A starter page with a contents list and a code block: its search query, title and first code line."""
    from devknow_jupyter import DevKnowClient

    with DevKnowClient("local") as client:
        for query in ("Python DevKnowClient search_documents", "devknow command line", "install"):
            for hit in client.search_documents(query)[:5]:
                doc = client.get_documents(hit)[0]
                if "\n```" in doc.content and doc.content.count("\n## ") >= 2:
                    code = doc.content.split("\n```", 1)[1].split("\n", 1)[1].split("\n", 1)[0]
                    return query, doc.title, code.strip()
    raise AssertionError("no starter page with code and headings")


def test_sidebar_in_jupyterlab(lab: LabServer) -> None:
    code_page = _code_page()
    timings: dict[str, float] = {}
    try:
        with browser_page("sidebar", width=1400, clipboard_origin=lab.base) as (page, log):
            _drive(page, lab.url("lab/tree/notes.ipynb"), code_page, timings)
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "sidebar-timings.json").write_text(json.dumps(timings, indent=2))
    # JupyterLab's own debugger logs this when a notebook closes while its kernel starts; not ours.
    assert log.errors("Could not restore the debugger state") == []
    assert log.page_errors == []
    assert log.outside == [], "the page went online"


def _drive(page: Any, url: str, code_page: tuple[str, str, str], timings: dict[str, float]) -> None:
    from playwright.sync_api import expect

    page.goto(url)
    page.wait_for_function("() => !!window.jupyterapp", timeout=LONG)
    page.wait_for_function("() => window.jupyterapp.hasPlugin('devknow-jupyter:plugin')", timeout=LONG)
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(1, timeout=LONG)
    panel = page.locator(PANEL)

    # Open by the command: the search box has the focus.
    page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
    expect(panel).to_be_visible(timeout=LONG)
    expect(panel.locator(".jp-DevKnow-status")).to_contain_text("offline index", timeout=LONG)
    query = panel.locator(".jp-DevKnow-query")
    expect(query).to_be_focused()

    # Search; the hits come with the first one selected.
    started = time.perf_counter()
    query.fill(QUERY)
    query.press("Enter")
    hits = panel.locator(".jp-DevKnow-hit")
    expect(hits.nth(1)).to_be_visible(timeout=LONG)
    timings["query_to_hits_s"] = round(time.perf_counter() - started, 3)
    expect(hits.first).to_have_attribute("aria-selected", "true")
    _shot(page, "sidebar-01-hits-light")

    # Arrow keys move the selection; Enter opens the selected hit.
    page.keyboard.press("ArrowDown")
    expect(hits.nth(1)).to_have_attribute("aria-selected", "true")
    expect(hits.first).to_have_attribute("aria-selected", "false")
    page.keyboard.press("ArrowUp")
    expect(hits.first).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    second_title = hits.nth(1).locator(".devknow-hit-title a").inner_text().split(". ", 1)[-1].split(" › ")[0]
    page.keyboard.press("Enter")
    doc_view = panel.locator(".jp-DevKnow-page")
    expect(doc_view.locator(".devknow-doc-title")).to_have_text(second_title, timeout=LONG)

    # A click on a hit opens it too (timed: hit click to page shown).
    panel.locator(".jp-DevKnow-back").click()
    expect(hits.first).to_be_visible()
    expect(hits.nth(1)).to_have_attribute("aria-selected", "true")  # the history keeps the selection
    first_title = hits.first.locator(".devknow-hit-title a").inner_text().split(". ", 1)[-1].split(" › ")[0]
    started = time.perf_counter()
    hits.first.click()
    expect(doc_view.locator(".devknow-doc-title")).to_have_text(first_title, timeout=LONG)
    timings["hit_click_to_page_s"] = round(time.perf_counter() - started, 3)

    # Contents list: its last link scrolls the view to that heading, and the lab's URL stays put.
    toc = doc_view.locator(".devknow-toc")
    expect(toc).to_be_visible()
    toc.locator("summary").click()
    link = toc.locator("a").last
    target = link.get_attribute("href")[1:]
    lab_url = page.url
    link.click()
    heading = doc_view.locator(f"[id='{target}'], [data-jupyter-id='{target}']")
    expect(heading).to_be_in_viewport(timeout=LONG)
    assert panel.locator(".jp-DevKnow-view").evaluate("v => v.scrollTop") > 0
    assert page.url == lab_url
    _shot(page, "sidebar-02-page-light")

    # Ask: an answer with references; then back to the page and the hits, and forward again.
    panel.locator(".jp-DevKnow-question").fill(QUESTION)
    panel.locator(".jp-DevKnow-question").press("Enter")
    answer = panel.locator(".jp-DevKnow-answer")
    expect(answer.locator(".devknow-ref").first).to_be_visible(timeout=LONG)
    expect(answer).to_contain_text("References")
    _shot(page, "sidebar-03-answer-light")
    panel.locator(".jp-DevKnow-back").click()
    expect(doc_view.locator(".devknow-doc-title")).to_have_text(first_title)
    panel.locator(".jp-DevKnow-back").click()
    expect(hits.first).to_be_visible()
    panel.locator(".jp-DevKnow-forward").click()
    expect(doc_view.locator(".devknow-doc-title")).to_have_text(first_title)
    # A reference of the answer opens its page in the panel.
    panel.locator(".jp-DevKnow-forward").click()
    answer.locator(".devknow-ref a").first.click()
    expect(doc_view.locator(".devknow-doc-title")).to_be_visible(timeout=LONG)

    # An unknown site filter gives no hits, and an empty query a one-line message.
    panel.locator(".jp-DevKnow-source").fill("firebase.google.com")
    query.fill(QUERY)
    query.press("Enter")
    expect(panel.locator(".jp-DevKnow-view")).to_contain_text("No results", timeout=LONG)
    panel.locator(".jp-DevKnow-source").fill("")
    query.fill("")
    query.press("Enter")
    expect(panel.locator(".jp-DevKnow-error")).to_have_text("Type what to look for.")

    # Search for a word selected in the notebook.
    line = page.locator(".jp-Notebook .jp-Cell .cm-line", has_text=WORD).first
    line.dblclick()
    page.evaluate("window.jupyterapp.commands.execute('devknow:search-selection')")
    expect(query).to_have_value(WORD, timeout=LONG)
    expect(hits.first).to_be_visible(timeout=LONG)

    # Insert a page's code block into the notebook: a new code cell below the active one.
    code_query, code_title, code_line = code_page
    query.fill(code_query)
    query.press("Enter")
    hits.filter(has_text=code_title).first.click()
    expect(doc_view.locator(".devknow-doc-title")).to_have_text(code_title, timeout=LONG)
    insert = doc_view.locator(".jp-DevKnow-insert").first
    expect(insert).to_be_enabled()
    doc_view.locator(".jp-DevKnow-copy").first.click()
    expect(doc_view.locator(".jp-DevKnow-copy").first).to_have_text("Copied")
    insert.click()
    cells = page.locator(".jp-Notebook .jp-Cell")
    expect(cells).to_have_count(2, timeout=LONG)
    expect(cells.nth(1).locator(".cm-content")).to_contain_text(code_line)
    assert page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model.type"
    ) == "code"

    # The page in its own main-area tab.
    panel.locator(".jp-DevKnow-tab").click()
    tab = page.locator(".jp-DevKnow-tabPage")
    expect(tab.locator(".devknow-doc-title")).to_have_text(code_title, timeout=LONG)

    # Dark theme.
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=LONG)
    page.wait_for_timeout(500)
    _shot(page, "sidebar-04-page-dark")
    panel.locator(".jp-DevKnow-back").click()
    _shot(page, "sidebar-05-hits-dark")
    background = panel.locator(".jp-DevKnow-view").evaluate("v => getComputedStyle(v).backgroundColor")
    assert _dark(background), background

    # With no notebook open, Insert is disabled and says why.
    page.evaluate("window.jupyterapp.commands.execute('application:close-all')")
    page.locator(".jp-Dialog button", has_text="Discard").click(timeout=LONG)  # the inserted cell is unsaved
    expect(page.locator(".jp-Notebook")).to_have_count(0, timeout=LONG)
    panel.locator(".jp-DevKnow-forward").click()
    insert = doc_view.locator(".jp-DevKnow-insert").first
    expect(insert).to_be_disabled(timeout=LONG)
    expect(insert).to_have_attribute("title", "Open a notebook to insert this code into it")


def _dark(css_color: str) -> bool:
    channels = [float(part) for part in css_color[css_color.index("(") + 1 : -1].split(",")[:3]]
    return sum(channels) / 3 < 100


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.wait_for_timeout(150)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


# Runs in the page before JupyterLab's own code: the moment the command exists, open the panel, noting
# whether the layout was restored yet (JupyterLab exposes the app before its plugins have all started).
OPEN_EARLY = """
(() => {
  const timer = setInterval(() => {
    const app = window.jupyterapp;
    if (!app) return;
    if (window.__devknowRestored === undefined) {
      window.__devknowRestored = false;
      app.restored.then(() => { window.__devknowRestored = true; });
    }
    if (!app.commands.hasCommand('devknow:open')) return;
    clearInterval(timer);
    window.__devknowOpenedBeforeRestore = !window.__devknowRestored;
    app.commands.execute('devknow:open');
  }, 1);
})();
"""


def test_opening_the_panel_before_the_layout_is_restored_keeps_it_shown(lab: LabServer) -> None:
    from playwright.sync_api import expect

    with browser_page("sidebar-early") as (page, log):
        page.add_init_script(OPEN_EARLY)
        page.goto(lab.url("lab/tree/notes.ipynb"))
        page.wait_for_function("() => window.__devknowOpenedBeforeRestore !== undefined", timeout=LONG)
        assert page.evaluate("window.__devknowOpenedBeforeRestore") is True  # else this test tests nothing
        page.wait_for_function("() => window.__devknowRestored === true", timeout=LONG)
        expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(1, timeout=LONG)
        page.wait_for_timeout(1500)  # the restorer's own layout has landed by now
        expect(page.locator(PANEL)).to_be_visible()  # hidden (collapsed by the restorer) before the fix
        expect(page.locator(PANEL).locator(".jp-DevKnow-status")).to_contain_text("offline index", timeout=LONG)
    assert log.page_errors == []


def test_an_error_output_searches_the_docs_from_its_context_menu(lab: LabServer, tmp_path: Path) -> None:
    """Right-click a cell's traceback, "Search developer docs for this error": the panel searches for the
    error's type and message (not the user's paths), and shows the query it made."""
    from playwright.sync_api import expect

    from tests.e2e.lab_server import open_notebook, run_all

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": f"def check(key):\n    raise ValueError({QUERY!r})\n\ncheck('/home/me/project/secret.txt')\n"}
    notebook = {**_notebook(), "cells": [cell]}
    (tmp_path / "root" / "error.ipynb").write_text(json.dumps(notebook))
    with browser_page("sidebar-error") as (page, log):
        open_notebook(page, lab.url("lab/tree/error.ipynb"))
        run_all(page)
        error = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        expect(error).to_contain_text("ValueError", timeout=LONG)
        error.click(button="right")
        page.locator(".lm-Menu-item", has_text="Search developer docs for this error").click()
        panel = page.locator(PANEL)
        expect(panel).to_be_visible(timeout=LONG)
        query = panel.locator(".jp-DevKnow-query")
        expect(query).to_have_value(f"ValueError: {QUERY}", timeout=LONG)
        expect(panel.locator(".jp-DevKnow-hit").first).to_be_visible(timeout=LONG)
        _shot(page, "sidebar-error-search")
    assert log.page_errors == []

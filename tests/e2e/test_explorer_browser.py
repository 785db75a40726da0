"""The explorer (``%devknow explore``) in a real JupyterLab, driven with the keyboard in headless Chromium.

A notebook with ``%load_ext devknow_jupyter``, ``%devknow explore`` and a Markdown cell below runs with no
key and no network (the offline index). The explorer is one anywidget model whose ES module handles the
keys in the browser. In it each test types a query into the search box and presses Enter, then:

* Tab reaches the hits, Tab again the second one, Enter opens it: the page's heading renders beside the
  list, its contents link jumps to a heading, Back shows the search again without a request, and "More
  hits" adds the next page of hits (the offline index pages).
* ArrowDown from the search box goes to the hits, ArrowDown again to the second, Enter opens it; with the
  pointer elsewhere (the keys follow the focus, not the pointer) ArrowUp moves the highlight back and Enter
  opens the first; the notebook's active cell stays the explorer's (JupyterLab's "select cell below/above"
  shortcuts did not fire). A click on the explorer's blank space gives it the keys too.

No request leaves 127.0.0.1. Screenshots go to ``test-artifacts/e2e/explorer-*.png``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import lab_server as e2e
from tests.e2e.lab_server import ARTIFACTS, LONG, LabServer
from tests.e2e.test_lab import _CONTRAST

pytestmark = pytest.mark.e2e

QUERY = "create an API key"
CELLS = ["%load_ext devknow_jupyter", "%devknow explore"]
# A cell below the explorer: JupyterLab's ArrowDown shortcut would make it the active cell.
BELOW = "Notes below the explorer."
_ACTIVE_CELL = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
# Text of the explorer to check for contrast: hits, status, page title, contents links, body text.
TEXT = [
    ".devknow-explorer .dkx-hit-list button",
    ".devknow-explorer .dkx-status",
    ".devknow-explorer .devknow-doc-title a",
    ".devknow-explorer .devknow-toc a",
    ".devknow-explorer .devknow-body p",
    ".devknow-explorer .devknow-meta",
]


def _start(
    tmp_path: Path, *, disabled: tuple[str, ...] = (), cells: list[str] = CELLS, extra_args: tuple[str, ...] = ()
) -> LabServer:
    """JupyterLab serving a notebook of ``cells`` (one opens the explorer), with the labextensions ``disabled`` off.

    The notebook is ``tmp_path/root/explorer.ipynb``.
    """
    root = tmp_path / "root"
    root.mkdir()
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in cells
        ]
        + [{"cell_type": "markdown", "metadata": {}, "source": BELOW}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "explorer.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    env = {**os.environ, **e2e.OFFLINE_ENV}
    state = tmp_path / "state"
    if disabled:
        # What `jupyter labextension disable` writes, in the server's own (temporary) config folder.
        labconfig = state / "config" / "labconfig"
        labconfig.mkdir(parents=True)
        (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": dict.fromkeys(disabled, True)}))
    return e2e.start_lab(root, state, env=env, extra_args=extra_args)


@pytest.fixture
def explorer_lab(tmp_path: Path) -> Iterator[LabServer]:
    """JupyterLab serving a notebook that opens the explorer."""
    server = _start(tmp_path)
    try:
        yield server
    finally:
        assert server.shutdown() is not None, "JupyterLab did not stop"


def _expected() -> dict[str, Any]:
    """The hits for QUERY and the documents of the first two, from the same offline index (public client)."""
    from devknow_jupyter import DevKnowClient

    with DevKnowClient("local") as client:
        hits = client.search_documents(QUERY)
        first, second = (client.get_documents(hit)[0] for hit in hits[:2])
    assert first.name != second.name, "the first two hits are one page; pick another QUERY"
    return {"hits": hits, "document": second, "first": first}


def test_explorer_search_with_enter_and_open_a_hit_with_the_keyboard(explorer_lab: LabServer) -> None:
    _in_browser(explorer_lab, _drive)


def test_arrow_keys_follow_the_focus_and_enter_opens_without_moving_the_notebook(explorer_lab: LabServer) -> None:
    _in_browser(explorer_lab, _drive_arrows)


def _in_browser(
    lab: LabServer, drive: Any, *, tolerated: str | None = None, width: int = 1280, prepare: Any = None
) -> list[str]:
    """Open the notebook in headless Chromium (a ``width`` px wide window), run ``prepare(page, expect,
    expected, url)`` (default: run it and search QUERY), then ``drive(page, expect, expected)``; check the
    page's health.

    Returns the widget errors in the console that contain ``tolerated`` (every other one fails the test).
    """
    expected = _expected()
    with e2e.browser_page(f"explorer-{drive.__name__.strip('_')}", width=width) as (page, log):
        from playwright.sync_api import expect

        (prepare or _open_and_search)(page, expect, expected, lab.url("lab/tree/explorer.ipynb"))
        drive(page, expect, expected)

    assert log.page_errors == []
    widget_errors = [text for text in log.errors() if "widget" in text.lower()]
    allowed = [text for text in widget_errors if tolerated and tolerated in text]
    assert [text for text in widget_errors if text not in allowed] == []
    assert log.outside == [], "the page went online"
    return allowed


def run_notebook(page: Any, url: str) -> None:
    """Open the notebook at ``url`` and run all its cells, until the kernel is idle again."""
    e2e.open_notebook(page, url)
    e2e.run_all(page)


def _open_and_search(page: Any, expect: Any, expected: dict[str, Any], url: str) -> None:
    """Run the notebook, type QUERY into the explorer's search box and press Enter: the hits show."""
    run_notebook(page, url)

    app = page.locator(".jp-OutputArea-output .devknow-explorer")
    expect(app).to_be_visible(timeout=LONG)

    # Type the query and press Enter: the hits appear as buttons.
    box = app.locator(".dkx-search input")
    box.click()
    box.press_sequentially(QUERY)
    box.press("Enter")
    hits = app.locator(".dkx-hit-list button")
    expect(hits).to_have_count(min(len(expected["hits"]), 20), timeout=LONG)
    first_title = expected["hits"][0].title
    expect(hits.first).to_contain_text(first_title)


def _drive(page: Any, expect: Any, expected: dict[str, Any]) -> None:
    app = page.locator(".jp-OutputArea-output .devknow-explorer")
    # Tab reaches the first hit, Tab again the second, Enter opens it.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent").startswith("1. ")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent").startswith("2. ")
    page.keyboard.press("Enter")

    document = expected["document"]
    expect(app.locator(".dkx-title .devknow-doc-title")).to_have_text(document.title, timeout=LONG)
    heading = app.locator(".dkx-page-box h1").first
    expect(heading).to_be_visible(timeout=LONG)
    expect(heading).to_contain_text(document.content.lstrip().splitlines()[0].lstrip("# ").strip())
    expect(app.locator(".dkx-hit-list button.mod-active")).to_contain_text("2. ")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    app.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "explorer-opened.png"))
    _assert_readable(page, "light")
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=LONG)
    page.wait_for_timeout(500)  # the theme's stylesheet swaps in after the attribute flips
    page.screenshot(path=str(ARTIFACTS / "explorer-opened-dark.png"))
    _assert_readable(page, "dark")

    # The contents list jumps to a heading of the page (an #id link inside the output).
    links = app.locator(".dkx-toc a")
    expect(links.first).to_be_visible(timeout=LONG)
    last = links.last
    target = last.get_attribute("href")
    assert target and target.startswith("#dk-")
    last.click()
    expect(app.locator(target)).to_be_in_viewport(timeout=LONG)
    page.screenshot(path=str(ARTIFACTS / "explorer-contents-jump.png"))

    # Back shows the search again, at once.
    app.locator(".dkx-back").click()
    expect(app.locator(".dkx-status")).to_contain_text("no request", timeout=LONG)
    expect(app.locator(".dkx-title")).to_have_text("")

    # The offline index pages: "More hits" adds the next page under the first (same hits first).
    hits = app.locator(".dkx-hit-list button")
    first_page = hits.all_text_contents()
    more = app.locator(".dkx-more")
    expect(more).to_be_visible()
    more.click()
    expect(hits).to_have_count(2 * len(first_page), timeout=LONG)
    assert hits.all_text_contents()[: len(first_page)] == first_page
    expect(hits.nth(len(first_page))).to_contain_text(f"{len(first_page) + 1}. ")
    expect(app.locator(".dkx-status")).to_contain_text(f"{2 * len(first_page)} hits for", timeout=LONG)


def _assert_readable(page: Any, theme: str) -> None:
    rows = page.evaluate(_CONTRAST, TEXT)
    (ARTIFACTS / f"explorer-contrast-{theme}.json").write_text(json.dumps(rows, indent=2))
    assert {row["selector"] for row in rows} == set(TEXT), "some part of the explorer is missing"
    # WCAG AA asks 4.5:1 for body text; 3:1 is the floor for large or secondary text.
    poor = [row for row in rows if row["ratio"] < 3.0]
    assert not poor, f"hard to read in the {theme} theme: {poor}"


def _drive_arrows(page: Any, expect: Any, expected: dict[str, Any]) -> None:
    app = page.locator(".jp-OutputArea-output .devknow-explorer")
    hits = app.locator(".dkx-hit-list button")
    active = app.locator(".dkx-hit-list button.mod-active")
    explorer_cell = page.evaluate(_ACTIVE_CELL)
    assert explorer_cell == CELLS.index("%devknow explore")
    # The search's status line comes after its hits; a preview is not shown over a request's spinner.
    expect(app.locator(".dkx-status")).to_contain_text(f"hits for “{QUERY}”", timeout=LONG)

    # The focus is in the search box (the search was typed there): ArrowDown goes to the first hit.
    page.mouse.move(2, 2)  # the pointer far from the list: keys follow the focus
    page.keyboard.press("ArrowDown")
    expect(active).to_contain_text("1. ", timeout=LONG)
    page.keyboard.press("ArrowDown")
    expect(active).to_contain_text("2. ", timeout=LONG)
    assert page.evaluate("document.activeElement.textContent").startswith("2. ")
    expect(app.locator(".dkx-status")).to_contain_text("Hit 2 of", timeout=LONG)
    expect(app.locator(".dkx-title")).to_have_text("")  # moving opens nothing
    page.keyboard.press("Enter")

    document = expected["document"]
    expect(app.locator(".dkx-title .devknow-doc-title")).to_have_text(document.title, timeout=LONG)
    heading = app.locator(".dkx-page-box h1").first
    expect(heading).to_contain_text(_first_heading(document), timeout=LONG)
    expect(hits.filter(has_text="2. ")).to_have_class(re.compile(r"\bmod-active\b"))
    assert page.evaluate(_ACTIVE_CELL) == explorer_cell, "an arrow key moved the notebook's active cell"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explorer-arrows-opened.png"))

    # ArrowUp moves the highlight back to the first hit (the second's page stays), Enter opens the first.
    page.keyboard.press("ArrowUp")
    expect(active).to_contain_text("1. ", timeout=LONG)
    expect(app.locator(".dkx-title .devknow-doc-title")).to_have_text(document.title)
    page.keyboard.press("Enter")
    first = expected["first"]
    expect(app.locator(".dkx-title .devknow-doc-title")).to_have_text(first.title, timeout=LONG)
    expect(app.locator(".dkx-page-box h1").first).to_contain_text(_first_heading(first), timeout=LONG)
    assert page.evaluate(_ACTIVE_CELL) == explorer_cell, "an arrow key moved the notebook's active cell"
    assert page.locator(".jp-Notebook .jp-Cell").nth(len(CELLS)).text_content().strip().startswith(BELOW)

    # A click on the explorer's blank space (the hit list's header) gives it the keys: End, then Enter.
    app.locator(".dkx-hits-header").click()
    assert page.evaluate("document.activeElement.classList.contains('devknow-explorer')")
    page.keyboard.press("End")
    count = hits.count()
    expect(active).to_contain_text(f"{count}. ", timeout=LONG)
    expect(app.locator(".dkx-status")).to_contain_text(f"Hit {count} of {count}", timeout=LONG)
    assert page.evaluate(_ACTIVE_CELL) == explorer_cell, "End moved the notebook's active cell"


def _first_heading(document: Any) -> str:
    return document.content.lstrip().splitlines()[0].lstrip("# ").strip()

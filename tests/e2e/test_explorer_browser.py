"""The explorer (``%devknow explore``) in a real JupyterLab, driven with the keyboard in headless Chromium.

A notebook with ``%load_ext devknow_jupyter`` and ``%devknow explore`` runs with no key and no network
(the offline index). In the explorer the test types a query into the search box and presses Enter,
presses Tab to reach the hits and Tab again to the second one, presses Enter to open it, and checks that
the page's heading renders beside the list, that its contents link jumps to a heading, and that no
request left 127.0.0.1. Screenshots go to ``test-artifacts/e2e/explorer-*.png``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lab_server import LabServer, start_lab
from tests.e2e.test_lab import _ALL_CELLS_RAN, _CONTRAST, _KERNEL_IDLE, ARTIFACTS, LAUNCH_ARGS, LONG, _chromium

pytestmark = pytest.mark.e2e

QUERY = "create an API key"
CELLS = ["%load_ext devknow_jupyter", "%devknow explore"]
# Text of the explorer to check for contrast: hits, status, page title, contents links, body text.
TEXT = [
    ".devknow-explorer .dkx-hit-list button",
    ".devknow-explorer .dkx-status",
    ".devknow-explorer .devknow-doc-title a",
    ".devknow-explorer .devknow-toc a",
    ".devknow-explorer .devknow-body p",
    ".devknow-explorer .devknow-meta",
]


@pytest.fixture
def explorer_lab(tmp_path: Path) -> Iterator[LabServer]:
    """JupyterLab serving a notebook that opens the explorer."""
    root = tmp_path / "root"
    root.mkdir()
    notebook = {
        "cells": [
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
            for source in CELLS
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (root / "explorer.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    env = dict(os.environ)
    # No internet for the kernel either: any HTTP(S) attempt goes to a closed loopback port.
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1,localhost")
    server = start_lab(root, tmp_path / "state", env=env)
    try:
        yield server
    finally:
        assert server.shutdown() is not None, "JupyterLab did not stop"


def _expected() -> dict[str, Any]:
    """The second hit for QUERY and its document, from the same offline index through the public client."""
    from devknow_jupyter import DevKnowClient

    with DevKnowClient("local") as client:
        hits = client.search_documents(QUERY)
        document = client.get_documents(hits[1])[0]
    return {"hits": hits, "document": document}


def test_explorer_search_with_enter_and_open_a_hit_with_the_keyboard(explorer_lab: LabServer) -> None:
    executable = _chromium()
    from playwright.sync_api import expect, sync_playwright

    expected = _expected()
    page_errors: list[str] = []
    widget_errors: list[str] = []
    outside: list[str] = []

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=LAUNCH_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.on("pageerror", lambda exc: page_errors.append(str(exc)))
        page.on(
            "console",
            lambda msg: widget_errors.append(msg.text)
            if msg.type == "error" and "widget" in msg.text.lower()
            else None,
        )
        page.on(
            "request",
            lambda req: None if req.url.startswith(("http://127.0.0.1", "data:", "blob:")) else outside.append(req.url),
        )
        try:
            _drive(page, expect, expected, explorer_lab.url("lab/tree/explorer.ipynb"))
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "explorer-failure.png"))
            raise
        finally:
            context.close()
            browser.close()

    assert page_errors == []
    assert widget_errors == []
    assert outside == [], "the page went online"


def _drive(page: Any, expect: Any, expected: dict[str, Any], url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => !!window.jupyterapp", timeout=LONG)
    page.wait_for_function(_KERNEL_IDLE, timeout=LONG)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(_ALL_CELLS_RAN, timeout=3 * LONG, polling=250)

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


def _assert_readable(page: Any, theme: str) -> None:
    rows = page.evaluate(_CONTRAST, TEXT)
    (ARTIFACTS / f"explorer-contrast-{theme}.json").write_text(json.dumps(rows, indent=2))
    assert {row["selector"] for row in rows} == set(TEXT), "some part of the explorer is missing"
    # WCAG AA asks 4.5:1 for body text; 3:1 is the floor for large or secondary text.
    poor = [row for row in rows if row["ratio"] < 3.0]
    assert not poor, f"hard to read in the {theme} theme: {poor}"

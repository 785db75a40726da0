"""A saved notebook keeps its results: run the quickstart, save, shut the kernel down, reload, and read them.

JupyterLab serves a copy of ``examples/quickstart.ipynb`` (plus an explorer cell) with our extensions loaded
as ``pip install`` loads them (:func:`~tests.e2e.lab_server.enable_devknow`), no key and no network (the
offline index). The test runs every cell: the live outputs are interactive widgets (Open buttons). It saves
the notebook, checks that each devknow output on disk still carries its twins for other frontends
(``text/html``, ``text/plain``, ``text/markdown`` beside the widget view: VS Code, Colab, nbviewer, GitHub),
shuts the kernel down and reloads the page. The reopened notebook first has no kernel at all (the request
that starts one is held back), then a new kernel without the old widget models: both times every devknow
output shows its content (hits, the page, the answer, the explorer), never ipywidgets' "Error displaying
widget: model not found" or "Loading widget...". Light and dark screenshots go to
``test-artifacts/e2e/saved-*.png``; no console errors, no page errors, no request leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lab_server import (
    ARTIFACTS,
    KERNEL_IDLE,
    LONG,
    OFFLINE_ENV,
    LabServer,
    browser_page,
    enable_devknow,
    open_notebook,
    run_all,
    start_lab,
)
from tests.e2e.test_lab import ASK_CELL, NOTEBOOK, SEARCH_CELL, _expected

pytestmark = pytest.mark.e2e

EXPLORE_QUERY = "restrict an API key"
EXPLORE_CELL = f"%devknow explore {EXPLORE_QUERY}"
GET_CELL = "%devget _devsearch[0]"
# The cells whose output is a devknow result (a widget view with its twins).
RESULT_CELLS = (SEARCH_CELL, GET_CELL, ASK_CELL, EXPLORE_CELL)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TWINS = {"text/html", "text/plain", "text/markdown"}
BROKEN = ("Error displaying widget", "model not found", "Loading widget")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[LabServer, Path]]:
    """JupyterLab with our extensions, serving a copy of the quickstart with an explorer cell at its end."""
    state, root = tmp_path / "state", tmp_path / "root"
    root.mkdir()
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert all(any("".join(cell["source"]).startswith(source) for cell in notebook["cells"])
               for source in RESULT_CELLS[:3]), "the quickstart changed; update this test"
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                              "source": EXPLORE_CELL})
    (root / "quickstart.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    enable_devknow(state)
    server = start_lab(root, state, env={**os.environ, **OFFLINE_ENV})
    try:
        yield server, root
    finally:
        assert server.shutdown() is not None, "JupyterLab did not stop"


def _cell(page: Any, source: str) -> Any:
    return page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor", has_text=source))


def _saved_outputs(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The saved outputs of each result cell, by the cell's first line."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found: dict[str, list[dict[str, Any]]] = {}
    for cell in cells:
        source = "".join(cell["source"])
        for wanted in RESULT_CELLS:
            if cell["cell_type"] == "code" and source.startswith(wanted):
                found[wanted] = [output for output in cell.get("outputs", []) if "data" in output]
    return found


def _kernels(lab: LabServer) -> list[dict[str, Any]]:
    request = urllib.request.Request(f"{lab.base}/api/kernels", headers={"Authorization": f"token {lab.token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_saved_quickstart_reopened_without_its_kernel_shows_every_result(lab: tuple[LabServer, Path]) -> None:
    server, root = lab
    expected = _expected()
    with browser_page("saved") as (page, log):
        from playwright.sync_api import expect

        open_notebook(page, server.url("lab/tree/quickstart.ipynb"))
        run_all(page)

        # Live: interactive widgets, no twin in their place.
        search = _cell(page, SEARCH_CELL)
        expect(search.locator(".dkv-open", has_text="Open").first).to_be_visible(timeout=LONG)
        expect(_cell(page, EXPLORE_CELL).locator(".devknow-explorer input").first).to_be_visible(timeout=LONG)
        assert page.locator(".jp-DevKnow-output").count() >= len(RESULT_CELLS)
        expect(page.locator(".jp-DevKnow-output.jp-mod-twin")).to_have_count(0)

        # Save: every result keeps the widget view and its three twins on disk.
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=LONG)
        saved = _saved_outputs(root / "quickstart.ipynb")
        assert set(saved) == set(RESULT_CELLS), saved.keys()
        view_count = _widget_views(root / "quickstart.ipynb")
        for source, outputs in saved.items():
            assert outputs, f"{source}: no output saved"
            views = [output for output in outputs if WIDGET_MIME in output["data"]]
            assert views, f"{source}: no widget view saved"
            for output in views:
                assert set(output["data"]) >= TWINS, f"{source}: twins missing: {sorted(output['data'])}"
                assert 'class="devknow' in "".join(output["data"]["text/html"])  # nbformat keeps lines as a list

        # Shut the kernel down (the Kernel menu's "Shut Down Kernel" does this).
        page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.sessionContext.session", timeout=LONG)
        deadline = time.monotonic() + 30
        while _kernels(server) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _kernels(server) == [], "the kernel is still running"

        # Reload. The request that starts a kernel for the reopened notebook is held back: no kernel at all.
        held: list[Any] = []
        page.route("**/api/sessions*", lambda route: held.append(route) if route.request.method == "POST"
                   else route.continue_())
        page.reload()
        page.wait_for_function("() => !!window.jupyterapp", timeout=LONG)
        expect(_cell(page, SEARCH_CELL)).to_have_count(1, timeout=LONG)
        page.wait_for_function("() => window.jupyterapp.shell.currentWidget?.context?.isReady", timeout=LONG)
        assert page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel ?? null") \
            is None
        _assert_readable(page, expect, expected, view_count)
        _shots(page, "light-no-kernel")

        # Let the kernel start: a new kernel, without the old widget models. Still readable.
        assert held, "no kernel start was held back"
        for route in held:
            route.continue_()
        page.unroute("**/api/sessions*")
        page.wait_for_function(KERNEL_IDLE, timeout=LONG)
        page.wait_for_timeout(2500)  # ipywidgets gives up waiting for a missing model after 2 s
        _assert_readable(page, expect, expected, view_count)

        page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=LONG)
        page.wait_for_timeout(500)  # the theme's stylesheet swaps in after the attribute flips
        _shots(page, "dark-new-kernel")

    assert log.errors() == []
    assert log.page_errors == []
    assert log.outside == [], "the page went online"


def _widget_views(path: Path) -> int:
    """How many outputs of the saved notebook are widget views (each must show as its twin)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(WIDGET_MIME in output.get("data", {}) for cell in cells for output in cell.get("outputs", []))


def _assert_readable(page: Any, expect: Any, expected: dict[str, Any], views: int) -> None:
    """Every result cell shows its content, every widget view as its twin; nothing says a widget is missing."""
    for text in BROKEN:
        expect(page.get_by_text(text)).to_have_count(0)
    search = _cell(page, SEARCH_CELL).locator(".jp-OutputArea")
    for hit in expected["hits"]:
        expect(search).to_contain_text(hit.title.split(" › ")[0], timeout=LONG)
    got = _cell(page, GET_CELL).locator(".jp-OutputArea")
    expect(got).to_contain_text(expected["document"].title, timeout=LONG)
    for heading in expected["headings"][:3]:
        expect(got.locator("h1, h2, h3, h4").filter(has_text=heading).first).to_be_attached(timeout=LONG)
    answer = _cell(page, ASK_CELL).locator(".jp-OutputArea")
    words = " ".join(re.sub(r"[*_`#\[\]]", "", expected["answer"].answer_text).split()[:6])  # Markdown → text
    expect(answer).to_contain_text(words, timeout=LONG)
    for name in expected["answer"].references:
        expect(answer.locator(f"a[href*='{name.rsplit('/', 1)[-1]}']").first).to_be_attached(timeout=LONG)
    explorer = _cell(page, EXPLORE_CELL).locator(".jp-OutputArea")
    expect(explorer).to_contain_text(EXPLORE_QUERY, timeout=LONG)
    expect(page.locator(".jp-DevKnow-output.jp-mod-twin")).to_have_count(views, timeout=LONG)


def _shots(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for source, label in ((SEARCH_CELL, "hits"), (GET_CELL, "page"), (ASK_CELL, "answer"), (EXPLORE_CELL, "explorer")):
        _cell(page, source).evaluate("element => element.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(200)  # let the notebook's windowing attach the cells now in view
        page.screenshot(path=str(ARTIFACTS / f"saved-{name}-{label}.png"))


def test_reload_while_the_kernel_runs_brings_the_live_widgets_back(lab: tuple[LabServer, Path]) -> None:
    server, _ = lab
    with browser_page("saved-live") as (page, log):
        from playwright.sync_api import expect

        open_notebook(page, server.url("lab/tree/quickstart.ipynb"))
        run_all(page)
        # A kernel restart: the views on screen stay readable (nothing re-renders them).
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
        page.wait_for_function(KERNEL_IDLE, timeout=LONG)
        for text in BROKEN:
            expect(page.get_by_text(text)).to_have_count(0)
        expect(_cell(page, SEARCH_CELL).locator(".dkv-open", has_text="Open").first).to_be_visible()

        # Run again, save, reload with the kernel still running: the widget manager restores the models
        # from the kernel, and the twins shown meanwhile give way to the live, clickable widgets.
        run_all(page)
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=LONG)
        page.reload()
        page.wait_for_function(KERNEL_IDLE, timeout=LONG)
        search = _cell(page, SEARCH_CELL)
        expect(search.locator(".dkv-open", has_text="Open").first).to_be_visible(timeout=LONG)
        expect(page.locator(".jp-DevKnow-output.jp-mod-twin")).to_have_count(0, timeout=LONG)
        for text in BROKEN:
            expect(page.get_by_text(text)).to_have_count(0)
        search.locator(".dkv-open", has_text="Open").first.click()
        expect(search.locator(".dkv-back", has_text="Back").first).to_be_visible(timeout=LONG)
    assert log.errors() == []
    assert log.page_errors == []
    assert log.outside == [], "the page went online"

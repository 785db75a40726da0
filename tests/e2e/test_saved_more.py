"""A saved ``%devsearch`` output keeps what "More" had shown, in JupyterLab and Notebook 7 (headless Chromium).

``%devsearch -n 2`` on the offline index shows two hits and "More"; More fetches the next page through the
kernel. Saved then, the notebook file's static copy of that output (``text/html``, ``text/markdown``,
``text/plain``: what nbviewer, GitHub and a notebook reopened without its kernel show) holds all four hits,
not only the first two, and the output still carries its widget view.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import lab_server as e2e
from tests.e2e.lab_server import LONG, LabServer
from tests.e2e.test_result_widgets import NOTEBOOK7_OWN, _output, _url, _write_notebook

pytestmark = pytest.mark.e2e

QUERY = "create an API key"
# Two hits a view page: a view drawn again from scratch would show two rows, not the four More had shown.
CELLS = ["%load_ext devknow_jupyter\nfrom devknow_jupyter import display\ndisplay.options.page_size = 2",
         f"%devsearch -n 2 {QUERY}"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(params=["lab", "notebook"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, LabServer, Path]]:
    """JupyterLab or Notebook 7 serving a notebook with one two-hit search."""
    root = tmp_path / "root"
    _write_notebook(root, CELLS)
    started = e2e.start_lab(root, tmp_path / "state", env={**os.environ, **e2e.OFFLINE_ENV}, app=request.param)
    try:
        yield request.param, started, root / "views.ipynb"
    finally:
        assert started.shutdown() is not None, "the server did not stop"


def _pages() -> tuple[list[str], list[str]]:
    """The titles of the first page of hits and of the next one, from the same offline index."""
    from devknow_jupyter import DevKnowClient

    with DevKnowClient("local") as client:
        first = client.search_documents(QUERY, page_size=2)
        assert first.has_next_page, "the offline index has no second page for this query; pick another"
        second = client.next_page(first)
    return [hit.title for hit in first], [hit.title for hit in second]


def test_the_saved_copy_holds_what_more_showed(server: tuple[str, LabServer, Path]) -> None:
    from playwright.sync_api import expect

    app, lab, path = server
    first, second = _pages()
    fresh = [title for title in second if title not in first]
    assert fresh, "the second page repeats the first"
    with e2e.browser_page(f"saved-more-{app}") as (page, log):
        e2e.open_notebook(page, _url(app, lab))
        e2e.run_all(page)
        view = _output(page, QUERY).locator(".dkv-hits")
        rows = view.locator(".dkv-list > .dkv-item")
        expect(rows).to_have_count(2, timeout=LONG)
        view.locator(".dkv-more").click()
        expect(rows).to_have_count(2 + len(second), timeout=LONG)
        page.wait_for_timeout(500)
        page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=LONG)
        page.wait_for_timeout(1000)
        expect(rows).to_have_count(2 + len(second))  # the live view kept its hits (not drawn again)
    outputs = json.loads(path.read_text())["cells"][1]["outputs"]
    (result,) = [out for out in outputs if out["output_type"] in ("execute_result", "display_data")]
    data = {mime: "".join(value) if isinstance(value, list) else value for mime, value in result["data"].items()}
    assert WIDGET_MIME in data
    for mime in ("text/html", "text/markdown", "text/plain"):
        for title in first + fresh:
            assert title in data[mime], (mime, title)
    assert log.page_errors == [] or (app == "notebook" and all(NOTEBOOK7_OWN in e for e in log.page_errors))
    assert log.outside == [], "the page went online"

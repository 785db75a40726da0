"""The panel's header and notices in a real JupyterLab (headless Chromium): what a newcomer must see.

With a key set and the service out of reach, the local index answers and the hit list's header says so
("The service could not be reached …, so the local index answered instead"). That line stays on screen
while the hits scroll below it; the site box shows its whole placeholder at the sidebar's default width;
and its suggestions are the sites the index that answered holds, not sites it has no page of.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.lab_server import (
    ARTIFACTS,
    LONG,
    LabServer,
    _free_port,
    browser_page,
)
from tests.e2e.test_sidebar import KEY, PANEL, notebook_lab

pytestmark = pytest.mark.e2e

NOTICE = "The service could not be reached"
# The placeholder's text width (with the box's padding and border) against the room the box has.
ROOM = """el => {
  const style = getComputedStyle(el);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = style.font;
  const extra = ['paddingLeft', 'paddingRight'].reduce((sum, side) => sum + parseFloat(style[side]), 0);
  return {need: ctx.measureText(el.placeholder).width + extra, have: el.clientWidth};
}"""


@pytest.fixture
def offline_lab(tmp_path: Path) -> Iterator[LabServer]:
    """JupyterLab with a key set and an endpoint nothing listens on (the network is down)."""
    down = f"http://127.0.0.1:{_free_port()}/mcp"  # closed: every call is refused
    with notebook_lab(tmp_path, service={"DEVKNOW_API_KEY": KEY},
                      extra_args=(f"--DevKnowServer.endpoint={down}",)) as server:
        yield server


def _local_sites() -> set[str]:
    """The hosts of every page the default local index holds (what answers while the service is down)."""
    from devknow_jupyter.local.backend import LocalBackend

    backend = LocalBackend.from_spec("local")
    try:
        index = backend.index
        return {urlsplit(doc["uri"]).hostname for doc in index.get(index.names()) if doc.get("uri")}
    finally:
        backend.close()


def test_offline_notice_stays_in_view_and_the_site_box_fits_the_index(offline_lab: LabServer) -> None:
    from playwright.sync_api import expect

    with browser_page("sidebar-notices", height=640) as (page, log):
        page.goto(offline_lab.url("lab/tree/notes.ipynb"))
        page.wait_for_function("() => window.jupyterapp?.commands.hasCommand('devknow:open')", timeout=LONG)
        page.evaluate("() => window.jupyterapp.restored")
        page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
        panel = page.locator(PANEL)
        expect(panel).to_be_visible(timeout=LONG)

        # The site box shows "All sites" whole at the sidebar's default width (not "Al").
        source = panel.locator(".jp-DevKnow-source")
        room = source.evaluate(ROOM)
        assert room["have"] >= room["need"], f"the site box is cut: {room}"

        query = panel.locator(".jp-DevKnow-query")
        query.fill("install devknow in a notebook")
        query.press("Enter")
        hits = panel.locator(".jp-DevKnow-hit")
        expect(hits.nth(2)).to_be_visible(timeout=LONG)
        notice = panel.locator(".devknow-notice", has_text=NOTICE)
        expect(notice).to_have_count(1, timeout=LONG)
        view = panel.locator(".jp-DevKnow-view")
        assert view.evaluate("v => v.scrollHeight > v.clientHeight + 40"), "the hits fit: this tests nothing"
        expect(notice).to_be_in_viewport()  # right after the search, with the focus in the list

        page.keyboard.press("End")  # the list's last hit: the list scrolls, the notice stays
        for _ in range(hits.count()):
            page.keyboard.press("ArrowDown")
        expect(hits.last).to_have_attribute("aria-selected", "true")
        expect(hits.last).to_be_in_viewport()
        expect(notice).to_be_in_viewport()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "sidebar-notices-offline.png"))

        # The suggestions are the sites the answering (local) index holds.
        options = _options(panel)
        expected = _local_sites()
        assert expected, "the local index holds no page"
        assert set(options) == expected, (options, expected)
    assert log.page_errors == []
    assert log.outside == [], "the page went online"


def _options(panel: Any) -> list[str]:
    listed = panel.locator(".jp-DevKnow-source").get_attribute("list")
    return panel.locator(f"datalist[id='{listed}'] option").evaluate_all("os => os.map(o => o.value)")

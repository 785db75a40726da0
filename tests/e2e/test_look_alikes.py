"""Look-alike hits (issue 24, item 8) in a real JupyterLab: the widgets, the explorer and the panel.

A loopback server speaking the REST surface holds three reference pages with one title, "QueryConstraint
class", from three packages (``firestore_``, ``firestore_lite``, ``firestore_pipelines``, as Firebase's
JavaScript reference has them) and a page of another title. A ``%devsearch`` hit list, an explorer and the
panel search for them: each look-alike hit shows the part of its path that tells it apart, the other hit
shows none. In the explorer, a question asked after the search replaces the search's hits (none are left
beside the answer).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import lab_server as e2e
from tests.e2e.lab_server import LONG

pytestmark = pytest.mark.e2e

TITLE = "QueryConstraint class"
PACKAGES = ["firestore_", "firestore_lite", "firestore_pipelines"]
QUERY = "QueryConstraint class"
BASE = "documents/firebase.google.com/docs/reference/js/"
CELLS = ["%load_ext devknow_jupyter", f"%devsearch {QUERY}", "%devknow explore"]


def _documents() -> dict[str, dict[str, Any]]:
    pages = {f"{BASE}{package}.queryconstraint": TITLE for package in PACKAGES}
    pages[f"{BASE}firestore_.query"] = "Query class"
    return {
        name: {
            "name": name,
            "uri": "https://" + name.removeprefix("documents/"),
            "content": f"# {title}\n\nA QueryConstraint class narrows the documents a Firestore query returns.",
            "description": "",
            "dataSource": "firebase.google.com",
            "title": title,
            "updateTime": "2026-04-01T00:00:00Z",
        }
        for name, title in pages.items()
    }


def _notebook(root: Path) -> None:
    root.mkdir()
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in CELLS]
    (root / "alike.ipynb").write_text(json.dumps({
        "cells": cells, "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    }), encoding="utf-8")


def _tells(locator: Any) -> list[str]:
    return sorted(text.strip() for text in locator.all_inner_texts())


def test_look_alike_hits_show_what_tells_them_apart(tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from tests.servers.rest_server import RestServer

    with RestServer() as rest:
        rest.documents = _documents()
        service = {"DEVKNOW_API_KEY": rest.api_key, "DEVKNOW_ENDPOINT": rest.url, "DEVKNOW_PROTOCOL": "rest"}
        _notebook(tmp_path / "root")
        state = tmp_path / "state"
        e2e.enable_devknow(state)
        lab = e2e.start_lab(tmp_path / "root", state, env={**os.environ, **e2e.OFFLINE_ENV}, service=service)
        try:
            with e2e.browser_page("look-alikes") as (page, log):
                e2e.open_notebook(page, lab.url("lab/tree/alike.ipynb"))
                e2e.run_all(page)

                # The %devsearch widget: each look-alike's title has its package beside it.
                rows = page.locator(".jp-OutputArea-output .dkv-hits .dkv-list > .dkv-item")
                expect(rows).to_have_count(4, timeout=LONG)
                assert _tells(rows.locator(".devknow-hit-title .devknow-tell")) == PACKAGES
                other = rows.filter(has_text="Query class")
                expect(other.locator(".devknow-tell")).to_have_count(0)

                # The explorer: the hit buttons' labels carry the same tells.
                explorer = page.locator(".jp-OutputArea-output .devknow-explorer")
                box = explorer.locator(".dkx-search input")
                box.click()
                box.press_sequentially(QUERY)
                box.press("Enter")
                buttons = explorer.locator(".dkx-hit-list button")
                expect(buttons).to_have_count(4, timeout=LONG)
                labels = buttons.all_inner_texts()
                for package in PACKAGES:
                    assert sum(f"{TITLE} ({package})" in label for label in labels) == 1, labels
                assert len(set(labels)) == 4

                # A question replaces the search's hits.
                ask = explorer.locator(".dkx-ask input")
                ask.fill("What does a QueryConstraint do?")
                ask.press("Enter")
                expect(explorer.locator(".dkx-refs")).to_be_visible(timeout=LONG)
                expect(buttons).to_have_count(0, timeout=LONG)

                # The panel: its hits show the tells too.
                page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
                panel = page.locator("#devknow-docs")
                query = panel.locator(".jp-DevKnow-query")
                expect(query).to_be_visible(timeout=LONG)
                query.fill(QUERY)
                query.press("Enter")
                hits = panel.locator(".jp-DevKnow-hit")
                expect(hits).to_have_count(4, timeout=LONG)
                assert _tells(hits.locator(".devknow-tell")) == PACKAGES
                e2e.ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(e2e.ARTIFACTS / "look-alikes.png"))
        finally:
            lab.shutdown()
    assert log.page_errors == []
    assert log.outside == [], "the page went online"

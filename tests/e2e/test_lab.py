"""The quickstart notebook in a real JupyterLab, driven by headless Chromium (Playwright).

It proves what a new user sees: run all cells with no key and no network; the search hits appear as a
widget list; **Open** on the first hit shows that document's rendered headings in place; the answer
renders with its references; no widget errors in the console, no page errors, no request leaves
127.0.0.1; text stays readable in the light and the dark theme. Screenshots go to
``test-artifacts/e2e/`` (git-ignored) for a look by eye.

Selectors are kept loose on purpose (``.dkv-open`` with the text "Open", headings by text): the
display layer may change its markup without breaking the user's view, and so without breaking this.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.e2e.lab_server import (
    ARTIFACTS,
    LONG,
    OFFLINE_ENV,
    LabServer,
    browser_page,
    open_notebook,
    run_all,
    start_lab,
)

pytestmark = pytest.mark.e2e

NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
SEARCH_CELL = "%devsearch -n 5 create an API key"
ASK_CELL = "%%devask"

_ERROR_OUTPUTS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const found = [];
  for (const c of w.content.widgets) {
    if (c.model.type !== 'code') continue;
    for (const o of c.model.outputs.toJSON()) {
      if (o.output_type === 'error') found.push(o.ename + ': ' + o.evalue);
    }
  }
  return found;
}"""
# WCAG contrast ratio of each sampled text element against the colour actually behind it.
_CONTRAST = """(selectors) => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const rows = [];
  for (const selector of selectors) {
    for (const el of Array.from(document.querySelectorAll(selector)).slice(0, 5)) {
      if (!el.textContent.trim() || !el.getClientRects().length) continue;
      const bg = background(el), c = rgb(getComputedStyle(el).color), alpha = c.length === 4 ? c[3] : 1;
      const fg = [0, 1, 2].map(i => alpha * c[i] + (1 - alpha) * bg[i]);  // translucent text over its background
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      rows.push({selector, text: el.textContent.trim().slice(0, 40), ratio: (a + 0.05) / (b + 0.05),
                 color: getComputedStyle(el).color});
    }
  }
  return rows;
}"""
# Text inside our outputs worth checking: body text, titles, links, muted metadata, buttons.
_TEXT_SELECTORS = [
    ".jp-OutputArea-output .devknow p",
    ".jp-OutputArea-output .devknow a",
    ".jp-OutputArea-output .devknow [class*='title']",
    ".jp-OutputArea-output .devknow [class*='meta']",
    ".jp-OutputArea-output .dkv-button",
]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[LabServer]:
    """JupyterLab serving a temporary folder that holds a copy of the quickstart notebook."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copyfile(NOTEBOOK, root / "quickstart.ipynb")
    server = start_lab(root, tmp_path / "state", env={**os.environ, **OFFLINE_ENV})
    try:
        yield server
    finally:
        code = server.shutdown()
        assert code is not None, "JupyterLab did not stop"


def _expected() -> dict[str, Any]:
    """What the page should show, from the same offline index through the public client."""
    from devknow_jupyter import DevKnowClient

    source = NOTEBOOK.read_text(encoding="utf-8")
    assert SEARCH_CELL in source and ASK_CELL in source, "the quickstart changed; update this test"
    question = next(
        "".join(cell["source"]).split("\n", 1)[1]
        for cell in json.loads(source)["cells"]
        if "".join(cell["source"]).startswith(ASK_CELL)
    )
    with DevKnowClient("local") as client:
        hits = client.search_documents(SEARCH_CELL.split(" ", 3)[3])[:5]
        document = client.get_documents(hits[0])[0]
        answer = client.answer_query(question)
    headings = [
        re.sub(r"[*`]", "", match.group(1)).strip()
        for match in re.finditer(r"^#{1,4}\s+(.+?)\s*#*$", document.content, re.MULTILINE)
    ]
    return {"hits": hits, "document": document, "headings": headings, "answer": answer}


def _shot(page: Any, name: str, top: Any) -> None:
    """A screenshot of the page with ``top`` scrolled to the top of the notebook (which scrolls itself)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    top.evaluate("element => element.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)  # let the notebook's windowing attach the cells now in view
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_quickstart_in_jupyterlab(lab: LabServer) -> None:
    expected = _expected()
    with browser_page("quickstart") as (page, log):
        from playwright.sync_api import expect

        _drive(page, expect, expected, lab.url("lab/tree/quickstart.ipynb"))
    assert not [text for text in log.errors() if "widget" in text.lower()], log.errors()
    assert log.page_errors == []
    assert log.outside == [], "the page went online"


def _drive(page: Any, expect: Any, expected: dict[str, Any], url: str) -> None:
    open_notebook(page, url)
    run_all(page)
    assert page.evaluate(_ERROR_OUTPUTS) == []
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)

    # The hit list: one Open button per hit, titles of the hits shown.
    cell = page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor", has_text=SEARCH_CELL))
    output = cell.locator(".jp-OutputArea")
    buttons = output.locator(".dkv-open", has_text="Open")
    expect(buttons.first).to_be_visible(timeout=LONG)
    expect(buttons).to_have_count(len(expected["hits"]))
    expect(output).to_contain_text(expected["hits"][0].title.split(" › ")[0])
    _shot(page, "01-search-light", cell)

    # Open the first hit: headings of its document that were not on screen before now are.
    headings = output.locator("h1, h2, h3, h4")
    new = [text for text in expected["headings"] if headings.filter(has_text=text).count() == 0]
    assert new, f"every heading of {expected['document'].name} was already shown before Open"
    buttons.first.click()
    for text in new:
        expect(headings.filter(has_text=text).first).to_be_visible(timeout=LONG)
    opened = output.locator(".dkv-back", has_text="Back").first
    _shot(page, "02-opened-light", opened)

    # The answer and its references, each reference with its own Open button.
    answer_cell = page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor", has_text=ASK_CELL))
    answer_output = answer_cell.locator(".jp-OutputArea")
    answer = expected["answer"]
    assert answer.references
    for name in answer.references:
        slug = name.rsplit("/", 1)[-1]
        expect(answer_output.locator(f"a[href*='{slug}'], :text('{slug}')").first).to_be_attached(timeout=LONG)
    expect(answer_output.locator(".dkv-open", has_text="Open")).to_have_count(len(answer.references))
    _shot(page, "03-answer-light", answer_cell)
    references = answer_output.locator(".dkv-open", has_text="Open").first
    _shot(page, "04-references-light", references)
    _assert_readable(page, "light")

    # Dark theme: same outputs, still readable.
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=LONG)
    page.wait_for_timeout(500)  # the theme's stylesheet swaps in after the attribute flips
    _shot(page, "05-search-dark", cell)
    _shot(page, "06-opened-dark", opened)
    _shot(page, "07-references-dark", references)
    _assert_readable(page, "dark")


def _assert_readable(page: Any, theme: str) -> None:
    rows = page.evaluate(_CONTRAST, _TEXT_SELECTORS)
    (ARTIFACTS / f"contrast-{theme}.json").write_text(json.dumps(rows, indent=2))
    assert rows, "no text of ours found to check"
    # WCAG AA asks 4.5:1 for body text; 3:1 is the floor for large or secondary text.
    poor = [row for row in rows if row["ratio"] < 3.0]
    assert not poor, f"hard to read in the {theme} theme: {poor}"

"""Scenario 8: the JupyterLab panel in a real browser: a query to its hits shown, a click on a hit to its page.

JupyterLab runs on 127.0.0.1 with our server extension and panel loaded (no key: the offline index), driven
by headless Chromium with the browser tests' own helper (``tests/e2e/lab_server.py``). Each round submits a
query in the Developer docs panel and times, inside the page (``performance.now()``), from the submit to
the first animation frame after the new hit list is in the DOM; then clicks a hit and times the same way
until its page is shown. The first round of each query misses the server's result cache; later rounds of
the same query hit it, and the rows say which. Skipped, with the reason, where Chromium, Playwright or the
built panel is absent.
"""

from __future__ import annotations

import json
import os
from typing import Any

from bench.scenarios import Context, goal
from bench.stats import figure

TITLE = "8. JupyterLab panel in Chromium: query → hits shown, hit click → page shown"

WARM_UP = "install"  # not among QUERIES, so their first round still misses the cache
# Queries over the offline index's starter pages (every one has several hits).
QUERIES = (
    "create an API key",
    "restrict an API key",
    "quota exceeded 429",
    "how many names can get_documents take",
    "offline index",
    "search tips",
    "devknow serve",
    "caching refresh",
    "answer_query tool",
    "authentication errors 403",
    "connect MCP clients",
    "magic devget options",
)

# In the page: resolve once `done()` holds after a change under `view`; fail after 30 s (nothing hangs).
_SHOWN = """() => { window.devknowShown = (view, done) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => { observer.disconnect(); reject(new Error('not shown within 30 s')); }, 30000);
  const check = () => { if (done()) { clearTimeout(timer); observer.disconnect(); resolve(); } };
  const observer = new MutationObserver(check);
  observer.observe(view, {childList: true, subtree: true});
  check();
}); }"""
# In the page: submit `query`, resolve with the ms until the next frame after the new hit list is there.
_SEARCH = """async (query) => {
  const panel = document.querySelector('#devknow-docs');
  const view = panel.querySelector('.jp-DevKnow-view');
  const input = panel.querySelector('.jp-DevKnow-query');
  const old = view.querySelector('.jp-DevKnow-hits');
  input.value = query;
  const started = performance.now();
  input.form.requestSubmit();
  await window.devknowShown(view, () => {
    const list = view.querySelector('.jp-DevKnow-hits');
    return list && list !== old && list.querySelector('.jp-DevKnow-hit');
  });
  await new Promise(resolve => requestAnimationFrame(resolve));
  return {ms: performance.now() - started, hits: view.querySelectorAll('.jp-DevKnow-hit').length};
}"""
# In the page: click hit `index`, resolve with the ms until the next frame after its page is there.
_OPEN = """async (index) => {
  const view = document.querySelector('#devknow-docs .jp-DevKnow-view');
  const hits = view.querySelectorAll('.jp-DevKnow-hit');
  const hit = hits[Math.min(index, hits.length - 1)];
  const started = performance.now();
  hit.click();
  await window.devknowShown(view, () => view.querySelector('.jp-DevKnow-page .devknow-doc-title'));
  await new Promise(resolve => requestAnimationFrame(resolve));
  return {ms: performance.now() - started, title: view.querySelector('.devknow-doc-title').textContent};
}"""


def browser_missing() -> str | None:
    """Why no browser scenario can run here (no Chromium, no Playwright), or None."""
    from tests.e2e.lab_server import find_chromium

    if find_chromium() is None:
        return "Chromium is not installed (Debian: apt-get install chromium, or `make browser`)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (the test extra)"
    return None


def start_notebook_lab(ctx: Context, name: str, notebook: dict[str, Any], *, devknow: bool = False) -> Any:
    """JupyterLab (offline) serving ``notebook`` as ``name`` from the scenario's scratch folder; with
    ``devknow``, our extensions load as a ``pip install`` loads them."""
    from tests.e2e.lab_server import OFFLINE_ENV, enable_devknow, start_lab

    root, state = ctx.tmp / "root", ctx.tmp / "state"
    root.mkdir()
    (root / name).write_text(json.dumps(notebook))
    if devknow:
        enable_devknow(state)
    return start_lab(root, state, env={**os.environ, **OFFLINE_ENV})


def _missing() -> str | None:
    """Why the scenario cannot run here, or None."""
    from tests.e2e.lab_server import devknow_bundle

    reason = browser_missing()
    if reason:
        return reason
    if devknow_bundle() is None:
        return "the JupyterLab panel is not built (`pip install -e .` builds it)"
    return None


def run(ctx: Context) -> dict[str, Any]:
    """Medians and p95 of both timings over ``rounds`` rounds (cold and warm server cache apart)."""
    reason = _missing()
    if reason:
        return {"status": "skipped", "reason": reason}
    from tests.e2e.lab_server import LONG, browser_page, find_chromium

    rounds = ctx.reps(48, 6)
    server = start_notebook_lab(ctx, "notes.ipynb", _notebook(), devknow=True)
    samples: dict[str, list[float]] = {"search cold": [], "search warm": [], "open cold": [], "open warm": []}
    opened: set[tuple[str, int]] = set()
    try:
        with browser_page("bench", width=1400, artifacts=None, executable=find_chromium()) as (page, log):
            page.goto(server.url("lab/tree/notes.ipynb"))
            page.wait_for_function("() => window.jupyterapp?.commands.hasCommand('devknow:open')", timeout=LONG)
            page.evaluate("() => window.jupyterapp.restored")
            page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
            page.locator("#devknow-docs .jp-DevKnow-query").wait_for(state="visible", timeout=LONG)
            page.evaluate(_SHOWN)
            # One search and one page before timing: JupyterLab's and the server's first-use costs.
            page.evaluate(_SEARCH, WARM_UP)
            page.evaluate(_OPEN, 0)
            for number in range(rounds):
                query = QUERIES[number % len(QUERIES)]
                cache = "cold" if number < len(QUERIES) else "warm"
                found = page.evaluate(_SEARCH, query)
                if not found["hits"]:
                    raise RuntimeError(f"no hits for {query!r}")
                samples[f"search {cache}"].append(found["ms"])
                hit = (number // len(QUERIES)) % 3
                shown = page.evaluate(_OPEN, hit)
                samples[f"open {'warm' if (query, hit) in opened else 'cold'}"].append(shown["ms"])
                opened.add((query, hit))
            errors, outside = log.errors(), log.outside
    finally:
        server.shutdown()
    if errors or outside:
        raise RuntimeError(f"the page logged errors {errors} or went online {outside}")
    labels = {
        "search cold": "query submitted → hits shown (server cache miss)",
        "search warm": "query submitted → hits shown (server cache hit)",
        "open cold": "hit clicked → page shown (page not fetched before)",
        "open warm": "hit clicked → page shown (page cached)",
    }
    rows = [figure(labels[key], values, "ms", kind=key) for key, values in samples.items() if values]
    by_kind = {row["kind"]: row for row in rows}
    goals = [
        goal("query → hits shown, median < 200 ms (offline index, loopback)",
             f"{by_kind['search cold']['median']:.0f} ms", by_kind["search cold"]["median"] < 200),
        goal("hit click → page shown, median < 200 ms",
             f"{by_kind['open cold']['median']:.0f} ms", by_kind["open cold"]["median"] < 200),
    ]
    notes = [
        f"{rounds} rounds over {len(QUERIES)} queries; times measured in the page with performance.now(), from "
        "the submit (or the click) to the first animation frame after the new hits (or page) are in the DOM.",
        "Each request goes page → Jupyter server extension (tornado, a worker thread) → DevKnowClient → offline "
        "index; the HTML is rendered and sanitized on the server and sanitized again by JupyterLab.",
    ]
    return {"rows": rows, "goals": goals, "notes": notes}


def _notebook() -> dict[str, Any]:
    return {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}

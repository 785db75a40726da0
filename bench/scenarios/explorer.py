"""Scenario 9: the explorer (``%devknow explore``) in JupyterLab in Chromium: Enter → hits shown, Open → page shown.

JupyterLab runs on 127.0.0.1 (no key: the offline index) with a notebook that loads the extension and opens
one explorer; headless Chromium drives it with the browser tests' helper (``tests/e2e/lab_server.py``). Each
round types a query into the explorer's search box and presses Enter, and times, inside the page
(``performance.now()``), from the Enter keydown to the end of the first frame (style, layout, paint) after
the new hits and their status line are in the DOM; then clicks a hit and times the same way until its page
(title and body) is shown. The first round of each query misses the client's cache, later rounds hit it.
The kernel's widget registry (``ipywidgets.widgets.widget._instances``) gives the widget models the
explorer made. Skipped, with the reason, where Chromium or Playwright is absent.

Not in the default run (``SCENARIOS``: it costs a JupyterLab start and ~2 s a round); run it alone with
``python -m bench.scenarios.explorer [--quick]``.
"""

from __future__ import annotations

from typing import Any

from bench.scenarios import Context
from bench.scenarios.browser import OPEN_LABELS, QUERIES, WARM_UP, browser_missing, start_notebook_lab
from bench.stats import figure

TITLE = "9. Explorer in JupyterLab (Chromium): Enter → hits shown, Open → page shown, widget models"

CELLS = [
    "%load_ext devknow_jupyter",
    "import ipywidgets.widgets.widget as _registry\n_models_before = len(_registry._instances)",
    "%devknow explore",
]
_MODELS = "len(_registry._instances) - _models_before"

# In the page: arm a timer that starts at the next Enter keydown (capture phase, before any widget sees it)
# and resolves with the ms until the frame after ``done()`` holds, in the ``nth`` explorer of the page.
_ARM = """([kind, query, nth = 0]) => {
  const app = document.querySelectorAll('.jp-OutputArea-output .devknow-explorer')[nth];
  const text = sel => Array.from(app.querySelectorAll(sel)).map(el => el.textContent).join('|');
  const oldHits = text('.dkx-hit-list button'), oldTitle = text('.dkx-title .devknow-doc-title');
  const oldBody = text('.dkx-page-box .devknow-body');
  // Hits shown: the new list and its status line. Page shown: its title and its body, both new.
  const done = kind === 'search'
    ? () => text('.dkx-status').includes(`for “${query}”`) && app.querySelector('.dkx-hit-list button')
        && text('.dkx-hit-list button') !== oldHits
    : () => {
      const title = text('.dkx-title .devknow-doc-title'), body = text('.dkx-page-box .devknow-body');
      return title && title !== oldTitle && body && body !== oldBody;
    };
  let started = null;
  if (kind === 'search') {
    window.addEventListener('keydown', e => { if (e.key === 'Enter') started = performance.now(); },
      {capture: true, once: true});
  } else {
    started = performance.now();
  }
  window.devknowShown = new Promise((resolve, reject) => {
    const timer = setTimeout(() => { observer.disconnect(); reject(new Error(
      `not shown within 30 s: status ${text('.dkx-status')}; started ${started}`)); }, 30000);
    const check = () => {
      if (started !== null && done()) {
        clearTimeout(timer); observer.disconnect();
        // The next frame's callbacks run before its style, layout and paint; a task queued there runs after.
        requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - started)));
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(app, {childList: true, subtree: true, characterData: true, attributes: true});
  });
  if (kind === 'open') {
    const hits = app.querySelectorAll('.dkx-hit-list button');
    hits[Math.min(query, hits.length - 1)].click();
  }
}"""
# In the page: the kernel's answer to a Python expression (an execute request's user_expressions).
_EXPRESSION = """async (expr) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const reply = await kernel.requestExecute({code: '', silent: true, user_expressions: {value: expr}}).done;
  return reply.content.user_expressions.value.data['text/plain'];
}"""


def run(ctx: Context) -> dict[str, Any]:
    """Medians and p95 of both timings over ``rounds`` rounds (cold and warm cache apart), and the model count."""
    reason = browser_missing()
    if reason:
        return {"status": "skipped", "reason": reason}
    from tests.e2e.lab_server import LONG, browser_page, find_chromium, open_notebook, run_all

    rounds = ctx.reps(36, 6)
    server = start_notebook_lab(ctx, "explorer.ipynb", _notebook())
    samples: dict[str, list[float]] = {"search cold": [], "search warm": [], "open cold": [], "open warm": []}
    opened: set[tuple[str, int]] = set()
    try:
        with browser_page("bench-explorer", width=1400, artifacts=None, executable=find_chromium()) as (page, log):
            open_notebook(page, server.url("lab/tree/explorer.ipynb"))
            run_all(page)
            box = page.locator(".jp-OutputArea-output .devknow-explorer .dkx-search input")
            box.wait_for(state="visible", timeout=LONG)

            def search(query: str) -> float:
                # ipywidgets' explorer takes text typed within 2 s of an Enter as that Enter's late text and
                # searches it at once; a pause keeps each round's search on its own Enter.
                page.wait_for_timeout(2100)
                box.fill(query)
                page.evaluate(_ARM, ["search", query])
                box.press("Enter")
                return page.evaluate("window.devknowShown")

            def open_hit(index: int) -> float:
                page.evaluate(_ARM, ["open", index])
                return page.evaluate("window.devknowShown")

            search(WARM_UP)  # JupyterLab's, the kernel's and the index's first-use costs
            open_hit(0)
            models = int(page.evaluate(_EXPRESSION, _MODELS))
            for number in range(rounds):
                query = QUERIES[number % len(QUERIES)]
                samples[f"search {'cold' if number < len(QUERIES) else 'warm'}"].append(search(query))
                hit = (number // len(QUERIES)) % 3
                samples[f"open {'warm' if (query, hit) in opened else 'cold'}"].append(open_hit(hit))
                opened.add((query, hit))
            models_after = int(page.evaluate(_EXPRESSION, _MODELS))
            page_errors, outside = log.page_errors, log.outside
    finally:
        server.shutdown()
    if page_errors:
        raise RuntimeError(f"the page failed: {page_errors}")
    labels = {
        "search cold": "Enter in the search box → hits shown (client cache miss)",
        "search warm": "Enter in the search box → hits shown (client cache hit)",
        **OPEN_LABELS,
    }
    rows = [figure(labels[key], values, "ms", kind=key) for key, values in samples.items() if values]
    rows.append(figure("widget models of one explorer (after a search and a page)", [models], "models", kind="models"))
    notes = [
        f"{rounds} rounds over {len(QUERIES)} queries; times measured in the page with performance.now(), from the "
        "Enter keydown (or the click) to the end of the first frame (style, layout, paint) after the new hits (or "
        "the page's title and body) are in the DOM.",
        f"Widget models in the kernel's registry: {models} after the first search and page, {models_after} after "
        f"{rounds} more rounds.",
        # Some offline pages link images on their public sites; the browser tries them and fails (no network).
        f"Requests the page tried outside 127.0.0.1 (images in pages): {len(outside)}.",
    ]
    return {"rows": rows, "goals": [], "notes": notes}


def _notebook() -> dict[str, Any]:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in CELLS]
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                         "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}


if __name__ == "__main__":
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="devknow-bench-explorer-") as scratch:
        result = run(Context(quick="--quick" in sys.argv, tmp=Path(scratch)))
    for row in result.get("rows", []):
        print(f"{row['label']:62s} median {row['median']:8.1f} {row['unit']}  p95 {row['p95']:8.1f}  n={row['n']}")
    for line in result.get("notes", []) or [result.get("reason", "")]:
        print(line)

"""Take the screenshots in docs/_static/ of the result widgets and the JupyterLab panel (headless Chromium).

Run from a checkout whose environment has the test extras (``make test`` makes one)::

    python scripts/docs_screenshots.py            # writes docs/_static/*.png
    python scripts/docs_screenshots.py --out DIR  # somewhere else

It starts JupyterLab as the browser tests do (``tests/e2e/lab_server.py``: a temporary Jupyter state, no key,
no network, the offline index answering), runs a notebook of ``%devsearch`` and ``%%devask`` cells, and
screenshots each output and the "Developer docs" panel, element by element. Each file must stay under
150 KB (``tests/test_docs.py`` checks the committed ones); the script says so when one is larger.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e import lab_server as e2e  # noqa: E402 (after the path is set)

QUERY = "create an API key"
QUESTION = "How do I restrict an API key to one API?"
CELLS = ["%load_ext devknow_jupyter", f"%devsearch -n 3 {QUERY}", f"%%devask\n{QUESTION}"]
LIMIT = 150_000  # bytes per screenshot
WIDTH, HEIGHT = 1200, 1500  # tall, so that each output fits on the screen
#: The status bar would cover an output's bottom; JupyterLab's splitter gives the panel room (40%).
HIDE_STATUS_BAR = "document.getElementById('jp-main-statusbar').style.display = 'none'"
WIDE_PANEL = "window.jupyterapp.shell._hsplitPanel?.setRelativeSizes([0, 0.58, 0.42])"


def _notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in CELLS]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")


def _output(page, text: str):  # a Playwright page; its locator of the output
    cell = page.locator(".jp-CodeCell", has=page.locator(".jp-InputArea-editor", has_text=text))
    return cell.locator(".jp-OutputArea")


def _shoot(target, path: Path) -> None:  # a Playwright locator, or the page (all of it)
    getattr(target, "scroll_into_view_if_needed", lambda: None)()
    target.screenshot(path=str(path), animations="disabled")
    size = path.stat().st_size
    flag = "" if size < LIMIT else f"  over {LIMIT // 1000} KB: make the view smaller"
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {size // 1024} KB{flag}")


def take(out: Path) -> None:
    """Start JupyterLab on the offline index and write the screenshots into ``out``."""
    from playwright.sync_api import expect

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="devknow-shots-") as tmp:
        root, state = Path(tmp) / "root", Path(tmp) / "state"
        root.mkdir()
        _notebook(root / "tour.ipynb")
        e2e.enable_devknow(state)
        lab = e2e.start_lab(root, state, env={**os.environ, **e2e.OFFLINE_ENV})
        try:
            with e2e.browser_page("docs-screenshots", width=WIDTH, height=HEIGHT, artifacts=None,
                                  executable=e2e.find_chromium()) as (page, _log):
                e2e.open_notebook(page, lab.url("lab/tree/tour.ipynb"))
                page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
                page.evaluate(HIDE_STATUS_BAR)
                e2e.run_all(page)
                hits = _output(page, "%devsearch").locator(".dkv-hits")
                expect(hits.locator(".dkv-list > .dkv-item").first).to_be_visible(timeout=e2e.LONG)
                _shoot(hits, out / "widget-hits.png")
                hits.locator(".dkv-list > .dkv-item").first.locator(".dkv-open").click()
                expect(hits.locator(".dkv-page .devknow-doc-title")).to_be_visible(timeout=e2e.LONG)
                page.evaluate("document.querySelectorAll('.dkv-page .devknow-body').forEach("
                              "b => { b.style.maxHeight = '420px'; b.style.overflow = 'hidden'; })")
                _shoot(hits, out / "widget-page.png")
                answer = _output(page, "%%devask").locator(".dkv-answer")
                expect(answer.locator(".devknow-refs")).to_be_visible(timeout=e2e.LONG)
                _shoot(answer, out / "widget-answer.png")

                page.evaluate("window.jupyterapp.commands.execute('devknow:open')")
                panel = page.locator("#devknow-docs")
                expect(panel.locator(".jp-DevKnow-status")).to_contain_text("offline index", timeout=e2e.LONG)
                panel.locator(".jp-DevKnow-query").fill("quota")
                panel.locator(".jp-DevKnow-query").press("Enter")
                expect(panel.locator(".jp-DevKnow-hit").first).to_be_visible(timeout=e2e.LONG)
                page.evaluate(WIDE_PANEL)
                page.set_viewport_size({"width": 1080, "height": 660})
                page.wait_for_timeout(300)  # the layout settles
                _shoot(page, out / "panel-hits.png")
                panel.locator(".jp-DevKnow-hit").first.click()
                expect(panel.locator(".jp-DevKnow-page .devknow-doc-title")).to_be_visible(timeout=e2e.LONG)
                _shoot(page, out / "panel-page.png")
        finally:
            lab.shutdown()


def main(argv: list[str] | None = None) -> int:
    """The command line: ``--out DIR`` (default docs/_static)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "_static", help="where the PNGs go")
    args = parser.parse_args(argv)
    if not e2e.find_chromium():
        print("docs_screenshots: error: Chromium is not installed (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    take(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

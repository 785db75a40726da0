"""Scenario 4: rendering. A 1 MB generated Markdown page (headings, prose, links, code blocks, tables,
lists) through the renderer's public ``render_markdown`` (Python-Markdown + Pygments + nh3 sanitizing),
beside ``markdown-it-py`` rendering the same text (conversion only: no highlighting, no sanitizing);
and building the hit-list widget for 20 search hits.

``render_markdown`` caches by text, so every run renders a text no run has rendered before (the page
plus a one-line paragraph naming the run).
"""

from __future__ import annotations

import time
from typing import Any

from bench.docgen import generate_markdown
from bench.scenarios import Context, Unavailable, goal
from bench.stats import figure, ratio, round_robin

TITLE = "4. Rendering: 1 MB of Markdown to sanitized HTML, and the widget for 20 hits"
SIZE = 1_000_000
BASE = "https://bench.example.dev/big/page"


def _hits(count: int) -> Any:
    from devknow_jupyter.models import SearchResults

    passages = [generate_markdown(1_200, seed=40 + i) for i in range(count)]
    data = {
        "results": [
            {"parent": f"documents/bench.example.dev/page/{i}", "id": str(i), "content": passages[i]}
            for i in range(count)
        ]
    }
    return SearchResults.from_dict(data, query="create a bucket")


def _widget_builder() -> Any:
    """The renderer's public function that builds the hit-list widget, or Unavailable."""
    try:
        from devknow_jupyter.render import widgets
    except ImportError as exc:
        raise Unavailable(f"devknow_jupyter.render.widgets is not there yet: {exc}") from exc
    for name in ("hits_widget", "search_results_widget", "results_widget", "hit_list", "build_hits"):
        if hasattr(widgets, name):
            return getattr(widgets, name)
    raise Unavailable(f"no hit-list builder found in devknow_jupyter.render.widgets ({', '.join(widgets.__all__)})")


def run(ctx: Context) -> dict[str, Any]:
    """Time the 1 MB render, its sanitizing step, markdown-it-py, and the 20-hit widget."""
    try:
        from devknow_jupyter.render.markdown import render_markdown, sanitize_html
    except ImportError as exc:
        raise Unavailable(f"devknow_jupyter.render.markdown is not there yet: {exc}") from exc
    from markdown_it import MarkdownIt

    text = generate_markdown(SIZE, seed=4)
    runs = iter(range(1_000_000))
    fresh_texts: dict[str, str] = {}

    def ours() -> None:
        page = text + f"\nRun {next(runs)}.\n"
        fresh_texts["last"] = render_markdown(page, base_url=BASE).html

    it = MarkdownIt("commonmark").enable("table")
    reps = ctx.reps(7, 2)
    render_markdown(text[:20_000], base_url=BASE)  # first-use imports and converter set-up, not measured
    it.render(text[:20_000])
    samples = round_robin({"devknow render_markdown (1 MB)": ours, "markdown-it-py (1 MB)": lambda: it.render(text)},
                          reps, budget=60.0)
    html = fresh_texts["last"]
    sanitize = []
    for _ in range(reps):
        started = time.perf_counter()
        sanitize_html(html, base_url=BASE)
        sanitize.append(time.perf_counter() - started)
    rows = [figure(label, values, "s") for label, values in samples.items()]
    rows.append(figure("of which: sanitize_html of its HTML (nh3)", sanitize, "s", note=f"{len(html):,} chars"))
    ours_row, theirs = rows[0], rows[1]
    notes = [
        f"The page: {len(text):,} characters, {text.count(chr(10) + '#')} headings, {text.count('```') // 2} code "
        f"blocks, {text.count(chr(10) + '|---')} tables, {text.count('](https://')} links.",
        "markdown-it-py does less work (no syntax highlighting, no heading ids, no sanitizing): the ratio is "
        "the price of those.",
    ]
    goals = [goal("1 MB rendered to sanitized HTML in < 0.5 s", f"{ours_row['median']:.2f} s",
                  ours_row["median"] < 0.5)]
    result: dict[str, Any] = {"rows": rows, "goals": goals, "notes": notes}
    result["notes"].insert(0, f"devknow / markdown-it-py: {ratio(ours_row, theirs):.1f}×")
    try:
        build = _widget_builder()
    except Unavailable as exc:
        result.update(status="unavailable", reason=str(exc))
        return result
    hits = _hits(20)
    widget_reps = ctx.reps(30, 3)
    widget_times = []
    for i in range(widget_reps):
        fresh = _hits(20) if i else hits  # new objects each time; render caches by text, see below
        started = time.perf_counter()
        build(fresh)
        widget_times.append(time.perf_counter() - started)
    rows.append(figure("hit-list widget for 20 hits (first build of these passages)", widget_times[:1], "ms",
                       scale=1e3))
    rows.append(figure("hit-list widget for 20 hits (passages already rendered)", widget_times[1:] or widget_times,
                       "ms", scale=1e3))
    return result

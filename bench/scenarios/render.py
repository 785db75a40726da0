"""Scenario 4: rendering. A 1 MB generated Markdown page (headings, prose, links, code blocks, tables,
lists) through the renderer's public ``render_markdown`` (Python-Markdown + Pygments + nh3 sanitizing),
beside ``markdown-it-py`` rendering the same text (conversion only: no highlighting, no sanitizing);
and building the hit-list widget for 20 search hits.

``render_markdown`` caches by text, so every run renders a text no run has rendered before (the page
plus a one-line paragraph naming the run).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bench.scenarios import Context, Unavailable, goal
from bench.stats import figure, ratio, round_robin
from tests.docgen import generate_markdown

TITLE = "4. Rendering: 1 MB of Markdown to sanitized HTML, and the widget for 20 hits"
SIZE = 1_000_000
BASE = "https://bench.example.dev/big/page"


def _hits(count: int, seed: int) -> Any:
    """Search results with ``count`` passages of about 1,200 characters each (Markdown with code and tables)."""
    from devknow_jupyter.models import SearchResults

    data = {
        "results": [
            {"parent": f"documents/bench.example.dev/page/{i}", "id": str(i),
             "content": generate_markdown(1_200, seed=seed + i)}
            for i in range(count)
        ]
    }
    return SearchResults.from_dict(data, query="create a bucket")


def _display_api() -> Any:
    """``devknow_jupyter.display`` (widget_for, mimebundle, options), or Unavailable."""
    try:
        from devknow_jupyter import display
        from devknow_jupyter.render import widgets  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"the widget view is not there yet: {exc}") from exc
    return display


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

    def ours(max_chars: int | None) -> Callable[[], None]:
        def render() -> None:
            page = f"Run {next(runs)}.\n\n" + text  # a text never rendered before (the renderer caches)
            fresh_texts[str(max_chars)] = render_markdown(page, base_url=BASE, max_chars=max_chars).html

        return render

    it = MarkdownIt("commonmark").enable("table")
    reps = ctx.reps(5, 2)
    render_markdown(text[:20_000], base_url=BASE, max_chars=None)  # first-use imports and set-up, not measured
    it.render(text[:20_000])
    from devknow_jupyter.display import options

    cut = options.max_chars
    samples = round_robin(
        {
            "devknow render_markdown, whole 1 MB page (max_chars=None)": ours(None),
            "markdown-it-py, whole 1 MB page (conversion only)": lambda: it.render(text),
            f"devknow render_markdown, default cut ({cut:,} chars, what a cell shows)": ours(cut),
        },
        reps,
        budget=60.0,
    )
    html = fresh_texts["None"]
    sanitize = []
    for _ in range(reps):
        started = time.perf_counter()
        sanitize_html(html, base_url=BASE)
        sanitize.append(time.perf_counter() - started)
    rows = [figure(label, values, "s") for label, values in samples.items()]
    rows.append(figure("of which: sanitize_html of its HTML (nh3)", sanitize, "s", note=f"{len(html):,} chars"))
    ours_row, theirs = rows[0], rows[1]
    rows[2]["note"] = f"{len(fresh_texts[str(cut)]):,} chars of HTML"
    notes = [
        f"The page: {len(text):,} characters, {text.count(chr(10) + '#')} headings, {text.count('```') // 2} code "
        f"blocks, {text.count(chr(10) + '|---')} tables, {text.count('](https://')} links.",
        "markdown-it-py does less work (no syntax highlighting, no heading ids, no sanitizing): the ratio is "
        "the price of those.",
    ]
    goals = [goal("1 MB rendered to sanitized HTML in < 0.5 s", f"{ours_row['median']:.2f} s",
                  ours_row["median"] < 0.5)]
    result: dict[str, Any] = {"rows": rows, "goals": goals, "notes": notes}
    result["notes"].insert(0, f"devknow (whole page) / markdown-it-py: {ratio(ours_row, theirs):.2f}×")
    try:
        display = _display_api()
    except Unavailable as exc:
        result.update(status="unavailable", reason=str(exc))
        return result
    _big_pages(ctx, display, text, it, result)
    _widgets(ctx, display, rows, result["notes"], result["goals"])
    return result


def _big_pages(ctx: Context, display: Any, text: str, it: Any, result: dict[str, Any]) -> None:
    """``%devget``'s display of a 1 MB and a 100 KB page (every MIME type: plain, Markdown, HTML, the widget)
    beside markdown-it-py converting the same 1 MB, interleaved; and the panel's reply for the 1 MB page."""
    from devknow_jupyter.labext.views import as_json, documents_reply
    from devknow_jupyter.models import Document, Documents

    runs = iter(range(1_000_000))
    small = text[:100_000]
    sizes: dict[str, int] = {}

    def page(body: str) -> Document:
        number = next(runs)  # a page never displayed before: nothing of it is cached
        return Document(name=f"documents/bench.example.dev/big/{number}", uri=f"{BASE}/{number}",
                        content=f"Page {number}.\n\n{body}", title="Big page")

    def shown(body: str, key: str) -> Callable[[], None]:
        def display_page() -> None:
            bundle = display.mimebundle(page(body), widgets_outside_kernel=True)
            if display.WIDGET_MIME not in bundle or "text/markdown" not in bundle:
                raise RuntimeError("the page did not display every MIME type")
            sizes[key] = sum(len(value) for value in bundle.values() if isinstance(value, str))

        return display_page

    def panel_reply() -> None:
        sizes["panel"] = len(as_json(documents_reply, Documents([page(text)])))

    labels = {
        "big": "%devget display of the 1 MB page, every MIME type (plain, Markdown, HTML, widget)",
        "mdit": "markdown-it-py, the same 1 MB page (conversion only), interleaved",
        "small": "%devget display of a 100 KB page, every MIME type",
        "panel": "panel: devknow/api/documents reply for the 1 MB page (render + JSON, in its worker)",
    }
    samples = round_robin({labels["big"]: shown(text, "big"), labels["mdit"]: lambda: it.render(text),
                           labels["small"]: shown(small, "small"), labels["panel"]: panel_reply},
                          ctx.reps(7, 2), budget=60.0)
    rows = {key: figure(label, samples[label], "ms", scale=1e3) for key, label in labels.items()}
    rows["big"]["note"] = f"{sizes.get('big', 0):,} chars of output"
    rows["panel"]["note"] = f"{sizes.get('panel', 0):,} bytes of JSON"
    result["rows"] += [rows["big"], rows["mdit"], rows["small"], rows["panel"]]
    share = ratio(rows["big"], rows["mdit"])
    result["goals"] += [
        goal("%devget of a 1 MB page displays (every MIME type) in ≤ markdown-it-py's time for it",
             f"{rows['big']['median']:.0f} ms vs {rows['mdit']['median']:.0f} ms ({share:.2f}×)", share <= 1.0),
        goal("%devget of a 100 KB page displays (every MIME type) in < 50 ms", f"{rows['small']['median']:.0f} ms",
             rows["small"]["median"] < 50),
    ]
    result["notes"].append(
        "A long page shows its first sections rendered (render/sections.py: FIRST_CHARS) with its whole contents "
        "list; later sections are rendered as the view asks for them. The Markdown and HTML twins hold the "
        "later sections as their source, as text, up to options.max_chars."
    )


def _conversions_per_hit(display: Any, settings: dict[str, Any]) -> float:
    """Markdown→HTML conversions per hit while 20 hits never seen before are displayed whole (the
    renderer's cache counts them: a conversion is a miss)."""
    from devknow_jupyter.render.markdown import _render

    before = _render.cache_info().misses
    display.mimebundle(_hits(20, seed=7_777), **settings)
    return (_render.cache_info().misses - before) / 20


def _widgets(ctx: Context, display: Any, rows: list[dict[str, Any]], notes: list[str],
             goals: list[dict[str, Any]]) -> None:
    """The hit list for 20 hits: the widget alone, and the whole display bundle (static views + widget)."""
    reps = ctx.reps(10, 3)
    settings = {"page_size": 20, "widgets_outside_kernel": True}
    display.widget_for(_hits(20, seed=900), **settings)  # first-use set-up (imports, converter), not measured
    cold: dict[str, list[float]] = {"widget": [], "bundle": []}
    for i in range(reps):
        for kind in ("widget", "bundle"):
            hits = _hits(20, seed=1_000 + 100 * i + (50 if kind == "bundle" else 0))  # never rendered before
            started = time.perf_counter()
            if kind == "widget":
                view = display.widget_for(hits, **settings)
            else:
                bundle = display.mimebundle(hits, **settings)
            cold[kind].append(time.perf_counter() - started)
    if len(view.items) != 20 or display.WIDGET_MIME not in bundle:
        raise RuntimeError("the hit list did not show 20 hits as a widget")
    conversions = _conversions_per_hit(display, settings)
    warm_hits = _hits(20, seed=1_000)
    warm = round_robin({"widget": lambda: display.widget_for(warm_hits, **settings),
                        "bundle": lambda: display.mimebundle(warm_hits, **settings)}, reps)
    rows.append(figure("hit-list widget, 20 hits, passages not rendered before", cold["widget"], "ms", scale=1e3))
    rows.append(figure("hit-list widget, 20 hits, passages already rendered (cache)", warm["widget"], "ms",
                       scale=1e3))
    rows.append(figure("whole display of 20 hits (plain+Markdown+HTML+widget), not rendered before",
                       cold["bundle"], "ms", scale=1e3))
    rows.append(figure("whole display of 20 hits, already rendered", warm["bundle"], "ms", scale=1e3))
    goals.append(goal("each hit rendered once for a %devsearch (Markdown→HTML conversions per hit, whole display "
                      "of 20 hits: static HTML, Markdown, widget)", f"{conversions:.2f}", conversions <= 1.0))
    notes.append("Hit lists use `display.widget_for` / `display.mimebundle` with page_size=20 and "
                 "widgets_outside_kernel=True (no kernel in the bench); the widget (one anywidget model) carries "
                 "every hit's HTML, the page shows page_size of them at a time.")

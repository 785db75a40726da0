"""What tells look-alike hits apart (render/labels.py), and where the widgets, the twin and the panel show it."""

from __future__ import annotations

from devknow_jupyter.models import DocumentChunk, SearchResults
from devknow_jupyter.render.labels import tell_apart, tells_for

JS = "https://firebase.google.com/docs/reference/js/"


def _hit(title: str, uri: str) -> DocumentChunk:
    name = "documents/" + uri.split("://", 1)[1]
    return DocumentChunk(parent=name, id="c0", content=f"# {title}\n\nAbout {title}.")


def test_sibling_packages_reference_pages_are_told_apart_by_their_package():
    entries = [(f"QueryConstraint {'class' if i else 'Class'}", f"{JS}{package}.queryconstraint")
               for i, package in enumerate(["firestore_", "firestore_lite", "firestore_pipelines"])]
    assert tell_apart([*entries, ("Query class", f"{JS}firestore_.query")]) == [
        "firestore_", "firestore_lite", "firestore_pipelines", ""]


def test_tells_for_other_shapes_of_look_alike_addresses():
    # Another site: the host and path that differ; a page and its child: the deeper part; one page twice: none.
    assert tell_apart([("Security", "https://dart.dev/security"), ("Security", "https://go.dev/doc/security")]) == [
        "dart.dev", "go.dev/doc"]
    assert tell_apart([("Deploy", "https://adk.dev/deploy/agent-runtime"),
                       ("Deploy", "https://adk.dev/deploy/agent-runtime/deploy")]) == [
        "agent-runtime", "agent-runtime/deploy"]
    assert tell_apart([("Same", "https://a.dev/p"), ("Same", "https://a.dev/p"), ("Other", "https://a.dev/q")]) == [
        "", "", ""]


def test_the_widget_the_twin_and_the_panel_reply_show_the_tells():
    from devknow_jupyter.labext.views import search_reply
    from devknow_jupyter.render import static
    from devknow_jupyter.render.widgets import HitList

    results = SearchResults("q", [_hit("QueryConstraint class", f"{JS}{p}.queryconstraint")
                                  for p in ("firestore_", "firestore_lite")])
    assert tells_for(results) == ["firestore_", "firestore_lite"]
    widget = HitList(results)
    try:
        assert ['<span class="devknow-tell">firestore_lite</span>' in item["html"] for item in widget.items] == [
            False, True]
    finally:
        widget.close()
    assert static.hits_html(results).count('class="devknow-tell"') == 2
    assert "`firestore_lite`" in static.hits_markdown(results)
    reply = search_reply(results)
    assert [hit["tell"] for hit in reply["results"]] == ["firestore_", "firestore_lite"]
    assert "firestore_lite</span>" in reply["results"][1]["html"]


def test_one_display_renders_each_hit_once_for_the_twin_and_the_widget(monkeypatch):
    from devknow_jupyter import display
    from devknow_jupyter.render import static

    results = SearchResults("q", [_hit(f"Page {i}", f"https://docs.example.dev/p{i}") for i in range(5)])
    rendered: list[str] = []
    real = static.hit_html
    spy = lambda hit, *args, **kw: rendered.append(hit.parent) or real(hit, *args, **kw)  # noqa: E731
    monkeypatch.setattr(static, "hit_html", spy)
    bundle = display.mimebundle(results, widgets_outside_kernel=True)
    assert display.WIDGET_MIME in bundle and "Page 4" in bundle["text/html"]
    assert sorted(rendered) == sorted(hit.parent for hit in results)  # once each, not once per output

"""How result objects display: the MIME bundle of each type, its text/plain and Markdown, the options.

A real ``InteractiveShell`` formats the objects (``ip.display_formatter.format``), and a real kernel
(nbclient) shows that the live widget view rides along with the static twin where a kernel runs.
"""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbclient import NotebookClient

from devknow_jupyter import display
from devknow_jupyter.client import DevKnowClient
from devknow_jupyter.display import WIDGET_MIME
from devknow_jupyter.models import Answer, Document, DocumentChunk, Documents, ResultInfo, SearchResults
from devknow_jupyter.render.style import style_block
from tests.servers.sdk_server import load_docs

DOCS = load_docs()
BUCKETS = "documents/docs.example.dev/storage/buckets"
KEYS = "documents/docs.example.dev/keys/restrict"
STATIC = {"text/plain", "text/markdown", "text/html"}


@pytest.fixture
def ip() -> Any:
    """A fresh shell, torn down afterwards; display options restored."""
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    saved = display.DisplayOptions(**vars(display.options))
    yield shell
    for name, value in vars(saved).items():
        setattr(display.options, name, value)
    shell.atexit_operations()
    atexit.unregister(shell.atexit_operations)
    InteractiveShell.clear_instance()


def results() -> SearchResults:
    info = ResultInfo("remote", "http://127.0.0.1:8765/mcp", 0.2, True, ["Filtered here to docs.example.dev."])
    chunks = [
        DocumentChunk(BUCKETS, "1", "## Choose a region\n\nKeep the bucket close to the code that reads it."),
        DocumentChunk(BUCKETS, "2", "## Create it from the command line\n\n```bash\ndevtool buckets create\n```"),
        DocumentChunk("documents/docs.example.dev/auth/firebase", "0", "Sign users in with a **provider**."),
    ]
    return SearchResults("bucket region", chunks, info)


def document(name: str = BUCKETS) -> Document:
    return Document.from_dict(DOCS[name])


def answer() -> Answer:
    return Answer("Pick a region **close** to your code.", [BUCKETS, KEYS], "Which region?", extractive=True)


OBJECTS = {
    "search results": results,
    "hit": lambda: results()[0],
    "document": document,
    "documents": lambda: Documents([document(), document(KEYS)]),
    "answer": answer,
}


# -- bundle keys -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_static_bundle_outside_a_kernel(ip: Any, kind: str) -> None:
    data, _ = ip.display_formatter.format(OBJECTS[kind]())
    assert set(data) == STATIC
    assert data["text/html"].startswith(style_block()) and data["text/html"].count("<style") == 1


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_widget_view_rides_along_when_widgets_can_show(ip: Any, kind: str) -> None:
    display.options.widgets_outside_kernel = True
    data, _ = ip.display_formatter.format(OBJECTS[kind]())
    assert set(data) == {*STATIC, WIDGET_MIME}
    view = data[WIDGET_MIME]
    assert view["version_major"] == 2 and isinstance(view["model_id"], str) and view["model_id"]


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_no_widgets_option_gives_the_static_twin_only(ip: Any, kind: str) -> None:
    display.options.widgets_outside_kernel = True
    display.options.widgets = False
    data, _ = ip.display_formatter.format(OBJECTS[kind]())
    assert set(data) == STATIC


def test_include_and_exclude_are_honoured(ip: Any) -> None:
    data, _ = ip.display_formatter.format(results(), include={"text/plain"})
    assert set(data) == {"text/plain"}
    data, _ = ip.display_formatter.format(results(), exclude={"text/html"})
    assert set(data) == {"text/plain", "text/markdown"}


def test_a_plain_text_shell_gets_only_text(ip: Any) -> None:
    # What IPython's terminal does: nothing but text/plain is shown, so nothing else is built.
    ip.display_formatter.active_types = ["text/plain"]
    assert set(results()._repr_mimebundle_()) == {"text/plain"}


def test_overrides_apply_to_one_call_only() -> None:
    bundle = display.mimebundle(results(), widgets_outside_kernel=True, page_size=2)
    assert WIDGET_MIME in bundle
    assert display.options.page_size == 10 and not display.options.widgets_outside_kernel


# -- content ---------------------------------------------------------------------------------------------------


def test_search_results_plain_text_is_short_and_numbered() -> None:
    text = display.mimebundle(results())["text/plain"]
    assert text.splitlines() == [
        "3 hits for 'bucket region' (remote (127.0.0.1:8765), 200 ms, from cache)",
        "Note: Filtered here to docs.example.dev.",
        " 1. Choose a region",
        "    https://docs.example.dev/storage/buckets",
        "    Keep the bucket close to the code that reads it.",
        " 2. Create it from the command line",
        "    https://docs.example.dev/storage/buckets",
        " 3. Firebase",
        "    https://docs.example.dev/auth/firebase",
        "    Sign users in with a provider.",
    ]


def test_search_results_markdown_and_html_carry_the_same_hits() -> None:
    bundle = display.mimebundle(results())
    markdown = bundle["text/markdown"]
    assert markdown.startswith("**3 hits** for *bucket region* · remote (127.0.0.1:8765) · 200 ms · from cache")
    assert "> Filtered here to docs.example.dev." in markdown
    assert "### 1. [Choose a region](https://docs.example.dev/storage/buckets)" in markdown
    assert f"`{BUCKETS}`" in markdown and "```bash\ndevtool buckets create\n```" in markdown
    html = bundle["text/html"]
    assert "<b>3 hits</b> for <q>bucket region</q> · remote (127.0.0.1:8765) · 200 ms · from cache" in html
    assert html.count('class="devknow-hit"') == 3 and "Filtered here to docs.example.dev." in html


def test_hit_lists_show_passage_previews_and_a_hit_alone_its_whole_passage() -> None:
    long = "".join(f"Point {i}: keep buckets near the code that reads them.\n\n" for i in range(40))
    hits = SearchResults("region", [DocumentChunk(BUCKETS, "9", long)])
    bundle = display.mimebundle(hits, widgets=False)
    for mime in ("text/markdown", "text/html"):
        assert "Point 3:" in bundle[mime] and "Point 39:" not in bundle[mime], mime
    assert bundle["text/markdown"].rstrip().endswith("…") and "devknow-clamped" in bundle["text/html"]
    whole = display.mimebundle(hits, widgets=False, preview_chars=0)
    assert "Point 39:" in whole["text/markdown"] and "Point 39:" in whole["text/html"]
    alone = display.mimebundle(hits[0], widgets=False)
    assert "Point 39:" in alone["text/markdown"] and "Point 39:" in alone["text/html"]


def test_empty_results_say_so() -> None:
    bundle = display.mimebundle(SearchResults("nothing matches", []), widgets=False)
    assert bundle["text/plain"].startswith("0 hits for 'nothing matches'")
    assert "No results" in bundle["text/html"] and "No results" in bundle["text/markdown"]


def test_document_views() -> None:
    bundle = display.mimebundle(document())
    plain = bundle["text/plain"].splitlines()
    assert plain[:3] == [
        "Create a storage bucket",
        "https://docs.example.dev/storage/buckets",
        "Make a bucket, pick its region and set who can read it.",
    ]
    assert "# Create a storage bucket" in plain
    markdown = bundle["text/markdown"]
    assert markdown.startswith("## [Create a storage bucket](https://docs.example.dev/storage/buckets)\n")
    assert "| Storage class | Standard |" in markdown
    assert "[access control](https://docs.example.dev/access/overview)" in markdown
    html = bundle["text/html"]
    assert 'class="devknow-doc-title"' in html and "Make a bucket, pick its region" in html
    assert "<table>" in html and '<div class="devknow-hl devknow-shell">' in html  # a bash block, marked as shell


def test_long_document_plain_text_and_markdown_are_cut_with_a_note() -> None:
    content = "# Big\n\n" + "\n\n".join(f"Paragraph {i} " + "text " * 40 for i in range(300))
    doc = Document(name="documents/docs.example.dev/big", uri="https://docs.example.dev/big", content=content)
    bundle = display.mimebundle(doc, max_chars=5_000, plain_chars=500)
    assert len(bundle["text/plain"]) < 1_000 and "more characters" in bundle["text/plain"]
    assert "Truncated: showing the first" in bundle["text/markdown"] and "Paragraph 299" not in bundle["text/markdown"]
    assert f"of {len(content):,} characters" in bundle["text/html"] and "max\\_chars = 0" not in bundle["text/html"]
    whole = display.mimebundle(doc, max_chars=0)
    assert "Paragraph 299" in whole["text/html"] and "Truncated" not in whole["text/html"]


def test_documents_show_each_document() -> None:
    bundle = display.mimebundle(Documents([document(), document(KEYS)]))
    assert bundle["text/plain"].startswith("2 documents\n")
    assert "Create a storage bucket" in bundle["text/plain"] and DOCS[KEYS]["title"] in bundle["text/plain"]
    assert bundle["text/html"].count('class="devknow-doc"') == 2
    assert bundle["text/markdown"].count("\n---\n") == 1


def test_answer_views() -> None:
    bundle = display.mimebundle(answer())
    plain = bundle["text/plain"]
    assert plain.startswith("Answer to 'Which region?' (extractive)\n\nPick a region **close** to your code.")
    assert plain.endswith(
        "References:\n 1. https://docs.example.dev/storage/buckets\n 2. https://docs.example.dev/keys/restrict"
    )
    markdown = bundle["text/markdown"]
    assert markdown.startswith("**Answer** to *Which region?* · *extractive*\n\nPick a region **close**")
    assert "1. [https://docs.example.dev/storage/buckets](https://docs.example.dev/storage/buckets)" in markdown
    html = bundle["text/html"]
    assert "<strong>close</strong>" in html and ">extractive</span>" in html
    assert html.count('class="devknow-ref"') == 2


def test_reprs_stay_cheap_and_short() -> None:
    view = display.widget_for(results(), widgets_outside_kernel=True)
    assert repr(view) == "<HitList>"
    assert repr(results()) == "<SearchResults query='bucket region' hits=3>"


# -- notices -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "role"), [("info", "status"), ("warning", "status"), ("error", "alert")])
def test_message_bundle(kind: str, role: str) -> None:
    bundle = display.message_bundle("Quota used up; showing search results.", kind)
    assert bundle["text/plain"] == "Quota used up; showing search results."
    assert bundle["text/html"] == (
        f'{style_block()}\n<div class="devknow devknow-msg devknow-msg-{kind}" role="{role}">'
        "Quota used up; showing search results.</div>"
    )


def test_message_bundle_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="info, warning, error"):
        display.message_bundle("x", "fatal")


def test_bundles_display_themselves(ip: Any) -> None:
    data, _ = ip.display_formatter.format(display.placeholder())
    assert data["text/plain"] == "Searching…"
    assert 'class="devknow devknow-placeholder"' in data["text/html"]


# -- options ------------------------------------------------------------------------------------------------------


def test_options_are_checked_when_set() -> None:
    with pytest.raises(ValueError, match="page_size"):
        display.options.page_size = 0
    with pytest.raises(ValueError, match="max_chars"):
        display.options.max_chars = -5
    with pytest.raises(ValueError, match="preview_chars"):
        display.options.preview_chars = -1
    with pytest.raises(AttributeError, match="no option 'widget'"):
        display.options.widget = False  # type: ignore[attr-defined]
    assert display.options.page_size == 10


def test_using_restores_the_options() -> None:
    with display.using(widgets=False, page_size=3) as opts:
        assert opts is display.options and not opts.widgets and opts.page_size == 3
    assert display.options.widgets and display.options.page_size == 10
    with pytest.raises(ValueError), display.using(page_size=-1):
        pass
    assert display.options.page_size == 10


# -- no network at display time -------------------------------------------------------------------------------------


def test_displaying_results_makes_no_requests(ip: Any, sdk_server: Any) -> None:
    display.options.widgets_outside_kernel = True
    with DevKnowClient(sdk_server.url) as client:
        hits = client.search_documents("bucket region")
        answer = client.answer_query("Which region should a bucket use?")
        before = len(sdk_server.calls())
        for obj in (hits, hits[0], answer):
            data, _ = ip.display_formatter.format(obj)
            assert WIDGET_MIME in data
        assert len(sdk_server.calls()) == before


# -- a real kernel -----------------------------------------------------------------------------------------------


SETUP = f"""
from devknow_jupyter.models import SearchResults, DocumentChunk, ResultInfo
from devknow_jupyter import display
hits = SearchResults("bucket region", [DocumentChunk({BUCKETS!r}, "1", "## Choose a region\\n\\nKeep it close.")],
                     ResultInfo("local", "local", 0.01, False, []))
"""


def test_in_a_kernel_the_widget_and_its_static_twin_are_displayed(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell("hits"),
        nbformat.v4.new_code_cell("display.options.widgets = False\nhits"),
    ]
    root = Path(__file__).resolve().parent.parent
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(root)}})
    client.execute()
    with_widgets = nb.cells[1].outputs[0]["data"]
    assert set(with_widgets) == {*STATIC, WIDGET_MIME}
    assert with_widgets["text/plain"].startswith("1 hit for 'bucket region'")
    assert set(nb.cells[2].outputs[0]["data"]) == STATIC


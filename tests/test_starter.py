"""The starter pack: well-formed documents of our own, and the questions a new user asks find them offline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.errors import DocumentNotFoundError
from devknow_jupyter.local.frontmatter import split_front_matter
from devknow_jupyter.local.paths import STARTER_DIR
from devknow_jupyter.tools import MAX_NAMES_PER_CALL

HOST = "devknow-jupyter.dev"
PAGES = sorted(STARTER_DIR.glob("*.md"))
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def _prose_lines(body: str) -> list[str]:
    """The lines outside fenced code blocks (a `# comment` in code is not a heading)."""
    lines, in_fence = [], False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            lines.append(line)
    return lines


def _name(slug: str) -> str:
    return f"documents/{HOST}/guide/{slug}"


def test_pack_size() -> None:
    assert 15 <= len(PAGES) <= 30
    assert [path for path in STARTER_DIR.iterdir() if path.suffix != ".md"] == []


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.stem)
def test_page_is_well_formed(path: Path) -> None:
    page = split_front_matter(path.read_text(encoding="utf-8"))
    assert page.get("name") == _name(path.stem)
    assert page.get("uri") == f"https://{HOST}/guide/{path.stem}"
    assert page.get("title") and page.get("description")
    assert len(_FENCE.findall(page.body)) % 2 == 0, "every code fence is closed"
    lines = _prose_lines(page.body)
    assert lines[0] == f"# {page.get('title')}", "the page opens with its title as the only level-1 heading"
    assert sum(line.startswith("# ") for line in lines) == 1
    assert sum(line.startswith("## ") for line in lines) >= 2
    words = len(page.body.split())
    assert 150 <= words <= 600, f"{words} words"


def test_names_and_titles_are_unique() -> None:
    metas = [split_front_matter(path.read_text(encoding="utf-8")) for path in PAGES]
    names = [meta.get("name") for meta in metas]
    titles = [meta.get("title") for meta in metas]
    assert len(set(names)) == len(names)
    assert len(set(titles)) == len(titles)


def test_facts_are_consistent_with_the_code() -> None:
    text = {path.stem: path.read_text(encoding="utf-8") for path in PAGES}
    assert f"at most **{MAX_NAMES_PER_CALL} names per call**" in text["get-documents-tool"]
    assert "**50 per day**, **10 per minute**" in text["quotas-and-limits"]
    assert "X-Goog-Api-Key" in text["mcp-server"]
    # No page holds anything that looks like a real key.
    for stem, body in text.items():
        assert not re.search(r"AIza[0-9A-Za-z_\-]{20,}", body), stem


QUESTIONS = [
    ("create an API key", "create-an-api-key"),
    ("restrict an API key to one API", "create-an-api-key"),
    ("answer quota", "answer-query-tool"),
    ("get_documents limit", "get-documents-tool"),
    ("How many names can get_documents take?", "get-documents-tool"),
    ("What happens when the answer quota is used up?", "magic-devask"),
    ("Which header carries the API key?", "mcp-server"),
    ("search documents", "search-documents-tool"),
    ("SSL_CERT_FILE corporate proxy", "errors-network"),
    ("401 403 authentication error", "errors-authentication"),
    ("429 RESOURCE_EXHAUSTED", "errors-quota"),
    ("unknown document NOT_FOUND", "errors-unknown-document"),
    ("connect Gemini CLI", "connect-gemini-cli"),
    ("devknow serve token", "devknow-serve"),
    ("%config DevKnowMagics timeout", "magic-devknow"),
    ("enable the Developer Knowledge API with gcloud", "enable-the-api"),
    ("document names URL mapping", "document-names"),
]


@pytest.fixture(scope="module")
def local_client(tmp_path_factory: pytest.TempPathFactory) -> DevKnowClient:
    folder = tmp_path_factory.mktemp("starter-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEVKNOW_CACHE_DIR", str(folder))
        client = DevKnowClient("local", cache=False)
    yield client
    client.close()


@pytest.mark.parametrize(("question", "slug"), QUESTIONS)
def test_key_questions_find_the_right_page(local_client: DevKnowClient, question: str, slug: str) -> None:
    hits = local_client.search_documents(question)
    assert _name(slug) in hits.names[:3], f"{question!r} gave {hits.names[:5]}"


def test_hits_open_as_whole_pages(local_client: DevKnowClient) -> None:
    hits = local_client.search_documents("get_documents limit")
    docs = local_client.get_documents(hits.names[:3])
    assert [doc.name for doc in docs] == hits.names[:3]
    page = split_front_matter((STARTER_DIR / "get-documents-tool.md").read_text(encoding="utf-8"))
    doc = next(doc for doc in docs if doc.name == _name("get-documents-tool"))
    assert doc.title == page.get("title")
    assert doc.uri == page.get("uri")
    assert doc.description == page.get("description")
    assert "20 names per call" in doc.content


def test_every_page_is_served_by_its_name(local_client: DevKnowClient) -> None:
    names = [_name(path.stem) for path in PAGES]
    docs = local_client.get_documents(names)  # more than 20: two batches
    assert [doc.name for doc in docs] == names
    with pytest.raises(DocumentNotFoundError) as caught:
        local_client.get_documents([names[0], _name("no-such-page")])
    assert caught.value.missing == [_name("no-such-page")]
    assert [doc.name for doc in caught.value.documents] == [names[0]]


def test_offline_answer_cites_the_quota_pages(local_client: DevKnowClient) -> None:
    answer = local_client.answer_query("What is the daily answer quota?")
    assert answer.extractive
    assert "50" in answer.answer_text
    assert {_name("answer-query-tool"), _name("quotas-and-limits")} & set(answer.references)

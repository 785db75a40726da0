"""The ``semantic`` extra: wordllama's in-wheel static embeddings, loaded with the network blocked, fused
with the lexical score. Skipped (with the reason) where the extra is not installed."""

from __future__ import annotations

import socket
import sys
import textwrap
from pathlib import Path

import pytest

from devknow_jupyter.local import semantic
from devknow_jupyter.local.index import LocalIndex

pytestmark = pytest.mark.skipif(
    semantic.model_files() is None, reason="the semantic extra is not installed (pip install '.[semantic]')"
)

QUESTION = "abort an operation that takes too long"  # in other words than the page that answers it
ANSWER = "documents/ops.test/halt"


def page(folder: Path, slug: str, title: str, body: str) -> None:
    front = f"---\nname: documents/ops.test/{slug}\nuri: https://ops.test/{slug}\ntitle: {title}\n---\n"
    (folder / f"{slug}.md").write_text(front + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """No network but loopback for this test: every other connect fails and is recorded."""
    attempts: list[object] = []
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if self.family == socket.AF_UNIX or host in ("127.0.0.1", "::1", "localhost"):
            return connect(self, address)
        attempts.append(address)
        raise OSError(f"network blocked in this test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(semantic, "_loaded", [])  # load the model here, under the block
    return attempts


def test_the_model_loads_offline_and_improves_a_paraphrased_question(tmp_path: Path, offline: list[object]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page(
        docs,
        "halt",
        "Halting slow jobs",
        "# Halting slow jobs\n\nWhen a job runs past its deadline, terminate it with job.cancel(). A cancelled "
        "job frees its worker and reports that it was interrupted.\n",
    )
    page(
        docs,
        "oplog",
        "Operation log",
        "# Operation log\n\nEvery operation takes one line in the operation log. The log keeps each operation "
        "for a week, and reading it takes no time.\n",
    )
    page(docs, "colors", "Theme colours", "# Theme colours\n\nPick a palette for the dashboard: dark or light.\n")

    with LocalIndex(tmp_path / "lexical.sqlite3", semantic=False) as lexical:
        lexical.add_folder(docs)
        assert ANSWER not in [hit["parent"] for hit in lexical.search(QUESTION)]
    with LocalIndex(tmp_path / "fused.sqlite3", semantic=True) as fused:
        fused.add_folder(docs)  # embeds the pages (in batches) and stores their vectors
        assert ANSWER in [hit["parent"] for hit in fused.search(QUESTION)][:2]
    with LocalIndex(tmp_path / "fused.sqlite3", semantic=True) as reopened:  # vectors read back, not recomputed
        assert ANSWER in [hit["parent"] for hit in reopened.search(QUESTION)][:2]

    model = semantic.default_embedder()
    assert model is not None and model.dimensions == 256
    vectors = model.embed(["cancel a slow job", "stop a long task", "dark palette"])
    assert vectors.shape == (3, 256) and abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-4
    assert offline == []  # nothing tried the network
    assert "wordllama" not in sys.modules and "huggingface_hub" not in sys.modules  # the files are read directly


def test_switched_off_it_ranks_lexically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_SEMANTIC", "0")
    assert not semantic.enabled()
    monkeypatch.setenv("DEVKNOW_SEMANTIC", "1")
    assert semantic.enabled()


# Pages whose glue words ("how do I", "is there", "can I") are common here; one page is written in them.
GLUE_PAGES = {
    "halt": (
        "Halting slow jobs",
        "When a job runs past its deadline, terminate it with job.cancel(). A cancelled job frees its worker and "
        "reports that it was interrupted.",
    ),
    "faq": (
        "Questions about themes",
        "How do I pick a palette? Is there one for the whole dashboard? What is the one for a chart? How can I do "
        "that from the command line? Can I keep it?",
    ),
    "colors": (
        "Theme colours",
        "Pick a palette for the dashboard: dark or light. How do I know which one is in use? The status bar shows it.",
    ),
    "queues": (
        "Queues",
        "A queue holds the jobs that wait for a worker. Is there a list of them? The queue page lists them in order: "
        "first in, first out.",
    ),
    "logs": (
        "Operation log",
        "Every operation takes one line in the log. How do I read it? Open the log page; can I filter it? Type a "
        "word in the box.",
    ),
}
# None of its content words is on any page: the dense scores alone decide.
GLUE_QUESTION = "how do I kill something that hangs? is there anything I can do?"


def glue_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for slug, (title, body) in GLUE_PAGES.items():
        page(docs, slug, title, f"# {title}\n\n{body}\n")
    return docs


def test_the_question_s_glue_words_weigh_little_so_its_meaning_finds_the_page(tmp_path: Path) -> None:
    # With every token weighed alike, the page written in the question's glue words came first.
    with LocalIndex(tmp_path / "fused.sqlite3", semantic=True) as index:
        index.add_folder(glue_docs(tmp_path))
        assert index.search(GLUE_QUESTION)[0]["parent"] == ANSWER


def test_an_index_with_the_older_mean_vectors_still_ranks(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with LocalIndex(path, semantic=False) as index:
        index.add_folder(glue_docs(tmp_path))
    model = semantic.default_embedder()
    assert model is not None
    with sqlite3.connect(path) as db:  # what an index made before the SIF weights holds: mean vectors only
        rows = db.execute("SELECT id, title, description, content FROM documents").fetchall()
        vectors = model.embed([model.page_text(title, description, content) for _, title, description, content in rows])
        db.executemany(
            "INSERT INTO page_vectors (doc_id, model, vector) VALUES (?, ?, ?)",
            [(row[0], semantic.LEGACY_MODEL_NAME, vector.tobytes()) for row, vector in zip(rows, vectors, strict=True)],
        )
    with LocalIndex(path, semantic=True, read_only=True) as pack:  # can't be written: ranks with the mean vectors
        hits = [hit["parent"] for hit in pack.search(GLUE_QUESTION)]
        assert hits[0] == "documents/ops.test/faq" and ANSWER in hits  # the mean's ranking, not re-embedded
    with LocalIndex(path, semantic=True) as index:  # writable: every page embedded again, the old vectors dropped
        assert index.search(GLUE_QUESTION)[0]["parent"] == ANSWER
    with sqlite3.connect(path) as db:
        models = dict(db.execute("SELECT model, count(*) FROM page_vectors GROUP BY model"))
        counts = db.execute("SELECT value FROM meta WHERE key = ?", (f"token_counts {semantic.MODEL_NAME}",)).fetchone()
    assert models == {semantic.MODEL_NAME: len(GLUE_PAGES)}
    assert counts is not None and len(counts[0]) == len(model.table) * 8

"""``pack add`` into an index with no pages takes the pack's stored ranker (page ids moved) instead of building
one: the ranker is the one a build from the copied term counts makes, byte for byte; into an index that has
pages, the ranker is built as before. Real packs built from Markdown folders, real SQLite files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devknow_jupyter import packs
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.ranker import LexicalRanker

TOPICS = ("deploy release branch", "service account keys", "release notes checklist", "command line flags")


def _pack(where: Path, name: str, pages: int) -> Path:
    folder = where / name
    folder.mkdir()
    for number in range(pages):
        topic = TOPICS[number % len(TOPICS)]
        (folder / f"page{number}.md").write_text(
            f"---\nname: documents/{name}.test/page{number}\ntitle: Page {number} on {topic}\n---\n"
            f"# {topic.title()}\n\nThe {topic} of `{name}_{number}` and the service account of page {number}.\n",
            encoding="utf-8",
        )
    return packs.build([folder], where / f"{name}.pack").path


def _parts(index: LocalIndex) -> dict[str, bytes]:
    return {part: bytes(data) for part, data in index.store.db.execute("SELECT part, data FROM ranker_snapshot")}


def _built(index: LocalIndex) -> dict[str, bytes]:
    ranker = LexicalRanker.build(index.snapshot._stored_terms(), index.snapshot.ranking)
    return {part: bytes(data) for part, data in ranker.to_parts().items()}


def _counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = LexicalRanker.build.__func__

    def counted(cls, *args, **kwargs):
        calls.append(1)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(LexicalRanker, "build", classmethod(counted))
    return calls


def test_into_an_empty_index_the_packs_ranker_is_taken_and_equals_a_build(tmp_path: Path, monkeypatch) -> None:
    pack = _pack(tmp_path, "notes", 12)
    index = LocalIndex(tmp_path / "index.sqlite3")
    try:
        index.add_documents([{"name": "documents/x.test/old", "content": "an old fetched page"}], "fetched")
        index.remove_documents("fetched")  # page ids now start past 1: the pack's ids are moved
        builds = _counting_builds(monkeypatch)
        report = packs.add(pack, index=index)
        assert report.pages == 12 and builds == []
        assert index.store.meta("ranker_generation") == index.store.generation()
        assert _parts(index) == _built(index)
        hits = index.search("service account keys", 3)
        assert hits and hits[0]["parent"].startswith("documents/notes.test/page")
    finally:
        index.close()


def test_into_an_index_with_pages_the_ranker_is_built(tmp_path: Path, monkeypatch) -> None:
    first, second = _pack(tmp_path, "first", 5), _pack(tmp_path, "second", 7)
    index = LocalIndex(tmp_path / "index.sqlite3")
    try:
        packs.add(first, index=index)
        builds = _counting_builds(monkeypatch)
        packs.add(second, index=index)
        assert len(builds) == 1 and _parts(index) == _built(index)
        assert len(index.snapshot.current().ranker) == 12
    finally:
        index.close()

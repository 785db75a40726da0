"""``devknow index`` takes JSON Lines: one document per line, bad lines reported with their numbers.

The small files are written here in our own words; the shared corpus (2,502 pages, ``corpus.jsonl``)
is indexed whole where it is present.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import main
from devknow_jupyter.local.index import LocalIndex

from .conftest import SHARED_CORPUS

KITE = "documents/kites.example/flying"
REEL = "documents/kites.example/reels"


def line(**fields: object) -> str:
    return json.dumps(fields)


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def kites(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "kites.jsonl",
        [
            line(
                name=KITE,
                uri="https://kites.example/flying",
                title="Fly a kite",
                description="Launching in light wind.",
                content="# Fly a kite\n\nFace away from the wind and let the line out slowly.\n",
            ),
            line(uri="https://kites.example/reels", content="# Reels\n\nA reel stores the flying line neatly.\n"),
            '{"name": "documents/kites.example/broken", "content": ',  # 3: cut short
            "[1, 2, 3]",  # 4: not an object
            line(name="documents/kites.example/empty", content="   "),  # 5: no content
            line(title="No name", content="# Orphan\n\nNobody named this page.\n"),  # 6: no name, no uri
            "",  # blank lines are ignored
            line(name=KITE, content="# Again\n\nA second page with the same name.\n"),  # 8: duplicate
            line(name="documents/kites.example/wordy", content="# Wordy\n\n" + "string " * 400),  # 9: too long
            line(name="documents/kites.example/typed", content=42),  # 10: not a string
        ],
    )


def test_json_lines_are_indexed_and_bad_lines_reported(kites: Path, tmp_path: Path) -> None:
    with LocalIndex(tmp_path / "index.sqlite3", max_file_bytes=1000) as index:
        report = index.add_folder(kites)
        assert report.added == 2 and report.chunks >= 2
        assert dict(report.skipped) == {
            f"{kites}:3": "not valid JSON (Expecting value at column 54)",
            f"{kites}:4": "not a JSON object (a list)",
            f"{kites}:5": "missing field: content (or it is empty)",
            f"{kites}:6": "missing field: name (or uri)",
            f"{kites}:8": f"duplicate name {KITE!r}: line 1 has it already",
            f"{kites}:9": "too large: the line is longer than 1000 bytes, the limit",
            f"{kites}:10": "content: not a string",
        }
        (kite, reel) = index.get([KITE, REEL])
        assert kite["title"] == "Fly a kite" and kite["description"] == "Launching in light wind."
        assert reel["uri"] == "https://kites.example/reels" and reel["title"] == "Reels"  # from the first heading
        assert index.search("let the line out slowly")[0]["parent"] == KITE
        assert index.verify() == []

        again = index.add_folder(kites)  # unchanged file: nothing read again
        assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 2)

        lines = kites.read_text().splitlines()
        lines[0] = line(name=KITE, title="Fly a kite", content="# Fly a kite\n\nRun upwind with the spool.\n")
        del lines[1]  # the reels page is gone
        write_jsonl(kites, lines)
        changed = index.add_folder(kites)
        assert (changed.added, changed.updated, changed.removed) == (0, 1, 1)
        assert index.names() == [KITE] and index.search("spool")[0]["parent"] == KITE


def test_jsonl_files_inside_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "guide.md").write_text("# Guide\n\nHow to string a kite.\n")
    write_jsonl(folder / "sub" / "pages.JSONL", [line(name=REEL, content="# Reels\n\nWind the line on a reel.\n")])
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        report = index.add_folder(folder)
        assert report.added == 2 and report.skipped == []
        assert index.names() == [REEL, "documents/local/guide"]
        assert index.add_folder(folder).unchanged == 2
        (folder / "sub" / "pages.JSONL").unlink()
        assert index.add_folder(folder).removed == 1 and index.names() == ["documents/local/guide"]


def test_a_name_taken_by_another_file_is_a_reported_duplicate(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [line(name=KITE, content="# A\n\nfirst.\n")])
    write_jsonl(folder / "b.jsonl", [line(name=KITE, content="# B\n\nsecond.\n")])
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        report = index.add_folder(folder)
    assert report.added == 1
    reason = f"duplicate name {KITE!r}: {folder / 'a.jsonl'} has it already"
    assert report.skipped == [(f"{folder / 'b.jsonl'}:1", reason)]


def test_devknow_index_a_jsonl_file(kites: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(kites)]) == 0
    out = capsys.readouterr().out
    assert "3 added" in out and "6 skipped" in out  # the long line fits the default 4 MB limit
    assert f"skipped {kites}:3: not valid JSON" in out
    assert f"skipped {kites}:8: duplicate name" in out
    assert main(["--endpoint", "local", "search", "let", "the", "line", "out"]) == 0
    assert KITE in capsys.readouterr().out
    assert main(["--endpoint", "local", "get", REEL]) == 0
    assert "A reel stores the flying line neatly." in capsys.readouterr().out
    with DevKnowClient(f"local:{kites}") as client:  # a .jsonl file is an endpoint too
        assert client.get_documents([KITE])[0].title == "Fly a kite"


@pytest.mark.corpus
def test_the_shared_corpus_jsonl(tmp_path: Path) -> None:
    corpus = SHARED_CORPUS / "corpus.jsonl"
    if not corpus.is_file():
        pytest.skip("../shared/corpus/corpus.jsonl is not present")
    expected = sum(1 for text in corpus.read_text(encoding="utf-8").splitlines() if text.strip())
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        report = index.add_folder(corpus)
        assert report.added + len(report.skipped) == expected == 2502
        assert report.added >= 2490, report.skipped[:5]
        assert index.verify() == []
        assert index.search("go mod init")
        assert index.add_folder(corpus).unchanged == report.added


def test_a_page_file_keeps_a_name_that_a_json_line_repeats(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    write_jsonl(folder / "a-first-by-name.jsonl", [line(name=KITE, content="# From the line\n\nline text.\n")])
    (folder / "z-page.md").write_text(f"---\nname: {KITE}\n---\n# From the page\n\npage text.\n")
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        report = index.add_folder(folder)
        assert index.get([KITE])[0]["title"] == "From the page"
        reason = f"duplicate name {KITE!r}: {folder / 'z-page.md'} has it already"
        assert report.skipped == [(f"{folder / 'a-first-by-name.jsonl'}:1", reason)]

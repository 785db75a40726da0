"""Broken local state: a damaged index, a full disk, an unusable cache folder.

Each ends in one line (what, where, what to do) and exit status 1 from ``devknow index`` and
``devknow search``, never a traceback and never an index silently kept in memory; and a write cut
short leaves the index as its last committed batch left it (``LocalIndex.verify()`` finds nothing,
every listed page can be fetched and found).

The full disk is real in a child process: ``RLIMIT_FSIZE`` caps the size of any file it writes
(Python ignores SIGXFSZ, so the write fails with EFBIG as on a full disk). In-process, SQLite's
``max_page_count`` caps the file the same way.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import EXIT_STATUS, main
from devknow_jupyter.errors import LocalIndexError
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.paths import default_index_path

from .conftest import ROOT

#: What `devknow` exits with for broken local state (one status per error class).
LOCAL_INDEX_STATUS = EXIT_STATUS[LocalIndexError]


def write_pages(folder: Path, count: int, words: int = 300) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        body = " ".join(f"lantern{number} relay{number % 7} greenhouse" for _ in range(words // 3))
        (folder / f"page{number:03}.md").write_text(f"# Page {number}\n\nOnly here: marker{number}.\n\n{body}\n")
    return folder


def one_line(stderr: str) -> str:
    lines = [text for text in stderr.splitlines() if text.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def consistent(index: LocalIndex) -> int:
    """Check that what the index lists, it can fetch and find; returns the number of documents."""
    assert index.verify() == []
    names = index.names()
    documents = index.get(names)
    assert [doc["name"] for doc in documents] == names
    for doc in documents:
        marker = doc["content"].split("Only here: ", 1)[1].split(".", 1)[0]
        assert index.search(marker, limit=1)[0]["parent"] == doc["name"]
    return len(names)


def run_cli(*args: str, env: dict[str, str], limit_bytes: int):
    """``devknow ARGS`` in a child process that may write files of at most ``limit_bytes``."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "devknow_jupyter", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )


# -- a damaged index ----------------------------------------------------------------------------------


def damage_table(path: Path, table: str) -> None:
    """Overwrite the root page of ``table`` with garbage, as a failing disk or a stray write would."""
    with sqlite3.connect(path) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    db.close()
    with path.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xa5" * page_size)


def test_a_damaged_index_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = write_pages(tmp_path / "docs", 30)
    assert main(["index", str(docs)]) == 0
    capsys.readouterr()
    damage_table(default_index_path(), "documents")

    assert main(["index", str(docs)]) == LOCAL_INDEX_STATUS
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"devknow: error: Could not index {docs}: the local index {default_index_path()} is damaged")
    assert "move it aside or delete it, then run `devknow index` again" in line
    assert main(["--endpoint", "local", "search", "marker3"]) == LOCAL_INDEX_STATUS
    assert "is damaged" in one_line(capsys.readouterr().err)

    default_index_path().unlink()  # what the line says to do; then everything works again
    assert main(["index", str(docs)]) == 0 and main(["--endpoint", "local", "search", "marker3"]) == 0
    assert "page003" in capsys.readouterr().out


def test_a_default_index_that_is_not_a_database_is_rebuilt_and_said(tmp_path: Path, capsys) -> None:
    docs = write_pages(tmp_path / "docs", 3)
    path = default_index_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all " * 200)
    assert main(["index", str(docs)]) == 0
    out = capsys.readouterr().out
    assert f"warning {path}: {path} is not a devknow index" in out
    assert re.search(r"moved aside to index\.sqlite3\.damaged-\d+ and rebuilt", out) and "3 added" in out
    assert len(list(path.parent.glob("index.sqlite3.damaged-*"))) == 1


# -- a full disk ----------------------------------------------------------------------------------------


def test_a_full_disk_mid_index_keeps_the_last_complete_batch(tmp_path: Path) -> None:
    docs = write_pages(tmp_path / "docs", 60)
    with LocalIndex(tmp_path / "index.sqlite3", batch_documents=5) as index:
        pages = index.store.db.execute("PRAGMA page_count").fetchone()[0]
        index.store.db.execute(f"PRAGMA max_page_count = {pages + 40}")  # room for a few batches, not all
        with pytest.raises(LocalIndexError) as caught:
            index.add_folder(docs)
        assert caught.value.kind == "full"
        assert caught.value.message.startswith(f"Could not index {docs}: the disk holding {index.path} is full;")
        kept = consistent(index)
        assert 0 < kept < 60 and kept % 5 == 0  # whole batches only: nothing half-written

        index.store.db.execute("PRAGMA max_page_count = 1073741823")  # space again: the next run completes the work
        report = index.add_folder(docs)
        assert report.added == 60 - kept and report.unchanged == kept
        assert consistent(index) == 60


def test_a_full_disk_in_devknow_index_is_one_line_and_exit_1(tmp_path: Path) -> None:
    docs = write_pages(tmp_path / "docs", 80)
    cache = tmp_path / "cache"
    done = run_cli("index", str(docs), env={"DEVKNOW_CACHE_DIR": str(cache)}, limit_bytes=400_000)
    assert done.returncode == LOCAL_INDEX_STATUS, done.stdout + done.stderr
    line = one_line(done.stderr)
    assert line.startswith(f"devknow: error: Could not index {docs}: ")
    assert "full" in line and "free some space" in line
    with LocalIndex(cache / "index.sqlite3") as index:  # what was committed is whole
        kept = consistent(index)
        assert kept < 80
        assert index.add_folder(docs).added == 80 - kept
        assert consistent(index) == 80


# -- an unusable cache folder ------------------------------------------------------------------------------


def test_a_file_where_the_cache_folder_should_be(tmp_path: Path, monkeypatch, capsys) -> None:
    docs = write_pages(tmp_path / "docs", 3)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file, not a folder")
    for cache in (blocker, blocker / "sub"):
        monkeypatch.setenv("DEVKNOW_CACHE_DIR", str(cache))
        assert main(["index", str(docs)]) == LOCAL_INDEX_STATUS
        line = one_line(capsys.readouterr().err)
        assert f"{blocker} is a file, where the local index's folder should be" in line
        assert "set DEVKNOW_CACHE_DIR to a folder you can write" in line
        assert main(["search", "marker1"]) == LOCAL_INDEX_STATUS  # no key: the local index, which can't be opened
        assert "is a file" in one_line(capsys.readouterr().err)
    with pytest.raises(LocalIndexError, match="is a file"):  # not an index kept in memory
        DevKnowClient("local")


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder nobody may write to, root included (root ignores permissions, not the immutable flag)."""
    folder = tmp_path / "read-only-cache"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if not chattr or subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("cannot make a folder read-only for root here (no chattr +i)")
    yield folder
    subprocess.run([chattr, "-i", str(folder)], check=True)


def test_a_read_only_cache_folder(tmp_path: Path, read_only_folder: Path, monkeypatch, capsys) -> None:
    docs = write_pages(tmp_path / "docs", 3)
    monkeypatch.setenv("DEVKNOW_CACHE_DIR", str(read_only_folder))
    assert main(["index", str(docs)]) == LOCAL_INDEX_STATUS
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"devknow: error: Could not open the local index: the local index {read_only_folder}")
    assert "can't be written" in line and "set DEVKNOW_CACHE_DIR to a folder you can write" in line
    assert main(["search", "marker1"]) == LOCAL_INDEX_STATUS
    assert "can't be written" in one_line(capsys.readouterr().err)
    assert list(read_only_folder.iterdir()) == []


def test_a_json_lines_file_cut_short_is_read_again_next_time(tmp_path: Path) -> None:
    # The file's rows carry its mtime only once every line is in, so a failed run can't pass for complete.
    pages = tmp_path / "pages.jsonl"
    body = "x " * 800
    lines = [
        json.dumps({"name": f"documents/pages.example/p{n}", "content": f"# P{n}\n\nOnly here: marker{n}.\n\n{body}"})
        for n in range(60)
    ]
    pages.write_text("\n".join(lines) + "\n")
    with LocalIndex(tmp_path / "index.sqlite3", batch_documents=5) as index:
        pages_now = index.store.db.execute("PRAGMA page_count").fetchone()[0]
        index.store.db.execute(f"PRAGMA max_page_count = {pages_now + 40}")
        with pytest.raises(LocalIndexError, match="is full"):
            index.add_folder(pages)
        kept = consistent(index)
        assert 0 < kept < 60 and kept % 5 == 0
        index.store.db.execute("PRAGMA max_page_count = 1073741823")
        report = index.add_folder(pages)
        assert (report.added, report.unchanged) == (60 - kept, kept)
        assert consistent(index) == 60
        assert index.add_folder(pages).unchanged == 60

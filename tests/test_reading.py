"""A careful indexer: only regular files inside the folder are read, at most the size limit, every skip reported.

The hostile folder is real: symlinks to ``/dev/zero``, ``/dev/urandom`` and to a file outside the folder,
a FIFO named ``x.md``, a socket, a ``/proc`` file whose stat size (0) says nothing of its content, and a
file that grows after it was checked. ``devknow serve --docs`` over that folder must not serve what was
skipped.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import main
from devknow_jupyter.errors import DocumentNotFoundError
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.reading import Unreadable, open_document, walk_folder

from .test_serve import start_serve

SECRET_WORD = "zanzibarquokka"  # appears only in the file outside the folder
OUTSIDE_NAME = "documents/local/outside"
pytestmark = pytest.mark.timeout(60)  # a FIFO that is opened blocks forever: fail, don't hang


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A folder with one good page and every kind of file an indexer must not read."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good page\n\nThe greenhouse relay pairs with a sensor.\n")
    outside = tmp_path / "private.md"
    outside.write_text(f"# Private notes\n\nThe password hint is {SECRET_WORD}.\n")
    (folder / "outside.md").symlink_to(outside)
    (folder / "zero.md").symlink_to("/dev/zero")
    (folder / "random.md").symlink_to("/dev/urandom")
    (folder / "dangling.md").symlink_to(folder / "gone.md")  # its target was deleted
    os.mkfifo(folder / "x.md")
    (folder / "inside-link.md").symlink_to(folder / "good.md")  # a link within the folder is fine
    linked_dir = tmp_path / "elsewhere"
    linked_dir.mkdir()
    (linked_dir / "far.md").write_text(f"# Far page\n\nAlso {SECRET_WORD}.\n")
    (folder / "more").symlink_to(linked_dir, target_is_directory=True)
    return folder


def reasons(report) -> dict[str, str]:
    return {Path(path).name: reason for path, reason in report.skipped}


def test_only_regular_files_inside_the_folder_are_indexed(hostile: Path, tmp_path: Path) -> None:
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        report = index.add_folder(hostile)
        skipped = reasons(report)
        assert skipped["outside.md"].startswith(f"a symlink to {tmp_path / 'private.md'}, outside the folder")
        assert "outside the folder" in skipped["zero.md"] and "/dev/zero" in skipped["zero.md"]
        assert "outside the folder" in skipped["random.md"]
        assert skipped["x.md"] == "not a regular file (a FIFO)"
        assert skipped["dangling.md"].startswith("a broken symlink")
        assert skipped["more"].startswith("a symlinked folder, not followed")
        assert report.added == 2  # good.md and inside-link.md
        assert index.search(SECRET_WORD) == []
        assert OUTSIDE_NAME not in index.names()


def test_follow_symlinks_reads_files_elsewhere_but_never_devices_or_fifos(hostile: Path, tmp_path: Path) -> None:
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        report = index.add_folder(hostile, follow_symlinks=True)
        skipped = reasons(report)
        assert skipped["zero.md"] == "not a regular file (a character device)"
        assert skipped["random.md"] == "not a regular file (a character device)"
        assert skipped["x.md"] == "not a regular file (a FIFO)"
        assert "outside.md" not in skipped and "more" not in skipped
        assert {hit["parent"] for hit in index.search(SECRET_WORD)} == {OUTSIDE_NAME, "documents/local/more/far"}
        # Remembered for the folder: a later run without the option keeps the same rule ...
        assert index.add_folder(hostile).removed == 0
        # ... until it is turned off again, when the outside pages go.
        again = index.add_folder(hostile, follow_symlinks=False)
        assert again.removed == 2 and index.search(SECRET_WORD) == []


def test_a_socket_is_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(folder / "s.md"))
        scan = walk_folder(folder.resolve(), follow_symlinks=True)
    assert scan.files == [] and scan.skipped == [(str(folder.resolve() / "s.md"), "not a regular file (a socket)")]


def test_the_limit_is_read_not_trusted_from_stat(tmp_path: Path) -> None:
    # /proc files say size 0 in stat; their content is larger than this limit.
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "status.md").symlink_to("/proc/self/status")
    (folder / "small.md").write_text("# Small\n\nshort.\n")
    with LocalIndex(tmp_path / "index.sqlite3", max_file_bytes=200) as index:
        assert os.stat(folder / "status.md").st_size == 0
        report = index.add_folder(folder, follow_symlinks=True)
        assert reasons(report) == {"status.md": "too large: more than 200 bytes, the limit"}
        assert index.names() == ["documents/local/small"]


def test_a_file_that_grows_after_the_check_is_cut_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "growing.md"
    path.write_text("# Growing\n\nsmall at first.\n")
    with open_document(path, tmp_path) as opened:
        assert opened.stat.st_size < 100  # what the check saw
        with path.open("a") as writer:
            writer.write("more words " * 1000)  # then it grows past the limit before it is read
        with pytest.raises(Unreadable, match="too large: more than 100 bytes"):
            opened.read(100)


def test_a_fifo_opened_directly_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "x.md"
    os.mkfifo(fifo)
    with pytest.raises(Unreadable, match=r"not a regular file \(a FIFO"):
        open_document(fifo, tmp_path)


def test_devknow_index_reports_every_skip(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(hostile)]) == 0
    out = capsys.readouterr().out
    for name in ("outside.md", "zero.md", "random.md", "x.md", "dangling.md", "more"):
        assert f"skipped {hostile / name}: " in out, name
    assert "2 added" in out and "6 skipped" in out
    assert main(["index", "--follow-symlinks", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert f"skipped {hostile / 'zero.md'}: not a regular file (a character device)" in out
    assert "2 added" in out  # outside.md and more/far.md


def test_devknow_serve_does_not_serve_a_skipped_target(hostile: Path, tmp_path: Path) -> None:
    served = start_serve(tmp_path, hostile)
    try:
        with DevKnowClient(served.url) as client:
            assert "documents/local/good" in client.search_documents("greenhouse relay sensor").names
            assert len(client.search_documents(SECRET_WORD)) == 0
            with pytest.raises(DocumentNotFoundError):
                client.get_documents([OUTSIDE_NAME])
            answer = client.answer_query(f"what is the {SECRET_WORD} hint")
            assert SECRET_WORD not in answer.answer_text
    finally:
        served.stop()

"""Errors to docs (issue 27): a pasted traceback that starts with a frame line. The pages are written here, in our
own words."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from devknow_jupyter.cli import main

ENCODING_PAGE = "documents/agents.test/models/relay"
MESSAGE = "UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 1043: character maps to <undefined>"
POSIX_FRAME = 'File "/home/me/venv/lib/python3.11/site-packages/relaykit/__init__.py", line 1043, in <module>'
WINDOWS_FRAME = r'File "C:\Users\me\venv\Lib\site-packages\relaykit\__init__.py", line 1043, in <module>'


def first_hit(out: str) -> str:
    """The page of the first hit in ``devknow search`` output or a hit list's text (by name or URL)."""
    found = re.search(r"agents\.test/([\w/-]+)", out)
    assert found, out
    return f"documents/agents.test/{found.group(1)}"


def page(folder: Path, slug: str, title: str, body: str) -> None:
    path = folder / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"---\nname: documents/agents.test/{slug}\nuri: https://agents.test/{slug}\ntitle: {title}\n---\n"
    path.write_text(front + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A page about the relay kit's decode error on Windows, among pages full of what a frame line holds."""
    folder = tmp_path / "docs"
    page(
        folder,
        "models/relay",
        "Relay kit model connector",
        """
        # Relay kit model connector

        On Windows the relay kit may fail with a `UnicodeDecodeError` when it reads its cached files: the
        charmap codec cannot decode a byte that the default code page does not map. Set `PYTHONUTF8=1`.
        """,
    )
    for number in range(4):
        page(
            folder,
            f"setup/venv-{number}",
            f"Set up a virtual environment, part {number}",
            f"""
            # Set up a virtual environment, part {number}

            Create a venv in your home folder: the file lib/python3.11/site-packages holds each module; a line
            in __init__.py runs when the module is imported. Users on Windows find it under Users, Lib.
            """,
        )
    return folder


@pytest.mark.parametrize("frame", [POSIX_FRAME, WINDOWS_FRAME], ids=["posix", "windows"])
def test_a_pasted_traceback_that_starts_with_a_frame_line_finds_its_page(
    docs: Path, frame: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Joined into one line, as a pasted traceback reaches the index (the client collapses whitespace).
    assert main(["--endpoint", f"local:{docs}", "search", "-n", "3", f"{frame} {MESSAGE}"]) == 0
    out = capsys.readouterr().out
    assert "No results" not in out
    assert first_hit(out) == ENCODING_PAGE

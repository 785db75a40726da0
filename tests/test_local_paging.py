"""Paging and the date filter of the local index's search, through the client, `devknow serve` and the CLI.

Pages follow each other in the order of one whole ranking (no gap, no overlap), the token is opaque and
refused for another search or after the index changed, and ``since`` applies where the index knows a date
(a page's own date in its front matter or JSON Lines record, else its file's modification time) and says
plainly where it does not (knowledge packs, fetched pages).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from devknow_jupyter import ConfigurationError, DevKnowClient, ToolError
from devknow_jupyter.local.backend import LocalBackend
from devknow_jupyter.local.index import LocalIndex

# Our own words: fourteen pages about one subject, each with something of its own.
COLOURS = ["amber", "azure", "beige", "coral", "cyan", "ebony", "ivory"]
COLOURS += ["jade", "khaki", "lilac", "mauve", "ochre", "olive", "plum"]
OLD = 1_577_836_800  # 2020-01-01, as a file modification time
NEW = 1_780_272_000  # 2026-06-01


def write_pages(folder: Path) -> Path:
    """Fourteen Markdown pages mentioning a lantern; the first seven were last changed in 2020, the rest in 2026."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, colour in enumerate(COLOURS):
        path = folder / f"{colour}.md"
        repeats = " ".join(["lantern"] * (number % 4 + 1))
        path.write_text(
            f"---\nname: documents/lanterns.example/{colour}\nuri: https://lanterns.example/{colour}\n"
            f"title: The {colour} lantern\n---\n# The {colour} lantern\n\nA {colour} lantern: {repeats}. "
            f"It burns {number + 1} hours on one filling of oil.\n",
            encoding="utf-8",
        )
        stamp = OLD if number < 7 else NEW
        os.utime(path, (stamp, stamp))
    return folder


@pytest.fixture
def pages(tmp_path: Path) -> Path:
    return write_pages(tmp_path / "lanterns")


def test_pages_follow_one_ranking_without_gap_or_overlap(pages: Path) -> None:
    with DevKnowClient(f"local:{pages}", cache=False) as client:
        whole = client.search_documents("lantern oil", page_size=14)
        first = client.search_documents("lantern oil", page_size=5)
        second = client.next_page(first)
        third = second.next_page(client)  # the same, from the results
        with pytest.raises(ConfigurationError, match="no next page"):
            client.next_page(third)
    assert len(whole) == 14 and not whole.has_next_page
    assert (len(first), len(second), len(third)) == (5, 5, 4)
    assert first.has_next_page and second.has_next_page and not third.has_next_page
    assert first.names + second.names + third.names == whole.names


def test_a_page_joined_to_the_hits_before_it_pages_on_from_its_own_token(pages: Path) -> None:
    with DevKnowClient(f"local:{pages}", cache=False) as client:
        whole = client.search_documents("lantern oil", page_size=14)
        first = client.search_documents("lantern oil", page_size=5)
        joined = first.followed_by(client.next_page(first))
        rest = client.next_page(joined)  # the page after the second, not the second again
    assert joined.query == "lantern oil" and len(joined) == 10 and joined.has_next_page
    assert joined.names + rest.names == whole.names and not rest.has_next_page


def test_the_default_page_has_ten_hits_and_a_token_for_the_rest(pages: Path) -> None:
    with DevKnowClient(f"local:{pages}", cache=False) as client:
        first = client.search_documents("lantern")
        rest = client.next_page(first)
    assert len(first) == 10 and len(rest) == 4
    assert not set(first.names) & set(rest.names)


def test_the_schema_advertises_paging_and_since() -> None:
    with DevKnowClient("local", cache=False) as client:
        search = next(tool for tool in client.list_tools() if tool["name"] == "search_documents")
    inputs = search["inputSchema"]["properties"]
    assert {"page_size", "page_token", "since", "source"} <= set(inputs)
    assert inputs["page_size"]["maximum"] == 100
    assert "nextPageToken" in search["outputSchema"]["properties"]


def test_a_token_is_refused_for_another_search_and_when_garbled(pages: Path) -> None:
    with DevKnowClient(f"local:{pages}", cache=False) as client:
        token = client.search_documents("lantern", page_size=3).next_page_token
        assert token and "lantern" not in token  # opaque: the query is not in it
        with pytest.raises(ToolError, match="another search"):
            client.search_documents("oil filling", page_token=token)
        with pytest.raises(ToolError, match="another search"):
            client.search_documents("lantern", page_token=token, since="2025-01-01")
        with pytest.raises(ToolError, match="not a page token"):
            client.search_documents("lantern", page_token="bm90IGEgdG9rZW4")
        # A token keeps working while the index is unchanged, and may ask for another page size.
        assert len(client.search_documents("lantern", page_token=token, page_size=20)) == 11


def test_a_token_made_before_the_index_changed_is_stale(tmp_path: Path) -> None:
    index = LocalIndex(tmp_path / "index.sqlite3")
    index.add_folder(write_pages(tmp_path / "lanterns"))
    with DevKnowClient(backend=LocalBackend(index), cache=False) as client:
        first = client.search_documents("lantern", page_size=4)
        index.add_documents([{"name": "documents/lanterns.example/new", "content": "# New\n\nA lantern of glass."}])
        with pytest.raises(ToolError, match="stale"):
            client.next_page(first)
        again = client.search_documents("lantern", page_size=4)
        assert len(client.next_page(again)) == 4


def test_since_keeps_pages_changed_since_the_date(pages: Path) -> None:
    with DevKnowClient(f"local:{pages}", cache=False) as client:
        recent = client.search_documents("lantern", since="2025-01-01", page_size=20)
        all_old = client.search_documents("lantern", since="2027-01-01")
    assert sorted(recent.names) == sorted(f"documents/lanterns.example/{colour}" for colour in COLOURS[7:])
    assert not any("Not applied" in notice for notice in recent.info.notices)
    assert len(all_old) == 0
    assert any("updated since 2027-01-01T00:00:00Z" in notice for notice in all_old.info.notices)


def test_since_says_what_it_cannot_date(tmp_path: Path) -> None:
    index = LocalIndex(tmp_path / "index.sqlite3")
    index.add_folder(write_pages(tmp_path / "lanterns"))
    fetched = [{"name": "documents/lanterns.example/fetched", "content": "# Fetched\n\nA lantern page, fetched."}]
    index.add_documents(fetched)
    with DevKnowClient(backend=LocalBackend(index), cache=False) as client:
        mixed = client.search_documents("lantern", since="2025-01-01", page_size=20)
    assert "documents/lanterns.example/fetched" in mixed.names and len(mixed) == 8
    assert any("1 matching pages without a date kept" in notice for notice in mixed.info.notices)
    undated = LocalIndex(tmp_path / "undated.sqlite3")
    undated.add_documents(fetched)
    with DevKnowClient(backend=LocalBackend(undated), cache=False) as client:
        hits = client.search_documents("lantern", since="2025-01-01")
    assert hits.names == ["documents/lanterns.example/fetched"]
    assert any(notice.startswith("Not applied: since 2025-01-01") for notice in hits.info.notices)


def test_a_pages_own_date_wins_over_its_file_time(tmp_path: Path) -> None:
    """A git checkout gives every file the checkout's time: the front matter's date is the one that counts."""
    folder = write_pages(tmp_path / "lanterns")
    for number, colour in enumerate(COLOURS):  # every file touched now; the first three say they are old
        path = folder / f"{colour}.md"
        text = path.read_text(encoding="utf-8")
        if number < 3:
            key = ("lastmod", "updated", "date")[number]
            text = text.replace("---\n#", f"{key}: 2019-0{number + 1}-15\n---\n#", 1)
        path.write_text(text, encoding="utf-8")
    (folder / "oddly-dated.md").write_text(
        "---\nname: documents/lanterns.example/odd\ndate: next spring\n---\n# Odd\n\nA lantern, oddly dated.\n",
        encoding="utf-8",
    )
    index = LocalIndex(tmp_path / "index.sqlite3")
    report = index.add_folder(folder)
    with DevKnowClient(backend=LocalBackend(index), cache=False) as client:
        recent = client.search_documents("lantern", since="2025-01-01", page_size=20)
        old = client.search_documents("lantern", since="2019-02-01", page_size=20)
    dated_old = {f"documents/lanterns.example/{colour}" for colour in COLOURS[:3]}
    assert not dated_old & set(recent.names) and len(recent) == 12  # 11 others + the odd one (file time)
    assert set(old.names) >= {"documents/lanterns.example/plum", *sorted(dated_old)[1:]}
    assert "documents/lanterns.example/amber" not in old.names  # lastmod 2019-01-15
    assert any("'date' is not a date ('next spring')" in why for _, why in report.warnings)


def test_json_lines_records_may_carry_their_date(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    lines = [
        {"name": "documents/lanterns.example/old", "content": "# Old\n\nA lantern.", "updated": "2020-05-01T10:00:00Z"},
        {"name": "documents/lanterns.example/new", "content": "# New\n\nA lantern.", "updated": "2026-05-01"},
        {"name": "documents/lanterns.example/plain", "content": "# Plain\n\nA lantern."},
    ]
    records = folder / "pages.jsonl"
    records.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    index = LocalIndex(tmp_path / "index.sqlite3")
    index.add_folder(folder)
    with DevKnowClient(backend=LocalBackend(index), cache=False) as client:
        hits = client.search_documents("lantern", since="2025-01-01")
        assert sorted(hits.names) == ["documents/lanterns.example/new", "documents/lanterns.example/plain"]
        lines[1]["updated"] = "2024-12-31"  # only the date changes: the line is written again
        records.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
        report = index.add_folder(folder)
        hits = client.search_documents("lantern", since="2025-01-01")
    assert (report.updated, report.unchanged) == (1, 2)
    assert hits.names == ["documents/lanterns.example/plain"]


def test_an_index_made_before_page_dates_opens_and_filters_by_file_time(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "index.sqlite3"
    LocalIndex(path).add_folder(write_pages(tmp_path / "lanterns"))
    with sqlite3.connect(path) as db:  # the layout of an index made before the column existed
        db.execute("ALTER TABLE documents DROP COLUMN updated_ns")
    packed = LocalIndex(path, read_only=True)  # as a knowledge pack opens: left as it is
    with DevKnowClient(backend=LocalBackend(packed), cache=False) as client:
        assert len(client.search_documents("lantern", since="2025-01-01", page_size=20)) == 7
    packed.close()
    with DevKnowClient(f"local:{path}", cache=False) as client:  # writable: the column is added
        assert len(client.search_documents("lantern", since="2025-01-01", page_size=20)) == 7
    with sqlite3.connect(path) as db:
        assert "updated_ns" in {row[1] for row in db.execute("PRAGMA table_info(documents)")}


def test_an_older_index_takes_its_files_dates_on_the_next_run(tmp_path: Path) -> None:
    """Upgraded in place, an index reads each file once more for its date; unchanged text is not chunked again."""
    import sqlite3

    folder = write_pages(tmp_path / "lanterns")  # seven files of 2026; the first says it is from 2019
    amber = folder / "amber.md"
    amber.write_text(amber.read_text(encoding="utf-8").replace("---\n#", "lastmod: 2019-05-01\n---\n#", 1))
    for path in folder.iterdir():
        os.utime(path, (NEW, NEW))
    path = tmp_path / "index.sqlite3"
    LocalIndex(path).add_folder(folder)
    with sqlite3.connect(path) as db:  # an index made before the column existed
        db.execute("ALTER TABLE documents DROP COLUMN updated_ns")
    index = LocalIndex(path)
    with DevKnowClient(backend=LocalBackend(index), cache=False) as client:
        before = client.search_documents("lantern", since="2025-01-01", page_size=20)
        report = index.add_folder(folder)
        after = client.search_documents("lantern", since="2025-01-01", page_size=20)
    assert "documents/lanterns.example/amber" in before.names and len(before) == 14
    assert (report.unchanged, report.updated) == (14, 0)  # read again for the date, not re-chunked
    assert "documents/lanterns.example/amber" not in after.names and len(after) == 13


def test_a_bad_date_and_a_bad_page_size_are_refused() -> None:
    with DevKnowClient("local", cache=False) as client:
        with pytest.raises(ConfigurationError, match="Not a date"):
            client.search_documents("answer quota", since="last week")
        with pytest.raises(ToolError, match="page_size"):
            client.backend.call_tool("search_documents", {"query": "quota", "page_size": 0})


def test_devknow_serve_pages_and_filters_by_date(tmp_path: Path) -> None:
    pytest.importorskip("mcp", reason="the server extra is not installed")
    from tests.test_serve import start_serve

    server = start_serve(tmp_path, write_pages(tmp_path / "lanterns"))
    try:
        with DevKnowClient(server.url, api_key="k-serve-paging-7", cache=False, offline_store=False) as client:
            search = next(tool for tool in client.list_tools() if tool["name"] == "search_documents")
            assert {"page_size", "page_token", "since"} <= set(search["inputSchema"]["properties"])
            first = client.search_documents("lantern oil", page_size=6)
            second = client.next_page(first)
            third = client.next_page(second)
            recent = client.search_documents("lantern", since="2025-01-01", page_size=20)
    finally:
        server.stop()
    assert (len(first), len(second), len(third)) == (6, 6, 2) and not third.has_next_page
    assert len(set(first.names + second.names + third.names)) == 14
    assert len(recent) == 7 and not any("Not applied" in notice for notice in recent.info.notices)


def test_cli_prints_how_to_get_the_next_page_and_takes_the_token(pages: Path, capsys) -> None:
    from devknow_jupyter.cli import main

    assert main(["--endpoint", f"local:{pages}", "search", "lantern", "oil", "-n", "5"]) == 0
    captured = capsys.readouterr()
    line = next(line for line in captured.err.splitlines() if "--page-token" in line)
    token = line.split("--page-token", 1)[1].split()[0]
    argv = ["--endpoint", f"local:{pages}", "--json", "search", "lantern", "oil", "-n", "5", "--page-token", token]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["results"]) == 5 and data["nextPageToken"]
    assert main(["--endpoint", f"local:{pages}", "search", "lantern", "oil", "-n", "20"]) == 0
    assert "--page-token" not in capsys.readouterr().err  # the last page: nothing to follow

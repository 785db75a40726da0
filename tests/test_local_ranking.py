"""Ranking of the local index through its public faces: the site filter inside the ranking, identifier
tokens, pasted error messages, the weak-match notice and the stored ranker. Fixture pages are our own words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.cli import main
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.query import ranking_query, rewrite_message
from devknow_jupyter.local.tokens import tokens


def page(folder: Path, slug: str, site: str, title: str, body: str) -> None:
    path = folder / site / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"---\nname: documents/{site}/{slug}\nuri: https://{site}/{slug}\ntitle: {title}\n---\n"
    path.write_text(front + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def two_sites(tmp_path: Path) -> Path:
    """Twelve pages of big.test all about Go modules, and two pages of small.test that mention them once."""
    docs = tmp_path / "docs"
    for i in range(12):
        page(
            docs,
            f"modules-{i}",
            "big.test",
            f"Go modules guide {i}",
            f"# Go modules guide {i}\n\nGo modules, go modules everywhere: modules hold go packages.\n",
        )
    for i in range(2):
        page(
            docs,
            f"agents-{i}",
            "small.test",
            f"Agent kit chapter {i}",
            f"# Agent kit chapter {i}\n\n" + "The agent kit builds assistants. " * 30
            + "\n\nTo start, run `go mod init` to create go modules for the kit.\n",
        )
    return docs


def test_the_site_filter_ranks_inside_the_site_beyond_the_unfiltered_top_ten(two_sites: Path) -> None:
    with DevKnowClient(f"local:{two_sites}", cache=False) as client:
        unfiltered = client.search_documents("go modules")
        assert len(unfiltered) == 10 and all("big.test" in hit.parent for hit in unfiltered)
        filtered = client.search_documents("go modules", source="small.test")
    assert sorted(filtered.names) == ["documents/small.test/agents-0", "documents/small.test/agents-1"]
    assert "go mod init" in filtered[0].content  # the excerpt is the page's matching passage
    assert not any("Filtered here" in notice for notice in filtered.info.notices)  # filtered by the index


def test_devknow_search_source_returns_that_sites_hits(two_sites: Path, capsys: pytest.CaptureFixture[str]) -> None:
    endpoint = f"local:{two_sites}"
    assert main(["--endpoint", endpoint, "search", "--source", "https://small.test/", "go", "modules"]) == 0
    out = capsys.readouterr().out
    assert "documents/small.test/agents-" in out and "big.test" not in out


def test_a_rule_name_with_underscores_finds_the_page_named_after_it_first(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for i in range(6):
        page(
            docs,
            f"style-{i}",
            "lint.test",
            f"Prefer const constructors, part {i}",
            f"# Prefer const constructors, part {i}\n\nPrefer const values; constructors that are const help. "
            "Prefer const constructors where you can, and prefer small constructors.\n",
        )
    page(
        docs,
        "rules/prefer_const_constructors",
        "lint.test",
        "prefer_const_constructors",
        "# prefer_const_constructors\n\nThis rule flags a call that could be a constant one. "
        "Among the long list of checks in the linter, it sits beside rules about naming, imports, spacing "
        "and comments, which are described on their own pages.\n",
    )
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        index.add_folder(docs)
        hits = index.search("prefer_const_constructors")
    assert hits[0]["parent"] == "documents/lint.test/rules/prefer_const_constructors"
    assert tokens("tf.keras.layers fromJson Future<void>") == [
        "tf.keras.layers", "keras.layers", "tf", "keras", "layers", "fromjson", "from", "json",
        "future<void>", "future", "void",
    ]


def test_a_pasted_error_message_finds_its_diagnostic_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    page(
        docs,
        "diagnostics/undefined_method",
        "lang.test",
        "undefined_method",
        "# undefined_method\n\nThe analyzer reports this when a method is not defined for the static type of "
        "the receiver: _The method '{0}' isn't defined for the type '{1}'._ Check the spelling or add it.\n",
    )
    for i in range(4):  # pages full of the message's boilerplate: error, line, file, main, lib
        page(
            docs,
            f"errors-{i}",
            "lang.test",
            f"Reading error output {i}",
            f"# Reading error output {i}\n\nEvery error names a file and a line: lib main error line file error "
            "column. The error line in lib main file is where an error starts; read the error and the line.\n",
        )
    message = "lib/main.dart:12:5: Error: The method 'fromJson' isn't defined for the type 'User'."
    rewritten = rewrite_message(message)
    assert "main.dart" not in rewritten and "12:5" not in rewritten and "Error" not in rewritten
    assert "'fromJson'" in rewritten and "'User'" in rewritten
    assert "fromjson" in ranking_query(message).tokens
    assert rewrite_message("How do I read a file line by line?") == "How do I read a file line by line?"
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        index.add_folder(docs)
        assert index.search(message)[0]["parent"] == "documents/lang.test/diagnostics/undefined_method"


def test_a_weak_match_is_said_in_one_line(two_sites: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with DevKnowClient(f"local:{two_sites}", cache=False) as client:
        weak = client.search_documents("kubernetes helm chart modules rollout")
        strong = client.search_documents("agent kit assistants")
    assert len(weak) > 0  # "modules" matches, the rest does not
    [notice] = [n for n in weak.info.notices if n.startswith("Weak match")]
    assert "\n" not in notice and "devknow index DIR" in notice and "DEVKNOW_API_KEY" in notice
    assert not strong.info.notices
    assert main(["--endpoint", f"local:{two_sites}", "search", "kubernetes", "helm", "chart", "modules"]) == 0
    assert "note: Weak match" in capsys.readouterr().err


def test_the_ranker_follows_changes_made_through_another_connection(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    page(docs, "first", "one.test", "Lighthouse keeping", "# Lighthouse keeping\n\nTrim the lamp wick.\n")
    path = tmp_path / "index.sqlite3"
    with LocalIndex(path) as reader, LocalIndex(path) as writer:
        writer.add_folder(docs)
        assert [hit["parent"] for hit in reader.search("lamp wick")] == ["documents/one.test/first"]
        fog = {"name": "documents/two.test/fog", "title": "Fog horn", "content": "# Fog horn\n\nA lamp.\n"}
        writer.add_documents([fog])
        assert "documents/two.test/fog" in [hit["parent"] for hit in reader.search("lamp")]
        writer.remove_folder(docs)
        assert [hit["parent"] for hit in reader.search("lamp wick")] == ["documents/two.test/fog"]
        assert reader.verify() == []

"""Ranking of the local index through its public faces: the site filter inside the ranking, identifier
tokens, pasted error messages, the weak-match notice and the stored ranker. Fixture pages are our own words."""

from __future__ import annotations

import subprocess
import sys
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


def series(folder: Path, count: int, site: str, slug: str, title: str, body: str) -> None:
    """``count`` pages whose slug, title and body have ``{i}`` replaced by their number."""
    for i in range(count):
        page(folder, slug.format(i=i), site, title.format(i=i), f"# {title.format(i=i)}\n\n{body.format(i=i)}\n")


@pytest.fixture
def two_sites(tmp_path: Path) -> Path:
    """Twelve pages of big.test all about Go modules, and two pages of small.test that mention them once."""
    docs = tmp_path / "docs"
    guide = "Go modules everywhere: modules hold go packages."
    series(docs, 12, "big.test", "modules-{i}", "Go modules guide {i}", guide)
    kit = "The agent kit builds assistants. " * 30 + "\n\nTo start, run `go mod init` to create go modules for the kit."
    series(docs, 2, "small.test", "agents-{i}", "Agent kit chapter {i}", kit)
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
    advice = (
        "Prefer const values; constructors that are const help. Prefer const constructors where you can, "
        "and prefer small constructors."
    )
    series(docs, 6, "lint.test", "style-{i}", "Prefer const constructors, part {i}", advice)
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
    boilerplate = (  # a page full of what the message has beside its meaning: a path, a position, "Error"
        "Every error in lib/main.dart names a file, a line and a column, such as 12:5. The error in main.dart "
        "at line 12 is where an error starts: read the error, then line 12 in lib main dart."
    )
    series(docs, 1, "lang.test", "errors-{i}", "Reading error output", boilerplate)
    types = "Each method has a type; the type of a method is defined by its signature, and a user type may define one."
    series(docs, 3, "lang.test", "methods-{i}", "Methods and types {i}", types)
    message = "lib/main.dart:12:5: Error: The method 'fromJson' isn't defined for the type 'User'."
    rewritten = rewrite_message(message)
    assert "main.dart" not in rewritten and "12:5" not in rewritten and "Error" not in rewritten
    assert "'fromJson'" in rewritten and "'User'" in rewritten
    assert "fromjson" in ranking_query(message).tokens
    assert rewrite_message("How do I read a file line by line?") == "How do I read a file line by line?"
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        index.add_folder(docs)
        assert index.search(message)[0]["parent"] == "documents/lang.test/diagnostics/undefined_method"


def test_a_runtime_note_on_its_graph_and_the_values_the_code_passed_are_not_searched_for() -> None:
    note = "{{function_node __wrapped__SparseToDense_device_/job:localhost/replica:0/task:0/device:CPU:0}}"
    rewritten = rewrite_message(f"InvalidArgumentError: {note} indices[1] = [0,1] is out of order [[{{{{node x}}}}]]")
    assert rewritten == "InvalidArgumentError: indices[1] = [0,1] is out of order"
    line = "TypeError: bad argument: opt = Adam(learning_rate=1e-3, beta1=0.9, beta2=.999)"
    assert rewrite_message(line) == "TypeError: bad argument: opt = Adam(learning_rate=, beta1=, beta2=)"
    kept = "AssertionError: assert count == 5, expected 768 dimensions"  # a comparison and a bare number stay
    assert rewrite_message(kept) == "AssertionError: assert count == 5, expected 768 dimensions"


def test_a_pasted_tensorflow_error_finds_its_page_not_the_one_about_its_devices(tmp_path: Path) -> None:
    """The message names the op and the problem; the runtime's note names the user's graph node and the device
    it ran on, which a page about devices repeats: with the note searched for, that page came first."""
    docs = tmp_path / "docs"
    devices = (
        "Ops are placed on a device such as /job:localhost/replica:0/task:0/device:CPU:0. A function_node runs "
        "on the job and task of its replica; the localhost job has one task. Wrapped functions keep the device."
    )
    page(docs, "gpu", "ml.test", "Use a GPU", f"# Use a GPU\n\n{devices}\n")
    sparse = "Sparse ops require sorted indices: when the indices are out of order, reorder them first (SparseToDense)."
    page(docs, "sparse", "ml.test", "Sparse tensors", f"# Sparse tensors\n\n{sparse}\n")
    series(docs, 4, "ml.test", "tensors-{i}", "Tensors {i}", "A tensor has a shape and a dtype.")
    message = (
        "InvalidArgumentError: {{function_node __wrapped__SparseToDense_device_/job:localhost/replica:0/task:0"
        "/device:CPU:0}} indices[1] = [0,1] is out of order [Op:SparseToDense]"
    )
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        index.add_folder(docs)
        assert index.search(message)[0]["parent"] == "documents/ml.test/sparse"


def test_a_pasted_source_line_finds_the_page_on_its_keyword_arguments_not_on_its_numbers(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    numbers = "Typical values for Adam: 1e-3, 0.9 and 0.999; 0.9 is common, 0.999 too, and 1e-3 for small models."
    page(docs, "optimizers", "ml.test", "Optimizers", f"# Optimizers\n\n{numbers}\n")
    moved = "In the new API, Adam takes beta_1 and beta_2: the keyword arguments beta1 and beta2 were renamed."
    page(docs, "migrate", "ml.test", "Migrate optimizers", f"# Migrate optimizers\n\n{moved}\n")
    series(docs, 4, "ml.test", "layers-{i}", "Layers {i}", "A layer has weights and an opt argument.")
    message = (
        "TypeError: Adam.__init__() got an unexpected keyword argument 'beta1'\n"
        '  File "train.py", line 42, in build\n'
        "    opt = Adam(learning_rate=1e-3, beta1=0.9, beta2=0.999)"
    )
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        index.add_folder(docs)
        assert index.search(message)[0]["parent"] == "documents/ml.test/migrate"


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


def test_a_uri_urllib_cannot_read_is_indexed_and_on_no_site(tmp_path: Path) -> None:
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        broken = {"name": "documents/odd.test/x", "uri": "http://[broken/x", "content": "# Odd\n\nA kiwi.\n"}
        assert index.add_documents([broken]).added == 1
        assert [hit["parent"] for hit in index.search("kiwi")] == ["documents/odd.test/x"]
        assert index.search("kiwi", source="odd.test") == []


def test_a_page_that_says_the_words_together_ranks_above_one_that_scatters_them(tmp_path: Path) -> None:
    """Word pairs: "rotate a service account key" finds the page with "service account key" as a phrase, even
    though another page repeats each word more often (apart); without the pairs that page comes first.

    BM25F alone: the whole-page models fused with it in lexical search see no pairs, and on these four short
    pages they favour the one that repeats the words (the pairs' own effect is what this test checks)."""
    from devknow_jupyter.local.ranker import RankSettings

    bm25f_alone = {"likelihood_weight": 0.0, "words_weight": 0.0}

    docs = tmp_path / "docs"
    page(
        docs, "rotating", "keys.test", "Keeping credentials fresh",
        "# Keeping credentials fresh\n\nOnce a quarter, rotate the service account key that your build uses: "
        "make a new one, deploy it, then delete the old one. Then read the audit logs.\n",
    )
    page(
        docs, "concepts", "keys.test", "Concepts",
        "# Concepts\n\nA key opens a door; an account belongs to a person; a service answers calls. Every "
        "account may hold a key, and a service may rotate its logs. " + "Doors, people and calls differ. " * 3,
    )
    filler = "Printers, paper and toner are ordered by the office each month. " * 8
    page(docs, "overview", "keys.test", "Overview", f"# Overview\n\nA service account key is a secret file. {filler}\n")
    series(docs, 5, "keys.test", "misc-{i}", "Miscellany {i}", "Printers, paper and toner.")
    for pair_weight, first in [(RankSettings().pair_weight, "rotating"), (0.0, "concepts")]:
        ranking = RankSettings(pair_weight=pair_weight, **bm25f_alone)
        with LocalIndex(tmp_path / f"index-{pair_weight}.sqlite3", ranking=ranking) as index:
            index.add_folder(docs)
            hits = index.search("how do I rotate a service account key")
        assert hits[0]["parent"] == f"documents/keys.test/{first}", pair_weight
    assert RankSettings().pair_weight > 0
    # Another process opens the stored ranker (pairs are kept as numeric keys) and ranks the same way.
    script = (
        "import sys; from devknow_jupyter.local.index import LocalIndex\n"
        "from devknow_jupyter.local.ranker import RankSettings\n"
        f"ranking = RankSettings(**{bm25f_alone!r})\n"
        "with LocalIndex(sys.argv[1], ranking=ranking) as index: print(index.search(sys.argv[2])[0]['parent'])"
    )
    path = str(tmp_path / f"index-{RankSettings().pair_weight}.sqlite3")
    query = "how do I rotate a service account key"
    done = subprocess.run([sys.executable, "-c", script, path, query], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "documents/keys.test/rotating", done.stderr


def test_word_pairs_skip_glue_words_and_split_identifiers() -> None:
    from devknow_jupyter.local.tokens import word_pairs

    assert word_pairs("Run a command-line tool") == ["run command", "command line", "line tool"]
    assert word_pairs("call getUserName twice") == ["call get", "get user", "user name", "name twice"]
    assert ranking_query("sign in with a service account").pairs == ("sign service", "service account")


def test_an_identifier_typed_whole_finds_the_page_that_names_it_over_one_titled_with_its_words(tmp_path: Path) -> None:
    """The lexical ensemble: "start_dry_run" ranks the page that names the tool first. BM25F alone puts the page
    titled "Dry run" (its words in the title and URL path) first; plain BM25 over the words as typed (bm25s's cut
    keeps ``start_dry_run`` whole) and the whole-page query likelihood lift the page that says it, twice."""
    from devknow_jupyter.local.ranker import RankSettings

    docs = tmp_path / "docs"
    page(
        docs, "dry-run", "ship.test", "Dry run",
        "# Dry run\n\nA dry run shows what a deploy would change without changing it. It lists every change.\n",
    )
    page(
        docs, "deploy-tools", "ship.test", "Deploy tools",
        "# Deploy tools\n\nThe deploy agent has four tools. It calls start_dry_run to preview a release, "
        "apply_release to ship it, rollback_release to undo it and list_releases to see past ones. Each tool "
        "takes the project name; call start_dry_run first.\n",
    )
    series(docs, 8, "ship.test", "other-{i}", "Other topic {i}", "Planting trees and watering them, number {i}.")
    with DevKnowClient(f"local:{docs}", cache=False) as client:
        found = client.search_documents("start_dry_run")
    assert found.names[:2] == ["documents/ship.test/deploy-tools", "documents/ship.test/dry-run"]
    alone = RankSettings(likelihood_weight=0.0, words_weight=0.0)
    with LocalIndex(tmp_path / "bm25f.sqlite3", ranking=alone) as index:
        index.add_folder(docs)
        assert [hit["parent"] for hit in index.search("start_dry_run")][:2] == [
            "documents/ship.test/dry-run", "documents/ship.test/deploy-tools"
        ]


def test_the_typed_words_keep_a_pasted_messages_own_words(tmp_path: Path) -> None:
    """The words as typed are cut as bm25s cuts them: no message rewrite, identifiers whole, its 33 stopwords."""
    from devknow_jupyter.local.whole_page import typed_words

    assert typed_words("Uncaught Exception: the prefer_const_constructors rule isn't on") == [
        "uncaught", "exception", "prefer_const_constructors", "rule", "isn",
    ]


def test_a_pasted_log_counts_only_its_first_words_as_typed() -> None:
    """Thousands of different words (a whole log pasted) cost one posting list each: only the first ones count."""
    from devknow_jupyter.local.whole_page import MAX_TYPED_WORDS, typed_words

    log = " ".join(f"frame{number} cache" for number in range(5000))
    words = typed_words(log)
    assert len(set(words)) == MAX_TYPED_WORDS and words.count("cache") == 5000  # a kept word counts each time
    assert words[:3] == ["frame0", "cache", "frame1"] and "frame4999" not in words

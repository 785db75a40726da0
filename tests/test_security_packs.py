"""Gallery: hostile pack files and a hostile upstream against the installed packs and the offline store.

Each pack here is a real pack built by ``devknow pack build`` from a small folder, then edited by hand with
SQLite as an attacker would (views, huge ids, foreign origins, slashes in names, malformed manifests, dropped
tables, damaged term counts and ranker snapshots). Every one must be refused with one line, and leave the
installed packs as they were. Later changes must keep these passing.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from starlette.responses import Response

from devknow_jupyter import DevKnowClient, cli, packs
from devknow_jupyter.errors import ConfigurationError
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.paths import default_index_path
from devknow_jupyter.local.store import DocumentStore
from tests.conftest import ROOT
from tests.servers.scripted import Call, ScriptedServer, modern_server, result, rpc_json, tool_ok
from tests.test_hardening_transport import on_tools
from tests.test_packs import CONFIG_STATUS, _one_error

GOOD_PAGE = "documents/kilns.test/firing"
EVIL_PAGE = "documents/evil.test/glaze"
# What a child process may use: far above what `pack add` of a small pack needs, far below "without end".
CHILD_MEMORY = 1536 * 2**20


def _folder_pack(where: Path, name: str, slug: str, text: str) -> Path:
    folder = where / f"{name}-src"
    folder.mkdir()
    site = "kilns.test" if name == "good" else "evil.test"
    (folder / f"{slug}.md").write_text(
        f"---\nname: documents/{site}/{slug}\ntitle: {slug.title()}\n---\n# {slug.title()}\n\n{text}\n",
        encoding="utf-8",
    )
    return packs.build([folder], where / f"{name}.pack", name=name).path


@pytest.fixture
def good(tmp_path: Path) -> Path:
    """A pack installed in the default index before each attack."""
    pack = _folder_pack(tmp_path, "good", "firing", "Kilns are fired over twelve hours to cone six.")
    packs.add(pack)
    return pack


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    """A well-formed pack for the attacker to edit."""
    return _folder_pack(tmp_path, "evil", "glaze", "Glazes mix silica, flux and alumina, sieved twice.")


def _edit(pack: Path, *statements: str, manifest: dict | None = None) -> Path:
    db = sqlite3.connect(pack)
    for statement in statements:
        db.executescript(statement)
    if manifest is not None:
        db.execute("UPDATE meta SET value = ? WHERE key = 'user:pack_manifest'", (json.dumps(manifest),))
    db.commit()
    db.close()
    return pack


def _manifest(pack: Path) -> dict:
    db = sqlite3.connect(pack)
    try:
        return json.loads(db.execute("SELECT value FROM meta WHERE key = 'user:pack_manifest'").fetchone()[0])
    finally:
        db.close()


def _state() -> tuple[list[str], dict[str, int]]:
    """The installed packs' names and the default index's pages by origin."""
    with LocalIndex(default_index_path(), semantic=False) as index:
        return [manifest["name"] for manifest in packs.installed(index=index)], index.stats()["by_origin"]


def _refused(capsys, args: list[str], message: str) -> None:
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert message in error and _one_error(error), error


def _still_works(capsys, before: tuple[list[str], dict[str, int]]) -> None:
    """The installed packs are as they were and every later command works."""
    assert _state() == before
    assert cli.main(["pack", "list"]) == 0
    assert "good: 1 pages" in capsys.readouterr().out
    assert cli.main(["--endpoint", "local", "search", "kilns fired cone six"]) == 0
    assert GOOD_PAGE in capsys.readouterr().out
    with DevKnowClient("local") as client:
        assert [doc.name for doc in client.get_documents([GOOD_PAGE])] == [GOOD_PAGE]
        assert not client.backend.index.get([EVIL_PAGE])


# -- the tables -------------------------------------------------------------------------------------------

_RECURSIVE_VIEW = """
DROP TABLE documents;
CREATE VIEW documents AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
SELECT n AS id, 'documents/evil.test/' || n AS name, 'https://evil.test/' || n AS uri, 'Evil' AS title,
       '' AS description, printf('%.*c', 4000, 'x') AS content, 'pack:evil/evil' AS origin, NULL AS root,
       NULL AS path, NULL AS mtime_ns, NULL AS size, NULL AS updated_ns, '' AS sha256, 0.0 AS indexed FROM r;
"""


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def test_a_recursive_view_is_refused_before_it_is_read(good: Path, evil: Path, tmp_path: Path, capsys) -> None:
    before = _state()
    _edit(evil, _RECURSIVE_VIEW)
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "devknow_jupyter", "pack", "add", str(evil)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=90,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("`pack add` of a pack whose documents are a recursive view did not finish in 90 s")
    assert done.returncode == CONFIG_STATUS, done.stderr[-2000:]
    assert "evil.pack is damaged: it holds a view ('documents')" in done.stderr and _one_error(done.stderr)
    assert time.monotonic() - started < 60
    _refused(capsys, ["--endpoint", f"local:{evil}", "search", "evil"], "holds a view")
    _still_works(capsys, before)


@pytest.mark.parametrize(
    ("attack", "message"),
    [
        ("DROP TABLE page_terms", "its table page_terms is missing"),
        ("DROP TABLE chunks", "its table chunks is missing"),
        ("ALTER TABLE documents RENAME COLUMN content TO body", "its table documents does not have the expected"),
        ("CREATE TRIGGER t AFTER DELETE ON folders BEGIN SELECT 1; END", "it holds a trigger ('t')"),
        ("DROP TABLE chunks_fts", "its full-text table is missing"),
    ],
)
def test_missing_or_reshaped_tables_are_one_line(good: Path, evil: Path, capsys, attack: str, message: str) -> None:
    before = _state()
    _edit(evil, attack)
    _refused(capsys, ["pack", "add", str(evil)], message)
    _refused(capsys, ["--endpoint", f"local:{evil}", "search", "glaze"], message)
    _still_works(capsys, before)


# -- the rows ---------------------------------------------------------------------------------------------

_HUGE_ID = 2**63 - 1000


def test_a_page_id_near_2_63_is_refused_and_every_later_command_works(good: Path, evil: Path, capsys) -> None:
    before = _state()
    _edit(evil, f"UPDATE documents SET id = {_HUGE_ID}; UPDATE page_terms SET doc_id = {_HUGE_ID};")
    _refused(capsys, ["pack", "add", str(evil)], "have an id out of range")
    _still_works(capsys, before)
    assert cli.main(["pack", "remove", "good"]) == 0


def test_an_index_poisoned_by_an_older_version_drops_the_unnumberable_page_and_works(
    good: Path, tmp_path: Path, capsys
) -> None:
    """Main imported such a page; then every write overflowed (OverflowError), `pack remove` included."""
    db = sqlite3.connect(default_index_path())
    db.execute(
        "INSERT INTO documents (id, name, uri, title, description, content, origin, sha256, indexed)"
        " VALUES (?, ?, 'https://evil.test/glaze', 'Glaze', '', 'Glazes mix silica.', 'pack:good/good-src', '', 0)",
        (_HUGE_ID, EVIL_PAGE),
    )
    db.execute(
        "INSERT INTO chunks (id, doc_id, seq, breadcrumb, title, headings, body) VALUES (1, ?, 0, 'G', 'G', '', 'x')",
        (_HUGE_ID,),
    )
    db.commit()
    db.close()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.md").write_text("# Mine\n\nMy own notes on glazes.\n", encoding="utf-8")
    assert cli.main(["index", str(notes)]) == 0
    assert cli.main(["--endpoint", "local", "search", "my own notes on glazes"]) == 0
    assert "documents/local/mine" in capsys.readouterr().out
    _still_works(capsys, _state())
    assert cli.main(["pack", "remove", "good"]) == 0


def test_pages_that_carry_another_origin_are_refused(good: Path, evil: Path, capsys) -> None:
    """Rows posing as the user's own files (origin ``file``) would survive `pack remove`."""
    before = _state()
    _edit(evil, "UPDATE documents SET origin = 'file'")
    _refused(capsys, ["pack", "add", str(evil)], "holds pages of an origin its manifest does not list ('file')")
    _still_works(capsys, before)


@pytest.mark.parametrize(
    ("attack", "message"),
    [
        ("UPDATE page_terms SET counts = substr(counts, 2)", "term counts are damaged"),
        ("UPDATE page_terms SET lengths = 'short'", "term counts are damaged"),
        ("UPDATE chunks SET seq = seq + 1", "passages are misnumbered"),
        ("UPDATE chunks SET doc_id = 99, id = (99 << 20) | seq", "passages are misnumbered or belong to no page"),
        ("UPDATE documents SET content = X'00ff'", "a field of the wrong type"),
    ],
)
def test_damaged_term_counts_passages_and_fields_are_refused(
    good: Path, evil: Path, capsys, attack: str, message: str
) -> None:
    before = _state()
    _edit(evil, attack)
    _refused(capsys, ["pack", "add", str(evil)], message)
    _still_works(capsys, before)


def test_term_counts_that_miscount_their_terms_leave_the_page_unranked_not_a_crash(
    good: Path, evil: Path, capsys
) -> None:
    """Whole rows of counts, one fewer than the page's terms: the ranker leaves the page out, nothing fails."""
    _edit(evil, "UPDATE page_terms SET counts = substr(counts, 11)")
    assert cli.main(["pack", "add", str(evil)]) == 0
    capsys.readouterr()
    assert cli.main(["--endpoint", "local", "search", "glazes silica flux"]) == 0
    assert EVIL_PAGE not in capsys.readouterr().out
    assert cli.main(["--endpoint", "local", "search", "kilns fired cone six"]) == 0
    assert GOOD_PAGE in capsys.readouterr().out
    with DevKnowClient("local") as client:
        assert [doc.name for doc in client.get_documents([EVIL_PAGE])] == [EVIL_PAGE]


def test_a_damaged_ranker_snapshot_is_rebuilt_not_a_traceback(evil: Path, capsys) -> None:
    _edit(evil, "UPDATE ranker_snapshot SET data = 'xyz' WHERE part = 'offsets'")
    assert cli.main(["--endpoint", f"local:{evil}", "search", "glazes silica flux"]) == 0
    assert EVIL_PAGE in capsys.readouterr().out
    _edit(evil, "UPDATE ranker_snapshot SET data = zeroblob(64) WHERE part = 'offsets'")
    assert cli.main(["--endpoint", f"local:{evil}", "search", "glazes silica flux"]) == 0
    assert EVIL_PAGE in capsys.readouterr().out


# -- the manifest and the names ---------------------------------------------------------------------------


def _manifest_attacks() -> list:
    def source(change: dict) -> object:
        return lambda manifest: {**manifest, "sources": [{**manifest["sources"][0], **change}]}

    return [
        pytest.param(
            lambda m: {**m, "sources": [*m["sources"], 7]},
            "source 2 of its manifest is not an object",
            id="a-number-among-sources",
        ),
        pytest.param(lambda m: {k: v for k, v in m.items() if k != "name"}, "its pack name is missing", id="no-name"),
        pytest.param(lambda m: {**m, "name": 12}, "its pack name is missing", id="name-a-number"),
        pytest.param(source({"pages": "many"}), "the page count of source 'evil-src' is not a count", id="pages"),
        pytest.param(
            source({"license": ["MIT"]}), "the license of source 'evil-src' is not a short text", id="licence-a-list"
        ),
        pytest.param(lambda m: {**m, "sources": []}, "its manifest lists no sources", id="no-sources"),
    ]


@pytest.mark.parametrize(("change", "message"), _manifest_attacks())
def test_a_malformed_manifest_is_one_line_and_list_remove_search_still_work(
    good: Path, evil: Path, capsys, change, message: str
) -> None:
    before = _state()
    _edit(evil, manifest=change(_manifest(evil)))
    _refused(capsys, ["pack", "add", str(evil)], message)
    _refused(capsys, ["--endpoint", f"local:{evil}", "search", "glaze"], message)
    _still_works(capsys, before)


def test_a_manifest_that_is_not_json_or_nests_without_end_is_one_line(good: Path, evil: Path, capsys) -> None:
    before = _state()
    for text in ("{not json", "[" * 100_000):
        _edit(evil, f"UPDATE meta SET value = '{text}' WHERE key = 'user:pack_manifest'")
        _refused(capsys, ["pack", "add", str(evil)], "its manifest is not JSON")
    _still_works(capsys, before)


@pytest.mark.parametrize(("pack_name", "source_name"), [("good/evil-src", "evil-src"), ("evil", "x/../evil-src")])
def test_a_slash_in_a_pack_or_source_name_is_refused(
    good: Path, evil: Path, capsys, pack_name: str, source_name: str
) -> None:
    """A pack ``a/b`` and a pack ``a`` with a source ``b/s`` would share the origin ``pack:a/b/s``: removing one
    would remove the other's pages."""
    before = _state()
    manifest = _manifest(evil)
    manifest["name"] = pack_name
    manifest["sources"][0]["name"] = source_name
    _edit(evil, f"UPDATE documents SET origin = 'pack:{pack_name}/{source_name}'", manifest=manifest)
    _refused(capsys, ["pack", "add", str(evil)], "holds a slash or a control character")
    _still_works(capsys, before)


def test_a_damaged_pack_of_an_installed_name_leaves_the_installed_copy(good: Path, tmp_path: Path, capsys) -> None:
    """Replacing a pack is one transaction: a replacement that fails midway keeps the installed pages."""
    before = _state()
    copy = tmp_path / "again" / "good.pack"
    copy.parent.mkdir()
    shutil.copy(good, copy)
    _edit(copy, "DROP TABLE page_terms")
    _refused(capsys, ["pack", "add", str(copy)], "its table page_terms is missing")
    _still_works(capsys, before)


def test_manifests_stored_in_another_shape_are_listed_and_removed(good: Path, capsys) -> None:
    """An index written by an older version may hold manifests this one would refuse: read as far as they go."""
    with LocalIndex(default_index_path(), semantic=False) as index:
        stored = json.loads(index.get_meta("installed_packs"))
        stored["odd"] = {"sources": [3, {"name": "notes", "pages": "x", "license": None}]}
        index.set_meta("installed_packs", json.dumps(stored))
    assert cli.main(["pack", "list"]) == 0
    listing = capsys.readouterr().out
    assert "good: 1 pages" in listing and "odd: 0 pages" in listing
    assert cli.main(["--endpoint", "local", "search", "kilns fired cone six"]) == 0
    assert GOOD_PAGE in capsys.readouterr().out
    assert cli.main(["pack", "remove", "odd"]) == 0
    assert [manifest["name"] for manifest in packs.installed()] == ["good"]


# -- the offline store of fetched pages against a hostile upstream ------------------------------------------

PAGE_TEXT = 100 * 1024  # each page the upstream sends


def _page_text(name: str) -> str:
    """About PAGE_TEXT bytes of words, different for every page (so the full-text index grows as for real pages)."""
    words = random.Random(name)
    lines = [f"# {name}\n"]
    size = 0
    while size < PAGE_TEXT:
        line = " ".join(f"w{words.randrange(50_000)}" for _ in range(12))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _generous_upstream(call: Call) -> Response:
    """get_documents answered with a large page for every name asked (one page is over the page limit)."""
    names = call.body["params"]["arguments"]["names"]
    docs = []
    for name in names:
        content = _page_text(name) * (6 if name.endswith("/huge") else 1)
        docs.append(
            {"name": name, "uri": f"https://evil.test/{name.rsplit('/', 1)[-1]}", "title": name, "content": content}
        )
    return rpc_json(result(call, tool_ok({"documents": docs})))


def _kept(store: DocumentStore) -> dict[str, int]:
    return {doc["name"]: len(doc["content"]) for doc in store.get(store.names())}


def test_the_offline_store_stays_within_its_limits_against_a_hostile_upstream(monkeypatch) -> None:
    """Ten calls of four large pages of rare words: the store keeps the most recent pages within its limit and
    no page over the page limit, and the index file grows by a small multiple of the limit (main: by all)."""
    limit = 4 * 1024 * 1024  # four of these pages (each counts about 0.9 MB: its text three times, its terms)
    monkeypatch.setenv("DEVKNOW_OFFLINE_STORE_MB", "4")
    monkeypatch.setenv("DEVKNOW_OFFLINE_PAGE_MB", "0.5")
    LocalIndex(default_index_path(), semantic=False).close()
    baseline = default_index_path().stat().st_size  # the starter pack
    calls = [[f"documents/evil.test/p{call}-{page}" for page in range(4)] for call in range(10)]
    with (
        ScriptedServer(modern_server(on_tools(_generous_upstream))) as server,
        DevKnowClient(server.url, api_key="dk-store-key-0000", cache=False) as client,
    ):
        for names in calls:
            assert len(client.get_documents(names)) == 4
        assert len(client.get_documents(["documents/evil.test/huge"])) == 1  # shown, not kept
    store = DocumentStore.open_default()
    try:
        kept = _kept(store)
        assert "documents/evil.test/huge" not in kept
        assert set(calls[-1]) <= set(kept) and not set(calls[0]) & set(kept)  # the least recently used went
        assert 3 * sum(kept.values()) <= limit  # each page's text counts three times, and its term counts
    finally:
        store.close()
    growth = default_index_path().stat().st_size - baseline
    assert growth < 4 * limit, f"the index file grew by {growth:,} bytes"


def test_a_page_fetched_again_counts_as_used_and_outlives_newer_ones(tmp_path: Path) -> None:
    with LocalIndex(tmp_path / "probe.sqlite3", semantic=False) as probe:  # what one such page counts
        DocumentStore(probe, max_bytes=2**40).add([{"name": "documents/x.test/probe", "content": _page_text("p")}])
        (footprint,) = probe.store.db.execute("SELECT size FROM documents WHERE origin = 'fetched'").fetchone()
    index = LocalIndex(tmp_path / "store.sqlite3", semantic=False)
    store = DocumentStore(index, max_bytes=int(3.5 * footprint), max_page_bytes=PAGE_TEXT + 10_000)  # three pages
    try:
        for name in ("a", "b", "c"):
            store.add([{"name": f"documents/x.test/{name}", "content": _page_text(name)}])
        assert len(store) == 3
        store.add([{"name": "documents/x.test/a", "content": _page_text("a")}])  # unchanged: used again
        report = store.add([{"name": "documents/x.test/d", "content": _page_text("d")}])
        assert report.removed == 1
        assert store.names() == ["documents/x.test/a", "documents/x.test/c", "documents/x.test/d"]
        assert store.search("w1")["results"] is not None and index.verify() == []
        assert store.add([{"name": "documents/x.test/e", "content": _page_text("e") * 2}]).skipped
    finally:
        store.close()


@pytest.mark.parametrize("value", ["lots", "-1", "nan", "inf"])
def test_a_store_limit_that_is_not_a_size_is_one_line(monkeypatch, capsys, value: str) -> None:
    monkeypatch.setenv("DEVKNOW_OFFLINE_STORE_MB", value)
    with pytest.raises(ConfigurationError, match="DEVKNOW_OFFLINE_STORE_MB must be a number of megabytes"):
        DocumentStore.open_default()

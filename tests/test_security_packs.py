"""Gallery: hostile pack files and a hostile upstream against the installed packs and the offline store.

Each pack here is a real pack built by ``devknow pack build`` from a small folder, then edited by hand with
SQLite as an attacker would (views, huge ids, foreign origins, slashes in names, malformed manifests, dropped
tables, damaged term counts and ranker snapshots). Every one must be refused with one line, and leave the
installed packs as they were. Later changes must keep these passing.
"""

from __future__ import annotations

import json
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient, cli, packs
from devknow_jupyter.local.index import LocalIndex
from devknow_jupyter.local.paths import default_index_path
from tests.conftest import ROOT
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

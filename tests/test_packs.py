"""Knowledge packs: recipes run against local git repositories rebuilt from the shared corpus, packs built,
added, listed, searched, opened directly, served by ``devknow serve --pack`` to the official MCP SDK client,
removed; damaged and newer-format packs refused with one line.

The repositories are made in a temporary folder from ``../shared/corpus`` (see :mod:`tests.corpus_repos`);
the tests that need them skip where it is absent. The slow paths use gemini-cli (96 pages) and
firebase-js (424 pages); the check of all five sources is marked ``corpus``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient, cli, packs
from devknow_jupyter.errors import ConfigurationError
from devknow_jupyter.packs.extract import checkout, documents
from devknow_jupyter.packs.recipe import parse_recipe
from tests.conftest import ROOT, free_port, stop_process, wait_for_port
from tests.corpus_repos import CORPUS, SOURCES, make_repo

#: What `devknow` exits with when a recipe or pack is refused (one status per error class).
CONFIG_STATUS = cli.EXIT_STATUS[ConfigurationError]


def _one_error(stderr: str) -> bool:
    """One `devknow: error:` line, at most followed by its `devknow: hint:` line; no traceback."""
    lines = stderr.strip("\n").split("\n")
    return lines[0].startswith("devknow: error:") and all(line.startswith("devknow: hint:") for line in lines[1:]) and (
        len(lines) <= 2
    )

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")
SKILLS = "documents/geminicli.com/docs/cli/skills"


# -- recipes (no corpus needed) ---------------------------------------------------------------------


def test_every_shipped_recipe_loads_with_a_licence_and_attribution() -> None:
    names = packs.shipped_recipes()
    assert {"adk-docs", "gemini-cli", "dart", "go", "firebase-js", "genkit", "tensorflow"} <= set(names)
    for name in names:
        recipe = packs.load_recipe(name)
        assert recipe.name == name
        assert recipe.repository.startswith("https://github.com/") and len(recipe.commit) == 40
        assert recipe.license and "Copyright" in recipe.attribution


def test_url_rules_map_paths_to_the_public_urls() -> None:
    go, gemini, tensorflow = packs.load_recipe("go"), packs.load_recipe("gemini-cli"), packs.load_recipe("tensorflow")
    assert go.url_for("_content/doc/tutorial/getting-started.html") == "https://go.dev/doc/tutorial/getting-started"
    assert go.url_for("_content/doc/index.md") == "https://go.dev/doc"
    assert go.wants("_content/blog/constants.md") and not go.wants("_content/blog/index.md")
    assert not go.wants("_content/blog/2020/nested.md")  # blog posts sit in one folder
    assert gemini.url_for("docs/index.md") == "https://geminicli.com/docs"
    assert gemini.wants("docs/cli/skills.mdx") and not gemini.wants("packages/cli/README.md")
    assert tensorflow.url_for("site/en/guide/keras.ipynb") == "https://www.tensorflow.org/guide/keras"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = 'x'\n[urls\n", "is not valid TOML"),
        ("title = 'no name'", "name is missing"),
        (
            "name='x'\n[source]\nrepository='r'\n[files]\ninclude=['*.md']\n[urls]\nurl='https://x.test/{path}'\n"
            "[cleanup]\nsteps=['shout']\n[license]\nspdx='MIT'\nattribution='a'",
            "unknown clean-up step 'shout'",
        ),
        ("name='x'\n[urls]\nurl='no-template'", "urls.url must be an http(s) URL template"),
    ],
)
def test_a_bad_recipe_is_one_line_naming_the_field(tmp_path: Path, text: str, message: str, capsys) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    assert cli.main(["pack", "build", str(path), "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert message in error and str(path) in error and _one_error(error)
    assert not (tmp_path / "x.pack").exists()


def test_an_unknown_recipe_name_lists_the_shipped_ones() -> None:
    with pytest.raises(packs.RecipeError) as caught:
        packs.load_recipe("no-such-docs")
    assert "No recipe named 'no-such-docs'" in caught.value.message and "go" in caught.value.hint


def test_cleanup_steps_keep_code_blocks(tmp_path: Path) -> None:
    page = (
        "---\ntitle: Lanterns\n---\nimport Tabs from '@site/tabs';\n\n<!-- draft note -->\nLanterns glow {% raw %}"
        "softly.\n\n\n\n```html\n<!-- kept in code -->\n```\n\nMore words about lanterns and their wicks here.\n"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lantern.mdx").write_text(page, encoding="utf-8")
    recipe = parse_recipe(
        {
            "name": "lanterns",
            "source": {"repository": str(tmp_path)},
            "files": {"include": ["docs/*.mdx"]},
            "urls": {"url": "https://lanterns.test/{path}", "strip_prefix": "docs/"},
            "cleanup": {"steps": ["mdx_imports", "liquid", "html_comments", "blank_lines"], "min_chars": 10},
            "license": {"spdx": "CC0-1.0", "attribution": "Lantern notes, by the tests."},
        }
    ).with_repository(str(tmp_path))  # a local folder is read when the user names it, not when a recipe does
    with checkout(recipe) as (folder, _):
        (doc,) = documents(recipe, folder)
    assert doc["name"] == "documents/lanterns.test/lantern" and doc["title"] == "Lanterns"
    assert "import Tabs" not in doc["content"] and "draft note" not in doc["content"] and "{%" not in doc["content"]
    assert "<!-- kept in code -->" in doc["content"] and "\n\n\n" not in doc["content"]


# -- against repositories rebuilt from the corpus ---------------------------------------------------


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str, list[dict]]]:
    """gemini-cli and firebase-js as local git repositories."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    where = tmp_path_factory.mktemp("repos")
    return {source: make_repo(source, where) for source in ("gemini-cli", "firebase-js")}


@pytest.fixture(scope="module")
def two_pack(repos, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pack of gemini-cli and firebase-js, built once by the CLI from file:// clones at their commits."""
    output = tmp_path_factory.mktemp("pack") / "google-docs.pack"
    args = ["pack", "build", "gemini-cli", "firebase-js", "-o", str(output)]
    for source, (repo, commit, _) in repos.items():
        args += ["--repo", f"{source}={repo.as_uri()}@{commit}"]
    assert cli.main(args) == 0
    return output


def _check_names(source: str, repo: Path, commit: str, pages: list[dict]) -> None:
    recipe = dataclasses.replace(packs.load_recipe(source).with_repository(str(repo)), commit=commit)
    with checkout(recipe) as (folder, _):
        built = {doc["source_path"]: doc for doc in documents(recipe, folder)}
    assert len(built) == len(pages)
    for page in pages:
        doc = built[page["source_path"]]
        assert (doc["name"], doc["uri"]) == (page["name"], page["uri"]), page["source_path"]


@needs_corpus
def test_recipes_give_the_corpus_names_and_urls(repos) -> None:
    for source, (repo, commit, pages) in repos.items():
        _check_names(source, repo, commit, pages)


@needs_corpus
@pytest.mark.corpus
@pytest.mark.parametrize("source", [s for s in SOURCES if s not in ("gemini-cli", "firebase-js")])
def test_every_source_gives_the_corpus_names_and_urls(source: str, tmp_path: Path) -> None:
    repo, commit, pages = make_repo(source, tmp_path)
    _check_names(source, repo, commit, pages)


@needs_corpus
def test_the_manifest_names_sources_commits_licences_and_counts(two_pack: Path, repos) -> None:
    manifest = packs.read_manifest(two_pack)
    assert manifest["format"] == packs.PACK_FORMAT and manifest["name"] == "google-docs" and manifest["built"]
    by_name = {source["name"]: source for source in manifest["sources"]}
    assert by_name["gemini-cli"]["pages"] == len(repos["gemini-cli"][2]) == 96
    assert by_name["firebase-js"]["pages"] == len(repos["firebase-js"][2])
    assert by_name["firebase-js"]["commit"] == repos["firebase-js"][1]
    assert by_name["gemini-cli"]["repository"] == "https://github.com/google-gemini/gemini-cli"  # not the local copy
    assert by_name["gemini-cli"]["license"] == "Apache-2.0" and "Gemini CLI" in by_name["gemini-cli"]["attribution"]


@needs_corpus
def test_build_shows_pages_per_source(repos, tmp_path: Path, capfd) -> None:
    repo, _, _ = repos["gemini-cli"]
    args = ["pack", "build", "gemini-cli", "-o", str(tmp_path / "g.pack"), "--repo", f"gemini-cli={repo}"]
    assert cli.main(args) == 0
    captured = capfd.readouterr()
    assert "gemini-cli: 96 pages\n" in captured.err  # not a terminal: plain lines, no bar
    assert "Built" in captured.out and "96 pages from 1 sources" in captured.out


@needs_corpus
def test_a_pinned_commit_missing_from_the_repository_is_one_line(repos, tmp_path: Path, capsys) -> None:
    repo, _, _ = repos["gemini-cli"]
    missing = "0" * 40
    args = ["pack", "build", "gemini-cli", "-o", str(tmp_path / "g.pack"), "--repo", f"gemini-cli={repo}@{missing}"]
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert error.startswith("devknow: error: gemini-cli: cannot fetch") and _one_error(error)
    assert not list(tmp_path.glob("g.pack*"))


@needs_corpus
def test_keep_going_builds_the_sources_it_can_fetch(repos, tmp_path: Path, capsys) -> None:
    repo, _, _ = repos["gemini-cli"]
    args = ["pack", "build", "gemini-cli", "go", "-o", str(tmp_path / "g.pack"), "--keep-going"]
    args += ["--repo", f"gemini-cli={repo}", "--repo", f"go={tmp_path / 'nowhere'}"]
    assert cli.main(args) == 0
    assert "skipped: go: no such folder or repository" in capsys.readouterr().err
    assert [source["name"] for source in packs.read_manifest(tmp_path / "g.pack")["sources"]] == ["gemini-cli"]


@needs_corpus
def test_a_pack_is_added_listed_searched_and_removed(two_pack: Path, capsys) -> None:
    assert cli.main(["pack", "add", str(two_pack)]) == 0
    assert "Added the pack google-docs: 520 pages" in capsys.readouterr().out
    assert cli.main(["--json", "pack", "list"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["name"] == "google-docs" and sum(s["pages"] for s in listed["sources"]) == 520

    with DevKnowClient("local") as client:
        hits = client.search_documents("firestore collection reference")
        assert hits[0].parent.startswith("documents/firebase.google.com/docs/reference/js/firestore")
        assert "_From the pack google-docs (Firebase JavaScript SDK reference, Apache-2.0)._" in hits[0].content
        starter = client.search_documents("devsearch magic options")  # the starter pack is still there
        assert starter[0].parent.startswith("documents/devknow-jupyter.dev/")
        assert "From the pack" not in starter[0].content
        (doc,) = client.get_documents([SKILLS])
        assert doc.content.rstrip().endswith("Modified: MDX imports and comments removed.")
        assert "_From the pack google-docs (Gemini CLI documentation, Apache-2.0)._" in doc.content

    assert cli.main(["pack", "remove", "google-docs"]) == 0
    assert "Removed the pack google-docs: 520 pages" in capsys.readouterr().out
    assert packs.installed() == []
    with DevKnowClient("local") as client:
        hits = client.search_documents("firestore collection reference")
        assert not any(hit.parent.startswith("documents/firebase.google.com") for hit in hits)
    assert cli.main(["pack", "remove", "google-docs"]) == CONFIG_STATUS
    assert "No pack named 'google-docs' is installed" in capsys.readouterr().err


@needs_corpus
def test_adding_the_same_pack_again_replaces_it(two_pack: Path) -> None:
    first = packs.add(two_pack)
    again = packs.add(two_pack)
    assert (first.pages, first.replaced) == (520, False) and (again.pages, again.replaced) == (520, True)
    with DevKnowClient("local") as client:
        assert len(client.get_documents([SKILLS])) == 1


@needs_corpus
def test_local_pack_endpoint_opens_one_pack_read_only(two_pack: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ro.pack"
    shutil.copy(two_pack, copy)
    before = copy.read_bytes()
    copy.chmod(0o444)
    with DevKnowClient(f"local:{copy}") as client:
        hits = client.search_documents("gemini cli agent skills")
        assert hits[0].parent.startswith("documents/geminicli.com/docs/")
        assert "_From the pack google-docs (Gemini CLI documentation" in hits[0].content
    assert copy.read_bytes() == before and not list(tmp_path.glob("ro.pack-*"))


def _damaged(pack: Path, where: Path) -> Path:
    copy = where / "damaged.pack"
    data = bytearray(pack.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 65536] = b"\xa5" * 65536
    copy.write_bytes(bytes(data))
    return copy


def _newer(pack: Path, where: Path) -> Path:
    copy = where / "newer.pack"
    shutil.copy(pack, copy)
    db = sqlite3.connect(copy)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'user:pack_format'")
    db.commit()
    db.close()
    return copy


@needs_corpus
@pytest.mark.parametrize(
    ("make", "message"),
    [(_damaged, "damaged.pack is damaged"), (_newer, "newer.pack was built by a newer devknow (pack format 99")],
)
def test_damaged_and_newer_packs_are_refused_without_touching_the_others(
    two_pack: Path, tmp_path: Path, capsys, make, message: str
) -> None:
    packs.add(two_pack)
    bad = make(two_pack, tmp_path)
    for args in (["pack", "add", str(bad)], ["--endpoint", f"local:{bad}", "search", "firestore"]):
        assert cli.main(args) == CONFIG_STATUS
        error = capsys.readouterr().err
        assert message in error and _one_error(error), error
    assert [manifest["name"] for manifest in packs.installed()] == ["google-docs"]
    with DevKnowClient("local") as client:
        assert client.get_documents([SKILLS])[0].name == SKILLS


def _start_serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, int, Path]:
    """A `devknow serve` process on a free port, once it listens: ``(process, port, log)``."""
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "devknow_jupyter", "serve", *args, "--port", str(port)]
    with log.open("w") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, log)
    except BaseException:
        stop_process(proc)
        raise
    return proc, port, log


@needs_corpus
@pytest.mark.parametrize("workers", [1, 2])
def test_serve_pack_answers_the_mcp_sdk_client(two_pack: Path, tmp_path: Path, workers: int) -> None:
    from tests.test_serve import with_sdk_client

    proc, port, log = _start_serve(tmp_path, "--pack", str(two_pack), "--workers", str(workers))
    try:

        async def body(client) -> dict:
            return {
                "search": await client.call_tool("search_documents", {"query": "gemini cli agent skills"}),
                "get": await client.call_tool("get_documents", {"names": [SKILLS]}),
            }

        for _ in range(3):  # several connections: with two workers both answer
            results = with_sdk_client(f"http://127.0.0.1:{port}/mcp", body)
            hits = results["search"].structured_content["results"]
            assert hits[0]["parent"].startswith("documents/geminicli.com/") and "From the pack" in hits[0]["content"]
            (doc,) = results["get"].structured_content["documents"]
            assert doc["name"] == SKILLS and "Copyright Google LLC" in doc["content"]
    finally:
        assert stop_process(proc) == 0
    text = log.read_text()
    assert f"devknow serve: 520 documents from local:{two_pack}" in text
    assert ("2 worker processes" in text) == (workers == 2)


@needs_corpus
def test_serve_refuses_a_damaged_pack_in_one_line(two_pack: Path, tmp_path: Path) -> None:
    bad = _damaged(two_pack, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "devknow_jupyter", "serve", "--pack", str(two_pack), "--pack", str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == CONFIG_STATUS and _one_error(done.stderr) and "damaged.pack is damaged" in done.stderr


def test_a_folder_of_markdown_becomes_a_pack(tmp_path: Path) -> None:
    folder = tmp_path / "team-notes"
    folder.mkdir()
    (folder / "deploy.md").write_text(
        "---\nname: documents/notes.team.test/deploy\nuri: https://notes.team.test/deploy\ntitle: Deploying\n---\n"
        "Deploys run from the release branch every Tuesday after the checklist is green.\n",
        encoding="utf-8",
    )
    report = packs.build([folder], tmp_path / "notes.pack")
    assert report.pages == 1 and report.manifest["sources"][0]["name"] == "team-notes"
    with DevKnowClient(f"local:{tmp_path / 'notes.pack'}") as client:
        (hit,) = client.search_documents("release branch deploys")
        assert hit.parent == "documents/notes.team.test/deploy" and "From the pack notes" in hit.content


def test_first_devsearch_without_key_or_packs_says_how_to_add_documentation(ip) -> None:
    from tests.test_magics import run

    _, captured = run(ip, "%devsearch go modules replace directive")
    notices = [o.data["text/plain"] for o in captured.outputs if "no API key set" in o.data.get("text/plain", "")]
    assert len(notices) == 1 and "\n" not in notices[0].strip()
    assert "`devknow pack build go -o go.pack`" in notices[0] and "`devknow index DIR`" in notices[0]


@needs_corpus
def test_with_a_pack_installed_the_notice_does_not_ask_for_documentation(two_pack: Path) -> None:
    packs.add(two_pack)
    with DevKnowClient() as client:  # no key: the offline index, holding the pack
        assert client.notices and "no API key set" in client.notices[0]
        assert "devknow pack build" not in client.notices[0]


def _note_pack(where: Path, name: str, slug: str, text: str) -> Path:
    folder = where / name
    folder.mkdir()
    (folder / f"{slug}.md").write_text(
        f"---\nname: documents/{name}.test/{slug}\ntitle: {slug.title()}\n---\n{text}\n", encoding="utf-8"
    )
    return packs.build([folder], where / f"{name}.pack").path


def test_serve_several_packs_searches_them_together(tmp_path: Path) -> None:
    first = _note_pack(tmp_path, "kilns", "firing", "Kilns are fired over twelve hours to cone six.")
    second = _note_pack(tmp_path, "glazes", "mixing", "Glazes mix silica, flux and alumina, sieved twice.")
    proc, port, log = _start_serve(tmp_path, "--pack", str(first), "--pack", str(second))
    try:
        with DevKnowClient(f"http://127.0.0.1:{port}/mcp") as client:
            kiln = client.search_documents("fired to cone six")[0]
            glaze = client.search_documents("silica flux alumina sieved")[0]
    finally:
        assert stop_process(proc) == 0
    assert kiln.parent == "documents/kilns.test/firing" and "From the pack kilns" in kiln.content
    assert glaze.parent == "documents/glazes.test/mixing" and "From the pack glazes" in glaze.content
    assert "devknow serve: 2 documents from 2 packs" in log.read_text()


def test_progress_draws_a_bar_in_a_terminal() -> None:
    import io

    from devknow_jupyter.packs.pack import TerminalProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    progress = TerminalProgress(screen)
    progress.expect("go", 100)
    for pages in range(1, 51):
        progress("go", pages)
    assert screen.getvalue().endswith("\rgo: [############------------] 50 pages")
    progress.finish()
    assert screen.getvalue().endswith("\r" + "go: 50 pages".ljust(60) + "\n")


def test_a_symlink_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("---\ntitle: Private\n---\nThis private note lives outside the repository folder entirely.\n")
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "own.md").write_text("---\ntitle: Own\n---\nA page of the repository, long enough to be kept.\n")
    (repo / "docs" / "leak.md").symlink_to(secret)
    recipe = parse_recipe(
        {
            "name": "links",
            "source": {"repository": str(repo)},
            "files": {"include": ["docs/*.md"]},
            "urls": {"url": "https://links.test/{path}", "strip_prefix": "docs/"},
            "cleanup": {"min_chars": 10},
            "license": {"spdx": "CC0-1.0", "attribution": "by the tests"},
        }
    ).with_repository(str(repo))
    with checkout(recipe) as (folder, _):
        assert [doc["name"] for doc in documents(recipe, folder)] == ["documents/links.test/own"]


def _credited(query: str, name: str) -> tuple[str, str]:
    """The content of the first hit for ``query`` and of the document ``name``, from the default index."""
    with DevKnowClient("local") as client:
        hits = client.search_documents(query)
        assert hits.names[0] == name
        return hits[0].content, client.get_documents([name])[0].content


@pytest.mark.parametrize("pack_first", [False, True], ids=["indexed-then-pack", "pack-then-indexed"])
def test_a_pack_of_pages_already_indexed_says_which_copy_wins_and_its_licence_follows(
    tmp_path: Path, capsys, pack_first: bool
) -> None:
    """Issue 24.7: the user's indexed file keeps the name (their own files always win), and the pack's line
    still ends the page, whichever came first; removing the pack removes the line, not the file."""
    pack = _note_pack(tmp_path, "kilns", "firing", "Kilns are fired over twelve hours to cone six.")
    folder, name = tmp_path / "kilns", "documents/kilns.test/firing"
    steps = [["pack", "add", str(pack)], ["index", str(folder)]]
    for args in steps if pack_first else steps[::-1]:
        assert cli.main(args) == 0
    out = capsys.readouterr().out
    if not pack_first:
        assert "Added the pack kilns: 0 pages" in out
        said = "1 of its pages are in the index from your indexed folders (same names): your files' copies are kept"
        assert said in out and "the pack's licence line is shown on them" in out
    with DevKnowClient("local") as client:
        assert client.backend.index.origins([name]) == {name: "file"}
    hit, doc = _credited("kilns fired cone six", name)
    assert "_From the pack kilns (kilns)._" in hit and "_From the pack kilns (kilns)._" in doc

    assert cli.main(["pack", "remove", "kilns"]) == 0
    assert "Removed the pack kilns: 0 pages" in capsys.readouterr().out
    hit, doc = _credited("kilns fired cone six", name)
    assert "From the pack" not in hit and "From the pack" not in doc

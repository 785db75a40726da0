"""`devknow pack build` as a newcomer meets it (issue 24, items 3 and 5): a build that matches nothing is an
error naming the globs and what the folder holds; a missing folder is called a folder; a recipe that cannot
fetch offline hints at a local copy; folder packs keep their licence and attribution.

Every build reads a real folder or git repository made in the test, through the CLI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devknow_jupyter import DevKnowClient, cli, packs
from devknow_jupyter.errors import ConfigurationError
from tests.conftest import free_port
from tests.test_security_recipes import git_repo, one_error, recipe_file

CONFIG_STATUS = cli.EXIT_STATUS[ConfigurationError]
NOTE = "---\nname: documents/notes.team.test/{slug}\ntitle: {title}\n{extra}---\n{text}\n"
APACHE = "\n                                 Apache License\n                           Version 2.0, January 2004\n"


def _notes(where: Path, extra: str = "", files: dict[str, str] | None = None) -> Path:
    """A folder of two team notes (Markdown naming themselves in their front matter), plus ``files``."""
    where.mkdir()
    pages = {
        "deploy.md": NOTE.format(slug="deploy", title="Deploying", extra=extra, text="Deploys leave on Tuesdays."),
        "kilns.md": NOTE.format(slug="kilns", title="Kilns", extra=extra, text="Kilns are fired to cone six."),
    }
    for relative, text in {**pages, **(files or {})}.items():
        (where / relative).write_text(text, encoding="utf-8")
    return where


# -- a build with nothing in it --------------------------------------------------------------------------------


def test_a_recipe_whose_globs_match_nothing_is_an_error_naming_them_and_the_folder(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "not-go"
    folder.mkdir()
    for name in ("notes.txt", "todo.txt", "setup.rst"):
        (folder / name).write_text("Not a page of the go recipe.\n", encoding="utf-8")
    output = tmp_path / "x.pack"
    assert cli.main(["pack", "build", "go", "--repo", f"go={folder}", "-o", str(output)]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert one_error(error) and not list(tmp_path.glob("x.pack*"))
    assert "_content/doc/**/*.{md,html}" in error and "_content/blog/*.md" in error  # the globs
    assert "3 files (2 .txt, 1 .rst)" in error and "notes.txt" in error  # what the folder holds


def test_a_git_repository_whose_files_all_drop_out_says_so(tmp_path: Path, capsys) -> None:
    repo = git_repo(tmp_path / "repo", {"docs/stub.md": "---\ntitle: Stub\n---\nShort.\n"})
    recipe = recipe_file(tmp_path, "https://evil.test/x")
    args = ["pack", "build", str(recipe), "--repo", f"evil={repo.as_uri()}", "-o", str(tmp_path / "x.pack")]
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert "1 file in" in error and "none became a page" in error and "under 20 characters" in error
    assert one_error(error) and not list(tmp_path.glob("x.pack*"))


def test_a_folder_without_markdown_is_an_error_and_keep_going_skips_it(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty-docs"
    empty.mkdir()
    (empty / "readme.txt").write_text("nothing here\n", encoding="utf-8")
    notes = _notes(tmp_path / "team-notes")
    assert cli.main(["pack", "build", str(empty), "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert "no file in" in error and "**/*.md" in error and "1 file" in error and one_error(error)
    args = ["pack", "build", str(empty), str(notes), "-o", str(tmp_path / "x.pack"), "--keep-going"]
    assert cli.main(args) == 0
    assert "skipped: empty-docs: no file in" in capsys.readouterr().err
    assert [source["name"] for source in packs.read_manifest(tmp_path / "x.pack")["sources"]] == ["team-notes"]


@pytest.mark.parametrize("spec", ["/no/such/folder", "./missing-docs", "~/no-such-devknow-folder"])
def test_a_missing_folder_is_called_a_folder(spec: str, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["pack", "build", spec, "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert error.startswith(f"devknow: error: No such folder: {spec}\n") and one_error(error)
    assert "No recipe named" not in error


def test_a_recipe_that_cannot_fetch_hints_at_a_local_copy_and_the_folder_form(tmp_path: Path, capsys) -> None:
    recipe = recipe_file(tmp_path, f"http://127.0.0.1:{free_port()}/evil.git")  # nothing listens: as offline
    assert cli.main(["pack", "build", str(recipe), "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert error.startswith("devknow: error: evil: cannot fetch http://127.0.0.1:") and one_error(error)
    hint = error.splitlines()[1]
    assert hint.startswith("devknow: hint:") and "--repo evil=PATH" in hint and "devknow pack build FOLDER" in hint


# -- licence and attribution of folder packs --------------------------------------------------------------------


def _credit(pack: Path, query: str) -> tuple[str, str]:
    """The last line of the first search hit, and the tail of the page as fetched, from the pack."""
    with DevKnowClient(f"local:{pack}") as client:
        hit = client.search_documents(query)[0]
        page = client.get_documents([hit.parent])[0]
    return hit.content.strip().splitlines()[-1], page.content.strip().splitlines()[-1]


def test_license_and_attribution_options_follow_the_folders_pages(tmp_path: Path, capsys) -> None:
    notes = _notes(tmp_path / "team-notes")
    pack = tmp_path / "notes.pack"
    args = ["pack", "build", str(notes), "-o", str(pack), "--license", "CC-BY-4.0"]
    assert cli.main([*args, "--attribution", "Team notes, by the kiln crew, CC BY 4.0."]) == 0
    assert "note:" not in capsys.readouterr().err
    (source,) = packs.read_manifest(pack)["sources"]
    assert (source["license"], source["attribution"]) == ("CC-BY-4.0", "Team notes, by the kiln crew, CC BY 4.0.")
    hit_line, page_tail = _credit(pack, "kilns fired to cone six")
    assert hit_line == "_From the pack notes (team-notes, CC-BY-4.0)._"
    assert "by the kiln crew" in page_tail


@pytest.mark.parametrize(
    ("extra", "files", "licence", "attribution"),
    [
        ("license: CC-BY-4.0\n", {}, "CC-BY-4.0", ""),
        ("", {"LICENSE": APACHE + "\n   Copyright 2026 The Kiln Crew\n"}, "Apache-2.0", "Copyright 2026 The Kiln Crew"),
    ],
    ids=["front-matter", "license-file"],
)
def test_a_folder_takes_its_licence_from_front_matter_or_its_license_file(
    extra: str, files: dict[str, str], licence: str, attribution: str, tmp_path: Path, capsys
) -> None:
    notes = _notes(tmp_path / "team-notes", extra, files)
    assert cli.main(["pack", "build", str(notes), "-o", str(tmp_path / "notes.pack")]) == 0
    assert "note:" not in capsys.readouterr().err
    (source,) = packs.read_manifest(tmp_path / "notes.pack")["sources"]
    assert source["license"] == licence and attribution in source["attribution"]
    assert _credit(tmp_path / "notes.pack", "deploys leave on tuesdays")[0].endswith(f", {licence})._")


def test_a_folder_of_unknown_licence_says_so(tmp_path: Path, capsys) -> None:
    notes = _notes(tmp_path / "team-notes", files={"LICENSE": "All rights reserved by nobody in particular.\n"})
    assert cli.main(["pack", "build", str(notes), "-o", str(tmp_path / "notes.pack")]) == 0
    err = capsys.readouterr().err
    assert "devknow: note: team-notes: no licence known" in err and "--license" in err
    assert packs.read_manifest(tmp_path / "notes.pack")["sources"][0]["license"] == ""


def test_license_options_with_only_recipes_are_refused(tmp_path: Path, capsys) -> None:
    args = ["pack", "build", "go", "-o", str(tmp_path / "x.pack"), "--license", "MIT"]
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert "--license and --attribution are for folders" in error and one_error(error)

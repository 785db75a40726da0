"""Gallery: what a hostile knowledge-pack recipe tried, and must keep failing at (issue 21, items 1-3).

A recipe is someone else's TOML file handed to ``devknow pack build``. Each test here builds from a real git
repository made in the test, through the CLI, and checks that the attack did nothing: no command ran (a
marker file stays absent), no file outside the repository became a page, no glob hung the build. Later
changes must keep every test here passing.
"""

from __future__ import annotations

import functools
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from devknow_jupyter import cli, packs
from devknow_jupyter.errors import ConfigurationError
from devknow_jupyter.packs.recipe import parse_recipe

CONFIG_STATUS = cli.EXIT_STATUS[ConfigurationError]
PAGE = "---\ntitle: {title}\n---\n{title} is a page of the repository, long enough to be kept as a page.\n"
SECRET = "The private note outside the repository says the vault code is 4417."


def git_repo(where: Path, files: dict[str, str], links: dict[str, str] | None = None) -> Path:
    """A git repository at ``where`` holding ``files`` (path: text) and symlinks (path: target), one commit."""
    for relative, text in files.items():
        (where / relative).parent.mkdir(parents=True, exist_ok=True)
        (where / relative).write_text(text, encoding="utf-8")
    for relative, target in (links or {}).items():
        (where / relative).parent.mkdir(parents=True, exist_ok=True)
        (where / relative).symlink_to(target)
    git = [
        "git",
        "-C",
        str(where),
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.test",
        "-c",
        "commit.gpgsign=false",
    ]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pages"], check=True)
    return where


def recipe_file(where: Path, repository: str, *, commit: str = "", include: str = "docs/*.md", extra: str = "") -> Path:
    """A recipe named ``evil`` for ``repository``, as a TOML file."""
    path = where / "evil.toml"
    pin = f"commit = {commit!r}\n" if commit else ""
    path.write_text(
        f"name = 'evil'\n[source]\nrepository = {repository!r}\n{pin}[files]\ninclude = [{include!r}]\n"
        "[urls]\nstrip_prefix = 'docs/'\nurl = 'https://evil.test/{path}'\n[cleanup]\nmin_chars = 20\n"
        "[license]\nspdx = 'MIT'\nattribution = 'by the tests'\n" + extra,
        encoding="utf-8",
    )
    return path


def one_error(stderr: str) -> bool:
    """One `devknow: error:` line (after any progress lines), at most followed by its hint; no traceback."""
    lines = stderr[stderr.find("devknow: ") :].strip("\n").split("\n")
    return (
        lines[0].startswith("devknow: error:")
        and len(lines) <= 2
        and all(line.startswith("devknow: hint:") for line in lines[1:])
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo", {"docs/own.md": PAGE.format(title="Own")})


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file that a command smuggled into git would create; ``$DEVKNOW_TEST_MARK`` names it (no slash needed)."""
    path = tmp_path / "command-ran"
    monkeypatch.setenv("DEVKNOW_TEST_MARK", str(path))
    return path


# -- 1. a recipe runs commands ----------------------------------------------------------------------------------

UPLOAD_PACK = "--upload-pack=touch${IFS}$DEVKNOW_TEST_MARK;git-upload-pack"


def test_a_recipe_commit_that_is_a_git_option_runs_nothing(repo: Path, marker: Path, tmp_path: Path, capsys) -> None:
    recipe = recipe_file(tmp_path, repo.as_uri(), commit=UPLOAD_PACK)
    status = cli.main(["pack", "build", str(recipe), "-o", str(tmp_path / "x.pack")])
    error = capsys.readouterr().err
    assert not marker.exists(), "the recipe's commit ran a command"
    assert status == CONFIG_STATUS
    assert "source.commit" in error and "not a commit id or a plain ref name" in error and one_error(error)
    assert not list(tmp_path.glob("x.pack*"))


@pytest.mark.parametrize("via", ["--repo", "DEVKNOW_PACK_REPOS"])
def test_a_repository_override_whose_ref_is_a_git_option_runs_nothing(
    via: str, repo: Path, marker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    override = f"gemini-cli={repo}@{UPLOAD_PACK}"
    args = ["pack", "build", "gemini-cli", "-o", str(tmp_path / "x.pack")]
    if via == "--repo":
        args += ["--repo", override]
    else:
        monkeypatch.setenv("DEVKNOW_PACK_REPOS", override)
    status = cli.main(args)
    error = capsys.readouterr().err
    assert not marker.exists(), "the ref after @ ran a command"
    assert status == CONFIG_STATUS
    assert "not a commit id or a plain ref name" in error and one_error(error)


@pytest.mark.parametrize("where", ["recipe", "--repo"])
def test_an_ext_transport_runs_nothing_even_when_the_users_git_allows_every_protocol(
    where: str, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    marker = tmp_path / "ext-ran"
    config = tmp_path / "gitconfig"
    config.write_text("[protocol]\n\tallow = always\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))  # the user's own git allows ext:: ...
    ext = f"ext::sh -c touch% {marker}% ://evil.test/x"  # ... and the recipe (or a pasted --repo) names it
    if where == "recipe":
        args = ["pack", "build", str(recipe_file(tmp_path, ext))]
    else:
        args = ["pack", "build", str(recipe_file(tmp_path, "https://evil.test/x")), "--repo", f"evil={ext}"]
    assert cli.main([*args, "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert not marker.exists(), "git ran the ext:: transport's command"
    assert "transport::" in error and one_error(error)


def test_an_https_url_rewritten_to_ext_by_the_users_config_runs_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    marker = tmp_path / "ext-ran"
    config = tmp_path / "gitconfig"
    config.write_text(
        f'[protocol]\n\tallow = always\n[url "ext::sh -c touch% {marker}% "]\n\tinsteadOf = https://evil.test/\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    recipe = recipe_file(tmp_path, "https://evil.test/x")
    assert cli.main(["pack", "build", str(recipe), "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    assert not marker.exists(), "only the recipe's own protocol (https) may be used"
    assert "cannot fetch" in capsys.readouterr().err


def test_the_users_git_templates_and_hooks_do_not_run_during_a_build(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "hook-ran"
    hooks = tmp_path / "template" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    (hooks / "post-checkout").chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(f"[init]\n\ttemplateDir = {tmp_path / 'template'}\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    recipe = recipe_file(tmp_path, "https://evil.test/x")
    args = ["pack", "build", str(recipe), "--repo", f"evil={repo}", "-o", str(tmp_path / "x.pack")]
    assert cli.main(args) == 0
    assert not marker.exists(), "a hook ran in the temporary clone"
    assert packs.read_manifest(tmp_path / "x.pack")["sources"][0]["pages"] == 1


@pytest.mark.parametrize("repository", [".", "docs-copy", "file:///etc"])
def test_a_recipe_cannot_build_from_a_local_folder_it_names(
    repository: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    private = git_repo(tmp_path / "checkout", {"docs/private.md": PAGE.format(title="Private")})
    git_repo(private / "docs-copy", {"docs/copy.md": PAGE.format(title="Copy")})
    monkeypatch.chdir(private)  # the user stands in their own checkout
    recipe = recipe_file(tmp_path, repository)
    assert cli.main(["pack", "build", str(recipe), "-o", str(tmp_path / "x.pack")]) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert "may not read the local folder or repository" in error and "--repo evil=PATH" in error
    assert one_error(error) and not list(tmp_path.glob("x.pack*"))
    # The user may point it at a folder themselves.
    assert cli.main(["pack", "build", str(recipe), "--repo", "evil=.", "-o", str(tmp_path / "x.pack")]) == 0


# -- 2. a recipe reads files outside its repository -------------------------------------------------------------


def _generated(file: str) -> str:
    return f"[[generated]]\nfile = {file!r}\nurl = 'https://evil.test/data/{{id}}'\nbody = ['text']\n"


@pytest.mark.parametrize("kind", ["dot-dot", "absolute", "folder-symlink", "file-symlink"])
def test_a_generated_data_file_outside_the_repository_is_never_read(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.json").write_text(f'[{{"id": "vault", "text": "{SECRET}"}}]', encoding="utf-8")
    clones = tmp_path / "clones"  # where the build's temporary clone goes: `..` from it is tmp_path
    clones.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(clones))
    files = {"docs/own.md": PAGE.format(title="Own")}
    if kind == "dot-dot":
        file, links = "../../outside/x.json", {}
        (clones / "outside").symlink_to(outside)  # `..` of the clone holds it too
    elif kind == "absolute":
        file, links = str(outside / "x.json"), {}
    elif kind == "folder-symlink":
        file, links = "docs/data/x.json", {"docs/data": str(outside)}
    else:
        file, links = "docs/data/x.json", {"docs/data/x.json": str(outside / "x.json")}
    repo = git_repo(tmp_path / "repo", files, links)
    recipe = recipe_file(tmp_path, "https://evil.test/x", extra=_generated(file))
    output = tmp_path / "x.pack"
    status = cli.main(["pack", "build", str(recipe), "--repo", f"evil={repo}", "-o", str(output)])
    error = capsys.readouterr().err
    assert not output.exists() or SECRET.split()[-1] not in output.read_bytes().decode("utf-8", "replace")
    assert status == CONFIG_STATUS and one_error(error) and not output.exists()
    assert "outside the repository" in error or "not a path inside the repository" in error


@pytest.mark.parametrize("pattern", ["../outside/*.md", "/etc/*", "docs/../../*.md"])
def test_an_include_glob_that_climbs_out_is_refused(pattern: str, repo: Path, tmp_path: Path, capsys) -> None:
    recipe = recipe_file(tmp_path, "https://evil.test/x", include=pattern)
    args = ["pack", "build", str(recipe), "--repo", f"evil={repo}", "-o", str(tmp_path / "x.pack")]
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert "files.include" in error and "not a path inside the repository" in error and one_error(error)


@pytest.mark.parametrize(
    ("url", "extra", "message"),
    [
        ("https://evil.test/{path}/{0}", "", "urls.url may hold only {path}, not {0}"),
        ("https://evil.test/{path}", _generated("docs/x.json").replace("{id}'", "{id}/{id.__class__}'"), "not {id"),
    ],
    ids=["index", "attribute"],
)
def test_a_template_with_other_fields_is_one_line(
    url: str, extra: str, message: str, repo: Path, tmp_path: Path, capsys
) -> None:
    recipe = recipe_file(tmp_path, "https://evil.test/x", extra=extra)
    recipe.write_text(recipe.read_text().replace("https://evil.test/{path}", url), encoding="utf-8")
    args = ["pack", "build", str(recipe), "--repo", f"evil={repo}", "-o", str(tmp_path / "x.pack")]
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert message in error and one_error(error)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("generated = 'x.json'\n", "generated must be an array of tables"),
        (_generated("docs/x.json").replace("body = ['text']", "body = 5"), "body must be a list of field names"),
        (_generated("docs/x.json") + "where = [1]\n", "where and where_not must be tables"),
    ],
    ids=["not-tables", "body", "where"],
)
def test_a_malformed_generated_table_is_one_line(extra: str, message: str, repo: Path, tmp_path: Path, capsys) -> None:
    recipe = recipe_file(tmp_path, "https://evil.test/x", extra=extra)
    if extra.startswith("generated ="):  # a top-level key: before the first table
        recipe.write_text(extra + recipe.read_text().replace(extra, ""), encoding="utf-8")
    args = ["pack", "build", str(recipe), "--repo", f"evil={repo}", "-o", str(tmp_path / "x.pack")]
    assert cli.main(args) == CONFIG_STATUS
    error = capsys.readouterr().err
    assert message in error and one_error(error)


# -- 3. a glob hangs the build ----------------------------------------------------------------------------------

HOSTILE_GLOB = "docs/*a*a*a*a*a*a*a*a*a*a*a*a*b.md"


def test_a_glob_of_many_stars_against_long_names_finishes_at_once(tmp_path: Path) -> None:
    files = {f"docs/{'a' * 12}b.md": PAGE.format(title="Ab")}
    files.update({f"docs/{'a' * length}.md": PAGE.format(title=f"A{length}") for length in (60, 120, 240)})
    repo = git_repo(tmp_path / "repo", files)
    recipe = recipe_file(tmp_path, "https://evil.test/x", include=HOSTILE_GLOB)
    command = [sys.executable, "-m", "devknow_jupyter", "pack", "build", str(recipe), "--repo", f"evil={repo}"]
    started = time.perf_counter()
    try:
        done = subprocess.run([*command, "-o", str(tmp_path / "x.pack")], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("pack build was still matching the glob after 60 s")
    assert done.returncode == 0, done.stderr
    assert packs.read_manifest(tmp_path / "x.pack")["sources"][0]["pages"] == 1  # only docs/aaaaaaaaaaaab.md
    assert time.perf_counter() - started < 30


def _reference(pattern: str, path: str) -> bool:
    """An independent reading of the glob rules, by plain recursion (slow, fine for short strings)."""

    @functools.cache
    def match(p: int, s: int) -> bool:
        if p == len(pattern):
            return s == len(path)
        if pattern.startswith("**/", p):  # any folders, or none
            return match(p + 3, s) or any(match(p + 3, end + 1) for end in range(s, len(path)) if path[end] == "/")
        if pattern.startswith("**", p):
            return any(match(p + 2, end) for end in range(s, len(path) + 1))
        if pattern[p] == "*":
            return any(match(p + 1, end) for end in range(s, len(path) + 1) if "/" not in path[s:end])
        if pattern[p] == "{" and "}" in pattern[p:]:
            end = pattern.index("}", p)
            return any(
                path.startswith(alt, s) and match(end + 1, s + len(alt)) for alt in pattern[p + 1 : end].split(",")
            )
        if s < len(path) and (pattern[p] == path[s] if pattern[p] != "?" else path[s] != "/"):
            return match(p + 1, s + 1)
        return False

    return match(0, 0)


def test_globs_match_what_the_rules_say_and_stay_fast(tmp_path: Path) -> None:
    rng = random.Random(21)
    pieces = ["a", "b", "*", "?", "{a,ab}", "b."]
    checked = 0
    for _ in range(300):
        segments = ["**" if rng.random() < 0.25 else "".join(rng.choices(pieces, k=rng.randint(1, 4))) for _ in "xyz"]
        pattern = "/".join(segments[: rng.randint(1, 3)])
        if re.search(r"[^/]\*\*|\*\*[^/]", pattern):
            continue  # `**` inside a name is refused (below)
        recipe = parse_recipe(
            {
                "name": "globs",
                "source": {"repository": "https://globs.test/x"},
                "files": {"include": [pattern]},
                "urls": {"url": "https://globs.test/{path}"},
                "license": {"spdx": "MIT", "attribution": "tests"},
            }
        )
        for _ in range(40):
            path = "/".join("".join(rng.choices("ab.", k=rng.randint(1, 4))) for _ in range(rng.randint(1, 4)))
            assert recipe.wants(path) == _reference(pattern, path), (pattern, path)
            checked += 1
    assert checked > 5000
    with pytest.raises(packs.RecipeError, match="inside a name"):
        parse_recipe({**_minimal(), "files": {"include": ["docs/**.md"]}})
    with pytest.raises(packs.RecipeError, match="brace alternatives"):
        parse_recipe({**_minimal(), "files": {"include": ["{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}.md"]}})


def _minimal() -> dict:
    return {
        "name": "globs",
        "source": {"repository": "https://globs.test/x"},
        "urls": {"url": "https://globs.test/{path}"},
        "license": {"spdx": "MIT", "attribution": "tests"},
    }

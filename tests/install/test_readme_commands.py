"""The README's Install section is true: each of its commands is run by a test, in a fresh virtualenv.

Stand-ins: a local bare git repository for the GitHub URL (made here from this checkout's tracked files as they
are in the working tree, so uncommitted edits count), and for PyPI, where the package is not published yet, a
folder holding the built wheel (``--find-links``; the dependencies still come from the index). The repository
line installs for real and builds the JupyterLab panel with Node, as it does for users; the
built-wheel line is the base shape's install (test_install_shapes.py); the published lines are resolved with
``pip install --dry-run --report`` (what each would install: our wheel and its extra's packages), as the shapes
already install the same wheel with each extra for real. All run at once, in threads.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib

from tests.conftest import ROOT
from tests.install.conftest import BuiltDists
from tests.install.venvs import Venv, readme_install_commands

pytestmark = pytest.mark.timeout(900)  # a first run downloads the packages; the panel is built twice

HOME = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Homepage"]
NAME = HOME.rstrip("/").rsplit("/", 1)[1]


def groups() -> dict[str, list[str]]:
    """The README's install lines by what runs them: a venv for the repository line, one for the published lines
    (dry runs, at once), the base shape for the built wheel; a line of another kind is "unknown" (and fails)."""
    found: dict[str, list[str]] = {"repository": [], "published": [], "wheel": [], "unknown": []}
    for line in readme_install_commands():
        kind = ("repository" if "git+" in line else "wheel" if "dist/" in line
                else "published" if re.fullmatch(r"pip install '?devknow-jupyter(\[\w+\])?'?", line) else "unknown")
        found[kind].append(line)
    return found


#: A package each extra brings, to find in what a published line would install.
BRINGS = {"server": "mcp", "rest": "google-developer-knowledge", "semantic": "wordllama", "lab": "jupyterlab"}


@dataclass
class Ran:
    venv: Venv
    lines: list[str]
    reports: list[dict] = field(default_factory=list)  # pip's --report of each dry-run line


def _remote(folder: Path) -> str:
    """A bare repository with this checkout's tracked files as they are now; its file:// URL."""
    work = folder / "work"
    work.mkdir(parents=True)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a deleted file still listed until committed
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, work / name, follow_symlinks=False)
    ident = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    env = {**os.environ, **ident}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
    bare = folder / "remote" / NAME
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, capture_output=True)
    return f"file://localhost{bare}"  # pip before 24 takes a git+file URL only with a host


def _run(kind: str, lines: list[str], root: Path, remote: str, index: Path) -> Ran:
    started = time.monotonic()
    venv = Venv(kind, root / kind)
    venv.create(pip=True)  # as users have it: python -m venv, then pip
    ran = Ran(venv, lines)
    if kind == "published":
        reports = [venv.folder / f"report-{number}.json" for number in range(len(lines))]
        with ThreadPoolExecutor(max_workers=len(lines)) as pool:
            list(pool.map(lambda line, report: venv.shell(
                f"{line} --dry-run --quiet --find-links {index} --report {report}"), lines, reports))
        ran.reports = [json.loads(report.read_text()) for report in reports]
    else:
        for line in lines:
            venv.shell(line.replace(HOME, remote))
    venv.timed("commands", started)
    return ran


@pytest.fixture(scope="module")
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Ran]]:
    root = tmp_path_factory.mktemp("readme")
    remote = _remote(root / "git")
    index = root / "index"
    index.mkdir()
    lines = groups()
    with ThreadPoolExecutor(max_workers=2) as pool:
        # The repository line (the longest: it builds the panel) needs no built wheel: it starts before the build.
        futures = {"repository": pool.submit(_run, "repository", lines["repository"], root, remote, index)}
        built: BuiltDists = request.getfixturevalue("built_dists")
        shutil.copy2(built.wheel, index)
        futures["published"] = pool.submit(_run, "published", lines["published"], root, remote, index)
        done = {kind: future.result() for kind, future in futures.items()}
    yield done
    print(f"\nREADME install commands, seconds: {json.dumps({kind: r.venv.seconds for kind, r in done.items()})}")


def test_every_install_line_is_run_by_a_test() -> None:
    found = groups()
    assert sum(map(len, found.values())) == len(readme_install_commands())
    assert found["unknown"] == [], "a README install line no test runs: add it to tests/install"
    assert found["repository"] and found["published"] and len(found["wheel"]) == 1  # the base shape runs the wheel


def test_from_the_repository_with_extras(ran: dict[str, Ran]) -> None:
    venv = ran["repository"].venv
    seen = venv.probe("imports")
    assert seen["package"].startswith(str(venv.folder / "venv"))
    assert seen["extras_installed"] == ["rest", "server"] and seen["extras_imported"] == []
    panel = venv.folder / "venv" / "share" / "jupyter" / "labextensions" / "devknow-jupyter" / "package.json"
    assert panel.is_file()  # built with Node from the repository's sources
    assert "create-an-api-key" in venv.run("devknow", "search", "api", "key").stdout


def test_published_lines_resolve_to_the_wheel_and_their_extras(ran: dict[str, Ran], built_dists: BuiltDists) -> None:
    published = ran["published"]
    for line, report in zip(published.lines, published.reports, strict=True):
        would = {item["metadata"]["name"].lower(): item for item in report["install"]}
        assert would["devknow-jupyter"]["download_info"]["url"].endswith(built_dists.wheel.name), line
        extras = [extra for extra in BRINGS if f"[{extra}]" in line]
        assert all(BRINGS[extra] in would for extra in extras), (line, sorted(would))
        assert not any(BRINGS[extra] in would for extra in BRINGS if extra not in extras), line
    assert sorted(extra for line in published.lines for extra in BRINGS if f"[{extra}]" in line) == sorted(BRINGS)

"""The wheel and the sdist stand alone: what they hold, their metadata, and one version everywhere.

Both archives come from ``built_dists`` (``python -m build`` with no Node on PATH: the wheel is built from
the sdist). Their contents are listed with zipfile/tarfile and checked against the files of this checkout.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import tomllib

from devknow_jupyter import __version__
from tests.conftest import ROOT
from tests.install.conftest import BuiltDists

NPM_NAME = "devknow-jupyter"
PANEL_BUILD = ROOT / "devknow_jupyter" / "labextension"  # the prebuilt JupyterLab panel (git-ignored)
# What no archive may carry: build leftovers, node packages, the compiled TypeScript, bytecode.
NEVER = re.compile(r"(^|/)(node_modules|__pycache__|\.ipynb_checkpoints)/|\.pyc$|(^|/)labextension/lib/|tsbuildinfo")


def tracked(*folders: str) -> list[str]:
    """The files git tracks under ``folders`` of this checkout (all their files in an unpacked sdist)."""
    if not (ROOT / ".git").exists():
        found = (path for folder in folders for path in (ROOT / folder).rglob("*") if path.is_file())
        kept = (path for path in found if not NEVER.search(path.as_posix()) and not path.is_relative_to(PANEL_BUILD))
        return [path.relative_to(ROOT).as_posix() for path in kept]  # the panel's build is git-ignored
    out = subprocess.run(["git", "ls-files", "-z", "--", *folders], cwd=ROOT, capture_output=True, check=True)
    return [name for name in out.stdout.decode().split("\0") if name and (ROOT / name).is_file()]


def panel_files() -> set[str]:
    """The prebuilt panel's files, relative to its folder."""
    return {path.relative_to(PANEL_BUILD).as_posix() for path in PANEL_BUILD.rglob("*") if path.is_file()}


def wheel_metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return HeaderParser().parsestr(archive.read(name).decode())


def test_twine_check_passes_on_both(built_dists: BuiltDists) -> None:
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(built_dists.wheel),
                           str(built_dists.sdist)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_wheel_holds_the_package_the_panel_and_nothing_else(built_dists: BuiltDists) -> None:
    names = set(zipfile.ZipFile(built_dists.wheel).namelist())
    # Every file of the package: modules, the widgets' ES modules and stylesheets, recipes, starter pages.
    package = set(tracked("devknow_jupyter"))
    assert package - names == set()
    for kind in ("render/esm/*.js", "render/esm/*.css", "explorer/esm/*.js", "explorer/esm/*.css",
                 "packs/recipes/*.toml", "local/starter/*.md"):
        assert [n for n in package if Path(n).match(f"devknow_jupyter/{kind}")], kind  # the rule names real files
    # The built panel, whole, as shared data; and the file that enables its server extension.
    data = f"devknow_jupyter-{__version__}.data/data"
    share = f"{data}/share/jupyter/labextensions/{NPM_NAME}/"
    assert {n.removeprefix(share) for n in names if n.startswith(share)} == panel_files()
    assert {"static/style.js", "package.json", f"schemas/{NPM_NAME}/plugin.json"} <= panel_files()
    assert any(re.fullmatch(r"static/remoteEntry\.[0-9a-f]+\.js", n) for n in panel_files())
    assert f"{data}/etc/jupyter/jupyter_server_config.d/devknow_jupyter.labext.json" in names
    # Nothing else: no tests, benchmarks, panel sources or node packages; the panel only once.
    dist_info = f"devknow_jupyter-{__version__}.dist-info/"
    extra = {n for n in names if not n.startswith((dist_info, share))} - package
    assert extra == {f"{data}/etc/jupyter/jupyter_server_config.d/devknow_jupyter.labext.json"}, sorted(extra)
    assert not [n for n in names if NEVER.search(n)]
    assert f"{dist_info}licenses/LICENSE" in names


def test_sdist_holds_the_tests_the_sources_and_the_prebuilt_panel(built_dists: BuiltDists) -> None:
    top = f"devknow_jupyter-{__version__}/"
    with tarfile.open(built_dists.sdist) as archive:
        names = {member.name.removeprefix(top) for member in archive.getmembers() if member.isfile()}
    needed = set(tracked("devknow_jupyter", "tests", "labextension", "docs"))
    needed |= {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "PKG-INFO"}
    assert needed - names == set()
    # The prebuilt panel, so that a wheel builds from the sdist without Node (the wheel here was).
    assert {f"devknow_jupyter/labextension/{name}" for name in panel_files()} <= names
    assert not [n for n in names if NEVER.search(n)]
    # Only what belongs to the package and its tests: no benchmarks, notebooks, CI or binder files.
    assert {n.split("/", 1)[0] for n in names} == {
        "devknow_jupyter", "tests", "labextension", "pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE",
        "PKG-INFO", ".gitignore", "deploy", "docs",
    }


def test_metadata_is_complete_and_names_the_tested_pythons(built_dists: BuiltDists) -> None:
    meta = wheel_metadata(built_dists.wheel)
    assert meta["Name"] == "devknow-jupyter"
    assert meta["License-Expression"] == "Apache-2.0" and meta["License-File"] == "LICENSE"
    assert meta["Summary"] and meta["Description-Content-Type"] == "text/markdown"
    urls = dict(url.split(", ", 1) for url in meta.get_all("Project-URL"))
    assert set(urls) == {"Homepage", "Source", "Issues", "Changelog"}
    assert urls["Changelog"].endswith("/CHANGELOG.md") and urls["Issues"].endswith("/issues")
    # The Python classifiers are the versions the tests run on: the floor of Requires-Python (the lowest
    # versions job, tests/install/test_lowest.py) and this interpreter (the rest of the suite).
    floor = re.fullmatch(r">=\s*(3\.\d+)", meta["Requires-Python"])
    assert floor, meta["Requires-Python"]
    tested = {floor.group(1), f"{sys.version_info.major}.{sys.version_info.minor}"}
    classifiers = meta.get_all("Classifier")
    python = re.compile(r"Programming Language :: Python :: (3\.\d+)")
    named = {match.group(1) for match in map(python.fullmatch, classifiers) if match}
    assert named == tested
    assert "Framework :: Jupyter :: JupyterLab :: Extensions :: Prebuilt" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # the licence is the SPDX expression


def test_one_version_in_the_metadata_the_changelog_and_the_panel(built_dists: BuiltDists) -> None:
    version = wheel_metadata(built_dists.wheel)["Version"]
    assert version == __version__  # read by hatch from devknow_jupyter/_version.py, the one place it is written
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "devknow_jupyter/_version.py"
    assert built_dists.sdist.name == f"devknow_jupyter-{version}.tar.gz"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## (\S+)", changelog, re.M).group(1) == version  # the newest entry comes first
    # The panel's npm package carries the same version (JupyterLab shows it in `labextension list`).
    with zipfile.ZipFile(built_dists.wheel) as archive:
        bundled = json.loads(archive.read(
            f"devknow_jupyter-{version}.data/data/share/jupyter/labextensions/{NPM_NAME}/package.json"))
    assert bundled["version"] == version
    assert json.loads((ROOT / "labextension" / "package.json").read_text())["version"] == version

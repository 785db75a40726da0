"""The documentation site in docs/ builds with Sphinx (MyST pages, the PyData theme), warning-free and offline.

Every warning is an error (``-W``): a broken cross-reference, a page left out of the table of contents, a
heading that skips a level or a code block that does not parse fails the test, with Sphinx's own message.
Nothing is fetched: the configuration loads no intersphinx, and the build runs in a temporary folder.
"""

from __future__ import annotations

import ast
import html
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = ROOT / "docs"
pytestmark = pytest.mark.timeout(300)


def build(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``sphinx-build -W`` of ``source`` into ``out`` (HTML), as a subprocess; its result."""
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html",
               "-d", str(out / "doctrees"), str(source), str(out / "html")]
    return subprocess.run(command, capture_output=True, text=True, timeout=280, cwd=ROOT)


def test_the_configuration_fetches_nothing() -> None:
    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    assigned = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}
    extensions = ast.literal_eval(assigned["extensions"])
    assert "myst_parser" in extensions and not [name for name in extensions if "intersphinx" in name]
    assert "intersphinx_mapping" not in assigned
    assert ast.literal_eval(assigned["html_theme"]) == "pydata_sphinx_theme"


def test_the_site_builds_without_a_warning_and_every_page_is_in_it(tmp_path: Path) -> None:
    done = build(DOCS, tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert not done.stderr.strip(), done.stderr[-4000:]
    pages = {path.stem for path in DOCS.glob("*.md")}
    built = {path.stem for path in (tmp_path / "html").glob("*.html")}
    assert pages <= built, pages - built
    index = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    for page in pages - {"index"}:  # the table of contents globs every page: none needs a conf edit
        assert f'href="{page}.html"' in index, page
    install = (tmp_path / "html" / "install.html").read_text(encoding="utf-8")
    assert "git+https://github.com/devknow/devknow_jupyter" in install  # the README's Install, included
    reference = html.unescape((tmp_path / "html" / "reference.html").read_text(encoding="utf-8"))
    from devknow_jupyter.magics import DevKnowMagics

    usage = DevKnowMagics.devsearch.__doc__.split("::", 1)[1].strip().splitlines()[0]  # "%devsearch [-n N] …"
    assert usage in reference and "devknow serve" in reference and "--allow-host" in reference


def test_a_warning_fails_the_build(tmp_path: Path) -> None:
    source = tmp_path / "docs"  # a copy of docs/ beside what its pages and conf.py read from the checkout
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build"))
    for name in ("README.md", "devknow_jupyter"):
        (tmp_path / name).symlink_to(ROOT / name)
    (source / "broken.md").write_text("# Broken\n\nSee [the missing page](no-such-page.md).\n", encoding="utf-8")
    done = build(source, tmp_path / "out")
    assert done.returncode != 0
    assert "no-such-page" in done.stderr, done.stderr[-2000:]


def test_the_screenshots_are_small_and_every_one_is_shown() -> None:
    images = {path.name: path.stat().st_size for path in (DOCS / "_static").glob("*.png")}
    assert images, "docs/_static has the screenshots of scripts/docs_screenshots.py"
    assert {name: size for name, size in images.items() if size >= 150_000} == {}
    pages = "".join(path.read_text(encoding="utf-8") for path in DOCS.glob("*.md"))
    assert {name for name in images if f"_static/{name}" not in pages} == set()

"""The README says how to install before the package is on PyPI: from the repository named in pyproject.toml."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT


def test_readme_installs_from_the_projects_repository_first() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    home = project["urls"]["Homepage"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") :]
    assert install.index(f"git+{home}") < install.index("pip install devknow-jupyter")
    assert "Until the package is published on PyPI" in install

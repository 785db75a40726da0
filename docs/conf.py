"""Sphinx configuration of the devknow_jupyter documentation: MyST Markdown pages, the PyData theme.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (``tests/test_docs.py`` does, warnings as
errors). The build needs no network: no intersphinx, nothing fetched. Every ``*.md`` page in this folder
is in the table of contents (``index.md`` globs them), so a new page needs no edit here.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_VERSION_FILE = _HERE.parent / "devknow_jupyter" / "_version.py"
# This checkout's package (for the help texts of the reference page) and the local extension.
sys.path[:0] = [str(_HERE.parent), str(_HERE / "_ext")]

project = "devknow_jupyter"
author = "devknow_jupyter developers"
copyright = "the devknow_jupyter developers"
release = re.search(r"__version__\s*=\s*\"([^\"]+)\"", _VERSION_FILE.read_text(encoding="utf-8")).group(1)
version = release

extensions = ["myst_parser", "devknow_help"]  # devknow_help: _ext/devknow_help.py
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # `[text](page.md#a-heading)` links resolve

html_theme = "pydata_sphinx_theme"
html_title = "devknow_jupyter"
html_static_path = ["_static"]
html_theme_options = {
    "github_url": "https://github.com/devknow/devknow_jupyter",
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_sidebars = {"**": []}  # one flat table of contents: the top bar holds it, no empty side bar
html_last_updated_fmt = None

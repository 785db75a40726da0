"""Knowledge packs: documentation sources built into one file each, searched offline with the rest.

- :mod:`.recipe`: the TOML recipes (repository, commit, paths, URL rule, clean-up, licence).
- :mod:`.sources`: what a recipe may name (repository, ref, paths); :mod:`.globs`: its globs, in linear time.
- :mod:`.cleanup`: the clean-up steps, notebooks and HTML pages to Markdown.
- :mod:`.fetch`: a recipe's repository fetched (shallow git fetch at the commit, hardened git environment).
- :mod:`.extract`: a checkout read into documents; :mod:`.licences`: a folder's licence when it has no recipe.
- :mod:`.pack`: the pack file (an index in the LocalIndex schema plus a manifest): :func:`build`, checks.
- :mod:`.checks`: what a pack from a stranger must pass before its rows are read (tables, rows, manifest).
- :mod:`.installed`: :func:`add`, :func:`installed` (``devknow pack list``) and :func:`remove` on the default index.

``DevKnowClient("local:FILE.pack")`` opens one pack directly; ``devknow serve --pack FILE`` serves packs.
"""

from __future__ import annotations

from .extract import FetchError
from .installed import AddReport, add, installed, remove
from .pack import PACK_FORMAT, PackError, PackReport, build, open_pack, read_manifest
from .recipe import Recipe, RecipeError, load_recipe, shipped_recipes

__all__ = [
    "PACK_FORMAT",
    "AddReport",
    "FetchError",
    "PackError",
    "PackReport",
    "Recipe",
    "RecipeError",
    "add",
    "build",
    "installed",
    "load_recipe",
    "open_pack",
    "read_manifest",
    "remove",
    "shipped_recipes",
]

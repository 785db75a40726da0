"""Knowledge packs: documentation sources built into one file each, searched offline with the rest.

- :mod:`.recipe`: the TOML recipes (repository, commit, paths, URL rule, clean-up, licence).
- :mod:`.cleanup`: the clean-up steps, notebooks and HTML pages to Markdown.
- :mod:`.extract`: a recipe's repository fetched (shallow git clone at the commit) and read into documents.
"""

from __future__ import annotations

from .recipe import Recipe, RecipeError, load_recipe, shipped_recipes

__all__ = ["Recipe", "RecipeError", "load_recipe", "shipped_recipes"]

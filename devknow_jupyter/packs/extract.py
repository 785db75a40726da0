"""From a checkout to documents: the recipe's files read, cleaned and named.

:func:`~.fetch.checkout` gives a folder holding the recipe's repository at its commit (a local folder as it
is, else a shallow git fetch of the commit into a temporary folder); :func:`documents` walks it. Nothing is
read from outside that folder: symlinks out are not followed, and a data file's real path must lie inside.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..local.frontmatter import FrontMatterError, split_front_matter
from ..local.reading import Unreadable, open_document
from .cleanup import clean, html_to_markdown, notebook_to_markdown
from .fetch import FetchError, checkout
from .recipe import Generated, Recipe

__all__ = ["FetchError", "candidates", "checkout", "documents", "holdings"]

#: Files larger than this are not documentation pages (a generated JSON data file may be larger).
MAX_PAGE_BYTES = 4 * 1024 * 1024
MAX_DATA_BYTES = 64 * 1024 * 1024


def documents(recipe: Recipe, root: Path) -> Iterator[dict[str, str]]:
    """The recipe's pages under ``root`` as service-shaped documents, plus ``source_path``; sorted by path.

    Pages are skipped when they map to no URL, are redirect stubs (``skip_front_matter``), hold fewer than
    ``min_chars`` non-space characters after clean-up, or repeat a name already given.
    """
    seen: set[str] = set()
    for relative in candidates(recipe, root):
        document = _page(recipe, root, relative)
        if document is not None and document["name"] not in seen:
            seen.add(document["name"])
            yield document
    for generated in recipe.generated:
        for document in _generated(recipe, root, generated):
            if document["name"] not in seen:
                seen.add(document["name"])
                yield document


def holdings(root: Path, *, limit: int = 100_000) -> str:
    """What a folder holds, for a message: its file count and most common suffixes, with a few examples."""
    suffixes: dict[str, int] = {}
    examples: list[str] = []
    files = 0
    for directory, subdirs, filenames in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        for filename in sorted(filenames):
            files += 1
            suffix = Path(filename).suffix.lower() or "(no suffix)"
            suffixes[suffix] = suffixes.get(suffix, 0) + 1
            if len(examples) < 3:
                examples.append(Path(directory, filename).relative_to(root).as_posix())
        if files >= limit:
            break
    if not files:
        return "no files"
    common = sorted(suffixes.items(), key=lambda item: (-item[1], item[0]))
    kinds = ", ".join(f"{count} {suffix}" for suffix, count in common[:4]) + (", ..." if len(common) > 4 else "")
    return f"{files}{'+' if files >= limit else ''} files ({kinds}), e.g. {', '.join(examples)}"


def candidates(recipe: Recipe, root: Path) -> list[str]:
    """The repository paths the recipe includes, sorted (each becomes at most one page)."""
    files = []
    for directory, subdirs, filenames in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        for filename in filenames:
            relative = Path(directory, filename).relative_to(root).as_posix()
            if recipe.wants(relative):
                files.append(relative)
    return sorted(files)


def _page(recipe: Recipe, root: Path, relative: str) -> dict[str, str] | None:
    path = root / relative
    text = _read(path, root, MAX_PAGE_BYTES)
    if text is None:
        return None
    suffix = path.suffix.lower()
    meta: dict[str, Any] = {}
    if suffix == ".ipynb":
        if not recipe.notebooks:
            return None
        try:
            text = notebook_to_markdown(text)
        except (ValueError, AttributeError, TypeError):
            return None
    elif suffix in (".html", ".htm"):
        if text.startswith("<!--{"):  # go.dev: a JSON header with Title, Summary, Path
            header, _, text = text[4:].partition("}-->")
            try:
                meta = dict(json.loads(header + "}"))
            except ValueError:
                meta = {}
        if recipe.html and "<" in text:
            text = html_to_markdown(text)
    if not meta:
        try:
            front = split_front_matter(text)
        except FrontMatterError:
            return None
        meta, text = front.meta, front.body
    for key, wanted in recipe.skip_front_matter.items():
        if key in meta and (wanted == "*" or meta[key] == wanted):
            return None
    uri = recipe.url_for(relative)
    if recipe.front_matter_names:
        uri = _front_matter_uri(meta) or uri
    if uri is None:
        return None
    body = clean(text, recipe.cleanup, recipe.variables)
    if len("".join(body.split())) < recipe.min_chars:
        return None
    title = _first(meta, recipe.title_fields) or _first_heading(body) or path.stem
    document = {
        "name": "documents/" + uri.split("://", 1)[1],
        "uri": uri,
        "title": " ".join(title.split()),
        "description": _first(meta, recipe.description_fields),
        "content": body,
        "source_path": relative,
    }
    if _first(meta, ("license",)):  # a folder without a recipe takes its licence from here
        document["license"] = _first(meta, ("license",))
    return document


def _generated(recipe: Recipe, root: Path, generated: Generated) -> Iterator[dict[str, str]]:
    path = root / generated.file
    real, top = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    if top not in real.parents:  # `..`, an absolute path, or a folder on the way that links out
        raise FetchError(f"{recipe.name}: the data file {generated.file} leads outside the repository (to {real})")
    text = _read(path, root, MAX_DATA_BYTES)
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return
    entries = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get(generated.id_field), str):
            continue
        if any(entry.get(key) != value for key, value in generated.where.items()):
            continue
        if any(entry.get(key) == value for key, value in generated.where_not.items()):
            continue
        ident = entry[generated.id_field]
        parts = [str(entry[key]) for key in generated.body_fields if isinstance(entry.get(key), str)]
        body = clean("\n\n".join(parts), recipe.cleanup, recipe.variables)
        if len("".join(body.split())) < recipe.min_chars:
            continue
        uri = generated.url.format(id=ident).rstrip("/")
        yield {
            "name": "documents/" + uri.split("://", 1)[1],
            "uri": uri,
            "title": generated.title.format(id=ident),
            "description": generated.description.format(id=ident),
            "content": body,
            "source_path": f"{generated.file}#{ident}",
        }


def _front_matter_uri(meta: dict[str, Any]) -> str | None:
    """The page's URL from its own ``uri`` or ``name`` (``documents/site/path``) front matter field."""
    uri, name = str(meta.get("uri") or "").strip(), str(meta.get("name") or "").strip()
    if uri.startswith(("https://", "http://")):
        return uri.rstrip("/")
    if name.startswith("documents/"):
        return "https://" + name[len("documents/") :].rstrip("/")
    return None


def _read(path: Path, root: Path, limit: int) -> str | None:
    """A file of the checkout as text, or None: a symlink out of the repository, a FIFO or device, or a file
    over ``limit`` is not read (a fetched repository is not trusted to hold only documentation)."""
    try:
        with open_document(path, root) as handle:
            raw = handle.read(limit)
    except Unreadable:
        return None
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _first(meta: dict[str, Any], fields: tuple[str, ...]) -> str:
    for key in fields:
        value = meta.get(key)
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value).strip()
    return ""


def _first_heading(body: str) -> str:
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""

"""From a checkout to documents: the recipe's files read, cleaned and named; the repository fetched with git.

:func:`checkout` gives a folder holding the recipe's repository at its commit (a local folder as it is,
else ``git clone --depth 1`` of the commit into a temporary folder); :func:`documents` walks it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..local.frontmatter import FrontMatterError, split_front_matter
from ..local.reading import Unreadable, open_document
from .cleanup import clean, html_to_markdown, notebook_to_markdown
from .recipe import Generated, Recipe

__all__ = ["FetchError", "candidates", "checkout", "documents"]

#: Files larger than this are not documentation pages (a generated JSON data file may be larger).
MAX_PAGE_BYTES = 4 * 1024 * 1024
MAX_DATA_BYTES = 64 * 1024 * 1024
GIT_TIMEOUT = 600


class FetchError(ConfigurationError):
    """A repository could not be fetched (no git, no network, unknown commit); the message says which."""


@contextmanager
def checkout(recipe: Recipe) -> Iterator[tuple[Path, str]]:
    """The recipe's files on disk and the commit they are at: ``(folder, commit)``.

    A repository that is a plain local folder is used in place (its commit is the recipe's, or
    ``"working tree"``); a git URL, ``file://`` URL or local git repository is cloned shallow at the
    pinned commit into a temporary folder, removed afterwards.
    """
    source = recipe.repository
    local = Path(source[len("file://") :] if source.startswith("file://") else source).expanduser()
    if "://" not in source or source.startswith("file://"):
        if not local.exists():
            raise FetchError(f"{recipe.name}: no such folder or repository: {local}")
        if not (local / ".git").exists() and not (local / "HEAD").is_file():
            yield local, recipe.commit or "working tree"
            return
        source = local.resolve().as_uri()
    if shutil.which("git") is None:
        raise FetchError(f"{recipe.name}: `git` is not on the PATH, so {source} cannot be fetched.")
    folder = Path(tempfile.mkdtemp(prefix=f"devknow-{recipe.name}-"))
    try:
        _git(recipe, ["init", "-q", str(folder)])
        _git(recipe, ["-C", str(folder), "remote", "add", "origin", source])
        ref = recipe.commit or "HEAD"
        # Only the recipe's folders are checked out, and only their files are downloaded (a partial clone):
        # a documentation folder is a small part of most repositories.
        _sparse(recipe, folder)
        # Fetching one commit by id needs the server's allowReachableSHA1InWant; GitHub and local repos allow it.
        fetch = ["-C", str(folder), "-c", "protocol.file.allow=always", "fetch", "-q", "--depth", "1"]
        fetch += ["--filter=blob:none", "origin", ref]
        _git(recipe, fetch)
        _git(recipe, ["-C", str(folder), "checkout", "-q", "FETCH_HEAD"])
        commit = _git(recipe, ["-C", str(folder), "rev-parse", "HEAD"]).strip()
        yield folder, commit
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _sparse(recipe: Recipe, folder: Path) -> None:
    """Limit the checkout to the folders the recipe's include patterns and data files name."""
    tops = set()
    for pattern in (*recipe.include, *(item.file for item in recipe.generated)):
        fixed = []
        for part in pattern.split("/"):
            if any(ch in part for ch in "*?{["):
                break
            fixed.append(part)
        tops.add("/" + "/".join(fixed) + ("/" if len(fixed) < len(pattern.split("/")) else ""))
    if "/" in tops or "//" in tops:
        return
    try:
        _git(recipe, ["-C", str(folder), "sparse-checkout", "set", "--no-cone", *sorted(tops)])
    except FetchError:
        pass  # an old git without sparse-checkout: the whole tree is checked out


def _git(recipe: Recipe, args: list[str]) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        raise FetchError(f"{recipe.name}: git {args[-2] if len(args) > 1 else ''} took over {GIT_TIMEOUT} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        raise FetchError(f"{recipe.name}: cannot fetch {recipe.repository}: {lines[-1] if lines else 'git failed'}")
    return done.stdout


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
    return {
        "name": "documents/" + uri.split("://", 1)[1],
        "uri": uri,
        "title": " ".join(title.split()),
        "description": _first(meta, recipe.description_fields),
        "content": body,
        "source_path": relative,
    }


def _generated(recipe: Recipe, root: Path, generated: Generated) -> Iterator[dict[str, str]]:
    text = _read(root / generated.file, root, MAX_DATA_BYTES)
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

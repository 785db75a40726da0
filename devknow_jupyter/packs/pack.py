"""The pack file: one SQLite file in the :class:`~devknow_jupyter.local.index.LocalIndex` schema (documents,
passages, full-text entries, term counts and the built ranker), plus a manifest in its ``meta`` table.

Loading a pack needs no re-indexing: it is opened read-only as it is, or its rows are copied into the default
index. The manifest says what is inside: ``format``, ``name``, ``built`` (UTC), and per source its
``repository``, ``commit``, ``license``, ``attribution`` and ``pages``.
"""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from .._version import __version__
from ..errors import ConfigurationError
from ..local.index import SCHEMA_VERSION, LocalIndex
from .extract import FetchError, candidates, checkout, documents, holdings
from .licences import folder_licence
from .recipe import RECIPES_DIR, Recipe, RecipeError, load_recipe

__all__ = [
    "PACK_FORMAT",
    "PackError",
    "PackReport",
    "TerminalProgress",
    "attributions",
    "build",
    "open_pack",
    "origin_of",
    "read_manifest",
    "source_origins",
]

#: The pack format this version writes and the newest it reads.
PACK_FORMAT = 1
_MAGIC = b"SQLite format 3\x00"

Progress = Callable[[str, int], None]


class PackError(ConfigurationError):
    """A pack that cannot be used (damaged, not a pack, from a newer devknow); one line says which and why."""


@dataclass
class PackReport:
    """What :func:`build` made: the file, its manifest, its size, and how long it took."""

    path: Path
    manifest: dict[str, Any]
    size_bytes: int = 0
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)  # sources that could not be fetched, with the reason
    notes: list[str] = field(default_factory=list)  # what the user should know, e.g. a source of unknown licence

    @property
    def pages(self) -> int:
        """Pages in the pack, all sources together."""
        return sum(source["pages"] for source in self.manifest["sources"])


def origin_of(pack: str, source: str) -> str:
    """The ``origin`` the index records for the pages of one source of a pack."""
    return f"pack:{pack}/{source}"


def _resolve(spec: str | Path | Recipe, repos: dict[str, str]) -> Recipe:
    """A recipe for a build argument: a recipe (name or .toml), a folder of Markdown, or a git repository."""
    if isinstance(spec, Recipe):
        recipe = spec
    else:
        text = str(spec)
        path = Path(text).expanduser()
        # A bare name is a shipped recipe even when a folder of that name is in the working directory.
        shipped = "/" not in text and (RECIPES_DIR / f"{text}.toml").is_file()
        if shipped or text.endswith(".toml"):
            recipe = load_recipe(text)
        elif "://" not in text and not path.exists():
            if isinstance(spec, Path) or "/" in text or os.sep in text or text.startswith((".", "~")):
                hint = "Give an existing folder, a .toml recipe or a shipped recipe (devknow pack recipes)."
                raise RecipeError(f"No such folder: {text}", hint=hint)
            recipe = load_recipe(text)  # "No recipe named ...", listing the shipped ones
        else:
            # A folder or repository of Markdown pages that name themselves in their front matter.
            stem = path.name if "://" not in text else text.rstrip("/").rsplit("/", 1)[-1]
            stem = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in stem.removesuffix(".git").lower())
            recipe = Recipe(
                name=stem or "folder",
                title=stem or "folder",
                repository=text,
                commit="",
                include=("**/*.md", "**/*.markdown"),
                exclude=(),
                url=f"https://{stem or 'folder'}.local.invalid/{{path}}",  # for pages that do not name themselves
                front_matter_names=True,
                min_chars=1,
                license="",
                attribution="",
                user_repository=True,  # the user typed it
            )
    override = repos.get(recipe.name)
    if not override:
        return recipe
    where, _, commit = override.rpartition("@") if "@" in override.rsplit("/", 1)[-1] else (override, "", "")
    return recipe.with_repository(where, commit)


def build(
    sources: Sequence[str | Path | Recipe],
    output: str | os.PathLike[str],
    *,
    name: str | None = None,
    repos: dict[str, str] | None = None,
    keep_going: bool = False,
    progress: Progress | None = None,
    license: str | None = None,
    attribution: str | None = None,
) -> PackReport:
    """Build one pack file at ``output`` from recipes (``"go"``, ``"my.toml"``), folders or git repositories.

    ``repos`` maps a recipe name to another copy of its repository (a local path or ``file://`` URL), read at
    that copy's HEAD, or at a commit given as ``PATH@COMMIT``.
    ``keep_going``: a source that cannot be fetched, or that gives no page, is reported in
    :attr:`PackReport.skipped` and the others are built (else :class:`~.fetch.FetchError` is raised).
    ``progress(source, pages)`` is called as pages are read.
    ``license`` (SPDX) and ``attribution``: for the folders and git repositories, which carry no recipe; without
    them a folder's licence is read from its pages' ``license`` front matter or its LICENSE file, and
    :attr:`PackReport.notes` says when none is known.
    The file is written next to ``output`` and moved into place at the end: an interrupted build leaves nothing.
    """
    started = time.perf_counter()
    output = Path(output).expanduser()
    repos = {**_env_repos(), **(repos or {})}
    recipes = [_resolve(spec, repos) for spec in sources]
    if not recipes:
        raise ConfigurationError("Nothing to build.", hint="Name recipes (devknow pack recipes) or folders.")
    if license or attribution:
        if not any(not recipe.license for recipe in recipes):
            raise ConfigurationError("--license and --attribution are for folders; recipes name their own.")
        recipes = [recipe if recipe.license else _licensed(recipe, license, attribution) for recipe in recipes]
    partial = output.with_name(output.name + ".partial")
    partial.unlink(missing_ok=True)
    report = PackReport(output, {"format": PACK_FORMAT, "name": name or output.stem, "sources": []})
    index = LocalIndex(partial, semantic=False)
    try:
        for recipe in recipes:
            overridden = recipe.name in repos
            _add_source(index, recipe, report, overridden=overridden, keep_going=keep_going, progress=progress)
        _seal(index, report)
    except BaseException:
        index.close()
        _unlink(partial)
        raise
    index.close()
    _compact(partial)
    os.replace(partial, output)
    report.size_bytes = output.stat().st_size
    report.seconds = time.perf_counter() - started
    return report


def _add_source(
    index: LocalIndex,
    recipe: Recipe,
    report: PackReport,
    *,
    overridden: bool,
    keep_going: bool,
    progress: Progress | None,
) -> None:
    """Read one source into ``index`` and list it in the manifest; with ``keep_going`` a source that cannot be
    fetched is noted in ``report.skipped`` instead. ``overridden``: read from another copy of its repository."""
    try:
        with checkout(recipe) as (folder, commit):
            pages, licences = _read(recipe, folder, progress)
            if not pages:
                raise FetchError(_no_pages(recipe, folder))
            if not recipe.license:
                recipe = _licensed(recipe, *folder_licence(folder, licences))
            added = index.add_documents(pages, origin=origin_of(report.manifest["name"], recipe.name))
    except ConfigurationError as exc:
        if not keep_going:
            raise
        report.skipped.append(exc.message)
        return
    if not recipe.license:
        report.notes.append(
            f"{recipe.name}: no licence known (no --license, no `license` front matter, no LICENSE file it "
            "recognises); its pages carry none."
        )
    report.manifest["sources"].append(
        {
            "name": recipe.name,
            "title": recipe.title,
            "repository": _public(recipe) if overridden else recipe.repository,
            "commit": commit,
            "license": recipe.license,
            "attribution": recipe.attribution,
            "pages": added.added + added.updated,
        }
    )


def _licensed(recipe: Recipe, license: str | None, attribution: str | None) -> Recipe:
    """A folder's recipe with its licence and attribution filled in (an attribution alone names no licence)."""
    return replace(recipe, license=license or recipe.license, attribution=attribution or recipe.attribution)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _no_pages(recipe: Recipe, folder: Path) -> str:
    """Why a source gave no page: which globs matched nothing in what the folder holds, or what dropped them."""
    matched = len(candidates(recipe, folder))
    where = recipe.repository
    if matched:
        return (
            f"{recipe.name}: {_count(matched, 'file')} in {where} match the recipe, but none became a page "
            f"(redirect stubs, under {recipe.min_chars} characters, or no URL)"
        )
    globs = ", ".join(recipe.include) + (f" (less {', '.join(recipe.exclude)})" if recipe.exclude else "")
    return f"{recipe.name}: no file in {where} matches {globs}; it holds {holdings(folder)}"


def _seal(index: LocalIndex, report: PackReport) -> None:
    """Write the manifest into the pack and build its ranker (stored in the file); a pack of no source fails."""
    manifest = report.manifest
    if not manifest["sources"]:
        raise PackError("No source could be read: " + "; ".join(report.skipped or ["no pages"]))
    manifest["built"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest["devknow_jupyter"] = __version__
    index.set_meta("pack_format", str(PACK_FORMAT))
    index.set_meta("pack_manifest", json.dumps(manifest, sort_keys=True))
    index.search("pack", 1)  # builds the ranker and stores it in the file


def _compact(path: Path) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, readable read-only anywhere
        db.execute("VACUUM")
    finally:
        db.close()


def _env_repos() -> dict[str, str]:
    """``$DEVKNOW_PACK_REPOS``: ``NAME=PATH`` pairs (space-separated) that point recipes at other repository copies."""
    pairs = (item.partition("=") for item in os.environ.get("DEVKNOW_PACK_REPOS", "").split())
    return {name: path for name, sep, path in pairs if sep and name and path}


def _public(recipe: Recipe) -> str:
    """The repository the shipped recipe names (a local override is not what the pack should cite)."""
    try:
        return load_recipe(recipe.name).repository
    except ConfigurationError:
        return recipe.repository


def _read(recipe: Recipe, folder: Path, progress: Progress | None) -> tuple[list[dict[str, str]], list[str]]:
    """The source's pages, and the ``license`` their front matter names (one entry per page naming one)."""
    expect = getattr(progress, "expect", None)
    if expect is not None:  # a bar needs a total: the included files (generated pages come on top)
        expect(recipe.name, len(candidates(recipe, folder)))
    pages, licences = [], []
    for page in documents(recipe, folder):
        page.pop("source_path", None)
        if "license" in page:
            licences.append(page.pop("license"))
        pages.append(page)
        if progress is not None:
            progress(recipe.name, len(pages))
    return pages, licences


def _unlink(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of the pack at ``path``, after checking it can be used.

    Raises :class:`PackError` (one line) when the file is missing, not a pack, damaged, or of a newer format.
    Damage includes what a hostile file could hold (see :mod:`.checks`): views or triggers, tables without the
    schema's columns, a manifest of another shape, ids out of range, pages of an origin the manifest does not
    list.
    """
    from . import checks

    path = Path(path).expanduser()
    shown = path.name
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_MAGIC))
    except OSError as exc:
        raise PackError(f"Cannot read the pack {path}: {exc.strerror or exc}") from None
    if head != _MAGIC:
        raise PackError(f"{shown} is not a devknow pack (not an SQLite file).")
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise PackError(f"{shown} cannot be opened: {exc}") from None
    try:
        return _checked_manifest(db, shown)
    except sqlite3.DatabaseError as exc:
        raise PackError(f"{shown} is damaged ({exc}).", hint="Build or download it again.") from None
    except checks.Damaged as exc:
        raise PackError(f"{shown} is damaged: {exc.message}.", hint="Build or download it again.") from None
    finally:
        db.close()


def _checked_manifest(db: sqlite3.Connection, shown: str) -> dict[str, Any]:
    """The manifest of the pack open as ``db``: its tables checked before any row is read, then its meta,
    its integrity, its manifest and its rows."""
    from . import checks

    if db.execute("SELECT type FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
        raise PackError(f"{shown} is not a devknow pack (it has no meta table).")
    checks.check_tables(db)
    keys = "('schema', 'user:pack_format', 'user:pack_manifest')"
    meta = dict(db.execute(f"SELECT key, value FROM meta WHERE key IN {keys}"))
    version = meta.get("user:pack_format")
    if version is None:
        raise PackError(f"{shown} is a devknow index, not a pack.", hint="Make packs with `devknow pack build`.")
    if not isinstance(version, str) or not version.isdigit() or int(version) > PACK_FORMAT:
        raise PackError(
            f"{shown} was built by a newer devknow (pack format {str(version)[:20]}; this one reads {PACK_FORMAT}).",
            hint="Upgrade devknow-jupyter, or rebuild the pack with this version.",
        )
    if meta.get("schema") != SCHEMA_VERSION:
        raise PackError(f"{shown} holds index schema {meta.get('schema')}, this version reads {SCHEMA_VERSION}.")
    problems = [row[0] for row in db.execute("PRAGMA quick_check") if row[0] != "ok"]
    if problems:
        # SQLite's report runs over many lines; its first line says enough.
        first = problems[0].strip().splitlines()[0] if problems[0].strip() else "integrity check failed"
        raise PackError(f"{shown} is damaged: {first}", hint="Build or download it again.")
    text = meta.get("user:pack_manifest")
    if not isinstance(text, str) or len(text) > checks.MAX_MANIFEST_BYTES:
        raise checks.Damaged("its manifest is missing or too long")
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError):
        raise checks.Damaged("its manifest is not JSON") from None
    checks.check_manifest(manifest, pack_format=int(version))
    checks.check_rows(db, set(source_origins(manifest)))
    return manifest


def source_origins(manifest: dict[str, Any]) -> dict[str, str]:
    """The origin of each source's pages in a pack with this (checked) manifest, by source name."""
    return {origin_of(manifest["name"], source["name"]): source["name"] for source in manifest["sources"]}


def open_pack(path: str | os.PathLike[str]) -> tuple[LocalIndex, dict[str, Any]]:
    """The pack at ``path`` opened read-only (no re-indexing), and its manifest; :class:`PackError` if unusable."""
    manifest = read_manifest(path)
    return LocalIndex(Path(path).expanduser(), read_only=True, semantic=False), manifest


def attributions(manifests: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """For each origin of these packs' pages: the pack, the source's title, licence and attribution."""
    found = {}
    for manifest in manifests:
        for source in manifest.get("sources", []):
            found[origin_of(manifest.get("name", ""), source.get("name", ""))] = {
                "pack": str(manifest.get("name", "")),
                "source": str(source.get("title") or source.get("name", "")),
                "license": str(source.get("license", "")),
                "attribution": str(source.get("attribution", "")),
            }
    return found


class TerminalProgress:
    """Pages read per source: a bar redrawn in place in a terminal, one plain line per source otherwise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.current: str | None = None
        self.pages = 0
        self.expected: dict[str, int] = {}

    def expect(self, source: str, files: int) -> None:
        """About how many pages ``source`` will give (the bar's 100 %)."""
        self.expected[source] = files

    def __call__(self, source: str, pages: int) -> None:
        if source != self.current:
            self.finish()
            self.current = source
        self.pages = pages
        if self.tty and pages % 25 == 0:
            self.stream.write(f"\r{source}: {self._bar()} {pages} pages")
            self.stream.flush()

    def _bar(self, width: int = 24) -> str:
        total = self.expected.get(self.current or "", 0)
        filled = width if not total else min(width, width * self.pages // total)
        return "[" + "#" * filled + "-" * (width - filled) + "]"

    def finish(self) -> None:
        """End the current source's line."""
        if self.current is not None:
            line = f"{self.current}: {self.pages} pages"
            self.stream.write(f"\r{line:<60}\n" if self.tty else f"{line}\n")  # padded over the bar
            self.stream.flush()
            self.current = None

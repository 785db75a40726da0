"""Installed packs: copied into the default index (by origin), so they are searched with the starter pack,
the indexed folders and the fetched documents in one ranking, and served by ``devknow serve``.

The manifests of the installed packs are kept in the default index's meta (``installed_packs``), so the
index alone says which pack each page came from and under which licence.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..local.index import LocalIndex
from .checks import SOURCE_FIELDS
from .pack import PackError, origin_of, read_manifest, source_origins

__all__ = ["INSTALLED_KEY", "AddReport", "add", "combined_index", "installed", "remove"]

INSTALLED_KEY = "installed_packs"


@dataclass
class AddReport:
    """What :func:`add` did: the pack's name, pages copied, names kept from the index, seconds taken.

    ``kept``: of the names kept, how many per copy kept (``"file"``: the user's indexed files, which always
    win; ``"pack NAME"``: a pack installed before). The pack's licence line is shown on those pages too."""

    name: str
    pages: int
    skipped: int
    seconds: float
    replaced: bool = False
    kept: dict[str, int] = field(default_factory=dict)


def _default_index() -> LocalIndex:
    from ..local.backend import open_cache_index
    from ..local.paths import default_index_path

    return open_cache_index(default_index_path())


def installed_manifests(index: LocalIndex) -> dict[str, dict[str, Any]]:
    """The manifests of the packs installed in ``index``, by pack name (each with the fields ``pack list`` shows:
    one stored by an older version in another shape is read as far as it goes, never a crash)."""
    try:
        data = json.loads(index.get_meta(INSTALLED_KEY) or "{}")
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(name): _readable(str(name), manifest) for name, manifest in data.items() if isinstance(manifest, dict)}


def _readable(name: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """A stored manifest with its name and, per source, text fields and a page count (damaged sources left out)."""
    sources = manifest.get("sources") if isinstance(manifest.get("sources"), list) else []
    readable = []
    for source in sources:
        if isinstance(source, dict) and isinstance(source.get("name"), str):
            pages = source.get("pages")
            texts = {key: str(source.get(key) or "") for key in SOURCE_FIELDS}
            readable.append({**source, **texts, "pages": pages if type(pages) is int and pages >= 0 else 0})
    return {**manifest, "name": name, "sources": readable}


def add(path: str | os.PathLike[str], *, index: LocalIndex | None = None) -> AddReport:
    """Install the pack at ``path`` into the default index (``index``: another one); a pack of the same name
    is replaced. The pack is checked first (see :mod:`.checks`): a damaged, hostile or newer-format pack raises
    :class:`~.pack.PackError` and nothing changes. Its pages get the origin ``pack:NAME/SOURCE`` set here, and
    the older copy's pages, the new pages and the manifest are written in one transaction."""
    started = time.perf_counter()
    manifest = read_manifest(path)
    own = index is None
    index = index if index is not None else _default_index()  # an empty index is falsy (len 0)
    try:
        packs = installed_manifests(index)
        name = manifest["name"]
        previous = packs.get(name)
        origins = {origin: origin_of(name, source) for origin, source in source_origins(manifest).items()}
        packs[name] = {**manifest, "file": str(Path(path).expanduser().resolve()), "added": time.time()}
        _forget_cached_results()
        report = index.import_index(
            Path(path).expanduser(),
            origins,
            replacing=_origins(previous) if previous else (),
            meta={INSTALLED_KEY: json.dumps(packs, sort_keys=True)},
        )
        _forget_cached_results()
        kept = _kept_copies(index, [skipped for skipped, _ in report.skipped])
    finally:
        if own:
            index.close()
    seconds = time.perf_counter() - started
    return AddReport(name, report.added, len(report.skipped), seconds, previous is not None, kept)


def _kept_copies(index: LocalIndex, names: list[str]) -> dict[str, int]:
    """How many of ``names`` the index keeps from the user's files (``"file"``) and from each other pack."""
    kept: dict[str, int] = {}
    for origin in index.origins(names).values():
        key = "pack " + origin.removeprefix("pack:").split("/", 1)[0] if origin.startswith("pack:") else origin
        kept[key] = kept.get(key, 0) + 1
    return kept


def installed(*, index: LocalIndex | None = None) -> list[dict[str, Any]]:
    """The installed packs' manifests (name, sources with licences and page counts, built), sorted by name."""
    own = index is None
    index = index if index is not None else _default_index()  # an empty index is falsy (len 0)
    try:
        return [packs for _, packs in sorted(installed_manifests(index).items())]
    finally:
        if own:
            index.close()


def remove(name: str, *, index: LocalIndex | None = None) -> int:
    """Uninstall the pack called ``name``; returns how many pages were removed. Unknown names raise PackError."""
    own = index is None
    index = index if index is not None else _default_index()  # an empty index is falsy (len 0)
    try:
        packs = installed_manifests(index)
        if name not in packs:
            known = ", ".join(sorted(packs)) or "none"
            raise PackError(f"No pack named {name!r} is installed (installed: {known}).")
        removed = _remove_pages(index, packs.pop(name))
        index.set_meta(INSTALLED_KEY, json.dumps(packs, sort_keys=True))
        return removed
    finally:
        if own:
            index.close()


def _forget_cached_results() -> None:
    # Results cached in this process (a kernel) were ranked without, or with, the pack's pages.
    from ..cache import shared_cache

    shared_cache().clear()


def _origins(manifest: dict[str, Any]) -> list[str]:
    """The origins of an installed pack's pages."""
    return [origin_of(manifest["name"], source["name"]) for source in manifest["sources"]]


def _remove_pages(index: LocalIndex, manifest: dict[str, Any]) -> int:
    _forget_cached_results()
    index.forget_credits(_origins(manifest))
    return sum(index.remove_documents(origin) for origin in _origins(manifest))


def combined_index(packs: list[str], manifests: list[dict[str, Any]]) -> Path:
    """One index holding these packs (for ``devknow serve --pack A --pack B``), made once in the cache dir and
    reused while the pack files are unchanged."""
    from ..local.paths import cache_dir

    files = [Path(pack).expanduser().resolve() for pack in packs]
    key = "\n".join(f"{path}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for path in files)
    target = cache_dir() / "served" / f"{hashlib.sha1(key.encode()).hexdigest()[:16]}.sqlite3"
    if target.exists():
        return target
    partial = target.with_name(target.name + ".partial")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)
    index = LocalIndex(partial, semantic=False)
    try:
        for path, manifest in zip(files, manifests, strict=True):
            index.import_index(path, {origin: origin for origin in source_origins(manifest)})
        installed_packs = {manifest["name"]: manifest for manifest in manifests}
        index.set_meta(INSTALLED_KEY, json.dumps(installed_packs, sort_keys=True))
    finally:
        index.close()
    os.replace(partial, target)
    return target

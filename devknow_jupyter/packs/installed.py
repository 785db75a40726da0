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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..local.index import LocalIndex
from .pack import PackError, origin_of, read_manifest

__all__ = ["INSTALLED_KEY", "AddReport", "add", "combined_index", "installed", "remove"]

INSTALLED_KEY = "installed_packs"


@dataclass
class AddReport:
    """What :func:`add` did: the pack's name, pages copied, names kept from the index, seconds taken."""

    name: str
    pages: int
    skipped: int
    seconds: float
    replaced: bool = False


def _default_index() -> LocalIndex:
    from ..local.backend import open_cache_index
    from ..local.paths import default_index_path

    return open_cache_index(default_index_path())


def installed_manifests(index: LocalIndex) -> dict[str, dict[str, Any]]:
    """The manifests of the packs installed in ``index``, by pack name."""
    try:
        data = json.loads(index.get_meta(INSTALLED_KEY) or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def add(path: str | os.PathLike[str], *, index: LocalIndex | None = None) -> AddReport:
    """Install the pack at ``path`` into the default index (``index``: another one); a pack of the same name
    is replaced. The pack is checked first: a damaged or newer-format pack raises
    :class:`~.pack.PackError` and nothing changes."""
    started = time.perf_counter()
    manifest = read_manifest(path)
    own = index is None
    index = index or _default_index()
    try:
        packs = installed_manifests(index)
        name = str(manifest["name"])
        replaced = name in packs
        if replaced:
            _remove_pages(index, packs[name])
        report = index.import_index(Path(path).expanduser())
        packs[name] = {**manifest, "file": str(Path(path).expanduser().resolve()), "added": time.time()}
        index.set_meta(INSTALLED_KEY, json.dumps(packs, sort_keys=True))
        _forget_cached_results()
    finally:
        if own:
            index.close()
    return AddReport(name, report.added, len(report.skipped), time.perf_counter() - started, replaced)


def installed(*, index: LocalIndex | None = None) -> list[dict[str, Any]]:
    """The installed packs' manifests (name, sources with licences and page counts, built), sorted by name."""
    own = index is None
    index = index or _default_index()
    try:
        return [packs for _, packs in sorted(installed_manifests(index).items())]
    finally:
        if own:
            index.close()


def remove(name: str, *, index: LocalIndex | None = None) -> int:
    """Uninstall the pack called ``name``; returns how many pages were removed. Unknown names raise PackError."""
    own = index is None
    index = index or _default_index()
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


def _remove_pages(index: LocalIndex, manifest: dict[str, Any]) -> int:
    _forget_cached_results()
    return sum(index.remove_documents(origin_of(manifest["name"], source["name"])) for source in manifest["sources"])


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
        for path in files:
            index.import_index(path)
        installed_packs = {manifest["name"]: manifest for manifest in manifests}
        index.set_meta(INSTALLED_KEY, json.dumps(installed_packs, sort_keys=True))
    finally:
        index.close()
    os.replace(partial, target)
    return target

"""Where the offline backend keeps its files: the user cache directory and the starter pack."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["STARTER_DIR", "cache_dir", "default_index_path", "folder_index_path"]

#: The starter pack: short Markdown pages of our own, indexed into the default index.
STARTER_DIR = Path(__file__).resolve().parent / "starter"

INDEX_FILENAME = "index.sqlite3"


def cache_dir() -> Path:
    """``$DEVKNOW_CACHE_DIR``, else ``$XDG_CACHE_HOME/devknow_jupyter``, else ``~/.cache/devknow_jupyter``.

    The directory is not created here; callers create it when they write.
    """
    explicit = os.environ.get("DEVKNOW_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "devknow_jupyter"


def default_index_path() -> Path:
    """The default index: starter pack, folders added with ``devknow index`` and documents fetched live."""
    return cache_dir() / INDEX_FILENAME


def folder_index_path(folder: Path) -> Path:
    """The cached index of one folder opened as ``local:/path/to/folder``."""
    folder = Path(folder).expanduser().resolve()
    digest = hashlib.sha1(str(folder).encode("utf-8")).hexdigest()[:16]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in folder.name)[:40] or "root"
    return cache_dir() / "folders" / f"{safe}-{digest}.sqlite3"

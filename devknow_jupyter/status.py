"""Lines of the status views (``%devknow`` and ``devknow status``): the protocol in use, the installed packs.

Pure reading of :meth:`DevKnowClient.status` figures and of the default index's meta; nothing is connected
or created here.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["installed_pack_lines", "offline_fallback_line", "protocol_line"]


def protocol_line(status: dict[str, Any]) -> str:
    """How the client talks to its backend, from ``client.status()``: ``MCP, modern era (2026-07-28)``,
    ``MCP (era not known yet)``, ``REST (the API's v1 surface)`` or ``local index (no network)``."""
    if status.get("backend") == "local":
        return "local index (no network)"
    if status.get("protocol") == "rest":
        return "REST (the API's v1 surface)"
    era, version = status.get("era"), status.get("protocol_version")
    if not era:
        return "MCP (era not known yet: no call has reached the server)"
    return f"MCP, {era} era ({version})" if version else f"MCP, {era} era"


def offline_fallback_line(status: dict[str, Any], now: float | None = None) -> str:
    """What the offline fallback is doing, from ``client.status()``: on standby, or answering while the
    service is skipped after failing to reach it, with when it is tried next."""
    next_try = status.get("service_next_try")
    if next_try is None:
        return "on: the local index answers when the service can't be reached"
    now = time.time() if now is None else now
    since = _clock(status.get("service_unreachable_since") or now)
    wait = next_try - now
    when = f"in {max(1, round(wait))} s ({_clock(next_try)})" if wait > 0 else "on the next call"
    return f"answering: the service could not be reached at {since}; the next try is {when}"


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(epoch))


def installed_pack_lines(backend: Any) -> list[str]:
    """The knowledge packs ``backend`` answers from, one ``name (N pages, licences)`` each: those installed in
    its index, or the pack it serves itself; for a remote backend, those of the default index, which the
    offline fallback searches (read only if the index exists). Empty when there are none or none can be read."""
    import json
    import sqlite3

    from .errors import DevKnowError
    from .packs.installed import installed_manifests

    index = getattr(backend, "index", None)
    opened = None
    try:
        if index is None:
            from .local.index import LocalIndex
            from .local.paths import default_index_path

            path = default_index_path()
            if not path.is_file():
                return []
            index = opened = LocalIndex(path, read_only=True)
        manifests = list(installed_manifests(index).values())
        own = index.get_meta("pack_manifest")
        manifests += [json.loads(own)] if own else []
    except (DevKnowError, sqlite3.Error, ValueError, OSError):
        return []
    finally:
        if opened is not None:
            opened.close()
    return sorted(_describe(manifest) for manifest in manifests if isinstance(manifest, dict))


def _describe(manifest: dict[str, Any]) -> str:
    sources = [source for source in manifest.get("sources") or [] if isinstance(source, dict)]
    pages = sum(int(source.get("pages") or 0) for source in sources)
    licences = ", ".join(dict.fromkeys(str(source["license"]) for source in sources if source.get("license")))
    counted = f"{pages} page" if pages == 1 else f"{pages} pages"
    return f"{manifest.get('name', '?')} ({counted}{', ' + licences if licences else ''})"

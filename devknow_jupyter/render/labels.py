"""What tells look-alike hits apart: the part of their paths that differs, for hits that share a title.

Reference pages of sibling packages have one title each (Firebase's ``firestore_``, ``firestore_lite`` and
``firestore_pipelines`` all have a "QueryConstraint class"); in a list of hits they would read the same. For
each group of hits whose titles are equal (case and spacing aside) but whose pages differ, :func:`tell_apart`
gives each hit the words of its page's address that the others lack: the address is cut into words at
``/`` and ``.``, the words every page of the group starts with and ends with are dropped, and what is left is
the hit's tell (``firestore_lite`` for ``…/js/firestore_lite.queryconstraint``). A hit with a title of its own
gets ``""``. The widgets, the explorer and the JupyterLab panel all show this tell after the title.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["tell_apart", "tells_for"]

_WORDS = re.compile(r"[^/.]+[/.]*")


def _address(uri: str) -> str:
    return re.sub(r"^[a-z][a-z0-9+.-]*://", "", uri.strip(), flags=re.I).strip("/")


def _common(words: list[list[str]], *, reverse: bool, keep: int) -> int:
    """How many words every list shares at its start (``reverse``: its end), leaving ``keep`` words at least."""
    shortest = min(len(w) for w in words)
    count = 0
    while count < shortest - keep:
        index = -1 - count if reverse else count
        if len({w[index].rstrip("/.") for w in words}) != 1:
            break
        count += 1
    return count


def tell_apart(entries: Sequence[tuple[str, str]]) -> list[str]:
    """For ``(title, address)`` pairs in list order, the part of each address that tells look-alikes apart.

    ``""`` for an entry whose title no entry with another address shares. Entries with one address (two
    passages of one page) get the same tell.
    """
    groups: dict[str, list[int]] = {}
    for index, (title, _) in enumerate(entries):
        groups.setdefault(" ".join(str(title).split()).casefold(), []).append(index)
    tells = [""] * len(entries)
    for members in groups.values():
        addresses = list(dict.fromkeys(_address(entries[i][1]) for i in members))
        if len(addresses) < 2:
            continue
        words = [_WORDS.findall(address) or [address] for address in addresses]
        lead = _common(words, reverse=False, keep=1)
        rest = [w[lead:] for w in words]
        trail = _common(rest, reverse=True, keep=1)
        parts = {}
        for address, w in zip(addresses, rest, strict=True):
            part = "".join(w[: len(w) - trail] if trail else w).strip("/.")
            parts[address] = part or address
        for i in members:
            tells[i] = parts[_address(entries[i][1])]
    return tells


def tells_for(hits: Sequence[Any]) -> list[str]:
    """:func:`tell_apart` for hits (anything with ``title``, ``uri`` and ``parent``), in list order."""
    return tell_apart([(hit.title or hit.parent, hit.uri or hit.parent) for hit in hits])

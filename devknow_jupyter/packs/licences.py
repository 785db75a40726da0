"""The licence of a folder of pages that has no recipe: its pages' ``license`` front matter, else its LICENSE file.

Only a few well-known licence texts are recognised, by phrases their texts hold; anything else stays unknown
(and ``pack build`` says so) rather than guessed.
"""

from __future__ import annotations

from pathlib import Path

from ..local.reading import Unreadable, open_document

__all__ = ["LICENSE_FILES", "folder_licence", "identify"]

#: The file names a licence is looked for under, at the top of the folder.
LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "LICENCE.txt", "COPYING")
_READ_LIMIT = 256 * 1024
# (SPDX id, phrases that must all appear), most specific first; compared case-insensitively.
_TEXTS = (
    ("CC-BY-SA-4.0", ("attribution-sharealike 4.0 international",)),
    ("CC-BY-4.0", ("attribution 4.0 international",)),
    ("CC0-1.0", ("cc0 1.0 universal",)),
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MPL-2.0", ("mozilla public license version 2.0",)),
    ("GPL-3.0", ("gnu general public license", "version 3")),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",)),
    ("MIT", ("permission is hereby granted, free of charge",)),
)
_MAX_NAMED = 4  # front matter licences listed by name; more than that is "mixed"


def folder_licence(folder: Path, page_licences: list[str]) -> tuple[str, str]:
    """``(spdx, attribution)`` for a folder: from its pages' ``license`` fields, else its LICENSE file.

    Either may be empty: ``("", "")`` when nothing names a licence or the LICENSE text is not recognised.
    """
    named = sorted({value.strip() for value in page_licences if value.strip()})
    if named:
        return ("; ".join(named) if len(named) <= _MAX_NAMED else "mixed (see each page's front matter)"), ""
    for name in LICENSE_FILES:
        try:
            with open_document(folder / name, folder) as handle:
                text = handle.read(_READ_LIMIT).decode("utf-8", errors="replace")
        except Unreadable:
            continue
        spdx = identify(text)
        if spdx:
            holder = next((line.strip() for line in text.splitlines() if line.strip().startswith("Copyright")), "")
            return spdx, f"{holder}, licensed under {spdx} (from {name})" if holder else ""
    return "", ""


def identify(text: str) -> str:
    """The SPDX id of a licence text this module recognises, or ``""``."""
    folded = " ".join(text.lower().split())
    for spdx, phrases in _TEXTS:
        if all(phrase in folded for phrase in phrases):
            return spdx
    return ""

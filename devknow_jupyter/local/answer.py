"""Extractive answers: the best passages for a question, quoted with the pages they come from.

The offline backend has no language model, so ``answer_query`` quotes instead of writing: it takes the
top search hits (one per page first, so that several pages speak), keeps the part of each passage that
covers most of the question's terms, and lists the pages as references. The text says plainly that it
is extractive, and the result carries ``"extractive": True``.
"""

from __future__ import annotations

import re
from typing import Any

from .chunking import split_blocks
from .query import query_terms

__all__ = ["EXTRACTIVE_NOTE", "NO_MATCH", "extractive_answer"]

EXTRACTIVE_NOTE = (
    "*Extractive answer from the offline index: the passages below are quoted from the best-matching pages, "
    "not generated.*"
)
NO_MATCH = (
    "*Extractive answer from the offline index.* No indexed passage matches this question. Try other words, "
    "or add documents with `devknow index PATH`."
)
#: Roughly how much of each passage is quoted.
EXCERPT_CHARS = 700
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def extractive_answer(query: str, hits: list[tuple[str, str, str]], *, passages: int = 3) -> dict[str, Any]:
    """Build ``{"answerText", "references", "extractive": True}`` from ranked ``(name, breadcrumb, body)`` hits."""
    chosen = _choose(hits, passages)
    if not chosen:
        return {"answerText": NO_MATCH, "references": [], "extractive": True}
    stems = {_stem(term) for term in query_terms(query)}
    references: list[str] = []
    parts = [EXTRACTIVE_NOTE]
    for name, breadcrumb, body in chosen:
        if name not in references:
            references.append(name)
        number = references.index(name) + 1
        parts.append(f"**{breadcrumb}** [{number}]\n\n{_excerpt(body, stems)}")
    return {"answerText": "\n\n".join(parts), "references": references, "extractive": True}


def _choose(hits: list[tuple[str, str, str]], passages: int) -> list[tuple[str, str, str]]:
    """The best hit of each page first (up to ``passages``), then further hits when pages run out."""
    chosen: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for hit in hits:
        if hit[0] not in seen and len(chosen) < passages:
            chosen.append(hit)
            seen.add(hit[0])
    for hit in hits:
        if len(chosen) >= passages:
            break
        if hit not in chosen:
            chosen.append(hit)
    order = {id(hit): i for i, hit in enumerate(hits)}
    return sorted(chosen, key=lambda hit: order[id(hit)])


def _stem(word: str) -> str:
    # Crude but enough to match "creating" with "create" when picking which paragraph to quote.
    return word.casefold()[:5]


def _excerpt(body: str, stems: set[str]) -> str:
    """The run of consecutive blocks (paragraphs, code blocks) of about EXCERPT_CHARS covering most terms."""
    blocks = split_blocks(body.strip())
    if not blocks:
        return ""
    covers = [stems & {_stem(word) for word in _WORD.findall(block)} for block in blocks]
    best_start, best_key = 0, (-1, 0)
    for start in range(len(blocks)):
        covered: set[str] = set()
        length = 0
        for end in range(start, len(blocks)):
            if length and length + len(blocks[end]) > EXCERPT_CHARS:
                break
            covered |= covers[end]
            length += len(blocks[end])
        key = (len(covered), len(covers[start]))
        if key > best_key:
            best_start, best_key = start, key
    picked: list[str] = []
    length = 0
    for block in blocks[best_start:]:
        if picked and length + len(block) > EXCERPT_CHARS:
            break
        picked.append(block)
        length += len(block)
    text = "\n\n".join(picked)
    if len(text) > EXCERPT_CHARS * 2 and "```" not in text:  # one giant paragraph: cut at a sentence end
        cut = text.rfind(". ", 0, EXCERPT_CHARS * 2)
        text = text[: cut + 1 if cut > 0 else EXCERPT_CHARS * 2] + " …"
    return text

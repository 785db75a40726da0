"""Keep Python-Markdown's inline pass linear on hostile text.

Python-Markdown looks for the end of every ``[`` (link, image, footnote) and every tag-like ``<`` by
scanning forward through the rest of its block, so a block holding thousands of them costs time quadratic
in their number: 10,000 ``[`` in one paragraph take ~18 s and freeze the kernel. Real pages stay far below
that (the densest block in the shared corpus has ~650), so the guard only touches text no page needs.

:func:`defuse_openers` estimates each block's cost as the square of its opener count and, while the
page's total is over :data:`INLINE_BUDGET`, writes the openers of its dearest block as character
references (``&#91;``, ``&lt;``: unlike a backslash, which a backslash before it would cancel):
that block then shows its characters as text, which is what such a block is anyway. Fenced code is left
alone (Python-Markdown does not run inline patterns there).
"""

from __future__ import annotations

import re

__all__ = ["INLINE_BUDGET", "defuse_openers"]

#: Sum over blocks of (openers in the block)²: ~1 s of inline parsing at worst on this 2-core machine.
#: The densest page of the shared corpus scores ~490,000.
INLINE_BUDGET = 2_000_000

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# ``[`` opens links/images/footnotes; ``<`` before a letter, ``/``, ``!`` or ``?`` opens a tag, a comment
# or an autolink. A ``<`` before a space or a digit is text to Python-Markdown: not counted.
_OPENER = re.compile(r"\[|<(?=[A-Za-z/!?])")


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line ranges of the runs of non-blank lines outside fenced code."""
    blocks: list[tuple[int, int]] = []
    fence: str | None = None
    start: int | None = None
    for number, line in enumerate(lines):
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker or not line.strip():
            if start is not None:
                blocks.append((start, number))
                start = None
            if marker:
                fence = marker.group(1)
            continue
        if start is None:
            start = number
    if start is not None:
        blocks.append((start, len(lines)))
    return blocks


def defuse_openers(text: str, budget: int = INLINE_BUDGET) -> str:
    """``text`` with the ``[`` and tag-like ``<`` of its dearest blocks escaped until the estimated inline
    cost is within ``budget`` (returns ``text`` itself when it already is, the case for real pages)."""
    if len(_OPENER.findall(text)) ** 2 <= budget:  # cheap exit: even one block holding them all is fine
        return text
    lines = text.split("\n")
    costs = []
    for first, end in _blocks(lines):
        count = sum(len(_OPENER.findall(line)) for line in lines[first:end])
        costs.append((count * count, first, end))
    total = sum(cost for cost, _, _ in costs)
    for cost, first, end in sorted(costs, reverse=True):
        if total <= budget:
            break
        for number in range(first, end):
            lines[number] = lines[number].replace("[", "&#91;").replace("<", "&lt;")
        total -= cost
    return "\n".join(lines)

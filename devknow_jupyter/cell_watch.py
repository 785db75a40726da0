"""How a devknow call's "Searching…" placeholder leaves a kernel's cell without a trace in the saved notebook.

A placeholder that is its cell's first output is removed whole when the call ends (``clear_output``): the
cell's first line of code is a magic call (``%devsearch …``, ``hits = %devsearch …``, ``%%devask``) and no
display came before it in this cell. Anywhere else in a kernel (a call after a ``print``, inside a loop)
no placeholder is shown, since clearing would take the outputs before it too and emptying it in place
would save an empty display. Where displays are captured rather than sent (no publisher hooks), the
placeholder is emptied in place, as before.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

__all__ = ["CLEAR", "IN_PLACE", "SKIP", "CellWatch", "placeholder_way", "unwatch", "watch"]

#: The placeholder is the cell's first output: show it, then remove it with ``clear_output``.
CLEAR = "clear"
#: Outputs came before it in a kernel's cell: show no placeholder.
SKIP = "skip"
#: Displays are captured, not sent: show it, then empty it in place.
IN_PLACE = "in place"

_MAGIC_FIRST = re.compile(r"(?:[A-Za-z_]\w*\s*=\s*)?%%?[A-Za-z_]")
_watches: weakref.WeakKeyDictionary[Any, CellWatch] = weakref.WeakKeyDictionary()


class CellWatch:
    """Follows the running cell of one shell: its source and how many displays it has sent so far."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.raw_cell = ""
        self.displays = 0
        self._hooked = hasattr(shell.display_pub, "register_hook")  # ipykernel's publisher; not a terminal
        shell.events.register("pre_run_cell", self._pre_run_cell)
        if self._hooked:
            shell.display_pub.register_hook(self._count)

    def way(self) -> str:
        """:data:`CLEAR`, :data:`SKIP` or :data:`IN_PLACE` for a placeholder shown now in the running cell."""
        if not self._hooked:
            return IN_PLACE
        alone = self.displays == 0 and bool(_MAGIC_FIRST.match(_first_code_line(self.raw_cell)))
        return CLEAR if alone else SKIP

    def close(self) -> None:
        """Stop following the shell's cells."""
        try:
            self.shell.events.unregister("pre_run_cell", self._pre_run_cell)
        except ValueError:
            pass
        if self._hooked:
            self.shell.display_pub.unregister_hook(self._count)

    def _pre_run_cell(self, info: Any) -> None:
        self.raw_cell = getattr(info, "raw_cell", "") or ""
        self.displays = 0

    def _count(self, msg: dict[str, Any]) -> dict[str, Any]:
        if msg.get("header", {}).get("msg_type") == "display_data":
            self.displays += 1
        return msg


def _first_code_line(cell: str) -> str:
    for line in cell.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line
    return ""


def watch(shell: Any) -> None:
    """Follow ``shell``'s cells (``%load_ext`` does this); a second call does nothing."""
    if shell not in _watches:
        _watches[shell] = CellWatch(shell)


def unwatch(shell: Any) -> None:
    """Stop following ``shell``'s cells (``%unload_ext``)."""
    cell_watch = _watches.pop(shell, None)
    if cell_watch is not None:
        cell_watch.close()


def placeholder_way(shell: Any) -> str:
    """How a placeholder shown now on ``shell`` leaves its cell (:data:`IN_PLACE` for a shell not watched)."""
    cell_watch = _watches.get(shell)
    return cell_watch.way() if cell_watch is not None else IN_PLACE

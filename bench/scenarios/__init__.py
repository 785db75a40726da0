"""The benchmark scenarios. Each module has ``TITLE`` and ``run(ctx) -> dict`` (rows, goals, notes).

Importing a scenario module does nothing but define functions: servers start, files are written and
clients connect only inside ``run``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SCENARIOS", "Context", "Unavailable", "goal"]

#: Scenario keys in the order they run (module names in this package).
SCENARIOS = (
    "latency", "cache", "imports", "render", "batch", "memory", "index", "browser", "packs", "server",
)


class Unavailable(Exception):
    """The scenario's subject is not there (e.g. a module not written yet); recorded, never faked."""


@dataclass
class Context:
    """What every scenario gets: quick mode (few repetitions) and a scratch folder."""

    quick: bool
    tmp: Path

    def reps(self, full: int, quick: int) -> int:
        """``full`` repetitions normally, ``quick`` with ``--quick``."""
        return quick if self.quick else full


def goal(text: str, measured: str, met: bool | None) -> dict[str, object]:
    """One goal line: what was wanted, what was measured, whether it was met (None: not applicable)."""
    return {"goal": text, "measured": measured, "met": met}

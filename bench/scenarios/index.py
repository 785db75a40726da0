"""Scenario 7: the local index's own benches (``bench/bench_index.py``: indexing and query speed;
``bench/bench_quality.py``: ranking quality), written with the index and run here so that one command
gives every figure. ``python -m bench --skip-index`` leaves them out.
"""

from __future__ import annotations

import importlib
from typing import Any

from bench.scenarios import Context, Unavailable

TITLE = "7. Local index: indexing, query speed and ranking quality (bench_index, bench_quality)"
MODULES = ("bench.bench_index", "bench.bench_quality")


def _load(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None
        raise


def run(ctx: Context) -> dict[str, Any]:
    """Run whichever of the two benches exist and merge their rows, goals and notes."""
    modules = {name: _load(name) for name in MODULES}
    if not any(modules.values()):
        raise Unavailable("bench/bench_index.py and bench/bench_quality.py are not there yet")
    raise Unavailable("index benches found but not wired in yet")

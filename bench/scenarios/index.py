"""Scenario 7: the local index's own benches (``bench/bench_index.py``: indexing and query speed;
``bench/bench_quality.py``: ranking quality), written with the index and run here so that one command
gives every figure. ``python -m bench --skip-index`` leaves them out.

Each module offers ``run(quick=..., tmp=...)`` returning rows in :mod:`bench.stats` format (or
``{"status": "skipped", "reason"}`` when the shared corpus is not on this machine); their rows, goals
and notes are merged here, and their raw data kept under ``data``.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from bench.scenarios import Context, Unavailable

TITLE = "7. Local index: indexing, query speed and ranking quality (bench_index, bench_quality)"
MODULES = {"bench.bench_index": "index", "bench.bench_quality": "quality"}


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
        raise Unavailable("bench/bench_index.py and bench/bench_quality.py are not there")
    merged: dict[str, Any] = {"rows": [], "scores": [], "goals": [], "notes": [], "data": {}}
    skipped = []
    built: list[Path] = []
    for name, module in modules.items():
        if module is None:
            merged["notes"].append(f"{name} is not there; its figures are missing.")
            continue
        tag = MODULES[name]
        folder = ctx.tmp / tag
        folder.mkdir(exist_ok=True)
        if tag == "quality" and built:
            # Score the index bench_index just built rather than indexing the corpus a second time.
            result = module.run(quick=ctx.quick, tmp=folder, index_path=built[0])
        else:
            result = module.run(quick=ctx.quick, tmp=folder)
        built += sorted(folder.glob("*.sqlite3"))
        if result.get("status") == "skipped":
            skipped.append(f"{name}: {result.get('reason')}")
            continue
        for row in result.get("rows", []):
            # Timings carry a median and spread; quality scores (MRR, recall) are one number per search.
            kind = "rows" if "median" in row else "scores"
            merged[kind].append({**row, "label": f"[{tag}] {row['label']}"})
        merged["goals"] += [{**goal, "goal": f"[{tag}] {goal['goal']}"} for goal in result.get("goals", [])]
        merged["notes"] += [f"[{tag}] {note}" for note in result.get("notes", [])]
        merged["data"][tag] = result.get("data")
    if skipped and not merged["rows"]:
        merged.update(status="skipped", reason="; ".join(skipped))
    elif skipped:
        merged["notes"] += [f"skipped: {reason}" for reason in skipped]
    return merged

"""Summaries of repeated measurements (median with IQR and p5–p95) and a description of the machine."""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["figure", "machine_info", "paired_bootstrap", "percentile", "ratio", "round_robin", "summarize"]

#: The bootstrap's default seed and number of resamples (fixed, so a report is the same on every run).
BOOTSTRAP_SEED, BOOTSTRAP_ROUNDS = 20261202, 10_000


def percentile(sorted_values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of already sorted values, by linear interpolation (as numpy's default)."""
    if not sorted_values:
        raise ValueError("no values")
    position = (len(sorted_values) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def paired_bootstrap(
    ours: Sequence[float],
    base: Sequence[float],
    *,
    rounds: int = BOOTSTRAP_ROUNDS,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> dict[str, float]:
    """The mean of ``ours[i] - base[i]`` over paired items (per question: one ranking's reciprocal rank beside
    another's on the same question) and its percentile bootstrap interval: ``rounds`` resamples of the items
    with replacement, each pair kept together, seeded. Returns ``{"difference", "low", "high"}``; an empty
    input gives zeros."""
    import numpy as np

    if len(ours) != len(base):
        raise ValueError(f"paired scores differ in length ({len(ours)} vs {len(base)})")
    difference = np.asarray(ours, dtype=np.float64) - np.asarray(base, dtype=np.float64)
    if not len(difference):
        return {"difference": 0.0, "low": 0.0, "high": 0.0}
    picks = np.random.default_rng(seed).integers(0, len(difference), (rounds, len(difference)))
    means = difference[picks].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return {"difference": float(difference.mean()), "low": float(low), "high": float(high)}


def summarize(samples: Iterable[float]) -> dict[str, float | int]:
    """Median, quartiles, p5, p95, min, max and count of ``samples``."""
    values = sorted(samples)
    return {
        "median": statistics.median(values),
        "q1": percentile(values, 0.25),
        "q3": percentile(values, 0.75),
        "p5": percentile(values, 0.05),
        "p95": percentile(values, 0.95),
        "min": values[0],
        "max": values[-1],
        "n": len(values),
    }


def figure(label: str, samples: Iterable[float], unit: str, *, scale: float = 1.0, **extra: Any) -> dict[str, Any]:
    """One row of the results table: ``samples`` multiplied by ``scale`` (e.g. 1e3 for s → ms) and summarised."""
    row: dict[str, Any] = {"label": label, "unit": unit}
    row.update(summarize(value * scale for value in samples))
    row.update(extra)
    return row


def ratio(numerator: dict[str, Any], denominator: dict[str, Any]) -> float:
    """Ratio of two rows' medians."""
    return float(numerator["median"]) / float(denominator["median"])


def round_robin(
    contenders: dict[str, Callable[[], Any]], rounds: int, *, budget: float | None = None
) -> dict[str, list[float]]:
    """Time each contender once per round, in turn, so that drift (CPU frequency, GC, the server) hits all.

    The order rotates every round so that no contender always runs right after another one.
    Stops early (keeping whole rounds) once ``budget`` seconds have passed.
    """
    names = list(contenders)
    samples: dict[str, list[float]] = {name: [] for name in names}
    clock = time.perf_counter
    deadline = clock() + budget if budget else None
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            call = contenders[name]
            started = clock()
            call()
            samples[name].append(clock() - started)
        if deadline is not None and clock() > deadline:
            break
    return samples


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """CPU model, core count, memory, Python version and OS of this machine."""
    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "os": platform.platform(),
    }
    if hasattr(os, "getloadavg"):  # other work on the machine skews every figure: say how busy it was
        info["load_average_start"] = [round(x, 2) for x in os.getloadavg()]
    try:
        import psutil

        info["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except Exception:  # psutil is a bench extra; the header is still useful without it
        pass
    return info

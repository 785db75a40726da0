"""Smoke test of the benchmarks: ``python -m bench --quick`` runs every scenario and writes figures.

No timing is asserted (speed is what bench/ reports, not what tests check): only that every scenario
ran, and that each figure is a finite number with its spread and count.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bench_index import costs, costs_markdown
from bench.scenarios import SCENARIOS
from tests.e2e.lab_server import find_chromium

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("DEVKNOW_CORPUS") or ROOT.parent / "shared" / "corpus")


# The quick run takes 1-3 minutes (the local index bench indexes the whole shared corpus).
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("bench-results")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=540,
    )
    assert (out / "results.json").exists(), done.stderr[-3000:]
    return json.loads((out / "results.json").read_text()), (out / "results.md").read_text(), done


def test_every_scenario_ran_with_numbers(quick_results: tuple[dict, str, subprocess.CompletedProcess]) -> None:
    results, _, done = quick_results
    assert list(results["scenarios"]) == list(SCENARIOS)
    for key, scenario in results["scenarios"].items():
        if key == "index" and not CORPUS.is_dir():
            assert scenario["status"] == "skipped", scenario  # the index benches need ../shared/corpus
            continue
        if key == "packs":
            assert scenario["status"] == "skipped", scenario  # a pack build is for the full run only
            continue
        if key == "browser" and find_chromium() is None:
            assert scenario["status"] == "skipped", scenario  # the browser bench needs Chromium
            continue
        assert scenario["status"] == "ok", f"{key}: {scenario.get('reason')}\n{scenario.get('traceback', '')}"
        assert scenario["rows"], key
        for row in scenario["rows"]:
            for stat in ("median", "q1", "q3", "p5", "p95"):
                assert isinstance(row[stat], (int, float)) and math.isfinite(row[stat]), (key, row)
            assert row["p5"] <= row["median"] <= row["p95"], (key, row)
            assert row["n"] >= 1 and row["unit"], (key, row)
        for goal in scenario.get("goals", []):
            assert goal["met"] in (True, False, None), (key, goal)
    assert done.returncode == 0, done.stderr[-3000:]


def test_machine_header_and_markdown_table(quick_results: tuple[dict, str, subprocess.CompletedProcess]) -> None:
    results, markdown, _ = quick_results
    machine = results["machine"]
    assert machine["cores"] >= 1 and machine["cpu"] and machine["python"] and machine["os"]
    assert results["mode"] == "quick"
    assert f"Python {machine['python']}" in markdown
    assert "| measure | median | IQR | p5–p95 | n | note |" in markdown
    for scenario in results["scenarios"].values():
        assert f"## {scenario['title']}" in markdown


def test_bench_modules_import_without_side_effects(tmp_path: Path) -> None:
    # Importing the bench must not start servers or write results.
    code = (
        "import bench, bench.stats, bench.report, tests.docgen, bench.contenders, bench.fast_server, "
        "bench.scenarios.latency, bench.scenarios.cache, bench.scenarios.imports, bench.scenarios.render, "
        "bench.scenarios.batch, bench.scenarios.memory, bench.scenarios.index\n"
        "import threading; assert threading.active_count() == 1, threading.enumerate()"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_costs_table_puts_both_modes_side_by_side_and_needs_both_to_meet_a_goal() -> None:
    def mode(peak_mb: float, open_cpu: float) -> dict:
        built = {"seconds": 40.0, "cpu_seconds": 30.0, "rss_peak_mb": peak_mb, "maxrss_mb": peak_mb + 1,
                 "size_bytes": 100 * 2**20}
        opened = {"open_search_cpu_seconds": open_cpu, "open_search_seconds": open_cpu * 2, "maxrss_mb": 150.0}
        return {"built": built, "opened": opened, "search": [0.002, 0.004, 0.040], "search_cpu": [0.001, 0.002]}

    rows = {row["measure"]: row for row in costs(mode(290.0, 0.15), mode(420.0, 0.25))}
    peak = rows["indexing, peak RSS (sampled every 5 ms)"]
    assert (peak["lexical"], peak["semantic"], peak["met"]) == (290.0, 420.0, False)  # the semantic side misses
    assert rows["fresh process: open + first search, CPU"]["met"] is True
    assert rows["search p50, wall"]["lexical"] == pytest.approx(4.0)
    assert rows["index file"]["met"] is None  # no goal
    alone = costs(mode(290.0, 0.15), None)
    assert all(row["semantic"] is None for row in alone) and alone[2]["met"] is True
    table = costs_markdown(costs(mode(290.0, 0.15), mode(420.0, 0.25)))
    assert table[0].startswith("| cost | lexical | + semantic extra |")
    assert "| indexing, peak RSS (sampled every 5 ms) | 290.00 MB | 420.00 MB | < 400 MB | **no** |" in table

"""``python -m bench``: run every benchmark on loopback and write bench/results/results.{json,md}.

Options: ``--quick`` (few repetitions, for the smoke test), ``--skip-index`` (leave out the local
index's own benches and the pack build), ``--only latency,cache`` (a subset; ``--only browser`` times the
JupyterLab panel in Chromium), ``--out DIR`` (another results folder), ``--write-docs`` (also regenerate
docs/performance.md from this run).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _isolate_environment(tmp: Path) -> None:
    # Never touch the user's cache, keys or endpoint: the bench only talks to servers it starts.
    os.environ["DEVKNOW_CACHE_DIR"] = str(tmp / "devknow-cache")
    os.environ["IPYTHONDIR"] = str(tmp / "ipython")
    for variable in ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT"):
        os.environ.pop(variable, None)
    # Server subprocesses run `-m tests.servers.sdk_server` / `-m bench.fast_server` from the repo root.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)


def run_scenario(key: str, ctx: Any) -> dict[str, Any]:
    """Run one scenario; failures and missing subjects are recorded in its entry, not raised."""
    from bench.scenarios import Unavailable

    module = importlib.import_module(f"bench.scenarios.{key}")
    started = time.perf_counter()
    entry: dict[str, Any] = {"title": module.TITLE}
    try:
        entry.update(module.run(ctx))
        entry.setdefault("status", "ok")
    except Unavailable as exc:
        entry.update(status="unavailable", reason=str(exc))
    except Exception as exc:  # one broken scenario must not lose the others' figures
        entry.update(status="error", reason=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    entry["duration_s"] = round(time.perf_counter() - started, 2)
    return entry


def main(argv: list[str] | None = None) -> int:
    """Run the selected scenarios and write the results; 0 when every scenario produced figures."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test), figures are rough")
    parser.add_argument("--skip-index", action="store_true", help="leave out the local index benches")
    parser.add_argument("--only", default="", help="comma-separated scenario keys to run")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results folder")
    parser.add_argument("--write-docs", action="store_true",
                        help="also write docs/performance.md (the goal table and every figure) from this run")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from bench.report import write_results
    from bench.scenarios import SCENARIOS, Context
    from bench.stats import machine_info

    keys = [key for key in SCENARIOS if not (args.skip_index and key in ("index", "packs"))]
    if args.only:
        wanted = [key.strip() for key in args.only.split(",") if key.strip()]
        unknown = set(wanted) - set(SCENARIOS)
        if unknown:
            parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}")
        keys = [key for key in keys if key in wanted]

    started = time.perf_counter()
    results: dict[str, Any] = {
        "machine": machine_info(),
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "mode": "quick" if args.quick else "full",
        "scenarios": {},
    }
    with tempfile.TemporaryDirectory(prefix="devknow-bench-") as scratch:
        tmp = Path(scratch)
        _isolate_environment(tmp)
        for key in keys:
            print(f"[bench] {key} ...", file=sys.stderr, flush=True)
            folder = tmp / key
            folder.mkdir()
            entry = run_scenario(key, Context(quick=args.quick, tmp=folder))
            results["scenarios"][key] = entry
            print(f"[bench] {key}: {entry['status']} in {entry['duration_s']:.1f} s", file=sys.stderr, flush=True)
            if entry["status"] != "ok":
                print(f"[bench]   {entry.get('reason')}", file=sys.stderr, flush=True)
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    from bench.goals import goal_rows

    results["issue_25_goals"] = goal_rows(results)
    json_path, md_path = write_results(results, args.out)
    if args.write_docs:
        from bench.performance_docs import write_docs

        print(f"[bench] wrote {write_docs(results)}", file=sys.stderr)
    print(f"[bench] wrote {json_path} and {md_path} in {results['duration_s']:.0f} s", file=sys.stderr)
    # "skipped": the index benches without ../shared/corpus, the browser bench without Chromium.
    return 0 if all(entry["status"] in ("ok", "skipped") for entry in results["scenarios"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())

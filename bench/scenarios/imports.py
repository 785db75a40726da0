"""Scenario 3: start-up cost. ``import devknow_jupyter`` and ``%load_ext devknow_jupyter`` beside
``import IPython`` and ``import ipywidgets``, each timed inside a fresh interpreter, repeated round-robin.

The figure that matters is the *extra* time: in an interpreter that has already imported IPython and
ipywidgets and made a shell (as a Jupyter kernel has), how long ``%load_ext devknow_jupyter`` takes
(including importing the package). One more run under ``python -X importtime`` names the modules the
extension pulls in eagerly, heaviest first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.scenarios import Context, Unavailable, goal
from bench.stats import figure

TITLE = "3. Start-up: import and %load_ext (fresh interpreters)"
ROOT = Path(__file__).resolve().parents[2]
MARKER = "--- devknow load_ext starts ---"

# Each probe runs in its own interpreter and prints the seconds its measured part took.
PROBE = r'''
import json, sys, time
probe = sys.argv[1]
clock = time.perf_counter
if probe == "ipython":
    t = clock(); import IPython; elapsed = clock() - t
elif probe == "ipywidgets":
    t = clock(); import ipywidgets; elapsed = clock() - t
elif probe == "ipython+ipywidgets":
    t = clock(); import IPython, ipywidgets; elapsed = clock() - t
elif probe == "devknow":
    t = clock(); import devknow_jupyter; elapsed = clock() - t
elif probe in ("devknow-after-base", "load_ext-after-base"):
    import IPython, ipywidgets
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    sys.stderr.write("''' + MARKER + r'''\n"); sys.stderr.flush()
    t = clock()
    import devknow_jupyter
    if probe == "load_ext-after-base":
        shell.run_line_magic("load_ext", "devknow_jupyter")
        if "devsearch" not in shell.magics_manager.magics["line"]:
            raise SystemExit("load_ext did not register %devsearch")
    elapsed = clock() - t
else:
    raise SystemExit("unknown probe " + probe)
print(json.dumps({"elapsed": elapsed, "modules": len(sys.modules)}))
'''

PROBES = {
    "ipython": "import IPython",
    "ipywidgets": "import ipywidgets",
    "ipython+ipywidgets": "import IPython, ipywidgets",
    "devknow": "import devknow_jupyter (alone)",
    "devknow-after-base": "import devknow_jupyter after IPython+ipywidgets",
    "load_ext-after-base": "%load_ext devknow_jupyter after IPython+ipywidgets+shell (the extra)",
}


def _probe(script: Path, probe: str, *flags: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, *flags, str(script), probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(f"probe {probe} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def eager_imports(stderr: str, top: int = 12) -> list[dict[str, Any]]:
    """The heaviest imports after the marker in ``-X importtime`` output: top level and one level down."""
    rows = []
    for line in stderr.split(MARKER, 1)[-1].splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue  # the header line
        name = parts[2][1:]  # one space after the bar, then two spaces per nesting level
        depth = (len(name) - len(name.lstrip(" "))) // 2
        rows.append({"module": name.strip(), "self_ms": int(parts[0]) / 1000,
                     "cumulative_ms": int(parts[1]) / 1000, "depth": depth})
    if not rows:
        return []
    shallowest = min(row["depth"] for row in rows)
    near_top = [row for row in rows if row["depth"] <= shallowest + 1]
    return sorted(near_top, key=lambda row: row["cumulative_ms"], reverse=True)[:top]


def run(ctx: Context) -> dict[str, Any]:
    """Time each probe in fresh interpreters, round-robin, and list the extension's eager imports."""
    try:
        import devknow_jupyter  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the package is the subject
        raise Unavailable(f"devknow_jupyter does not import: {exc}") from exc
    script = ctx.tmp / "import_probe.py"
    script.write_text(PROBE, encoding="utf-8")
    reps = ctx.reps(8, 2)
    samples: dict[str, list[float]] = {probe: [] for probe in PROBES}
    modules: dict[str, int] = {}
    for index in range(reps):
        order = list(PROBES)
        order = order[index % len(order):] + order[: index % len(order)]
        for probe in order:
            result, _ = _probe(script, probe)
            samples[probe].append(result["elapsed"])
            modules[probe] = result["modules"]
    rows = [
        figure(PROBES[probe], samples[probe], "ms", scale=1e3, note=f"{modules[probe]} modules loaded")
        for probe in PROBES
    ]
    _, importtime = _probe(script, "load_ext-after-base", "-X", "importtime")
    heavy = eager_imports(importtime)
    extra = rows[-1]
    notes = [
        "Each probe is a fresh `python` process; the figure is the time of the named step inside it "
        "(interpreter start-up excluded).",
        "Heaviest imports during %load_ext (after IPython+ipywidgets, `-X importtime`, cumulative): "
        + ", ".join(f"{row['module']} {row['cumulative_ms']:.1f} ms" for row in heavy[:8]),
    ]
    return {
        "rows": rows,
        "goals": [
            goal("%load_ext devknow_jupyter adds < 100 ms on top of IPython+ipywidgets",
                 f"{extra['median']:.1f} ms (p95 {extra['p95']:.1f})", extra["median"] < 100),
        ],
        "notes": notes,
        "eager_imports": heavy,
    }

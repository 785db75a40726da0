"""``docs/performance.md`` from a bench run: the goal table of issue 25 and every scenario's figures.

``python -m bench --write-docs`` writes it after its run; ``python -m bench.performance_docs [results.json]``
writes it from a run already on disk (by default ``bench/results/results.json``). The page's prose (what a
user needs to know) is here; its figures all come from the results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.goals import goal_rows, goal_table
from bench.report import machine_lines, scenario_markdown

__all__ = ["performance_markdown", "write_docs"]

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"

INTRO = """\
# Performance

What devknow_jupyter costs, measured by `python -m bench` on loopback servers (no key, no internet), and
what it aims for. This page is generated from a bench run (`python -m bench --write-docs`); edit
`bench/performance_docs.py`, not the page.

## What to know as a user

- **Big pages show at once.** `%devget` of a long page renders its first sections (about 4,000 characters)
  and lists every heading in its contents list; each later section is rendered when it comes near the
  screen (in the widget and in the JupyterLab panel), once, and kept by content hash, so a page shown
  again costs nothing. Contents links and in-page `#anchor` links work before a section is rendered.
- **Saved notebooks stay readable.** The static outputs (`text/html`, `text/markdown`) hold the first
  sections rendered and the later ones as their Markdown source, as text, up to
  `devknow_jupyter.display.options.max_chars` (100,000 by default). Set `max_chars = 0` to render a whole
  page into the static outputs too (it then costs about a second per megabyte).
- **Figures depend on the machine and its load**: compare only runs from one quiet machine. Each table's
  contenders take turns in one run, so a ratio is fairer than an absolute figure.
"""


def performance_markdown(results: dict[str, Any]) -> str:
    """The whole page as Markdown."""
    rows = goal_rows(results)
    met = sum(row["met"] is True for row in rows)
    missed = sum(row["met"] is False for row in rows)
    lines = [INTRO, "## The goals of issue 25", ""]
    lines += [f"{met} of {len(rows)} goals met, {missed} not met, {len(rows) - met - missed} not measured in this "
              "run (item: 1 big pages, 2 the Jupyter server, 3 background magics, 4 the floor).", ""]
    lines += [*goal_table(results), "", "## The run", "", *machine_lines(results)]
    for key, scenario in results.get("scenarios", {}).items():
        lines += ["#" + line if line.startswith("## ") else line for line in scenario_markdown(key, scenario)]
    return "\n".join(lines).rstrip() + "\n"


def write_docs(results: dict[str, Any], path: Path = DOCS) -> Path:
    """Write :func:`performance_markdown` of ``results`` to ``path``; the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(performance_markdown(results), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Write docs/performance.md from a results.json (the first argument, or bench/results/results.json)."""
    args = sys.argv[1:] if argv is None else argv
    source = Path(args[0]) if args else ROOT / "bench" / "results" / "results.json"
    if not source.exists():
        print(f"No bench results at {source}: run `python -m bench` first.", file=sys.stderr)
        return 1
    print(write_docs(json.loads(source.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

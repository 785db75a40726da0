"""Write the results: ``results.json`` (everything) and ``results.md`` (one Markdown table per scenario)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["format_value", "goals_and_notes", "machine_lines", "scenario_markdown", "write_results"]


def format_value(value: float, unit: str) -> str:
    """A number with as many digits as its size deserves."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 100:
        text = f"{value:,.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {unit}".strip()


def _row(row: dict[str, Any]) -> str:
    unit = row.get("unit", "")
    cells = [
        row["label"],
        format_value(row["median"], unit),
        f"{format_value(row['q1'], '')}–{format_value(row['q3'], '')}",
        f"{format_value(row['p5'], '')}–{format_value(row['p95'], '')}",
        str(row["n"]),
        str(row.get("note", "")),
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def scenario_markdown(key: str, scenario: dict[str, Any]) -> list[str]:
    """One scenario as Markdown lines: its heading, its table(s), its goals and notes."""
    lines = [f"## {scenario.get('title', key)}", ""]
    status = scenario.get("status", "ok")
    if status != "ok":
        lines += [f"**{status}**: {scenario.get('reason', '')}", ""]
    rows = scenario.get("rows") or []
    if rows:
        lines += ["| measure | median | IQR | p5–p95 | n | note |", "|---|---:|---:|---:|---:|---|"]
        lines += [_row(row) for row in rows]
        lines.append("")
    scores = scenario.get("scores") or []
    if scores:  # single-valued figures (e.g. ranking quality): one column per measure
        columns = [key for key in scores[0] if key != "label"]
        lines += ["| " + " | ".join(["scores", *columns]) + " |", "|---|" + "---:|" * len(columns)]
        for row in scores:
            cells = [f"{row[key]:.3f}" if isinstance(row.get(key), float) else str(row.get(key, "")) for key in columns]
            lines.append("| " + " | ".join([row["label"], *cells]) + " |")
        lines.append("")
    return lines + goals_and_notes(scenario.get("goals") or [], scenario.get("notes") or [])


def goals_and_notes(goals: list[dict[str, Any]], notes: list[str]) -> list[str]:
    """Markdown lines: the goal table (goal, measured, met) and the notes as a list."""
    lines: list[str] = []
    if goals:
        lines += ["| goal | measured | met |", "|---|---:|:---:|"]
        for goal in goals:
            met = {True: "yes", False: "**no**", None: "n/a"}[goal.get("met")]
            lines.append(f"| {goal['goal']} | {goal['measured']} | {met} |")
        lines.append("")
    if notes:
        lines += [*(f"- {note}" for note in notes), ""]
    return lines


def machine_lines(results: dict[str, Any]) -> list[str]:
    """Markdown lines naming the machine, its load and the run."""
    machine = results["machine"]
    return [
        f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores"
        + (f", {machine['memory_gb']} GB RAM" if "memory_gb" in machine else "")
        + f"; Python {machine.get('python')} ({machine.get('implementation')}); {machine.get('os')}.",
        "",
        f"Load average (1, 5, 15 min) at start {machine.get('load_average_start')}, at end "
        f"{machine.get('load_average_end')}: other work on the machine inflates every figure.",
        "",
        f"Run: {results['started']}, {results['duration_s']:.0f} s, mode {results['mode']}. "
        "Each figure is the median over n repeated runs, with the interquartile range (IQR, 25th–75th "
        "percentile) and the 5th–95th percentiles. See bench/README.md for what each measure means.",
        "",
    ]


def write_results(results: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """Write both files into ``folder`` (created if needed); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / "results.json"
    json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    from bench.goals import goal_table

    lines = ["# devknow_jupyter benchmarks", "", *machine_lines(results)]
    lines += ["## The goals of issue 25", "", *goal_table(results), ""]
    for key, scenario in results["scenarios"].items():
        lines += scenario_markdown(key, scenario)
    md_path = folder / "results.md"
    md_path.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return json_path, md_path

"""The goal table of issue 25 ("Responsive at any size"): one row per goal, met or not, from one bench run.

Each scenario states its own goals (``goal(...)`` in its result); :data:`ISSUE_25` says which of them answer
which goal of the issue, by scenario key and a piece of the goal's text. A goal of the issue is met when
every scenario goal answering it was met; a goal no scenario measured in this run says so (never "met").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ISSUE_25", "IssueGoal", "goal_rows", "goal_table"]


@dataclass(frozen=True)
class IssueGoal:
    """One goal of the issue: its item, its words, and where the bench measures it."""

    item: str
    text: str
    scenario: str
    match: tuple[str, ...]  # a scenario goal answers this one when its text holds any of these

    def answers(self, scenario_goal: dict[str, Any]) -> bool:
        """True when ``scenario_goal`` (a scenario's goal line) measures this goal."""
        return any(piece in str(scenario_goal.get("goal", "")) for piece in self.match)


ISSUE_25 = (
    IssueGoal("1", "%devget of a 1 MB page displays (every MIME type) in ≤ markdown-it-py's time for it", "render",
              ("%devget of a 1 MB page",)),
    IssueGoal("1", "%devget of a 100 KB page displays in < 50 ms", "render", ("%devget of a 100 KB page",)),
    IssueGoal("1", "panel: first paint of a 1 MB page within 150 ms of its reply", "browser",
              ("first paint of a 1 MB page",)),
    IssueGoal("2", "Jupyter's /api/status p99 < 100 ms under 20 slow searches + a 1 MB render", "server",
              ("Jupyter /api/status p99",)),
    IssueGoal("2", "devknow/api/status p99 < 200 ms under the same load", "server", ("devknow/api/status p99",)),
    IssueGoal("3", "%devsearch / %devget / %%devask -b return at once (the kernel is free)", "background",
              ("returns at once", "return at once")),
    IssueGoal("4", "per call ≤ 1.1× a raw kept-alive httpx POST, every row", "latency", ("raw httpx",)),
    IssueGoal("4", "a cache hit < 1% of a loopback miss, every row", "cache", ("< 1% of a miss",)),
    IssueGoal("4", "each hit rendered once for a %devsearch", "render", ("rendered once",)),
    IssueGoal("4", "local search p50 < 5 ms and p95 < 10 ms with the shared-corpus pack", "packs",
              ("search p50",)),
    IssueGoal("4", "pack add < 3 s", "packs", ("pack add",)),
    IssueGoal("4", "pack build of the 2,502 pages < 30 s", "packs", ("pack build",)),
    IssueGoal("4", "a fresh process's open + first search < 0.2 s CPU", "index", ("open the index + first search",)),
)


def goal_rows(results: dict[str, Any], goals: tuple[IssueGoal, ...] = ISSUE_25) -> list[dict[str, Any]]:
    """One row per goal: ``{"item", "goal", "measured", "met"}``; ``met`` None when this run did not measure it."""
    rows = []
    scenarios = results.get("scenarios", {})
    for wanted in goals:
        scenario = scenarios.get(wanted.scenario) or {}
        found = [line for line in scenario.get("goals") or [] if wanted.answers(line)]
        if not found:
            why = scenario.get("status") if scenario else "not run"
            measured = f"not measured in this run ({why})" if why != "ok" else "not measured in this run"
            rows.append({"item": wanted.item, "goal": wanted.text, "measured": measured, "met": None})
            continue
        met_values = [line.get("met") for line in found]
        met = None if any(value is None for value in met_values) else all(met_values)
        measured = "; ".join(f"{line['measured']}" for line in found[:4]) + (" …" if len(found) > 4 else "")
        rows.append({"item": wanted.item, "goal": wanted.text, "measured": measured, "met": met})
    return rows


def goal_table(results: dict[str, Any]) -> list[str]:
    """The goal table as Markdown lines (item, goal, measured, met)."""
    lines = ["| item | goal | measured | met |", "|---|---|---|:---:|"]
    for row in goal_rows(results):
        met = {True: "yes", False: "**no**", None: "not measured"}[row["met"]]
        cells = [row["item"], row["goal"], row["measured"], met]
        lines.append("| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |")
    return lines

"""Scenario 1: per-call latency of ``DevKnowClient`` against a loopback MCP server, beside the floor
(a raw ``httpx.Client`` POST of the very request the client sends, on a kept-alive connection) and the
official ``mcp`` SDK client (``ClientSession`` over Streamable HTTP, session kept open).

Two servers: the SDK test server (``tests/servers/sdk_server.py``; a few ms of its own per request) and
:mod:`bench.fast_server` (the same answers with little server work, so the clients' own costs show).
Both in JSON and in SSE reply mode. The contenders take turns call by call (round-robin, order
rotating), so drift hits all of them alike. ``search_documents`` runs with ``refresh=True`` and
``get_documents`` too, so every call goes over the wire. The cost of the reply bounds shows beside
them: the same client with ``max_reply_bytes=None`` (no byte limits; the call deadline stays, it has no
off switch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from bench.contenders import RawHttpx, RequestRecorder, SdkClient
from bench.scenarios import Context, Unavailable, goal
from bench.servers import running
from bench.stats import figure, ratio, round_robin

TITLE = "1. Per-call latency over loopback: DevKnowClient vs raw httpx (floor) vs mcp SDK client"

QUERY = "restrict an api key"
DOC = "documents/docs.example.dev/keys/restrict"
CONNECTION_CHECK = 20  # calls over which connection reuse is checked
UNBOUNDED = "devknow, max_reply_bytes=None"


def _check_transport() -> None:
    try:
        from devknow_jupyter.transport import McpHttpBackend  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"devknow_jupyter.transport is not there yet: {exc}") from exc


def _cell(server: str, mode: str, url: str, rounds: int, budget: float) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows for both tools against one running server."""
    from devknow_jupyter import DevKnowClient
    from devknow_jupyter.cache import ResultCache

    recorder = RequestRecorder()
    stack = contextlib.ExitStack()
    with stack:
        # A first client records what the devknow transport sends, for the floor to replay; the measured
        # clients use the default transport (the recorder would add its own small cost).
        capture = stack.enter_context(DevKnowClient(url, http_transport=recorder, cache=ResultCache()))
        first = capture.search_documents(QUERY, refresh=True)
        capture.get_documents([DOC], refresh=True)
        client = stack.enter_context(DevKnowClient(url, cache=ResultCache()))
        # The same client without the offline copy of fetched pages (a SQLite write per fetch).
        bare = stack.enter_context(DevKnowClient(url, cache=ResultCache(), offline_store=False))
        # The same client without the reply size limits, for the cost of reading bounded.
        unbounded = stack.enter_context(DevKnowClient(url, cache=ResultCache(), max_reply_bytes=None))
        sdk = SdkClient(url)
        stack.callback(sdk.close)
        raws = {}
        for tool in ("search_documents", "get_documents"):
            headers, message = recorder.last_tool_call(tool)
            raws[tool] = RawHttpx(url, headers, message)
            stack.callback(raws[tool].close)
        # Same answers from everyone, or the comparison means nothing.
        sdk_hits = sdk.call("search_documents", {"query": QUERY})["results"]
        raw_hits = raws["search_documents"].call()["structuredContent"]["results"]
        if not (len(first) == len(sdk_hits) == len(raw_hits)):
            raise RuntimeError(f"contenders disagree: {len(first)}, {len(sdk_hits)}, {len(raw_hits)} hits")
        reply_type = recorder.responses[-1] if recorder.responses else "?"
        contenders: dict[str, dict[str, Callable[[], Any]]] = {
            "search_documents": {
                "devknow": lambda: client.search_documents(QUERY, refresh=True),
                UNBOUNDED: lambda: unbounded.search_documents(QUERY, refresh=True),
                "raw httpx": raws["search_documents"].call,
                "mcp SDK": lambda: sdk.call("search_documents", {"query": QUERY}),
            },
            "get_documents": {
                "devknow": lambda: client.get_documents([DOC], refresh=True),
                UNBOUNDED: lambda: unbounded.get_documents([DOC], refresh=True),
                "devknow, offline_store=False": lambda: bare.get_documents([DOC], refresh=True),
                "raw httpx": raws["get_documents"].call,
                "mcp SDK": lambda: sdk.call("get_documents", {"names": [DOC]}),
            },
        }
        rows = []
        for tool, group in contenders.items():
            round_robin(group, 10)  # warm-up: connections, caches, first-call imports
            samples = round_robin(group, rounds, budget=budget)
            for name, values in samples.items():
                rows.append(figure(f"{tool} · {server} server · {mode} · {name}", values, "ms", scale=1e3,
                                   tool=tool, server=server, mode=mode, contender=name))
        era = recorder.requests[-1][0].get("mcp-protocol-version", "none")
        for _ in range(CONNECTION_CHECK):
            capture.search_documents(QUERY, refresh=True)
        connections = recorder.connections(CONNECTION_CHECK)
        note = (f"{server} server, {mode} mode: devknow sent MCP-Protocol-Version {era}, replies came as "
                f"{reply_type}; {CONNECTION_CHECK} calls used {connections} TCP connection(s)")
    return rows, [note], connections


def run(ctx: Context) -> dict[str, Any]:
    """All servers × reply modes × tools × contenders."""
    _check_transport()
    rounds = ctx.reps(120, 12)
    budget = 4.0 if not ctx.quick else 1.0
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    reuse: list[dict[str, Any]] = []
    for server in ("fast", "sdk"):
        for mode in ("json", "sse"):
            flags = ["--json"] if mode == "json" else []
            with running(server, ctx.tmp, *flags) as running_server:
                cell_rows, cell_notes, connections = _cell(server, mode, running_server.url, rounds, budget)
            rows += cell_rows
            notes += cell_notes
            reuse.append(goal(f"{server} server, {mode}: devknow keeps its connection alive",
                              f"{connections} connection(s) for {CONNECTION_CHECK} calls", connections == 1))
    goals = []
    for server in ("fast", "sdk"):
        for mode in ("json", "sse"):
            for tool in ("search_documents", "get_documents"):
                pick = {r["contender"]: r for r in rows if (r["server"], r["mode"], r["tool"]) == (server, mode, tool)}
                ours, floor, sdk = pick["devknow"], pick["raw httpx"], pick["mcp SDK"]
                label = f"{tool}, {server} server, {mode}"
                goals.append(goal(f"{label}: devknow ≤ 1.1× raw httpx (issue 25)",
                                  f"{ratio(ours, floor):.2f}×", ratio(ours, floor) <= 1.1))
                goals.append(goal(f"{label}: devknow faster than the mcp SDK client",
                                  f"{ratio(ours, sdk):.2f}× the SDK's time", ratio(ours, sdk) < 1.0))
                bounds = ratio(ours, pick[UNBOUNDED])
                goals.append(goal(f"{label}: reply bounds cost ≤ 10% (devknow vs max_reply_bytes=None)",
                                  f"{bounds:.2f}×", bounds <= 1.1))
    goals += reuse
    notes.append("The floor replays the exact headers and JSON-RPC body devknow sent (fresh id per call) and "
                 "decodes the reply; it skips everything else a client does (result checks, model objects, cache).")
    notes.append(f"`{UNBOUNDED}` is the same client reading replies without the byte limits (32 MiB a body "
                 "or event by default); both keep the per-call deadline, which has no off switch.")
    notes.append("`devknow` fetches also save each page to the offline store (SQLite) by default; the "
                 "`offline_store=False` row shows the call without that write.")
    return {"rows": rows, "goals": goals, "notes": notes}

"""Scenario 5: ``get_documents`` for 60 names when every server call takes 100 ms more (SDK test server
with ``--delay 0.1`` over a folder of 60 generated pages).

``DevKnowClient.get_documents(60 names)`` splits them into three calls of 20 and runs them at once;
compared with one call of 20 names (the time of a single call), the three calls made one after the
other, and one call per name. ``refresh=True`` everywhere, so each measure goes to the server.
"""

from __future__ import annotations

from typing import Any

from bench.scenarios import Context, goal
from bench.scenarios.latency import _check_transport
from bench.servers import running
from bench.stats import figure, ratio, round_robin
from tests.docgen import generate_docs

TITLE = "5. get_documents for 60 names with 100 ms server latency: concurrent batches vs sequential"
DELAY = 0.1
CLOSE_ENOUGH = 1.25  # "close to a single call": at most this many times one call's time


def run(ctx: Context) -> dict[str, Any]:
    """Batched-concurrent vs sequential fetches of 60 pages."""
    _check_transport()
    from devknow_jupyter import DevKnowClient
    from devknow_jupyter.cache import ResultCache

    names = generate_docs(ctx.tmp / "docs", 60, size=6_000, seed=5)
    batches = [names[i : i + 20] for i in range(0, 60, 20)]
    with running("sdk", ctx.tmp, "--delay", str(DELAY), "--docs", str(ctx.tmp / "docs")) as srv, DevKnowClient(
        srv.url, cache=ResultCache(1024)
    ) as client:
        docs = client.get_documents(names, refresh=True)
        if [doc.name for doc in docs] != names:
            raise RuntimeError("get_documents did not return the 60 pages in order")

        def sequential_batches() -> None:
            for batch in batches:
                client.get_documents(batch, refresh=True)

        def one_per_name() -> None:
            for name in names:
                client.get_documents([name], refresh=True)

        samples = round_robin(
            {
                "one call of 20 names (a single call's time)": lambda: client.get_documents(names[:20], refresh=True),
                "60 names, one get_documents (3 concurrent calls of 20)": lambda: client.get_documents(
                    names, refresh=True
                ),
                "60 names, 3 calls of 20 in sequence": sequential_batches,
            },
            ctx.reps(10, 2),
            budget=20.0,
        )
        samples.update(round_robin({"60 names, 60 calls of 1 in sequence": one_per_name}, ctx.reps(3, 1)))
        calls = len(srv.calls("get_documents"))
    rows = [figure(label, values, "s") for label, values in samples.items()]
    single, batched, sequential, per_name = rows
    share = ratio(batched, single)
    return {
        "rows": rows,
        "goals": [
            goal(f"60 names in ≤ {CLOSE_ENOUGH}× a single call's time", f"{share:.2f}× "
                 f"({batched['median']:.3f} s vs {single['median']:.3f} s)", share <= CLOSE_ENOUGH),
        ],
        "notes": [
            f"Speed-up of the concurrent path: {ratio(sequential, batched):.1f}× over 3 sequential calls, "
            f"{ratio(per_name, batched):.0f}× over one call per name.",
            f"The server saw {calls} get_documents calls in all; it sleeps {DELAY * 1000:.0f} ms in each.",
        ],
    }

"""Bytes a kernel sends the page for one magic (default: ``%devsearch -n 20``), by message kind.

Runs a real ipykernel (jupyter_client), with no key and no network (the offline index), executes
``%load_ext devknow_jupyter`` and then the magic, and sums the JSON size of every iopub message's content
the magic caused: ``display_data`` (the static twin and the widget reference), ``comm_open`` (each widget
model's state: its ES module, its CSS, its traits) and ``comm_msg`` (updates). The magic runs twice: the
``first`` figures are for a new kernel's first call, ``again`` for the next one (what every later search of
the notebook costs). Run it with ``python -m bench.payload_bytes ["%devsearch -n 20 create an API key"]``.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

MAGIC = "%devsearch -n 20 create an API key"


def _run(client: Any, code: str) -> list[dict[str, Any]]:
    msg_id = client.execute(code)
    messages = []
    while True:
        msg = client.get_iopub_msg(timeout=120)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return messages
        messages.append(msg)


def _sizes(messages: list[dict[str, Any]]) -> dict[str, int]:
    sizes: Counter[str] = Counter()
    widgets = 0
    for msg in messages:
        kind = msg["msg_type"]
        if kind in ("display_data", "update_display_data", "comm_open", "comm_msg", "execute_result", "stream"):
            sizes[kind] += len(json.dumps(msg["content"], separators=(",", ":")).encode())
            widgets += kind == "comm_open"
    return {**sizes, "total": sum(sizes.values()), "widgets": widgets}


def measure(code: str = MAGIC) -> dict[str, dict[str, int]]:
    """``{"first" | "again": {message kind: bytes, "total": …, "widgets": comm_open count}}`` for ``code``."""
    from jupyter_client.manager import start_new_kernel

    env = {k: v for k, v in os.environ.items() if k not in ("DEVKNOW_API_KEY", "GOOGLE_API_KEY", "DEVKNOW_ENDPOINT")}
    manager, client = start_new_kernel(kernel_name="python3", env=env)
    try:
        _run(client, "%load_ext devknow_jupyter")
        return {"first": _sizes(_run(client, code)), "again": _sizes(_run(client, code))}
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1] if len(sys.argv) > 1 else MAGIC), indent=2))

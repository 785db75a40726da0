"""The magics in a real Jupyter kernel: a notebook built here, executed by nbclient against the SDK server.

The saved outputs are what nbviewer, GitHub and a reopened notebook show, so they must carry the
static fallbacks (text/plain, text/markdown, text/html), no leftover "Searching…" placeholders and no
tracebacks; an expected error is one short line and the next cell still runs.
"""

from __future__ import annotations

import os
import queue
import re
import time

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

CELLS = {
    "load": "%load_ext devknow_jupyter",
    "status": "%devknow",
    "search": "%devsearch -n 3 restrict an API key",
    "get": "%devget _devsearch",
    "raw": "%devget --raw https://docs.example.dev/quotas",
    "ask": "%%devask\nHow do I restrict an API key?",
    "json": "%devsearch --json storage bucket",
    "silenced": "%devsearch quota units;",
    "missing": "%devget documents/docs.example.dev/no/such/page",
    "after": "print(type(_devsearch).__name__, len(_devget), type(_devask).__name__)",
    "prompt": "%devknow --api-key",
    "last": "print('still running')",
}


@pytest.fixture
def executed(sdk_server, tmp_path):
    """The notebook after nbclient ran it in a python3 kernel, as {cell key: outputs}."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS.values()]
    client = NotebookClient(
        nb, kernel_name="python3", timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}
    )
    # The kernel inherits conftest's isolated IPYTHONDIR and DEVKNOW_CACHE_DIR, plus the server's URL.
    client.execute(env={**os.environ, "DEVKNOW_ENDPOINT": sdk_server.url})
    path = tmp_path / "executed.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)  # check what a reader of the saved file gets
    return dict(zip(CELLS, (cell.outputs for cell in saved.cells), strict=True)), sdk_server


def _result(outputs) -> dict:
    results = [out for out in outputs if out.output_type == "execute_result"]
    assert len(results) == 1, outputs
    return results[0].data


def _text(outputs) -> str:
    parts = []
    for out in outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.extend(out.traceback)
        else:
            parts.extend(str(value) for value in out.get("data", {}).values())
    return ANSI.sub("", "\n".join(parts))


def test_every_magic_in_a_real_kernel(executed):
    outputs, server = executed

    for key in ("status", "search", "get", "raw", "ask", "json", "silenced", "after"):
        assert not [out for out in outputs[key] if out.output_type == "error"], (key, outputs[key])
        assert "Traceback" not in _text(outputs[key]), key
        # the "Searching…" / "Fetching…" / "Asking…" placeholders were replaced in place
        assert not re.search(r"(Searching|Fetching|Asking)…", _text(outputs[key])), key

    status = _result(outputs["status"])
    assert server.url in status["text/plain"] and "search_documents" in status["text/html"]

    for key, needle in (("search", "Restrict an API key"), ("get", "Restrict by caller"), ("ask", "Restrict")):
        data = _result(outputs[key])
        assert {"text/plain", "text/markdown", "text/html"} <= set(data), key
        assert needle in data["text/plain"] and needle in data["text/markdown"], key
        assert WIDGET_MIME in data, key  # a live kernel with ipywidgets gets the widget view as well

    raw = _result(outputs["raw"])
    assert raw["text/markdown"].startswith("```markdown\n# ")
    assert _result(outputs["json"])["application/json"]["results"][0]["parent"].startswith("documents/")

    assert not [out for out in outputs["silenced"] if out.output_type == "execute_result"]
    assert [call["arguments"]["query"] for call in server.calls("search_documents")][-1] == "quota units"

    # an expected error: one short line (plus a hint), not a 40-line traceback ...
    (error,) = [out for out in outputs["missing"] if out.output_type == "error"]
    assert error.ename == "DocumentNotFoundError"
    lines = [line for line in ANSI.sub("", "\n".join(error.traceback)).splitlines() if line.strip()]
    assert lines[0].startswith("DocumentNotFoundError: Unknown document: documents/docs.example.dev/no/such/page")
    assert len(lines) <= 3
    # ... and the kernel carries on
    assert _text(outputs["after"]).strip() == "SearchResults 0 Answer"

    # nbclient gives the kernel no stdin: the key prompt says what to do instead, in one line
    assert _text(outputs["prompt"]).strip() == (
        "UsageError: This frontend cannot prompt for input; set DEVKNOW_API_KEY in the kernel's environment."
    )
    assert _text(outputs["last"]).strip() == "still running"


@pytest.mark.parametrize("failing", ["%devget documents/docs.example.dev/no/such/page", "%devsearch --bogus x"])
def test_an_expected_error_stops_run_all(sdk_server, tmp_path, failing):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code) for code in (CELLS["load"], failing, "print('not reached')")]
    client = NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError):
        client.execute(env={**os.environ, "DEVKNOW_ENDPOINT": sdk_server.url})
    assert nb.cells[2].outputs == []


# -- an interrupt during a call (issue 12, item 10) ---------------------------------------------------------


def _run_in_kernel(km, kc, code: str, *, timeout: float = 60, while_running=None) -> list[dict]:
    """Execute ``code``; returns its iopub outputs (``while_running`` is called once, as soon as it started)."""
    msg_id = kc.execute(code)
    outputs: list[dict] = []
    deadline = time.monotonic() + timeout
    started = False
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            msg = None
        if msg is not None and msg["parent_header"].get("msg_id") == msg_id:
            kind, content = msg["msg_type"], msg["content"]
            if kind == "status" and content["execution_state"] == "busy":
                started = True
            elif kind == "status" and content["execution_state"] == "idle":
                return outputs
            elif kind in ("error", "stream", "execute_result", "display_data", "update_display_data", "clear_output"):
                outputs.append({"type": kind, **content})
        if started and while_running is not None and while_running():
            while_running = None
    raise AssertionError(f"{code!r} did not finish within {timeout}s: {outputs}")


def _shown_at_the_end(outputs: list[dict]) -> str:
    """The text/plain of every display once the updates to displays (by display_id) and clears are applied."""
    shown: dict[str, str] = {}
    for number, output in enumerate(outputs):
        if output["type"] == "clear_output":
            shown.clear()
            continue
        key = (output.get("transient") or {}).get("display_id") or str(number)
        if output["type"] == "display_data" or (output["type"] == "update_display_data" and key in shown):
            shown[key] = output["data"].get("text/plain", "")
    return "\n".join(shown.values())


def test_an_interrupted_call_is_one_line_and_the_next_call_works(sdk_server_factory, tmp_path):
    from jupyter_client.manager import start_new_kernel

    server = sdk_server_factory("--delay", "60", "--delay-only", "answer_query")
    env = {**os.environ, "DEVKNOW_ENDPOINT": server.url}
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    try:
        assert not [o for o in _run_in_kernel(km, kc, "%load_ext devknow_jupyter") if o["type"] == "error"]

        def interrupt_once_the_server_has_the_call() -> bool:
            if not server.calls("answer_query"):
                return False
            time.sleep(0.3)  # the kernel is now blocked reading the reply
            km.interrupt_kernel()
            return True

        started = time.monotonic()
        ask = "%%devask\nHow do I restrict an API key?"
        outputs = _run_in_kernel(km, kc, ask, while_running=interrupt_once_the_server_has_the_call)
        assert time.monotonic() - started < 30  # the interrupt ended the call; the server would take 60 s
        (error,) = [o for o in outputs if o["type"] == "error"]
        shown = [line for line in ANSI.sub("", "\n".join(error["traceback"])).splitlines() if line.strip()]
        assert shown == ["Interrupted"], error["traceback"]
        assert "Asking…" not in _shown_at_the_end(outputs)  # the placeholder was removed

        # The kernel's client is still usable, on the same connection settings.
        outputs = _run_in_kernel(km, kc, "%devsearch -n 2 restrict an API key", timeout=30)
        assert not [o for o in outputs if o["type"] == "error"], outputs
        (result,) = [o for o in outputs if o["type"] == "execute_result"]
        assert "Restrict an API key" in result["data"]["text/plain"]
        outputs = _run_in_kernel(km, kc, "print(type(_devsearch).__name__, len(_devsearch))")
        assert [o["text"] for o in outputs if o["type"] == "stream"] == ["SearchResults 2\n"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

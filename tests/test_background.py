"""``--background`` (``-b``) for ``%devsearch``, ``%devget`` and ``%%devask`` (issue 25, item 3).

In a real IPython shell on the in-process backend (the handle, the variables, errors), and in a real kernel
(jupyter_client) against the SDK test server with a slow ``answer_query``: a second cell runs and finishes while
the ``%%devask -b`` is pending, then the view fills in place, in the first cell's output, and ``_devask`` is bound.
"""

from __future__ import annotations

import os
import queue
import re
import time

from IPython.utils.capture import capture_output

from devknow_jupyter.errors import DocumentNotFoundError
from devknow_jupyter.models import Answer, Documents, SearchResults

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_background_search_returns_a_handle_then_binds_the_variables(static_ip):
    ip = static_ip
    ip.user_ns.pop("_devsearch", None)
    handle = ip.run_line_magic("devsearch", "-b -o hits -n 2 restrict an API key")
    assert type(handle).__name__ == "BackgroundCall"
    assert handle.wait(10) and handle.done()
    results = handle.result()
    assert isinstance(results, SearchResults) and 0 < len(results) <= 2
    assert ip.user_ns["_devsearch"] is results and ip.user_ns["hits"] is results
    shape = r"<BackgroundCall %devsearch 'restrict an API key' done in \d+\.\d\d s: SearchResults>"
    assert re.fullmatch(shape, repr(handle))


def test_a_synchronous_magic_still_returns_the_result(static_ip):
    assert isinstance(static_ip.run_line_magic("devsearch", "restrict an API key"), SearchResults)


def test_background_get_and_ask_return_what_the_magic_returns_without_b(static_ip):
    ip = static_ip
    hits = ip.run_line_magic("devsearch", "restrict an API key")
    documents = ip.run_line_magic("devget", "-b _devsearch[0]").result(10)
    assert isinstance(documents, Documents) and documents[0].name == hits[0].parent
    raw = ip.run_line_magic("devget", "--raw -b _devsearch[0]").result(10)
    assert isinstance(raw, str) and raw == documents[0].content
    answer = ip.run_cell_magic("devask", "-b -o reply", "How do I restrict an API key?").result(10)
    assert isinstance(answer, Answer) and ip.user_ns["_devask"] is answer and ip.user_ns["reply"] is answer


def test_a_failed_background_call_shows_one_line_and_result_raises(static_ip):
    ip = static_ip
    handle = ip.run_line_magic("devget", "-b documents/docs.example.dev/no/such/page")
    error = handle.exception(10)
    assert isinstance(error, DocumentNotFoundError)
    try:
        handle.result()
    except DocumentNotFoundError as raised:
        assert raised is error
    else:
        raise AssertionError("result() did not raise the call's error")
    assert "failed in" in repr(handle) and "DocumentNotFoundError: Unknown document" in repr(handle)
    assert isinstance(ip.user_ns["_devget"], Documents)  # what was found (nothing), as without -b
    from IPython.display import display

    with capture_output() as captured:
        display(handle)  # as the cell's output shows it, once the reply is in
    (shown,) = captured.outputs
    text = shown.data["text/plain"]
    assert text.startswith("DocumentNotFoundError: Unknown document") and "\n" not in text.strip()
    assert "Traceback" not in text


def test_result_times_out_while_the_call_runs(sdk_server_factory, ip):
    server = sdk_server_factory("--delay", "3", "--delay-only", "search_documents")
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {server.url!r}")
    handle = ip.run_line_magic("devsearch", "-b restrict an API key")
    assert not handle.wait(0.2) and "running for" in repr(handle)
    try:
        handle.result(timeout=0.1)
    except TimeoutError as exc:
        assert "still running" in str(exc)
    else:
        raise AssertionError("result(timeout) returned before the reply")
    assert isinstance(handle.result(30), SearchResults)


# -- in a real kernel ----------------------------------------------------------------------------------


class _IOPub:
    """Every iopub message of a kernel, in arrival order, read on demand."""

    def __init__(self, kc) -> None:
        self.kc = kc
        self.messages: list[dict] = []

    def until(self, found, timeout: float = 60) -> dict:
        """Read until ``found(msg)`` holds for a new message; returns that message."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.2)
            except queue.Empty:
                continue
            self.messages.append(msg)
            if found(msg):
                return msg
        raise AssertionError(f"no such message within {timeout}s: {[m['msg_type'] for m in self.messages]}")

    def run(self, code: str, timeout: float = 60) -> tuple[str, list[dict]]:
        """Execute ``code`` and read until the kernel is idle again; returns (msg_id, that cell's outputs)."""
        msg_id = self.kc.execute(code)
        self.until(lambda m: _of(m, msg_id) and m["msg_type"] == "status" and _idle(m), timeout)
        return msg_id, [m for m in self.messages if _of(m, msg_id) and m["msg_type"] != "status"]


def _of(msg: dict, msg_id: str) -> bool:
    return msg["parent_header"].get("msg_id") == msg_id


def _idle(msg: dict) -> bool:
    return msg["content"]["execution_state"] == "idle"


def test_a_second_cell_runs_while_a_stalled_devask_is_pending(sdk_server_factory, tmp_path):
    from jupyter_client.manager import start_new_kernel

    server = sdk_server_factory("--delay", "8", "--delay-only", "answer_query")
    env = {**os.environ, "DEVKNOW_ENDPOINT": server.url}
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    iopub = _IOPub(kc)
    try:
        _, outputs = iopub.run("%load_ext devknow_jupyter")
        assert not [m for m in outputs if m["msg_type"] == "error"], outputs

        started = time.monotonic()
        ask_id, outputs = iopub.run("%%devask -b\nHow do I restrict an API key?")
        assert time.monotonic() - started < 6  # the cell is done long before the 8 s reply
        (view,) = [m for m in outputs if m["msg_type"] == "display_data"]
        assert view["content"]["data"]["text/plain"] == "Asking…"
        assert "devknow-spinner" in view["content"]["data"]["text/html"]
        display_id = view["content"]["transient"]["display_id"]

        _, outputs = iopub.run("print('free', '_devask' in globals(), _)")
        assert [m["content"]["text"] for m in outputs if m["msg_type"] == "stream"] == [
            "free False <BackgroundCall %%devask 'How do I restrict an API key?' running for " + _running(outputs)
        ]
        assert not [m for m in iopub.messages if m["msg_type"] == "update_display_data"]  # still pending

        update = iopub.until(lambda m: m["msg_type"] == "update_display_data", timeout=60)
        assert update["content"]["transient"]["display_id"] == display_id
        assert _of(update, ask_id)  # routed to the cell that asked, not to the one that ran last
        data = update["content"]["data"]
        assert "Restrict" in data["text/plain"] and "text/html" in data and WIDGET_MIME in data
        assert "Asking…" not in data["text/plain"]

        _, outputs = iopub.run("print(type(_devask).__name__, _devask is Out[2].result())")
        assert [m["content"]["text"] for m in outputs if m["msg_type"] == "stream"] == ["Answer True\n"]
        assert server.calls("answer_query")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _running(outputs: list[dict]) -> str:
    """The rest of the printed repr, after "running for " (its seconds vary), checked for its shape."""
    text = next(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
    rest = text.split("running for ", 1)[1]
    assert re.fullmatch(r"\d+\.\d s>\n", rest), text
    return rest


def test_a_call_with_nothing_to_show_leaves_a_line_not_an_empty_output(static_ip):
    from devknow_jupyter import background

    call = background.start("%devtest", "Working…", lambda: None)
    assert call.wait(10) and call.result() is None
    with capture_output() as shown:
        call._ipython_display_()
    texts = [output.data.get("text/plain", "") for output in shown.outputs]
    assert texts == ["%devtest: done, nothing to show."]

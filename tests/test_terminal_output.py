"""Control characters from documents and servers never reach a terminal raw (issue 12, item 4).

A scripted MCP server on 127.0.0.1 answers every tool with titles, passages, documents, answers, tool names and
error messages full of escape sequences (screen clears, OSC 52 clipboard writes, OSC 8 links), C1 controls, DEL
and bidi overrides. The ``devknow`` command (in-process and as a real process) and a real IPython shell must show
each of them visibly escaped, keep newlines that are layout, and keep ``--json`` output the exact same data.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.utils.capture import capture_output
from starlette.responses import Response

from devknow_jupyter.cli import main
from tests.conftest import ROOT
from tests.servers.scripted import Call, ScriptedServer, modern_server, result, rpc_json, tool_ok

CLEAR = "\x1b[2J\x1b[H"
CLIPBOARD = "\x1b]52;c;ZWNobyBvd25lZA==\x07"  # OSC 52: write "echo owned" to the clipboard
LINK = "\x1b]8;;https://evil.test/\x1b\\docs.example.dev\x1b]8;;\x1b\\"  # OSC 8: shows one site, opens another
BIDI = "\u202etxt.exe\u202c and \u2066isolated\u2069"
C1 = "\x9b31m\x7f"  # an 8-bit CSI and DEL
PAGE = "documents/docs.hostile.test/page"
BROKEN = "documents/docs.hostile.test/broken"
CONTENT = f"# Hostile {CLEAR}title{LINK}\n\nA passage {CLIPBOARD}with {BIDI} and {C1}.\r\nSecond line\tend.\n"
DOCUMENT = {
    "name": PAGE,
    "uri": "https://docs.hostile.test/page",
    "title": f"Page {CLEAR}title\nfake line",
    "description": f"About {BIDI}",
    "content": CONTENT,
}
ANSWER = {"answerText": f"Answer {CLIPBOARD}text {BIDI}\nand {C1}", "references": [PAGE]}
TOOL_ERROR = f"INTERNAL: backend {CLIPBOARD}failed\ndevknow: note: fake {BIDI}"
TOOLS = [{"name": f"search_documents{CLEAR}", "inputSchema": {"type": "object"}}]
# Every character a terminal could act on, bar newline and tab.
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
OUR_COLOURS = re.compile(r"\x1b\[(?:31|0)m")  # the red of IPython's short error line is ours


def hostile(call: Call) -> Response | None:
    """search, get and answer with hostile text; a tool error with a hostile message for BROKEN."""
    if call.rpc_method == "tools/list":
        return rpc_json(result(call, {"tools": TOOLS}))
    if call.rpc_method != "tools/call":
        return None
    name, arguments = call.body["params"]["name"], call.body["params"].get("arguments") or {}
    if name == "get_documents" and BROKEN in arguments.get("names", []):
        return rpc_json(result(call, {"content": [{"type": "text", "text": TOOL_ERROR}], "isError": True}))
    payload = {
        "search_documents": {"results": [{"parent": PAGE, "id": "1", "content": CONTENT}]},
        "get_documents": {"documents": [DOCUMENT]},
        "answer_query": ANSWER,
    }[name]
    return rpc_json(result(call, tool_ok(payload)))


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(modern_server(hostile)) as running:
        yield running


def assert_shown_escaped(text: str) -> None:
    """No raw control character, and the hostile ones visible as escapes."""
    assert not UNSAFE.search(text), [match.group(0) for match in UNSAFE.finditer(text)]
    assert "\\x1b" in text


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# -- the devknow command ----------------------------------------------------------------------------


def test_search_get_ask_print_controls_escaped(server: ScriptedServer, capsys: pytest.CaptureFixture[str]) -> None:
    status, searched, _ = cli(capsys, "--endpoint", server.url, "search", "hostile")
    assert status == 0
    assert_shown_escaped(searched)
    assert "\\x1b]52;c;ZWNobyBvd25lZA==\\x07" in searched and "\\u202etxt.exe\\u202c" in searched
    assert "\\x9b31m\\x7f" in searched and "\\x1b]8;;https://evil.test/" in searched
    assert "Second line\tend." in searched  # tabs and line ends are layout; CRLF is just a line end

    status, got, _ = cli(capsys, "--endpoint", server.url, "get", PAGE)
    assert status == 0
    assert_shown_escaped(got)
    assert f"<!-- {PAGE} | https://docs.hostile.test/page -->\n# Hostile \\x1b[2J\\x1b[Htitle" in got

    status, answered, _ = cli(capsys, "--endpoint", server.url, "ask", "what is hostile?")
    assert status == 0
    assert_shown_escaped(answered)
    assert "Answer \\x1b]52;c;" in answered and "\nand \\x9b31m" in answered


def test_status_escapes_the_server_s_tool_names(server: ScriptedServer, capsys: pytest.CaptureFixture[str]) -> None:
    status, shown, _ = cli(capsys, "--endpoint", server.url, "status")
    assert status == 0
    assert_shown_escaped(shown)
    assert "search_documents\\x1b[2J\\x1b[H" in shown


def test_a_server_error_is_one_escaped_line(server: ScriptedServer, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = cli(capsys, "--endpoint", server.url, "get", BROKEN)
    assert status == 6  # ToolError: one exit status per error class
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("devknow: error: "), err  # the server can't fake a second line
    assert "INTERNAL: backend \\x1b]52;c;ZWNobyBvd25lZA==\\x07failed" in lines[0]
    assert "devknow: note: fake \\u202etxt.exe" in lines[0]
    assert_shown_escaped(err)


def test_json_output_is_the_exact_data_with_no_raw_controls(
    server: ScriptedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, expected in (
        (["search", "hostile"], {"results": [{"parent": PAGE, "id": "1", "content": CONTENT}]}),
        (["get", PAGE], {"documents": [DOCUMENT]}),
        (["ask", "q"], ANSWER),
    ):
        status, printed, _ = cli(capsys, "--endpoint", server.url, "--json", *argv)
        assert status == 0
        assert not UNSAFE.search(printed), argv  # json.dumps leaves C1, DEL and bidi raw; we escape them
        data = json.loads(printed)
        if argv[0] == "search":
            data = {"results": [{key: hit[key] for key in ("parent", "id", "content")} for hit in data["results"]]}
        if argv[0] == "ask":
            data = {"answerText": data["answerText"], "references": data["references"]}
        assert data == expected, argv


def test_index_escapes_file_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / f"docs{CLIPBOARD}"
    folder.mkdir()
    (folder / f"bad{CLEAR}.md").write_bytes(b"# Not quite UTF-8\n\nA byte \xff here.\n")
    status, shown, _ = cli(capsys, "index", str(folder))
    assert status == 0
    assert_shown_escaped(shown)
    assert "docs\\x1b]52;c;ZWNobyBvd25lZA==\\x07" in shown and "bad\\x1b[2J\\x1b[H.md" in shown


def test_a_real_process_writes_no_raw_controls(server: ScriptedServer) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "devknow_jupyter", "--endpoint", server.url, "search", "hostile"],
        cwd=ROOT,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout.decode("utf-8")
    assert_shown_escaped(shown)
    assert b"\x1b" not in done.stdout and b"\xc2\x9b" not in done.stdout and "\u202e".encode() not in done.stdout


# -- IPython: the short error line and the text/plain views ---------------------------------------------


def test_ipython_error_line_and_plain_views_are_escaped(ip, server: ScriptedServer) -> None:
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {server.url!r}")
    with capture_output() as captured:
        ip.run_cell(f"%devget {BROKEN}")
    shown = OUR_COLOURS.sub("", captured.stdout)
    assert shown.startswith("ToolError: ") and "backend \\x1b]52;c;ZWNobyBvd25lZA==\\x07failed" in shown, shown
    assert len(shown.strip().splitlines()) == 1
    assert_shown_escaped(shown)

    # What a terminal IPython prints for each result: its text/plain view.
    for code in ("%devsearch hostile", f"%devget {PAGE}", "%%devask\nwhat is hostile?"):
        data, _ = ip.display_formatter.format(ip.run_cell(code).result)
        assert_shown_escaped(data["text/plain"])
        assert "\\u202etxt.exe" in data["text/plain"], (code, data["text/plain"])
        if code.startswith("%devget"):  # a newline in a title is not layout: it can't fake a line
            assert data["text/plain"].startswith("Page \\x1b[2J\\x1b[Htitle\\nfake line\n")

"""The ``devknow`` command: every subcommand, its JSON shapes, exit codes and one-line errors.

In-process through ``main([...])`` (with capsys) for detail, and as a real process
(``python -m devknow_jupyter`` and the installed ``devknow`` script) for the entry points. Backends:
the local index (in a temporary cache dir) and the MCP SDK test server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from devknow_jupyter.cli import main
from devknow_jupyter.models import Answer, Documents, SearchResults
from tests.conftest import FIXTURE_DOCS, ROOT

STARTER = "documents/devknow-jupyter.dev/guide"
SECRET = "test-only-key-6f1c0e9b"  # never a real key


def run(*argv: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """``python -m devknow_jupyter argv...`` as a real process, with the test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "devknow_jupyter", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def one_error_line(stderr: str) -> str:
    """The error line, checking there is exactly one and no traceback."""
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith("devknow: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture
def own_docs(tmp_path: Path) -> Path:
    folder = tmp_path / "my-docs"
    folder.mkdir()
    (folder / "lantern.md").write_text(
        "---\nname: documents/docs.lantern.test/setup\nuri: https://docs.lantern.test/setup\n"
        "title: Set up Lantern\ndescription: Install the Lantern relay.\n---\n"
        "# Set up Lantern\n\nLantern relays telemetry from greenhouses.\n\n"
        "## Install the relay\n\nRun the installer, then pair the relay with a zucchini sensor.\n",
        encoding="utf-8",
    )
    (folder / "notes.md").write_text("# Relay pairing notes\n\nPairing needs a zucchini sensor nearby.\n")
    return folder


# -- the local backend ----------------------------------------------------------------------------


def test_search_prints_titles_links_and_passages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "search", "create", "an", "API", "key", "-n", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. ")
    assert "https://devknow-jupyter.dev/guide/create-an-api-key" in out
    assert f"{STARTER}/create-an-api-key" in out
    assert re.findall(r"^(\d+)\. ", out, re.MULTILINE) == ["1", "2"]  # hit numbers start lines; passages are indented
    assert "Credentials" in out  # the passage itself


def test_search_json_is_the_service_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "get_documents limit", "--json", "-n", "5", "--endpoint", "local"]) == 0
    data = json.loads(capsys.readouterr().out)
    # The service's shape: with nextPageToken (as the REST surface sends it) when more hits follow.
    assert set(data) <= {"results", "nextPageToken"} and 1 <= len(data["results"]) <= 5
    for hit in data["results"]:
        assert set(hit) == {"parent", "id", "content"}
    assert SearchResults.from_dict(data, "q").to_dict() == data
    assert f"{STARTER}/get-documents-tool" in [hit["parent"] for hit in data["results"]]


def test_search_source_filter_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "--endpoint", "local", "search", "quota", "--source", "firebase.google.com"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"results": []}
    # The local index filters inside its ranking (its tool schema has `source`) and says when the site has nothing.
    assert "devknow: note: No page on firebase.google.com matches" in captured.err
    assert "Filtered here" not in captured.err
    assert main(["--endpoint", "local", "search", "quota", "--source", "devknow-jupyter.dev/guide"]) == 0
    assert "quotas-and-limits" in capsys.readouterr().out


def test_search_without_hits_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "search", "xylophonequartz"]) == 0
    assert capsys.readouterr().out == "No results for 'xylophonequartz'.\n"


def test_get_prints_markdown_in_request_order(capsys: pytest.CaptureFixture[str]) -> None:
    names = ["https://devknow-jupyter.dev/guide/tools", f"{STARTER}/caching", f"{STARTER}/tools"]
    assert main(["--endpoint", "local", "get", *names]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"<!-- {STARTER}/tools | https://devknow-jupyter.dev/guide/tools -->\n# The three tools")
    assert out.count("<!-- ") == 2  # the duplicate is fetched once
    assert out.index("# The three tools at a glance") < out.index("# Caching")

    assert main(["--json", "--endpoint", "local", "get", f"{STARTER}/caching", f"{STARTER}/tools"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [doc["name"] for doc in data["documents"]] == [f"{STARTER}/caching", f"{STARTER}/tools"]
    assert set(data["documents"][0]) == {"name", "uri", "content", "description", "title"}
    assert Documents.from_dict(data).to_dict() == data


def test_get_unknown_document_fails_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "get", f"{STARTER}/tools", f"{STARTER}/no-such-page"]) == 7
    captured = capsys.readouterr()
    expected = f"devknow: error: Unknown document: {STARTER}/no-such-page (1 other document(s) were found)"
    assert one_error_line(captured.err) == expected
    assert "# The three tools at a glance" in captured.out  # what was found is not lost


def test_each_error_class_has_its_own_exit_status_and_the_hint_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from devknow_jupyter import errors
    from devknow_jupyter.cli import EXIT_STATUS

    classes = {getattr(errors, name) for name in errors.__all__ if isinstance(getattr(errors, name), type)}
    assert set(EXIT_STATUS) == classes
    assert len(set(EXIT_STATUS.values())) == len(EXIT_STATUS) and not {0, 2, 130} & set(EXIT_STATUS.values())
    assert main(["--endpoint", "local", "get", f"{STARTER}/no-such-page"]) == EXIT_STATUS[errors.DocumentNotFoundError]
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == f"devknow: hint: {errors.DocumentNotFoundError([]).hint_for('cli')}"
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for kind, status in EXIT_STATUS.items():  # the command's page documents every status
        assert re.search(rf"\|\s*{status}\s*\|\s*`{kind.__name__}`", page), kind.__name__


def test_get_rejects_text_that_is_not_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "get", "firebase auth"]) == 3
    assert "Not a document name or page URL" in one_error_line(capsys.readouterr().err)


def test_ask_prints_answer_and_references(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "ask", "How", "many", "names", "can", "get_documents", "take?"]) == 0
    out = capsys.readouterr().out
    assert "**References**" in out and "https://devknow-jupyter.dev/guide/" in out

    assert main(["--endpoint", "local", "--json", "ask", "What is the answer quota?"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"answerText", "references"}
    assert data["answerText"] and all(ref.startswith(f"{STARTER}/") for ref in data["references"])
    assert Answer.from_dict(data).to_dict() == data


def test_empty_query_is_an_error_not_a_crash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "search", "   "]) == 3
    assert one_error_line(capsys.readouterr().err) == "devknow: error: The query is empty."
    assert main(["--endpoint", "local", "ask", ""]) == 3
    assert one_error_line(capsys.readouterr().err) == "devknow: error: The query is empty."


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["search"],
        ["get"],
        ["frobnicate"],
        ["search", "x", "--bogus"],
        ["search", "x", "-n", "0"],
        ["--timeout", "0", "status"],
        ["serve", "--port", "70000"],
    ],
    ids=["no-command", "no-query", "no-names", "unknown-command", "unknown-option", "n-zero", "timeout-zero", "port"],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "usage: devknow" in err and "Traceback" not in err


def test_help_and_version_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("search", "get", "ask", "index", "serve", "status"):
        assert command in out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("devknow ")


def test_index_adds_a_folder_to_the_default_index(own_docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(own_docs)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Indexed {own_docs}")
    assert "2 added, 0 updated, 0 removed, 0 unchanged, 0 skipped" in out

    # The default index now finds the folder's pages next to the starter pack, also in a new process.
    result = run("--json", "--endpoint", "local", "search", "zucchini sensor")
    assert result.returncode == 0, result.stderr
    parents = [hit["parent"] for hit in json.loads(result.stdout)["results"]]
    assert "documents/docs.lantern.test/setup" in parents

    # Again: incremental; a deleted file is removed.
    (own_docs / "notes.md").unlink()
    assert main(["index", "--json", str(own_docs)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["added"], report["updated"], report["removed"], report["unchanged"]) == (0, 0, 1, 1)
    assert set(report) >= {"added", "updated", "removed", "unchanged", "skipped", "seconds"}


def test_index_reports_skipped_files(own_docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (own_docs / "broken.md").write_text("---\nname: [not, text]\n---\n# Broken\n", encoding="utf-8")
    assert main(["index", str(own_docs)]) == 0
    out = capsys.readouterr().out
    assert "1 skipped" in out
    assert f"skipped {own_docs / 'broken.md'}" in out


def test_index_of_a_missing_folder_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(tmp_path / "nowhere")]) == 3
    assert one_error_line(capsys.readouterr().err).startswith("devknow: error: Not a folder")


def test_status_of_the_local_index(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "local", "status"]) == 0
    out = capsys.readouterr().out
    assert "backend" in out and "local" in out
    assert "search_documents, get_documents, answer_query" in out

    assert main(["--endpoint", "local", "--json", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["backend"] == "local" and status["key_source"] is None
    assert status["tools"] == ["search_documents", "get_documents", "answer_query"]
    assert status["index_documents"] >= 15


def test_no_key_and_no_endpoint_means_the_offline_index() -> None:
    result = run("search", "answer quota")
    assert result.returncode == 0
    assert "devknow-jupyter.dev/guide/" in result.stdout
    assert "no API key set, so using the offline index" in result.stderr


# -- a real MCP server ----------------------------------------------------------------------------


def test_remote_search_get_ask(sdk_server, capsys: pytest.CaptureFixture[str]) -> None:
    url = sdk_server.url
    assert main(["--endpoint", url, "--json", "search", "bucket", "region"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["results"][0]["parent"] == "documents/docs.example.dev/storage/buckets"
    assert {"tool": "search_documents", "arguments": {"query": "bucket region"}} in sdk_server.calls()

    assert main(["--endpoint", url, "get", "https://docs.example.dev/storage/buckets"]) == 0
    assert "# Create a storage bucket" in capsys.readouterr().out

    assert main(["--endpoint", url, "--json", "ask", "How do I restrict an API key?"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert "documents/docs.example.dev/keys/restrict" in answer["references"]


def test_remote_unknown_document(sdk_server, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", sdk_server.url, "get", "documents/docs.example.dev/nope"]) == 7
    captured = capsys.readouterr()
    assert one_error_line(captured.err) == "devknow: error: Unknown document: documents/docs.example.dev/nope"
    assert captured.out == ""


def test_remote_status_never_prints_the_key(sdk_server_factory) -> None:
    server = sdk_server_factory("--api-key", SECRET)
    for argv in (["status"], ["--json", "status"], ["search", "bucket"]):
        result = run("--endpoint", server.url, *argv, env={"DEVKNOW_API_KEY": SECRET})
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout + result.stderr
    status = json.loads(run("--endpoint", server.url, "--json", "status", env={"DEVKNOW_API_KEY": SECRET}).stdout)
    assert status["key_source"] == "DEVKNOW_API_KEY" and status["backend"] == "remote"


def test_remote_wrong_key_is_one_line_without_the_key(sdk_server_factory) -> None:
    server = sdk_server_factory("--api-key", SECRET)
    wrong = "wrong-key-0123456789"
    result = run("--endpoint", server.url, "search", "bucket", env={"DEVKNOW_API_KEY": wrong})
    assert result.returncode == 4
    line = one_error_line(result.stderr)
    assert "403" in line or "refused" in line.lower() or "denied" in line.lower()
    assert wrong not in result.stdout + result.stderr


def test_remote_quota_is_an_error_with_no_fallback(sdk_server_factory, capsys: pytest.CaptureFixture[str]) -> None:
    server = sdk_server_factory("--answer-quota", "0")
    assert main(["--endpoint", server.url, "ask", "--no-fallback", "restrict a key"]) == 5
    assert "RESOURCE_EXHAUSTED" in one_error_line(capsys.readouterr().err)


def test_timeout_option(sdk_server_factory, capsys: pytest.CaptureFixture[str]) -> None:
    server = sdk_server_factory("--json", "--delay", "3")
    assert main(["--endpoint", server.url, "--timeout", "0.5", "search", "bucket"]) == 10
    assert one_error_line(capsys.readouterr().err).startswith("devknow: error: ")


def test_unreachable_endpoint(closed_port_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", closed_port_url, "search", "bucket"]) == 9
    assert one_error_line(capsys.readouterr().err).startswith("devknow: error: ")
    # status still shows where it points, then fails.
    assert main(["--endpoint", closed_port_url, "status"]) == 9
    captured = capsys.readouterr()
    assert closed_port_url in captured.out
    one_error_line(captured.err)


def hint_line(stderr: str) -> str:
    """The ``devknow: hint:`` line after the one error line."""
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("devknow: hint: "), stderr
    return lines[-1]


def test_the_hints_speak_the_command_lines_words(
    sdk_server_factory, closed_port_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    slow = sdk_server_factory("--json", "--delay", "3")
    quota = sdk_server_factory("--answer-quota", "0")
    hints = []
    for argv, status in [
        (["--endpoint", slow.url, "--timeout", "0.5", "search", "bucket"], 10),
        (["--endpoint", "local", "get", f"{STARTER}/no-such-page"], 7),
        (["--endpoint", closed_port_url, "search", "bucket"], 9),
        (["--endpoint", quota.url, "ask", "--no-fallback", "restrict a key"], 5),
    ]:
        assert main(argv) == status, argv
        hints.append(hint_line(capsys.readouterr().err))
    timeout, names, network, answers = hints
    assert timeout == "devknow: hint: Raise the timeout, e.g. `--timeout 60`."
    assert names.endswith("; `devknow search` finds them.")
    assert network.endswith("or use the offline index with `--endpoint local`.")
    assert "`devknow search` still works, and `devknow ask` falls back to it." in answers
    assert not any("%" in hint for hint in hints)  # never a magic or %config on the command line


def test_not_an_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", "ftp://example.com", "search", "x"]) == 3
    assert "Not an MCP endpoint" in one_error_line(capsys.readouterr().err)


# -- processes and entry points -------------------------------------------------------------------


def test_module_and_script_entry_points(sdk_server) -> None:
    result = run("--endpoint", sdk_server.url, "--json", "search", "bucket")
    assert result.returncode == 0 and json.loads(result.stdout)["results"]
    script = shutil.which("devknow", path=str(Path(sys.executable).parent))
    assert script, "the devknow script is installed next to the interpreter"
    done = subprocess.run(
        [script, "--endpoint", sdk_server.url, "get", "documents/docs.example.dev/nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 7
    assert one_error_line(done.stderr).startswith("devknow: error: Unknown document")
    bad = run("search")
    assert bad.returncode == 2 and "usage: devknow" in bad.stderr


def test_output_to_a_closed_pipe_is_quiet() -> None:
    command = f"{sys.executable} -m devknow_jupyter --endpoint local get {STARTER}/tools {STARTER}/caching | head -n 1"
    done = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("<!-- ")
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_serve_without_the_sdk_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from devknow_jupyter.cli import main\n"
        "sys.exit(main(['serve', '--docs', sys.argv[1]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURE_DOCS)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3
    assert "pip install 'devknow-jupyter[server]'" in one_error_line(done.stderr)


def test_serve_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--docs", str(tmp_path / "missing")]) == 3
    assert "No such folder" in one_error_line(capsys.readouterr().err)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--docs", str(FIXTURE_DOCS), "--port", str(port)]) == 3
    assert "port is in use" in one_error_line(capsys.readouterr().err)


def test_remote_ask_falls_back_to_search_when_the_quota_is_used_up(
    sdk_server_factory, capsys: pytest.CaptureFixture[str]
) -> None:
    server = sdk_server_factory("--answer-quota", "0")
    assert main(["--endpoint", server.url, "--json", "ask", "restrict a key"]) == 0
    captured = capsys.readouterr()
    assert "answer quota is used up" in captured.err
    assert json.loads(captured.out)["results"], "search results stand in for the answer"
    assert [call["tool"] for call in server.calls()] == ["answer_query", "search_documents"]


def corpus_shaped(folder: Path, pages: int = 4) -> Path:
    """A folder shaped like ../shared/corpus: pages with front matter in subfolders, a JSON Lines file holding
    the same pages, and a README.md and MANIFEST.md without front matter."""
    rows = []
    for number in range(1, pages + 1):
        name, uri = f"documents/docs.kiln.test/guide/p{number}", f"https://docs.kiln.test/guide/p{number}"
        body = f"# Firing {number}\n\nFire the clay to cone {number} and let the kiln cool slowly.\n"
        page = folder / "kiln" / "guide" / f"p{number}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"---\nname: {name}\nuri: {uri}\ntitle: Firing {number}\n---\n{body}", encoding="utf-8")
        rows.append({"name": name, "uri": uri, "title": f"Firing {number}", "description": "", "content": body})
    (folder / "corpus.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (folder / "README.md").write_text("# Kiln corpus\n\nThis folder holds pages about the kiln.\n", encoding="utf-8")
    (folder / "MANIFEST.md").write_text("# Manifest\n\n| source | pages |\n|---|---|\n| kiln | 4 |\n", encoding="utf-8")
    return folder


def test_indexing_a_corpus_shaped_folder_says_each_kind_of_skip_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = corpus_shaped(tmp_path / "corpus")
    assert main(["index", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("4 added, 0 updated, 0 removed, 0 unchanged, 6 skipped in ")
    duplicates = [line for line in lines if "duplicate name" in line]
    assert len(duplicates) == 1 and duplicates[0].startswith(
        f"  skipped 4 lines alike, the first {folder}/corpus.jsonl:1"
    )
    housekeeping = [line for line in lines if "not documentation" in line]
    assert len(housekeeping) == 1 and housekeeping[0].startswith("  skipped 2 files alike, the first ")
    assert lines[-1] == "  (--verbose lists every file skipped)" and len(lines) == 5

    assert main(["index", str(folder)]) == 0  # again, nothing changed: nothing to say about any file
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].startswith("0 added, 0 updated, 0 removed, 4 unchanged, 0 skipped in ")

    os.utime(folder / "corpus.jsonl")  # touched: read again, and --verbose lists each line
    assert main(["index", "--verbose", str(folder)]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  skipped ")]
    assert [line.split(": ")[0] for line in listed] == [f"  skipped {folder}/corpus.jsonl:{n}" for n in range(1, 5)]

    assert main(["--json", "search", "kiln", "corpus", "folder", "pages"]) == 0
    names = [hit["parent"] for hit in json.loads(capsys.readouterr().out)["results"]]
    assert names and not any(name.startswith("documents/local/") for name in names)  # no README or MANIFEST


def test_a_mistyped_subcommand_gets_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serch", "answer", "quota"]) == 2
    assert (
        capsys.readouterr()
        .err.rstrip()
        .endswith(
            "invalid choice: 'serch' (choose from 'search', 'get', 'ask', "
            "'index', 'serve', 'status', 'pack') (did you mean search?)"
        )
    )
    assert main(["pack", "biuld", "go"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("(did you mean build?)")
    assert main(["zzz"]) == 2
    assert "did you mean" not in capsys.readouterr().err  # nothing close: no guess

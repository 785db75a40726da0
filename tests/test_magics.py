"""The magics in a real IPython shell against a real MCP server (the SDK test server on 127.0.0.1).

Each test gets a fresh ``InteractiveShell`` (IPYTHONDIR in tmp, from conftest) with the extension
loaded and pointed at the server through ``%config``. What the user sees is captured with
``capture_output``; what the server saw comes from its call log.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from devknow_jupyter import errors
from devknow_jupyter.cache import shared_cache
from devknow_jupyter.errors import (
    AuthenticationError,
    ConfigurationError,
    DocumentNotFoundError,
    QuotaExceededError,
    TransportError,
)
from devknow_jupyter.models import Answer, Documents, SearchResults

from .conftest import ROOT, free_port

KEY = "dk-test-SECRET-4f9a2c7e"
WRONG_KEY = "dk-wrong-SECRET-90bd13"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


# -- fixtures and helpers ----------------------------------------------------------------------


def use(ip: InteractiveShell, url: str) -> None:
    """Point the magics at ``url`` the documented way."""
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = {url!r}")


def magics(ip: InteractiveShell):
    return ip.magics_manager.registry["DevKnowMagics"]


def run(ip: InteractiveShell, code: str):
    """Run a cell as a user would; returns (ExecutionResult, captured output)."""
    with capture_output() as captured:
        result = ip.run_cell(code, store_history=True)
    return result, captured


def seen(captured) -> str:
    """Everything a user saw: stdout, stderr and every MIME type of every display."""
    parts = [captured.stdout, captured.stderr]
    for output in captured.outputs:
        parts.extend(str(value) for value in output.data.values())
    return ANSI.sub("", "\n".join(parts))


def closed(client) -> bool:
    """True when ``client`` refuses work because it was closed."""
    try:
        client.search_documents("anything")
    except ConfigurationError as exc:
        return "closed" in str(exc)
    return False


def queries(server, tool: str) -> list[str]:
    return [call["arguments"].get("query") for call in server.calls(tool)]


# -- loading -------------------------------------------------------------------------------------


def test_load_ext_registers_the_four_magics(ip):
    line, cell = ip.magics_manager.magics["line"], ip.magics_manager.magics["cell"]
    assert {"devsearch", "devget", "devknow"} <= set(line)
    assert "devask" in cell
    assert sum(type(c).__name__ == "DevKnowMagics" for c in ip.configurables) == 1


LAZY_LOAD_PROBE = """
import json, sys
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "devknow_jupyter")
loaded = sorted(m for m in sys.modules if m.startswith("devknow_jupyter"))
with capture_output() as help_out:
    shell.run_cell("%devsearch?")
after_help = sorted(m for m in sys.modules if m.startswith("devknow_jupyter"))
hits = shell.run_line_magic("devsearch", "answer quota")
print(json.dumps({"loaded": loaded, "after_help": after_help, "help": help_out.stdout, "hits": len(hits),
                  "client": "devknow_jupyter.client" in sys.modules}))
"""


def test_load_ext_defers_client_models_and_cache_to_first_use(tmp_path):
    # A fresh interpreter: this test process has imported everything already.
    env = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY")}
    env.update(DEVKNOW_CACHE_DIR=str(tmp_path / "cache"), IPYTHONDIR=str(tmp_path / "ipython"))
    env["DEVKNOW_ENDPOINT"] = "local"
    done = subprocess.run(
        [sys.executable, "-c", LAZY_LOAD_PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen_modules = json.loads(done.stdout.strip().splitlines()[-1])
    for heavy in ("client", "models", "cache", "transport", "local"):
        assert f"devknow_jupyter.{heavy}" not in seen_modules["loaded"], seen_modules["loaded"]
    assert "devknow_jupyter.magics" in seen_modules["loaded"]
    assert "Search Google's developer documentation" in seen_modules["help"] and "--source" in seen_modules["help"]
    assert seen_modules["after_help"] == seen_modules["loaded"]  # %devsearch? needs none of them either
    assert seen_modules["hits"] > 0 and seen_modules["client"]  # first use imports them and works


def test_loading_twice_and_reload_ext_are_harmless(ip, sdk_server):
    use(ip, sdk_server.url)
    first = magics(ip)
    ip.run_line_magic("devsearch", "restrict api key")
    client = first.session.client()

    ip.run_line_magic("load_ext", "devknow_jupyter")  # "already loaded": nothing happens
    import devknow_jupyter

    devknow_jupyter.load_ipython_extension(ip)  # a direct second call does nothing either
    assert magics(ip) is first

    ip.run_line_magic("reload_ext", "devknow_jupyter")
    second = magics(ip)
    assert second is not first
    assert closed(client)  # the old client was closed
    assert sum(type(c).__name__ == "DevKnowMagics" for c in ip.configurables) == 1
    assert ip.find_line_magic("devsearch").__self__ is second
    assert second.endpoint == sdk_server.url  # %config settings survive the reload
    hits = ip.run_line_magic("devsearch", "restrict api key")
    assert len(hits) > 0
    assert second.session.client() is not client


def test_unload_ext_removes_the_magics_and_closes_the_client(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.run_line_magic("devsearch", "bucket")
    client = magics(ip).session.client()
    ip.run_line_magic("unload_ext", "devknow_jupyter")
    assert closed(client)
    assert ip.find_line_magic("devsearch") is None
    assert ip.find_cell_magic("devask") is None
    _, captured = run(ip, "%devsearch bucket")
    assert "not found" in captured.stderr
    ip.run_line_magic("load_ext", "devknow_jupyter")  # back for the fixture's teardown


# -- %devsearch ----------------------------------------------------------------------------------


def test_devsearch_returns_and_stores_the_hits(ip, sdk_server):
    use(ip, sdk_server.url)
    result, _ = run(ip, "hits = %devsearch restrict an API key")
    assert result.success
    hits = ip.user_ns["hits"]
    assert isinstance(hits, SearchResults)
    assert hits is ip.user_ns["_devsearch"]
    assert hits.query == "restrict an API key"
    assert "documents/docs.example.dev/keys/restrict" in hits.names
    assert queries(sdk_server, "search_documents")[-1] == "restrict an API key"


def test_devsearch_as_last_line_displays_once(ip, sdk_server):
    use(ip, sdk_server.url)
    result, captured = run(ip, "%devsearch restrict an API key")
    assert isinstance(result.result, SearchResults)
    assert captured.stdout.count("restrict") >= 1  # Out[] shows the hits' text/plain
    # the "Searching…" placeholder, then the same display replaced by an empty output
    assert len(captured.outputs) == 2
    placeholder, cleared = captured.outputs
    assert "Searching" in str(placeholder.data.get("text/plain", ""))
    assert cleared.update and cleared.data == {"text/plain": ""}
    assert cleared.transient["display_id"] == placeholder.transient["display_id"]


def test_devsearch_out_option_and_n_cap(ip, sdk_server):
    use(ip, sdk_server.url)
    everything = ip.run_line_magic("devsearch", "key")
    assert len(everything) > 2
    capped = ip.run_line_magic("devsearch", "-n 2 -o few key")
    assert len(capped) == 2
    assert ip.user_ns["few"] is capped is ip.user_ns["_devsearch"]
    assert list(capped) == list(everything)[:2]


def test_max_results_setting_is_the_default_cap(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.run_line_magic("config", "DevKnowMagics.max_results = 1")
    assert len(ip.run_line_magic("devsearch", "key")) == 1
    assert len(ip.run_line_magic("devsearch", "-n 3 key")) == 3


def test_devsearch_source_filters_here_with_a_notice(ip, sdk_server):
    use(ip, sdk_server.url)
    unfiltered = ip.run_line_magic("devsearch", "key token users")
    assert {hit.uri.split("/")[2] for hit in unfiltered} > {"firebase.example.dev"}
    result, captured = run(ip, "%devsearch --source firebase.example.dev key token users")
    hits = result.result
    assert len(hits) > 0
    assert all(hit.uri.startswith("https://firebase.example.dev/") for hit in hits)
    assert any("Filtered here to firebase.example.dev" in notice for notice in hits.info.notices)
    assert "Filtered here to firebase.example.dev" in seen(captured)
    # the server only ever saw the query (its search tool has no filter)
    assert sdk_server.calls("search_documents")[-1]["arguments"] == {"query": "key token users"}


def test_devsearch_json_shows_the_raw_json(ip, sdk_server):
    use(ip, sdk_server.url)
    result, captured = run(ip, "%devsearch --json storage bucket")
    raw = result.result
    assert raw == ip.user_ns["_devsearch"].to_dict()
    assert isinstance(ip.user_ns["_devsearch"], SearchResults)
    data, _ = ip.display_formatter.format(raw)
    assert data["application/json"]["results"][0]["parent"].startswith("documents/")
    assert data["text/plain"].startswith("{\n")
    assert '"results": [' in captured.stdout


def test_devsearch_refresh_asks_the_server_again(sdk_server_factory, ip):
    server = sdk_server_factory()
    use(ip, server.url)
    first = ip.run_line_magic("devsearch", "bucket names")
    again = ip.run_line_magic("devsearch", "bucket names")
    assert not first.from_cache and again.from_cache
    assert len(server.calls("search_documents")) == 1
    fresh = ip.run_line_magic("devsearch", "--refresh bucket names")
    assert not fresh.from_cache
    assert len(server.calls("search_documents")) == 2


def test_devsearch_empty_result_still_sets_the_variable(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.user_ns["_devsearch"] = "stale"
    hits = ip.run_line_magic("devsearch", "-o none xyzzyplugh")
    assert isinstance(hits, SearchResults) and len(hits) == 0
    assert ip.user_ns["_devsearch"] is hits is ip.user_ns["none"]


def test_devsearch_query_is_taken_verbatim(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.user_ns["HOME"] = "should-not-appear"
    ip.run_cell("""%devsearch -n 2 bucket "names" {HOME} $HOME don't""")
    assert queries(sdk_server, "search_documents")[-1] == """bucket "names" {HOME} $HOME don't"""
    ip.run_cell("%devsearch -- -n is part of this bucket query")
    assert queries(sdk_server, "search_documents")[-1] == "-n is part of this bucket query"


def test_trailing_semicolon_silences_and_is_not_part_of_the_query(ip, sdk_server):
    use(ip, sdk_server.url)
    result, captured = run(ip, "%devsearch quota units;")
    assert result.result is None
    assert "quota" not in captured.stdout
    assert queries(sdk_server, "search_documents")[-1] == "quota units"
    assert len(ip.user_ns["_devsearch"]) > 0


# -- %devget -------------------------------------------------------------------------------------


def test_devget_from_the_search_variable(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.run_line_magic("devsearch", "restrict an API key")
    run(ip, "docs = %devget _devsearch")
    docs = ip.user_ns["docs"]
    assert isinstance(docs, Documents)
    assert docs is ip.user_ns["_devget"]
    assert [doc.name for doc in docs] == ip.user_ns["_devsearch"].names
    assert docs[0].title == "Restrict an API key"
    assert sdk_server.calls("get_documents")[-1]["arguments"]["names"] == ip.user_ns["_devsearch"].names


def test_devget_accepts_urls_names_documents_and_lists(ip, sdk_server):
    use(ip, sdk_server.url)
    docs = ip.run_line_magic("devget", "https://docs.example.dev/quotas documents/docs.example.dev/storage/buckets")
    assert [doc.name for doc in docs] == [
        "documents/docs.example.dev/quotas",
        "documents/docs.example.dev/storage/buckets",
    ]
    ip.user_ns["page"] = docs[1]
    ip.user_ns["wanted"] = ["documents/docs.example.dev/i18n/strings"]
    again = ip.run_line_magic("devget", "-o mine page wanted")
    assert [doc.name for doc in again] == [
        "documents/docs.example.dev/storage/buckets",
        "documents/docs.example.dev/i18n/strings",
    ]
    assert ip.user_ns["mine"] is again


def test_devget_unknown_name_is_a_short_error_and_keeps_what_was_found(ip, sdk_server):
    use(ip, sdk_server.url)
    result, captured = run(ip, "%devget -o got https://docs.example.dev/quotas documents/docs.example.dev/no/such/page")
    assert isinstance(result.error_in_exec, DocumentNotFoundError)
    shown = ANSI.sub("", captured.stdout)
    assert "DocumentNotFoundError: Unknown document: documents/docs.example.dev/no/such/page" in shown
    assert "Traceback" not in shown and len(shown.strip().splitlines()) <= 3
    found = ip.user_ns["_devget"]
    assert [doc.name for doc in found] == ["documents/docs.example.dev/quotas"]
    assert ip.user_ns["got"] is found
    # the kernel is fine afterwards
    assert run(ip, "%devget https://docs.example.dev/quotas")[0].success


def test_devget_raw_shows_the_markdown_source(ip, sdk_server):
    use(ip, sdk_server.url)
    result, _ = run(ip, "%devget --raw https://docs.example.dev/keys/restrict")
    raw = result.result
    assert raw.startswith("# Restrict an API key")
    assert isinstance(ip.user_ns["_devget"], Documents)
    data, _ = ip.display_formatter.format(raw)
    assert data["text/plain"].startswith("# Restrict an API key")
    assert data["text/markdown"].startswith("```markdown\n# Restrict an API key")


def test_devget_refresh_fetches_again(sdk_server_factory, ip):
    server = sdk_server_factory()
    use(ip, server.url)
    ip.run_line_magic("devget", "https://docs.example.dev/quotas")
    ip.run_line_magic("devget", "https://docs.example.dev/quotas")
    assert len(server.calls("get_documents")) == 1
    ip.run_line_magic("devget", "--refresh https://docs.example.dev/quotas")
    assert len(server.calls("get_documents")) == 2


def test_devget_rejects_unknown_variables_and_wrong_types(ip, sdk_server_factory):
    server = sdk_server_factory()
    use(ip, server.url)
    _, captured = run(ip, "%devget nosuchvariable")
    assert "UsageError: 'nosuchvariable' is neither a variable nor a document name" in captured.stderr
    ip.user_ns["number"] = 42
    _, captured = run(ip, "%devget number")
    assert "Variable number holds a int" in captured.stderr
    assert server.calls() == []  # nothing was sent for these


def test_devget_takes_subscripts_and_attributes_of_variables(ip, sdk_server_factory):
    server = sdk_server_factory()
    use(ip, server.url)
    hits = ip.run_line_magic("devsearch", "-o hits restrict an API key")
    assert len(hits) >= 2

    first = ip.run_line_magic("devget", "_devsearch[0]")
    assert [doc.name for doc in first] == [hits[0].parent]
    assert server.calls("get_documents")[-1]["arguments"]["names"] == [hits[0].parent]

    two = ip.run_line_magic("devget", "hits[:2]")
    assert [doc.name for doc in two] == hits.names[:2]

    ip.user_ns["pages"] = {"mine": ["documents/docs.example.dev/quotas"]}
    mine = ip.run_line_magic("devget", "pages['mine'] _devsearch[0]")
    assert [doc.name for doc in mine] == ["documents/docs.example.dev/quotas", hits[0].parent]

    run(ip, "%%devask -o answer\nHow do I restrict an API key?\n")
    answer = ip.user_ns["answer"]
    assert answer.references
    docs = ip.run_line_magic("devget", "answer.references")
    assert [doc.name for doc in docs] == list(answer.references)
    assert ip.user_ns["_devget"] is docs


def test_devget_references_that_fail_are_short_usage_errors(ip, sdk_server_factory):
    server = sdk_server_factory()
    use(ip, server.url)
    ip.run_line_magic("devsearch", "restrict an API key")
    before = len(server.calls())
    for code, message in (
        ("%devget _devsearch[99]", "Could not evaluate _devsearch[99]: IndexError:"),
        ("%devget missing[0]", "'missing[0]' is neither a variable nor a document name"),
        ("%devget _devsearch.nothing", "Could not evaluate _devsearch.nothing: AttributeError:"),
        ("%devget _devsearch.info", "_devsearch.info gives a ResultInfo; %devget takes search hits"),
    ):
        result, captured = run(ip, code)
        assert not result.success and "UsageError" in captured.stderr and message in captured.stderr, code
        assert "Traceback" not in captured.stderr
    assert len(server.calls()) == before  # nothing was sent for these


def test_devget_dotted_words_that_are_no_variable_go_to_the_client_as_names(ip, sdk_server_factory):
    server = sdk_server_factory()
    use(ip, server.url)
    result, captured = run(ip, "%devget docs.example.dev")  # looks like `name.attribute`, but `docs` is unset
    assert isinstance(result.error_in_exec, DocumentNotFoundError)
    assert "docs.example.dev" in seen(captured) and "UsageError" not in seen(captured)
    assert len(server.calls("get_documents")) == 1


def test_devget_after_an_empty_search_gives_empty_documents(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.run_line_magic("devsearch", "xyzzyplugh")
    docs = ip.run_line_magic("devget", "_devsearch")
    assert isinstance(docs, Documents) and len(docs) == 0
    assert ip.user_ns["_devget"] is docs


# -- %%devask ------------------------------------------------------------------------------------


def test_devask_returns_and_stores_the_answer(ip, sdk_server):
    use(ip, sdk_server.url)
    result, _ = run(ip, "%%devask -o ans\nHow do I restrict an API key?\n")
    answer = result.result
    assert isinstance(answer, Answer)
    assert answer is ip.user_ns["_devask"] is ip.user_ns["ans"]
    assert "documents/docs.example.dev/keys/restrict" in answer.references
    assert queries(sdk_server, "answer_query")[-1] == "How do I restrict an API key?"


def test_devask_interpolates_only_defined_names(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.user_ns["topic"] = "API key"
    cell = """What restricts an {topic}? Keep {} and {unknown} and {a.b} and $HOME and "double" and 'single'."""
    run(ip, "%%devask\n" + cell)
    expected = """What restricts an API key? Keep {} and {unknown} and {a.b} and $HOME and "double" and 'single'."""
    assert queries(sdk_server, "answer_query")[-1] == expected


def test_devask_falls_back_to_search_when_the_quota_is_used_up(sdk_server_factory, ip):
    server = sdk_server_factory("--answer-quota", "0")
    use(ip, server.url)
    result, captured = run(ip, "%%devask\nHow many quota units does a search use?")
    fallback = result.result
    assert result.success and isinstance(fallback, SearchResults)
    assert fallback is ip.user_ns["_devask"]
    assert len(fallback) > 0
    assert "answer quota is used up" in seen(captured)
    assert "answer quota is used up" in fallback.info.notices[0]
    assert queries(server, "search_documents") == ["How many quota units does a search use?"]


def test_devask_no_fallback_raises_the_quota_error(sdk_server_factory, ip):
    server = sdk_server_factory("--answer-quota", "0")
    use(ip, server.url)
    result, captured = run(ip, "%%devask --no-fallback\nHow many quota units does a search use?")
    assert isinstance(result.error_in_exec, QuotaExceededError)
    shown = ANSI.sub("", captured.stdout)
    assert shown.lstrip().startswith("QuotaExceededError:")
    assert "Traceback" not in shown
    assert server.calls("search_documents") == []


# -- %devknow ------------------------------------------------------------------------------------


def test_devknow_status_table(ip, sdk_server):
    use(ip, sdk_server.url)
    ip.run_line_magic("devsearch", "bucket")
    ip.run_line_magic("devsearch", "bucket")
    status = ip.run_line_magic("devknow", "")
    data, _ = ip.display_formatter.format(status)
    text, page = data["text/plain"], data["text/html"]
    for expected in (sdk_server.url, "remote", "search_documents, get_documents, answer_query", "50%"):
        assert expected in text
        assert expected in page
    assert re.search(r"API key +none", text)
    assert f"{sdk_server.url} (DevKnowMagics.endpoint)" in text
    assert re.search(r"errors +one short line", text)
    assert "<table" in page


def test_api_key_prompt_never_leaks_the_key(sdk_server_factory, ip, monkeypatch):
    server = sdk_server_factory("--api-key", KEY)
    use(ip, server.url)
    prompts = []

    def fake_getpass(prompt: str = "Password: ") -> str:
        prompts.append(prompt)
        return KEY

    everything = []
    result, captured = run(ip, "%devsearch restrict an API key")
    everything.append(seen(captured))
    assert isinstance(result.error_in_exec, AuthenticationError)
    assert "HTTP 401" in seen(captured) and "%devknow --api-key" in seen(captured)  # the remedy

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    result, captured = run(ip, "%devknow --api-key")
    everything.append(seen(captured))
    assert result.success and prompts and KEY not in prompts[0]
    result, captured = run(ip, "hits = %devsearch restrict an API key")
    everything.append(seen(captured))
    assert result.success and len(ip.user_ns["hits"]) > 0
    result, captured = run(ip, "%devknow")
    everything.append(seen(captured))
    assert "%devknow --api-key" in seen(captured)
    result, captured = run(ip, "%%devask\nHow do I restrict an API key?")
    everything.append(seen(captured))
    assert result.success

    # a wrong key: a short 403 message, which names neither key
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": WRONG_KEY)
    run(ip, "%devknow --api-key")
    result, captured = run(ip, "%devsearch --refresh restrict an API key")
    everything.append(seen(captured))
    assert isinstance(result.error_in_exec, AuthenticationError)
    assert result.error_in_exec.status == 403 and "HTTP 403" in seen(captured)
    assert "Traceback" not in seen(captured)

    magic = magics(ip)
    ip.history_manager.writeout_cache()
    history = ip.history_manager.hist_file.read_bytes()
    assert b"--api-key" in history  # the history was really written
    places = [
        *everything,
        repr(magic.session),
        repr(magic.session.client()),
        repr(magic.session.status()),
        str(result.error_in_exec),
        *(repr(value) for value in ip.user_ns.values()),
        "\n".join(ip.history_manager.input_hist_raw),
    ]
    for secret in (KEY, WRONG_KEY):
        assert all(secret not in place for place in places)
        assert secret.encode() not in history


def test_api_key_typed_into_the_cell_is_refused_without_echo(ip, monkeypatch):
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": pytest.fail("must not prompt"))
    _, captured = run(ip, f"%devknow --api-key {KEY}")
    assert "Don't type the key into the cell" in captured.stderr
    assert KEY not in seen(captured)
    assert not magics(ip).session.has_prompted_key


def test_api_key_prompt_with_nothing_entered_changes_nothing(ip, monkeypatch):
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": "  ")
    _, captured = run(ip, "%devknow --api-key")
    assert "No key entered" in captured.stderr
    assert not magics(ip).session.has_prompted_key


def test_devknow_endpoint_switches_and_rebuilds_the_client(ip, sdk_server_factory):
    one, two = sdk_server_factory(), sdk_server_factory("--json")
    ip.run_line_magic("devknow", f"--endpoint {one.url}")
    ip.run_line_magic("devsearch", "bucket")
    client = magics(ip).session.client()
    _, captured = run(ip, f"%devknow --endpoint {two.url}")
    assert f"Endpoint: {two.url}" in seen(captured)
    assert closed(client)
    ip.run_line_magic("devsearch", "bucket")
    assert len(one.calls("search_documents")) == 1 and len(two.calls("search_documents")) == 1
    assert magics(ip).endpoint == two.url
    _, captured = run(ip, "%devknow --endpoint ftp://nowhere")
    assert "UsageError: DevKnowMagics.endpoint must be an http(s) URL" in captured.stderr
    assert magics(ip).endpoint == two.url
    ip.run_line_magic("devknow", "--endpoint auto")  # back to the default choice (no key: offline)
    assert magics(ip).endpoint == "" and magics(ip).session.client().endpoint == "local"


def test_devknow_clear_cache(ip, sdk_server_factory):
    server = sdk_server_factory()
    use(ip, server.url)
    ip.run_line_magic("devsearch", "bucket")
    assert len(shared_cache()) > 0
    _, captured = run(ip, "%devknow --clear-cache")
    assert "Cache cleared" in seen(captured)
    assert len(shared_cache()) == 0
    ip.run_line_magic("devsearch", "bucket")
    assert len(server.calls("search_documents")) == 2


def test_devknow_debug_switches_full_tracebacks(ip):
    use(ip, f"http://127.0.0.1:{free_port()}/mcp")  # nothing listens there
    result, captured = run(ip, "%devsearch bucket")
    assert isinstance(result.error_in_exec, TransportError)
    short = ANSI.sub("", captured.stdout).strip().splitlines()
    assert short[0].startswith(("TransportError", "RequestTimeout")) and len(short) <= 3

    run(ip, "%devknow --debug")
    assert magics(ip).short_errors is False
    result, captured = run(ip, "%devsearch bucket")
    full = ANSI.sub("", captured.stdout)
    assert "Traceback" in full or len(full.splitlines()) > 10

    run(ip, "%devknow --no-debug")
    result, captured = run(ip, "%devsearch bucket")
    assert len(ANSI.sub("", captured.stdout).strip().splitlines()) <= 3
    # and the kernel is still usable
    assert run(ip, "1 + 1")[0].result == 2


def test_ctrl_c_during_a_call_is_one_line_or_with_debug_the_full_traceback(ip, sdk_server_factory):
    server = sdk_server_factory("--delay", "60", "--delay-only", "answer_query")
    use(ip, server.url)

    def interrupt_once_the_server_has_the_call() -> None:
        deadline = time.monotonic() + 30
        while not server.calls("answer_query") and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # the shell is blocked reading the reply
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # what Ctrl-C does

    for debug, asked in ((False, "first"), (True, "second")):
        run(ip, "%devknow --debug" if debug else "%devknow --no-debug")
        interrupter = threading.Thread(target=interrupt_once_the_server_has_the_call)
        interrupter.start()
        started = time.monotonic()
        result, captured = run(ip, f"%%devask\nHow do I restrict an API key, {asked} time?")
        interrupter.join()
        assert time.monotonic() - started < 30
        assert isinstance(result.error_in_exec, KeyboardInterrupt)
        shown = ANSI.sub("", captured.stdout).strip()
        if debug:
            assert "Traceback" in shown and len(shown.splitlines()) > 10
        else:
            assert shown == "Interrupted"
        server.calls_path.unlink()  # the next call is seen afresh
        assert ip.run_line_magic("devsearch", "restrict an API key")  # the client carries on


# -- settings ------------------------------------------------------------------------------------


def test_config_traits_apply_and_validate(ip, sdk_server):
    magic = magics(ip)
    ip.run_line_magic("config", "DevKnowMagics.cache_size = 7")
    ip.run_line_magic("config", "DevKnowMagics.cache_ttl = 12.5")
    assert shared_cache().max_entries == 7 and shared_cache().ttl == 12.5
    ip.run_line_magic("config", "DevKnowMagics.short_errors = False")
    assert errors._short_errors is False
    ip.run_line_magic("config", "DevKnowMagics.short_errors = True")
    assert errors._short_errors is True

    use(ip, sdk_server.url)
    ip.run_line_magic("devsearch", "bucket")
    client = magic.session.client()
    ip.run_line_magic("config", "DevKnowMagics.timeout = 12")
    assert closed(client)
    assert magic.session.client().timeout == 12

    for bad in ("timeout = 0", "max_results = 0", "cache_size = -1", "endpoint = 'nonsense'"):
        with capture_output():
            ip.run_line_magic("config", f"DevKnowMagics.{bad}")
    assert (magic.timeout, magic.max_results, magic.cache_size, magic.endpoint) == (12, 10, 7, sdk_server.url)


def test_results_display_with_every_fallback_and_the_widgets_setting(ip, sdk_server):
    from devknow_jupyter import display

    use(ip, sdk_server.url)
    hits = ip.run_line_magic("devsearch", "restrict an API key")
    docs = ip.run_line_magic("devget", "_devsearch")
    answer = ip.run_cell("%%devask\nHow do I restrict an API key?").result
    with display.using(widgets_outside_kernel=True):  # no kernel here; build the widget view anyway
        for result in (hits, docs, answer):
            data, _ = ip.display_formatter.format(result)
            assert {"text/plain", "text/markdown", "text/html", display.WIDGET_MIME} <= set(data)
            assert "Restrict" in data["text/plain"] and "Restrict" in data["text/markdown"]
        ip.run_line_magic("config", "DevKnowMagics.widgets = False")
        assert display.options.widgets is False
        data, _ = ip.display_formatter.format(hits)
        assert display.WIDGET_MIME not in data and "text/html" in data
    ip.run_line_magic("config", "DevKnowMagics.widgets = True")
    assert display.options.widgets is True


# -- usage, help, errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "usage"),
    [
        ("%devsearch", "%devsearch [-n N]"),
        ("%devsearch -n 3", "%devsearch [-n N]"),
        ("%devget", "%devget [-o VAR]"),
        ("%%devask\n \n", "%devask [-o VAR]"),
    ],
)
def test_no_arguments_prints_the_usage(ip, code, usage):
    result, captured = run(ip, code)
    assert result.success and result.result is None
    assert usage in captured.stdout and "Usage:" in captured.stdout


def test_help_shows_the_docstring_and_every_option(ip):
    _, captured = run(ip, "%devsearch?")
    for text in ("Search Google's developer documentation", "-n N", "--source DOMAIN", "--refresh", "--json", "-o VAR"):
        assert text in captured.stdout
    for magic, options in (("devget", ("--raw", "_devsearch")), ("devknow", ("--api-key", "--clear-cache", "--debug"))):
        doc = ip.find_line_magic(magic).__doc__
        assert all(option in doc for option in options)
    assert "--no-fallback" in ip.find_cell_magic("devask").__doc__


def test_bad_options_raise_usage_errors(ip, sdk_server_factory):
    server = sdk_server_factory()
    use(ip, server.url)
    for code, message in (
        ("%devsearch --bogus bucket", "unrecognized arguments: --bogus"),
        ("%devsearch -n two bucket", "invalid int value"),
        ("%devsearch -n 0 bucket", "-n must be at least 1"),
        ("%devsearch -o 2x bucket", "-o needs a Python variable name"),
        ("%devknow explored", "%devknow takes options"),
    ):
        result, captured = run(ip, code)
        assert not result.success
        assert "UsageError" in captured.stderr and message in captured.stderr
    assert server.calls() == []


# Names -o must not take (issue 12, item 10): keywords, built-ins, IPython's own names and history.
RESERVED_NAMES = (
    "get_ipython", "__builtins__", "print", "len", "None", "class", "In", "Out", "exit", "quit",
    "_", "__", "___", "_i", "_ii", "_iii", "_ih", "_oh", "_dh", "_i3", "_7", "__name__",
)  # fmt: skip


def _call_with_out(ip, magic: str, name: str):
    if magic == "devask":
        return ip.run_cell_magic("devask", f"-o {name}", "How do I restrict an API key?")
    rest = "restrict an API key" if magic == "devsearch" else "https://docs.example.dev/quotas"
    return ip.run_line_magic(magic, f"-o {name} {rest}")


@pytest.mark.parametrize("magic", ["devsearch", "devget", "devask"])
def test_out_refuses_keywords_builtins_and_ipython_names(ip, sdk_server_factory, magic):
    server = sdk_server_factory()
    use(ip, server.url)
    for name in RESERVED_NAMES:
        before = ip.user_ns.get(name, "absent")
        with pytest.raises(UsageError, match=rf"^-o (needs a Python variable name, not '{name}'|{name} would replace)"):
            _call_with_out(ip, magic, name)
        assert ip.user_ns.get(name, "absent") is before, name
    assert server.calls() == []  # refused before anything was sent
    # The shell is intact: an ordinary name is taken, and the magics, print and the history still work.
    result = _call_with_out(ip, magic, "mine")
    assert ip.user_ns["mine"] is result
    ran, captured = run(ip, "print(callable(get_ipython), len(In) > 1)\n%devsearch -o hits restrict an API key")
    assert ran.success and captured.stdout.startswith("True True") and len(ip.user_ns["hits"])


def test_offline_index_through_devknow_endpoint_local(ip):
    ip.run_line_magic("devknow", "--endpoint local")
    hits = ip.run_line_magic("devsearch", "answer quota")
    assert len(hits) > 0 and hits.info.backend == "local"
    docs = ip.run_line_magic("devget", "_devsearch")
    assert [doc.name for doc in docs] == hits.names
    status = ip.run_line_magic("devknow", "")
    assert re.search(r"backend +local", repr(status))


def test_no_key_notice_is_an_info_line_in_the_notebook_not_stderr(ip):
    # No endpoint and no key: the client picks the offline index and says so once, as information.
    _, captured = run(ip, "%devsearch answer quota")
    assert captured.stderr == ""
    notices = [o.data for o in captured.outputs if "no API key set" in o.data.get("text/plain", "")]
    assert len(notices) == 1 and "devknow-msg-info" in notices[0]["text/html"]
    _, again = run(ip, "%devsearch answer quota")
    assert "no API key set" not in seen(again)


def test_shared_client_is_the_magics_client(ip, sdk_server):
    from devknow_jupyter.session import shared_client

    use(ip, sdk_server.url)
    client = shared_client(ip)
    assert client is magics(ip).session.client() and client.endpoint == sdk_server.url
    assert shared_client() is client  # the running shell by default
    ip.run_line_magic("unload_ext", "devknow_jupyter")
    assert shared_client(ip) is None
    ip.run_line_magic("load_ext", "devknow_jupyter")


def test_plain_terminal_gets_no_placeholder(ip, sdk_server, capsys):
    use(ip, sdk_server.url)
    ip.run_cell("%devsearch restrict an API key")  # no capture: IPython's plain display publisher
    out = capsys.readouterr().out
    assert "Restrict an API key" in out and "Searching" not in out


def test_one_settings_object_below_the_renderer(ip):
    from devknow_jupyter import display
    from devknow_jupyter.render import markdown, settings

    assert display.options is settings.options and display.DisplayOptions is settings.DisplayOptions
    ip.run_line_magic("config", "DevKnowMagics.max_results = 2")
    ip.run_line_magic("config", "DevKnowMagics.widgets = False")
    assert settings.options.max_results == 2 and settings.options.widgets is False
    with pytest.raises(ValueError):
        settings.options.max_results = 0
    # The renderer reads the same object: a smaller max_chars cuts a long text.
    long_text = "\n\n".join(f"Paragraph {n} of a long page about lanterns." for n in range(200))
    with display.using(max_chars=300):
        assert markdown.render_markdown(long_text).truncated
    assert not markdown.render_markdown(long_text).truncated


def _widget_of(data: dict):
    """The live widget a display output refers to (by its model id)."""
    from ipywidgets.widgets import widget

    from devknow_jupyter import display

    # Where ipywidgets keeps its live widgets: _instances since 8.1, Widget.widgets before, _active_widgets in 8.0.0.
    registry = getattr(widget, "_instances", None) or getattr(widget.Widget, "widgets", None)
    registry = registry or widget.Widget._active_widgets
    return registry[data[display.WIDGET_MIME]["model_id"]]


def test_a_hit_alone_or_pickled_shows_a_working_open_button(ip, sdk_server):
    import pickle

    from devknow_jupyter import display
    from tests.test_widgets import send_from_page

    use(ip, sdk_server.url)
    ip.run_line_magic("devsearch", "bucket region")
    hit = ip.user_ns["_devsearch"][0]
    assert ip.run_line_magic("devget", "_devsearch[0]")[0].name == hit.parent
    reloaded = pickle.loads(pickle.dumps(hit))
    assert reloaded == hit and type(reloaded).from_dict(reloaded.to_dict()) == hit
    assert "client" not in str(vars(reloaded))  # plain data: nothing of the client rides along
    for shown in (hit, reloaded, pickle.loads(pickle.dumps(ip.user_ns["_devsearch"]))[0]):
        ip.user_ns["shown"] = shown
        with display.using(widgets_outside_kernel=True):
            result, captured = run(ip, "display(shown)")
        assert result.success
        view = _widget_of(captured.outputs[-1].data)
        assert view.can_open
        send_from_page(view, do="open", name=hit.parent)  # what its Open button sends
        assert view.error == "" and view.page["name"] == hit.parent and "devknow-doc-title" in view.page["html"]


def test_results_pickled_in_one_process_display_in_another() -> None:
    import pickle
    import subprocess
    import sys

    from devknow_jupyter.models import DocumentChunk, SearchResults
    from tests.conftest import ROOT

    results = SearchResults("lantern", [DocumentChunk("documents/docs.lantern.test/setup", "1", "# Set up\n\nRelay.")])
    code = (
        "import pickle, sys\n"
        "results = pickle.loads(bytes.fromhex(sys.argv[1]))\n"
        "bundle = results._repr_mimebundle_()\n"
        "assert 'Set up' in bundle['text/html'] and 'text/markdown' in bundle, bundle\n"
        "assert results[0]._repr_mimebundle_()['text/plain']\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, pickle.dumps(results).hex()], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def _completions(ip, line: str) -> list[str]:
    return ip.complete("", line, len(line))[1]


def test_tab_completes_options_subcommands_and_result_variables(ip):
    from devknow_jupyter.models import DocumentChunk, SearchResults

    assert _completions(ip, "%devsearch --so") == ["--source"]  # not Python names such as sorted
    assert "--max-results" in _completions(ip, "%devsearch --")
    assert _completions(ip, "%devknow ") == ["explore"]
    assert "--endpoint" in _completions(ip, "%devknow --end")
    ip.user_ns["hits"] = SearchResults("q", [DocumentChunk("documents/a.dev/x", "1", "x")])
    ip.user_ns["picked"] = [DocumentChunk("documents/a.dev/x", "1", "x")]
    ip.user_ns["count"] = 3
    assert _completions(ip, "%devget ") == ["hits", "picked"]
    assert _completions(ip, "%devget hi") == ["hits"]


def test_a_mistyped_option_gets_did_you_mean(ip):
    result, captured = run(ip, "%devsearch --sorce firebase.google.com sign in")
    assert not result.success or "did you mean --source?" in seen(captured)
    with pytest.raises(UsageError, match=r"did you mean --source\?"):
        ip.run_line_magic("devsearch", "--sorce firebase.google.com sign in")
    with pytest.raises(UsageError, match=r"did you mean --endpoint\?"):
        ip.run_line_magic("devknow", "--endpont local")


def test_the_hints_speak_the_notebooks_words(ip, sdk_server_factory):
    slow = sdk_server_factory("--json", "--delay", "3")
    use(ip, slow.url)
    ip.run_line_magic("config", "DevKnowMagics.timeout = 0.5")
    result, captured = run(ip, "%devsearch bucket")
    assert type(result.error_in_exec).__name__ == "RequestTimeout"
    timeout = ANSI.sub("", captured.stdout).strip().splitlines()[-1]
    assert (
        timeout.strip()
        == "Raise the timeout: `%config DevKnowMagics.timeout = 60` (in Python: DevKnowClient(timeout=60))."
    )
    use(ip, "local")
    result, captured = run(ip, "%devget documents/devknow-jupyter.dev/guide/no-such-page")
    names = ANSI.sub("", captured.stdout).strip().splitlines()[-1]
    assert isinstance(result.error_in_exec, DocumentNotFoundError) and names.endswith("; %devsearch finds them.")
    use(ip, f"http://127.0.0.1:{free_port()}/mcp")  # nothing listens there, and no key: no fallback
    result, captured = run(ip, "%devsearch bucket")
    network = ANSI.sub("", captured.stdout).strip().splitlines()[-1]
    assert isinstance(result.error_in_exec, TransportError)
    assert network.endswith("use the offline index with `%devknow --endpoint local`.")
    for hint in (timeout, names, network):  # no command-line flag or command
        assert "--timeout" not in hint and "devknow search" not in hint and "`--" not in hint


def test_without_a_key_load_ext_says_so_in_a_rendered_sentence(ip, monkeypatch):
    ip.run_line_magic("unload_ext", "devknow_jupyter")
    _, loaded = run(ip, "%load_ext devknow_jupyter")
    (notice,) = [o.data for o in loaded.outputs if "offline index" in o.data.get("text/plain", "")]
    assert notice["text/plain"].startswith("There is no API key set, so the offline index answers. ")
    assert "<code>%devknow --api-key</code>" in notice["text/html"] and "`" not in notice["text/html"]
    assert "devknow-msg-info" in notice["text/html"]
    _, first = run(ip, "%devsearch answer quota")
    assert "There is no API key set" not in seen(first)  # said once, where the notebook loaded us
    ip.run_line_magic("unload_ext", "devknow_jupyter")
    monkeypatch.setenv("DEVKNOW_API_KEY", "k-load-ext-notice-1")
    _, loaded = run(ip, "%load_ext devknow_jupyter")
    assert "offline index" not in seen(loaded)

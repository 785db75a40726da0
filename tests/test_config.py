"""One configuration (issue 23, item 2): ``DevKnowConfig`` read by the magics, the server extension, the ``devknow``
command and ``devknow serve``; environment variables only as defaults; clients closed when their owner stops.

The faces run as users run them where it matters: the command and ``devknow serve`` as processes, the server
extension in a real Jupyter server, the kernel's client in a real kernel; the magics in a real IPython shell.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from traitlets import TraitError

from devknow_jupyter import DevKnowClient
from devknow_jupyter.config import DevKnowConfig, client_options, config_from_file, load_config
from devknow_jupyter.errors import ConfigurationError
from tests.conftest import ROOT, free_port, stop_process, wait_for_port
from tests.servers.asgi import read_wire_log
from tests.test_labext import start_jupyter_server
from tests.test_serve import write_docs

KEY = "dk-config-test-key-5b7d1e"


def config_file(folder: Path, settings: dict) -> Path:
    """A devknow config file (JSON) holding ``{"DevKnowConfig": settings}``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "devknow_config.json"
    path.write_text(json.dumps({"DevKnowConfig": settings}), encoding="utf-8")
    return path


def _env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DEVKNOW_API", "GOOGLE_API", "DEVKNOW_END"))}
    return {**base, "PYTHONPATH": str(ROOT), **extra}


# -- the config object -------------------------------------------------------------------------------------


def test_environment_variables_are_only_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVKNOW_ENDPOINT", "http://127.0.0.1:9/mcp")
    monkeypatch.setenv("DEVKNOW_PROTOCOL", "REST")
    config = DevKnowConfig()
    assert (config.endpoint, config.protocol) == ("http://127.0.0.1:9/mcp", "rest")
    given = DevKnowConfig(endpoint="local", protocol="mcp")  # a value set wins over the environment
    assert (given.endpoint, given.protocol) == ("local", "mcp")
    # The environment's endpoint is left to the client, so that its status says where it came from.
    assert client_options(config)["endpoint"] is None and client_options(given)["endpoint"] == "local"
    monkeypatch.delenv("DEVKNOW_ENDPOINT")
    monkeypatch.delenv("DEVKNOW_PROTOCOL")
    assert (DevKnowConfig().endpoint, DevKnowConfig().protocol) == ("", "")


def test_bad_values_are_refused_with_the_trait_named() -> None:
    for settings, needle in (
        ({"endpoint": "ftp://x"}, "DevKnowConfig.endpoint must be an http(s) URL"),
        ({"protocol": "grpc"}, "DevKnowConfig.protocol must be"),
        ({"timeout": 0}, "DevKnowConfig.timeout must be more than 0"),
        ({"cache_size": -1}, "DevKnowConfig.cache_size cannot be negative"),
    ):
        with pytest.raises(TraitError, match=re.escape(needle)):
            DevKnowConfig(**settings)


def test_from_config_builds_the_client_the_config_describes(tmp_path: Path) -> None:
    config = DevKnowConfig(endpoint=f"local:{write_docs(tmp_path / 'docs')}", timeout=4.5, offline_store=False)
    with DevKnowClient.from_config(config, cache=False) as client:
        assert client.timeout == 4.5 and client.backend_kind == "local" and client.status()["timeout"] == 4.5
        assert client.search_documents("install the relay")
    with DevKnowClient.from_config(config, timeout=9.0, cache=False) as client:  # a keyword argument wins
        assert client.timeout == 9.0


def test_a_config_file_py_or_json_and_its_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    py = tmp_path / "py" / "devknow_config.py"
    py.parent.mkdir()
    py.write_text("c.DevKnowConfig.timeout = 11\nc.DevKnowConfig.cache_size = 3\n", encoding="utf-8")
    monkeypatch.setenv("DEVKNOW_CONFIG", str(py))
    config = config_from_file()
    assert (config.timeout, config.cache_size) == (11, 3)
    from devknow_jupyter.cache import shared_cache

    assert shared_cache().max_entries == 3  # the command's cache takes the file's size
    monkeypatch.delenv("DEVKNOW_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert load_config() == {}  # no file: nothing set
    config_file(tmp_path / "xdg" / "devknow", {"timeout": 12})
    assert config_from_file().timeout == 12
    with pytest.raises(ConfigurationError, match="No devknow config file"):
        load_config(tmp_path / "missing.json")
    bad = config_file(tmp_path / "bad", {"timeout": -1})
    with pytest.raises(ConfigurationError, match=r"In the devknow config file: DevKnowConfig\.timeout"):
        config_from_file(bad)


# -- the magics ---------------------------------------------------------------------------------------------


def test_the_magics_read_the_file_the_old_names_and_the_new(ip, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEVKNOW_CONFIG", str(config_file(tmp_path, {"timeout": 7.5, "endpoint": "local"})))
    ip.run_line_magic("unload_ext", "devknow_jupyter")
    ip.run_line_magic("load_ext", "devknow_jupyter")
    magics = ip.magics_manager.registry["DevKnowMagics"]
    assert isinstance(magics, DevKnowConfig)
    assert magics.session.client().timeout == 7.5 and magics.session.client().endpoint == "local"
    ip.run_line_magic("config", "DevKnowConfig.timeout = 13")  # the shared section reaches the magics ...
    assert magics.session.client().timeout == 13
    ip.run_line_magic("config", "DevKnowMagics.timeout = 14")  # ... and the old name still works
    assert magics.session.client().timeout == 14


def test_devknow_protocol_changes_the_trait_not_the_environment(ip, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEVKNOW_PROTOCOL", raising=False)
    monkeypatch.setenv("DEVKNOW_API_KEY", KEY)
    ip.run_line_magic("config", f"DevKnowMagics.endpoint = 'http://127.0.0.1:{free_port()}/mcp'")
    magics = ip.magics_manager.registry["DevKnowMagics"]
    assert magics.session.client().protocol == "mcp"
    ip.run_line_magic("devknow", "--protocol rest")
    assert "DEVKNOW_PROTOCOL" not in os.environ
    assert magics.protocol == "rest" and magics.session.client().protocol == "rest"


# -- the command and devknow serve, as processes -------------------------------------------------------------------


def test_the_command_reads_the_file_and_its_options_win(tmp_path: Path) -> None:
    path = config_file(tmp_path, {"timeout": 7.5, "endpoint": "local"})
    command = [sys.executable, "-m", "devknow_jupyter", "--json", "status"]
    env = _env(DEVKNOW_CONFIG=str(path), DEVKNOW_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert (status["timeout"], status["endpoint"]) == (7.5, "local")
    done = subprocess.run([*command, "--timeout", "3"], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert json.loads(done.stdout)["timeout"] == 3.0
    done = subprocess.run(
        [*command, "--config", str(config_file(tmp_path / "other", {"timeout": 0}))],
        env=env, capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 3 and done.stderr.startswith("devknow: error: In the devknow config file:")
    assert "Traceback" not in done.stderr


def test_devknow_serve_takes_the_upstream_timeout_from_the_file(sdk_server_factory, tmp_path: Path) -> None:
    upstream = sdk_server_factory("--api-key", KEY, "--delay", "10", "--delay-only", "search_documents")
    path = config_file(tmp_path, {"timeout": 1.5})
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "devknow_jupyter", "serve", "--docs", str(write_docs(tmp_path / "docs")),
               "--port", str(port), "--upstream", upstream.url]
    env = _env(DEVKNOW_CONFIG=str(path), DEVKNOW_API_KEY=KEY, DEVKNOW_CACHE_DIR=str(tmp_path / "cache"))
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        wait_for_port(port, proc, log)
        started = time.monotonic()
        with DevKnowClient(f"http://127.0.0.1:{port}/mcp", cache=False, offline_fallback=False, timeout=30) as client:
            results = client.search_documents("install the relay")
        # The upstream would take 10 s; the file's 1.5 s timeout gave up on it and the served docs answered.
        assert time.monotonic() - started < 8, log.read_text()
        assert len(results) and any("could not be reached" in notice for notice in results.info.notices)
        assert upstream.calls("search_documents")
    finally:
        stop_process(proc)


# -- the server extension, in a real Jupyter server --------------------------------------------------------------


def test_the_server_extension_reads_the_file_and_closes_its_client_at_stop(sdk_server_factory, tmp_path: Path):
    wire = tmp_path / "wire.jsonl"
    mcp = sdk_server_factory("--era", "legacy", "--api-key", KEY, "--wire-log", str(wire))  # legacy: sessions
    path = config_file(tmp_path / "devknow", {"timeout": 7.5, "endpoint": mcp.url})
    server = start_jupyter_server(tmp_path / "lab", env={"DEVKNOW_CONFIG": str(path), "DEVKNOW_API_KEY": KEY})
    try:
        status, reply, _ = server.call("GET", "status")
        assert status == 200 and reply["timeout"] == 7.5 and reply["endpoint"] == mcp.url
        status, reply, _ = server.call("GET", "search?query=restrict+an+API+key")
        assert status == 200, reply
        assert not [row for row in read_wire_log(wire) if row["method"] == "DELETE"]
    finally:
        stop_process(server.proc)  # SIGTERM: the server stops its extensions
    assert server.proc.returncode is not None
    deletes = [row for row in read_wire_log(wire) if row["method"] == "DELETE"]
    assert deletes, "the extension's client did not end its MCP session when the server stopped"


def test_the_old_server_names_still_win(sdk_server_factory, tmp_path: Path) -> None:
    mcp = sdk_server_factory("--api-key", KEY)
    path = config_file(tmp_path / "devknow", {"timeout": 7.5, "endpoint": "local"})
    config = {"DevKnowServer": {"endpoint": mcp.url, "timeout": 6.0}, "DevKnowConfig": {"timeout": 5.0}}
    server = start_jupyter_server(tmp_path / "lab", config=config, env={"DEVKNOW_CONFIG": str(path)})
    try:
        status, reply, _ = server.call("GET", "status")
        assert status == 200 and reply["timeout"] == 6.0 and reply["endpoint"] == mcp.url
    finally:
        stop_process(server.proc)


# -- the kernel's clients ---------------------------------------------------------------------------------------


def test_the_kernels_client_is_closed_when_the_kernel_stops(sdk_server_factory, tmp_path: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    wire = tmp_path / "wire.jsonl"
    mcp = sdk_server_factory("--era", "legacy", "--wire-log", str(wire))  # the handshake era: a session to end
    km, kc = start_new_kernel(kernel_name="python3", env=_env(DEVKNOW_ENDPOINT=mcp.url), cwd=str(tmp_path))
    try:
        reply = kc.execute_interactive("%load_ext devknow_jupyter\n%devsearch -n 1 restrict an API key", timeout=60)
        assert reply["content"]["status"] == "ok"
        assert [row for row in read_wire_log(wire) if row["method"] == "POST"]
        assert not [row for row in read_wire_log(wire) if row["method"] == "DELETE"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)  # a graceful stop, as a notebook's "Shut down kernel"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not [row for row in read_wire_log(wire) if row["method"] == "DELETE"]:
        time.sleep(0.1)
    assert [row for row in read_wire_log(wire) if row["method"] == "DELETE"], "the kernel's client was not closed"


def test_close_all_closes_the_shared_and_the_buttons_clients(static_ip, tmp_path: Path) -> None:
    from devknow_jupyter import session

    shared = static_ip.magics_manager.registry["DevKnowMagics"].session.client()
    button = session._client_for(f"local:{write_docs(tmp_path / 'docs')}")  # a result from another endpoint
    session.close_all()
    for client in (shared, button):
        with pytest.raises(ConfigurationError, match="closed"):
            client.search_documents("bucket")
    assert session._clients == {}


# -- the documentation --------------------------------------------------------------------------------------------


def test_every_environment_variable_the_package_reads_is_in_the_table() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "devknow_jupyter").rglob("*.py"))
    read = set(re.findall(r"\"((?:DEVKNOW_[A-Z_]+)|GOOGLE_API_KEY)\"", source))
    table = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.MULTILINE))
    assert len(read) >= 10 and read <= listed, sorted(read - listed)
    assert "DEVKNOW_PROTOCOL" in read and listed - read == set(), sorted(listed - read)

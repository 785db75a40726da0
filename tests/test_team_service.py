"""The team service: ``devknow serve --upstream --users --quota`` as real processes on loopback.

The upstream is the SDK look-alike of Google's service (``tests/servers/sdk_server.py``) requiring its own
key, so a call that reaches it proves the team server sent the server's key; the users are a TOML file
written here; quotas are counted in a SQLite file (``--workers 2``) or in a real ``redis-server`` started
here from Debian's package.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from devknow_jupyter import DevKnowClient
from devknow_jupyter.client import QUOTA_FALLBACK_NOTICE
from devknow_jupyter.errors import AuthenticationError, QuotaExceededError
from tests.conftest import ROOT, free_port, stop_process, wait_for_port
from tests.test_serve import write_docs

UPSTREAM_KEY = "upstream-key-7c1e0b9d44"  # a made-up key the upstream fake requires
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-fedcba9876543210"
CAROL = "carol-token-aaaabbbbccccdddd"


def users_file(path: Path, *, carol: bool = False) -> Path:
    text = f"""
[users.alice]
token = "{ALICE}"

[users.bob]
token_sha256 = "{hashlib.sha256(BOB.encode()).hexdigest()}"
quota = {{ search = "8/day" }}
"""
    if carol:
        text += f'\n[users.carol]\ntoken = "{CAROL}"\n'
    path.write_text(text, encoding="utf-8")
    return path


class Team:
    """A ``devknow serve`` process for a team, its log and its URL."""

    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/mcp"

    def client(self, token: str | None, **options) -> DevKnowClient:
        return DevKnowClient(self.url, token=token, cache=False, offline_fallback=False, announce=False, **options)

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture
def team_factory(tmp_path: Path) -> Iterator[Callable[..., Team]]:
    docs = write_docs(tmp_path / "docs")
    started: list[Team] = []

    def start(*extra: str, env: dict[str, str] | None = None, port: int | None = None) -> Team:
        port = port or free_port()
        log = tmp_path / f"team-{port}.log"
        base = {key: value for key, value in os.environ.items() if not key.startswith(("DEVKNOW_", "GOOGLE_API"))}
        base["DEVKNOW_CACHE_DIR"] = str(tmp_path / "cache")
        args = [sys.executable, "-m", "devknow_jupyter", "serve", "--docs", str(docs), "--port", str(port), *extra]
        with log.open("wb") as out:
            environment = {**base, **(env or {})}
            proc = subprocess.Popen(
                args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment
            )
        wait_for_port(port, proc, log)
        team = Team(proc, port, log)
        started.append(team)
        return team

    yield start
    for team in started:
        team.stop()


@pytest.fixture
def upstream(sdk_server_factory, tmp_path: Path):
    return sdk_server_factory("--api-key", UPSTREAM_KEY, "--wire-log", str(tmp_path / "upstream-wire.jsonl"))


def _wait_ready(team: Team, deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if httpx.get(f"{team.base}/readyz").status_code == 200:
            return
        time.sleep(0.1)
    raise AssertionError(f"never ready:\n{team.log.read_text()}")


def test_two_users_own_quotas_and_the_key_stays_on_the_server(team_factory, upstream, tmp_path: Path) -> None:
    users = users_file(tmp_path / "users.toml")
    team = team_factory(
        "--upstream", upstream.url, "--users", str(users), "--quota", "search=5/day",
        env={"DEVKNOW_API_KEY": UPSTREAM_KEY},
    )
    _wait_ready(team)
    with team.client(ALICE) as alice, team.client(BOB) as bob:
        for n in range(5):
            assert len(alice.search_documents(f"bucket {n}"))  # answered by the upstream
        with pytest.raises(QuotaExceededError) as refused:
            alice.search_documents("bucket 5")
        assert refused.value.retry_after and refused.value.retry_after > 0
        assert "search=5/day" in str(refused.value)
        for n in range(8):  # bob's own table gives him 8, and alice's use took none of them
            bob.search_documents(f"bob bucket {n}")
        with pytest.raises(QuotaExceededError):
            bob.search_documents("bob bucket 8")
    assert len(upstream.calls("search_documents")) == 5 + 8  # the refused ones never reached the upstream

    # The raw refusal: 429, Retry-After, a JSON-RPC error naming the quota and when it resets.
    reply = httpx.post(
        team.url,
        json={"jsonrpc": "2.0", "id": 7, "method": "tools/call",
              "params": {"name": "search_documents", "arguments": {"query": "x"}}},
        headers={"Authorization": f"Bearer {ALICE}", "Accept": "application/json, text/event-stream"},
    )
    assert reply.status_code == 429
    assert int(reply.headers["Retry-After"]) > 0
    error = reply.json()["error"]
    assert reply.json()["id"] == 7
    assert error["data"]["quota"] == "search=5/day" and error["data"]["status"] == "RESOURCE_EXHAUSTED"
    assert error["data"]["resets_at"].endswith("Z")

    # The key: every request the upstream saw carried the server's key; no reply to a user holds it.
    wire = [json.loads(line) for line in (tmp_path / "upstream-wire.jsonl").read_text().splitlines()]
    assert wire, "the upstream saw no request"
    assert UPSTREAM_KEY not in reply.text and UPSTREAM_KEY not in str(reply.headers)
    assert ALICE not in json.dumps(wire) and BOB not in json.dumps(wire)  # users' tokens stay here too


def test_a_missing_or_unknown_token_is_one_line_401(team_factory, tmp_path: Path) -> None:
    team = team_factory("--users", str(users_file(tmp_path / "users.toml")))
    for headers in ({}, {"Authorization": "Bearer not-a-user-token-at-all"}, {"X-Goog-Api-Key": "nope"}):
        reply = httpx.post(team.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
        assert reply.status_code == 401
        message = reply.json()["error"]["message"]
        assert "\n" not in message and "token" in message.lower()
    with pytest.raises(AuthenticationError), team.client("wrong-token-0000000000000") as stranger:
        stranger.search_documents("bucket")
    with team.client(ALICE) as alice:  # the docs folder answers: no upstream here
        assert len(alice.search_documents("bucket"))


def test_the_users_file_is_read_again_when_it_changes(team_factory, tmp_path: Path) -> None:
    users = users_file(tmp_path / "users.toml")
    team = team_factory("--users", str(users))
    with team.client(CAROL) as carol:
        with pytest.raises(AuthenticationError):
            carol.search_documents("bucket")
        users_file(users, carol=True)
        time.sleep(1.2)  # the file is looked at no more than once a second
        assert len(carol.search_documents("bucket"))
        users.write_text("this is [not toml", encoding="utf-8")  # a half-saved edit keeps the users read before
        time.sleep(1.2)
        assert len(carol.search_documents("bucket"))


def test_metrics_health_and_the_access_log(team_factory, upstream, tmp_path: Path) -> None:
    log = tmp_path / "access.jsonl"
    team = team_factory(
        "--upstream", upstream.url, "--users", str(users_file(tmp_path / "users.toml")),
        "--quota", "search=3/day", "--access-log", str(log),
        env={"DEVKNOW_API_KEY": UPSTREAM_KEY},
    )
    assert httpx.get(f"{team.base}/healthz").json() == {"status": "ok"}
    _wait_ready(team)
    with team.client(ALICE) as alice:
        alice.search_documents("secret project words")
        alice.search_documents("secret project words")  # the server's shared cache answers this one
        alice.search_documents("other words")
        with pytest.raises(QuotaExceededError):
            alice.search_documents("one too many")
    text = httpx.get(f"{team.base}/metrics").text
    assert 'devknow_requests_total{status="200",tool="search_documents"} 3.0' in text
    assert 'devknow_requests_total{status="429",tool="search_documents"} 1.0' in text
    assert 'devknow_quota_refusals_total{kind="search"} 1.0' in text
    assert 'devknow_cache_hits_total{tool="search_documents"} 1.0' in text
    assert "devknow_request_duration_seconds_bucket" in text
    assert ALICE not in text and "alice" not in text  # no label names a user
    records = [json.loads(line) for line in log.read_text().splitlines()]
    searches = [r for r in records if r["tool"] == "search_documents"]
    assert [r["status"] for r in searches] == [200, 200, 200, 429]
    assert all(r["user"] == "alice" and r["duration_ms"] >= 0 for r in searches)
    assert "secret project" not in log.read_text()  # queries only with --log-queries


def test_log_queries_writes_the_query(team_factory, tmp_path: Path) -> None:
    log = tmp_path / "access.jsonl"
    team = team_factory("--access-log", str(log), "--log-queries")
    with team.client(None) as anyone:
        anyone.search_documents("bucket lifecycle")
    deadline = time.monotonic() + 10  # the line is written once the reply has gone out, so it may trail it
    while True:
        text = log.read_text() if log.exists() else ""
        records = [json.loads(line) for line in text.splitlines() if '"search_documents"' in line]
        if records or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert records, text
    assert records[0]["query"] == "bucket lifecycle" and records[0]["user"] is None


def test_unreachable_upstream_falls_back_to_the_served_docs(team_factory, tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    team = team_factory("--upstream", dead, env={"DEVKNOW_API_KEY": UPSTREAM_KEY})
    ready = httpx.get(f"{team.base}/readyz")
    assert ready.status_code == 503 and "upstream" in ready.json()["reason"]
    with team.client(None) as anyone:
        results = anyone.search_documents("bucket")
    assert len(results)
    assert any("could not be reached" in notice for notice in results.info.notices)
    assert "metrics" not in results.info.notices  # the notice is the one line, nothing of the server's
    assert UPSTREAM_KEY not in json.dumps(results.to_dict())


def test_answer_quota_makes_devask_search_instead(team_factory, upstream, tmp_path: Path) -> None:
    team = team_factory(
        "--upstream", upstream.url, "--users", str(users_file(tmp_path / "users.toml")), "--quota", "answer=1/day",
        env={"DEVKNOW_API_KEY": UPSTREAM_KEY},
    )
    _wait_ready(team)
    with team.client(ALICE) as alice:
        first = alice.ask("How do I create a bucket?")
        second = alice.ask("How do I delete a bucket?")
    assert QUOTA_FALLBACK_NOTICE not in first.info.notices
    assert second.info.notices[0] == QUOTA_FALLBACK_NOTICE and len(second)


def _search_many(team: Team, token: str, count: int) -> tuple[int, int, int]:
    """``count`` concurrent searches: how many were answered, refused by quota and lost otherwise."""

    def one(n: int) -> str:
        with team.client(token) as client:
            try:
                client.search_documents(f"bucket {n}")
                return "ok"
            except QuotaExceededError:
                return "quota"
            except Exception:  # anything else is a lost request
                return "lost"

    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        outcomes = list(pool.map(one, range(count)))
    return outcomes.count("ok"), outcomes.count("quota"), outcomes.count("lost")


def test_quotas_are_exact_across_two_workers(team_factory, tmp_path: Path) -> None:
    team = team_factory(
        "--users", str(users_file(tmp_path / "users.toml")), "--quota", "search=7/day", "--workers", "2",
    )
    assert _search_many(team, ALICE, 30) == (7, 23, 0)
    text = httpx.get(f"{team.base}/metrics").text  # both workers' counts, whichever answers
    assert 'devknow_quota_refusals_total{kind="search"} 23.0' in text


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: `make test` installs Debian's redis-server package")
    port = free_port()
    log = tmp_path / "redis.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(tmp_path)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
    wait_for_port(port, proc, log)
    yield f"redis://127.0.0.1:{port}/0"
    stop_process(proc)


def test_quotas_are_exact_across_two_servers_sharing_redis(team_factory, redis_url: str, tmp_path: Path) -> None:
    users = str(users_file(tmp_path / "users.toml"))
    one = team_factory("--users", users, "--quota", "search=9/day", "--redis", redis_url)
    two = team_factory("--users", users, "--quota", "search=9/day", "--redis", redis_url)
    results: dict[str, tuple[int, int, int]] = {}
    threads = [
        threading.Thread(target=lambda t=team, k=key: results.__setitem__(k, _search_many(t, ALICE, 15)))
        for key, team in (("one", one), ("two", two))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    answered = results["one"][0] + results["two"][0]
    refused = results["one"][1] + results["two"][1]
    assert (answered, refused, results["one"][2] + results["two"][2]) == (9, 21, 0)
    with one.client(BOB) as bob:  # another user's count is their own
        bob.search_documents("bucket")


def test_a_bad_quota_or_users_file_is_one_line(tmp_path: Path) -> None:
    bad_users = tmp_path / "users.toml"
    bad_users.write_text('[users.x]\ntoken = "short"\n', encoding="utf-8")
    for extra, said in (
        (["--quota", "search=lots"], "Not a quota"),
        (["--users", str(bad_users)], "at least 16 characters"),
        (["--users", str(tmp_path / "absent.toml")], "Cannot read the users file"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "devknow_jupyter", "serve", "--port", str(free_port()), *extra],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
            env={**os.environ, "DEVKNOW_CACHE_DIR": str(tmp_path / "cache")},
        )
        assert done.returncode != 0
        assert said in done.stderr and "Traceback" not in done.stderr


def test_sigterm_lets_a_request_in_flight_finish(team_factory, sdk_server_factory, tmp_path: Path) -> None:
    slow = sdk_server_factory("--api-key", UPSTREAM_KEY, "--delay", "1.5")
    team = team_factory("--upstream", slow.url, env={"DEVKNOW_API_KEY": UPSTREAM_KEY})
    _wait_ready(team, deadline=30)
    outcome: dict[str, object] = {}

    def search() -> None:
        with team.client(None, timeout=20) as anyone:
            outcome["hits"] = len(anyone.search_documents("bucket in flight"))

    thread = threading.Thread(target=search)
    thread.start()
    time.sleep(0.6)  # the call is at the upstream now
    team.proc.send_signal(signal.SIGTERM)
    thread.join(30)
    assert outcome.get("hits"), team.log.read_text()
    assert team.proc.wait(30) == 0


def test_the_magics_search_through_the_service_with_a_prompted_token(team_factory, ip, tmp_path, monkeypatch) -> None:
    import getpass

    team = team_factory("--users", str(users_file(tmp_path / "users.toml")), "--quota", "search=2/day")
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": ALICE)  # the hidden prompt, answered
    ip.run_line_magic("devknow", f"--endpoint {team.url} --token")
    hits = ip.run_line_magic("devsearch", "bucket")
    assert len(hits) and ip.user_ns["_devsearch"] is hits
    ip.run_line_magic("devsearch", "lifecycle")
    result = ip.run_cell("%devsearch storage")  # the third: over alice's quota, one short line
    assert isinstance(result.error_in_exec, QuotaExceededError)
    assert ALICE not in str(result.error_in_exec)
    status = ip.run_line_magic("devknow", "")
    assert ALICE not in repr(status) and ALICE not in str(getattr(status, "rows", ""))


def test_the_panel_searches_through_the_service_with_its_token(team_factory, tmp_path: Path) -> None:
    from tests.test_labext import start_jupyter_server

    team = team_factory("--users", str(users_file(tmp_path / "users.toml")), "--quota", "search=1/day")
    config = {"DevKnowServer": {"endpoint": team.url, "token": BOB}}
    jupyter = start_jupyter_server(tmp_path / "jupyter", config=config)
    try:
        status, reply, text = jupyter.call("GET", "search?query=bucket")
        assert status == 200 and reply["results"], text
        status, reply, text = jupyter.call("GET", "search?query=another+bucket")  # bob's own table allows 8
        assert status == 200, text
        assert BOB not in text and BOB not in jupyter.log_path.read_text()
    finally:
        stop_process(jupyter.proc)

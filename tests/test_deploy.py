"""``deploy/``: the Kubernetes manifests validate against the Kubernetes schemas, and what they, the
Dockerfile and the JupyterHub example tell ``devknow serve`` is what a real ``devknow serve`` accepts.

No cluster and no Docker engine run here: the schemas are ``kubernetes-validate``'s (shipped in its wheel),
the commands are parsed by the CLI's own parser, and the ConfigMap's users file, the probes' paths and
the hub's tokens are tried against a real server on loopback.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx
import kubernetes_validate
import pytest
import yaml
from traitlets.config import Config

from devknow_jupyter.cli import build_parser
from devknow_jupyter.packs.recipe import shipped_recipes
from devknow_jupyter.service.users import UserDirectory
from tests.conftest import FIXTURE_DOCS, ROOT, free_port, stop_process, wait_for_port

DEPLOY = ROOT / "deploy"
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")  # the oldest and newest minor a cluster is likely to run


def manifests() -> list[dict]:
    docs = []
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        docs += [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
    return docs


def by_kind(kind: str) -> list[dict]:
    return [doc for doc in manifests() if doc["kind"] == kind]


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_validates_against_the_kubernetes_schemas(version: str) -> None:
    docs = manifests()
    assert {doc["kind"] for doc in docs} >= {"Deployment", "Service", "HorizontalPodAutoscaler", "Secret", "ConfigMap"}
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)  # raises ValidationError naming the field


def test_a_broken_manifest_is_refused_by_the_same_check() -> None:
    deployment = by_kind("Deployment")[0]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = {"no": 1}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[-1], strict=True)


def service_deployment() -> dict:
    return next(doc for doc in by_kind("Deployment") if doc["metadata"]["name"] == "devknow")


def test_the_deployment_wires_the_key_the_users_the_probes_and_redis() -> None:
    deployment = service_deployment()
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    args = build_parser().parse_args(container["args"][1:])  # after the program name
    assert args.command == "serve" and args.upstream and args.workers == 2
    assert args.redis.startswith("redis://devknow-redis:")
    assert {doc["metadata"]["name"] for doc in by_kind("Service")} >= {"devknow", "devknow-redis"}
    key = container["env"][0]["valueFrom"]["secretKeyRef"]
    assert (key["name"], key["key"]) in {(s["metadata"]["name"], k) for s in by_kind("Secret") for k in s["stringData"]}
    mount = container["volumeMounts"][0]
    assert args.users == f"{mount['mountPath']}/users.toml"
    assert {
        probe: container[probe]["httpGet"]["path"] for probe in ("readinessProbe", "livenessProbe")
    } == {"readinessProbe": "/readyz", "livenessProbe": "/healthz"}
    hpa = by_kind("HorizontalPodAutoscaler")[0]
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert spec["securityContext"]["runAsNonRoot"] is True


def test_the_configmap_users_and_the_probes_work_on_a_real_server(tmp_path: Path) -> None:
    users = tmp_path / "users.toml"
    users.write_text(by_kind("ConfigMap")[0]["data"]["users.toml"], encoding="utf-8")
    assert len(UserDirectory(users)) == 2
    args = service_deployment()["spec"]["template"]["spec"]["containers"][0]["args"]
    quotas = [arg for arg in args if arg.startswith("--quota=")]
    port = free_port()
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "devknow_jupyter", "serve", "--docs", str(FIXTURE_DOCS), "--port", str(port),
               "--users", str(users), *quotas]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "DEVKNOW_CACHE_DIR": str(tmp_path / "cache")})
    try:
        wait_for_port(port, proc, log)
        for path in ("/readyz", "/healthz"):
            assert httpx.get(f"http://127.0.0.1:{port}{path}").status_code == 200
        assert httpx.post(f"http://127.0.0.1:{port}/mcp", json={}).status_code == 401
    finally:
        stop_process(proc)


def test_the_dockerfile_builds_shipped_recipes_and_serves_as_a_user() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    recipes = re.search(r'ARG RECIPES="([^"]+)"', text).group(1).split()
    assert set(recipes) <= set(shipped_recipes())
    assert re.search(r"^USER 10001$", text, re.M)
    command = re.search(r'exec (devknow serve [^"$]+)', text).group(1)
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert args.pack == ["/packs/docs.pack"] and args.host == "0.0.0.0" and args.upstream


def test_the_jupyterhub_example_gives_each_user_a_token_the_service_knows(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DEVKNOW_TEAM_SECRET", "a-long-random-secret-for-this-test")
    monkeypatch.setenv("DEVKNOW_USERS_FILE", str(tmp_path / "users.toml"))
    config = Config()
    config.Authenticator.allowed_users = {"alice", "bob"}
    source = (DEPLOY / "jupyterhub" / "jupyterhub_config.py").read_text(encoding="utf-8")
    exec(compile(source, "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    service = config.JupyterHub.services[0]
    args = build_parser().parse_args(service["command"][1:])
    assert args.users == str(tmp_path / "users.toml") and args.upstream
    assert "DEVKNOW_API_KEY" in service["environment"]
    environment = config.Spawner.environment
    assert environment["DEVKNOW_ENDPOINT"].startswith(service["url"])

    class Spawner:
        class user:
            name = "alice"

    token = environment["DEVKNOW_TOKEN"](Spawner)
    directory = UserDirectory(tmp_path / "users.toml")
    assert directory.authenticate(token).name == "alice"
    assert token not in (tmp_path / "users.toml").read_text()  # the file holds digests only
    assert hashlib.sha256(token.encode()).hexdigest() in (tmp_path / "users.toml").read_text()

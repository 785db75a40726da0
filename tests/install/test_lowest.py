"""The lower bounds in pyproject.toml are true: the lowest versions they allow pass the quick tests.

One fresh virtualenv, made by uv on the oldest Python that Requires-Python admits (found on PATH or under
pyenv; this interpreter where there is none, with a warning). uv's ``--resolution lowest-direct`` installs
each requirement named on its command line at the lowest version its bound allows, and what those need
at their newest; its cache makes this seconds once warm. The requirements are read from pyproject.toml,
so a bound raised there is the one tested:

1. the core dependencies, ``[server]``, ``[rest]`` and the test tools, and the wheel from ``built_dists``
   (``--no-deps``: its own requirements would count as indirect). A focused set of quick tests with no
   browser runs there from this checkout: models, names, rendering and sanitizing, the caches, the local
   index, the CLI, the magics in a real IPython shell, the REST client and ``devknow serve``.
2. then ``[semantic]`` and ``[lab]`` at their lowest: the semantic ranking tests and the panel's server
   extension in a real Jupyter server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import warnings
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

from tests.conftest import ROOT
from tests.install.conftest import BuiltDists, no_node_env

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
FIRST_EXTRAS = ("server", "rest")
# Later: wordllama needs numpy 2 (the core's numpy 1.24 is tested first); JupyterLab's server needs a newer
# starlette than [server]'s 0.40 (a bound that holds where [server] is installed alone).
LATER_EXTRAS = ("semantic", "lab")
TEST_TOOLS = ("pytest", "pytest-timeout", "hypothesis")  # what the quick tests below import or configure
# Quick tests with no browser, chosen to touch every dependency: models and names, rendering and
# sanitizing (markdown, pygments, markdown-it-py, nh3), caches, the local index (numpy, pyyaml), the CLI,
# the magics in a real IPython shell (ipywidgets, anywidget), the REST client and `devknow serve` through the
# official MCP client (on one shared server: its one-server-per-test cases would take a minute more).
QUICK_TESTS = (
    "test_models.py", "test_names.py", "test_errors.py", "test_render.py", "test_xss.py", "test_cache.py",
    "test_starter.py", "test_local_backend.py", "test_store.py", "test_cli.py", "test_magics.py", "test_rest.py",
    *(f"test_serve.py::{name}" for name in (
        "test_prints_its_url", "test_sdk_lists_exactly_our_tools", "test_sdk_calls_each_tool",
        "test_sdk_client_passes_the_site_filter", "test_sdk_sees_tool_errors", "test_devknow_client_against_serve",
        "test_foreign_origin_and_host_are_rejected")),
)
# Semantic ranking, and the panel's server extension in a real Jupyter server (one server for these).
LATER_TESTS = (
    "test_semantic.py",
    *(f"test_labext.py::{name}" for name in (
        "test_status_names_the_backend_never_a_key", "test_search_returns_the_service_shape_with_rendered_html",
        "test_documents_returns_pages_with_contents_and_anchors", "test_answer_with_references",
        "test_cookie_login_needs_the_xsrf_token_for_posts")),
)


@dataclass(frozen=True)
class LowestVenv:
    """The virtualenv, its interpreter and the uv that fills it."""

    root: Path
    python: Path
    uv: list[str]

    def install(self, requirements: list[Requirement], *options: str) -> dict[str, str]:
        """Install ``requirements`` at their lowest versions; the installed versions by normalised name."""
        # --upgrade-package: a version already installed for another package's sake is not kept if lower is allowed.
        upgrade = [option for req in requirements for option in ("--upgrade-package", req.name)]
        run = subprocess.run(
            [*self.uv, "pip", "install", "--python", str(self.python), "--resolution", "lowest-direct", *upgrade,
             *options, *map(str, requirements)],
            capture_output=True, text=True, timeout=600, env=uv_env(),
        )
        assert run.returncode == 0, run.stdout + run.stderr
        listed = subprocess.run([*self.uv, "pip", "list", "--python", str(self.python), "--format", "json"],
                                capture_output=True, text=True, timeout=120, env=uv_env(), check=True)
        return {canonical(row["name"]): row["version"] for row in json.loads(listed.stdout)}

    def pytest(self, *files: str) -> subprocess.CompletedProcess:
        """Run the checkout's tests ``files`` with this venv's packages."""
        # Not the outer run's xdist variables; a temporary folder of its own beside the venv.
        env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
        env["PYTHONPATH"] = str(ROOT)
        return subprocess.run(
            [str(self.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
             f"--basetemp={self.root.parent / 'pytest'}", *(f"tests/{name}" for name in files)],
            cwd=ROOT, capture_output=True, text=True, timeout=900, env=env,
        )


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def uv_env() -> dict[str, str]:
    # Never download an interpreter (only the package registry is reachable); the default cache is reused.
    return {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}


def oldest_python() -> Path:
    """An interpreter of the floor of Requires-Python that runs (this one if there is none)."""
    floor = re.fullmatch(r">=\s*(3\.\d+)", PROJECT["requires-python"]).group(1)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"), "versions")
    installed = sorted(pyenv.glob(f"{floor}.*/bin/python{floor}"), key=lambda path: Version(path.parts[-3]))
    # pyenv's shim on PATH fails unless that version is selected, so each candidate is tried.
    for candidate in [*reversed(installed), shutil.which(f"python{floor}")]:
        if candidate and subprocess.run([str(candidate), "-c", ""], capture_output=True).returncode == 0:
            return Path(candidate)
    warnings.warn(f"no Python {floor} here: the lowest versions are tested on {sys.version.split()[0]}", stacklevel=2)
    return Path(sys.executable)


def requirements(extras: tuple[str, ...], core: bool, tools: tuple[str, ...] = ()) -> list[Requirement]:
    """The requirements pyproject.toml names: the core's if ``core``, those of ``extras``, the test ``tools``."""
    listed = [Requirement(text) for text in PROJECT["dependencies"]] if core else []
    optional = PROJECT["optional-dependencies"]
    for extra in extras:
        listed += [Requirement(text) for text in optional[extra]]
    listed += [req for req in map(Requirement, optional["test"]) if canonical(req.name) in tools]
    return listed


def not_at_lowest(wanted: list[Requirement], installed: dict[str, str], python: str) -> list[str]:
    """The requirements whose installed version is not the release their ``>=`` bound names."""
    wrong = []
    for req in wanted:
        if req.marker and not req.marker.evaluate({"python_version": python}):
            continue
        (bound,) = [spec.version for spec in req.specifier if spec.operator == ">="]
        have = installed.get(canonical(req.name))
        # 0.4 admits 0.4.0.post1 and 2.3 admits 2.3.1 (no 2.3.0 was released), but not 0.31.1 for 0.30.
        if have is None or Version(have).release[: len(Version(bound).release)] != Version(bound).release:
            wrong.append(f"{req} installed {have}")
    return wrong


@dataclass(frozen=True)
class Installed:
    """The venv after the first stage: what was asked for and what got installed."""

    venv: LowestVenv
    python: str  # its major.minor
    wanted: list[Requirement]
    versions: dict[str, str]


@pytest.fixture(scope="module")
def lowest(built_dists: BuiltDists, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The venv with the first stage's lowest versions and the wheel (without its dependencies)."""
    python = oldest_python()
    uv = [sys.executable, "-m", "uv"]
    root = tmp_path_factory.mktemp("lowest") / "venv"
    subprocess.run([*uv, "venv", "-q", "--python", str(python), str(root)], check=True, timeout=120, env=uv_env())
    venv = LowestVenv(root, root / "bin" / "python", uv)
    version = subprocess.run([str(venv.python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    wanted = requirements(FIRST_EXTRAS, core=True, tools=TEST_TOOLS)
    venv.install(wanted)
    versions = venv.install([Requirement(f"devknow-jupyter @ {built_dists.wheel.as_uri()}")], "--no-deps")
    return Installed(venv, version, wanted, versions)


@pytest.mark.timeout(900)  # about a minute of CPU; a machine shared with other runs takes longer
def test_lowest_versions_pass_the_quick_tests(lowest: Installed) -> None:
    venv = lowest.venv
    # A bound that no resolution reaches (another requirement needs more) is no tested bound: raise it.
    assert not_at_lowest(lowest.wanted, lowest.versions, lowest.python) == []
    run = venv.pytest(*QUICK_TESTS)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert re.search(r"\d+ passed", run.stdout), run.stdout[-500:]

    later = requirements(LATER_EXTRAS, core=False)
    versions = venv.install(later)
    assert not_at_lowest(later, versions, lowest.python) == []
    run = venv.pytest(*LATER_TESTS)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]


def test_the_installed_wheel_reports_one_version(lowest: Installed, built_dists: BuiltDists, tmp_path: Path) -> None:
    venv = lowest.venv
    # Away from the checkout and without PYTHONPATH, so that the wheel's copy is the one imported.
    code = ("import importlib.metadata as m, devknow_jupyter as d; "
            "print(d.__version__, m.version('devknow-jupyter'), d.__file__)")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    shown = subprocess.run([str(venv.python), "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                           check=True).stdout.split()
    script = subprocess.run([str(venv.root / "bin" / "devknow"), "--version"], capture_output=True, text=True,
                            cwd=tmp_path, env=env, check=True).stdout.strip()
    wheel_version = built_dists.wheel.name.split("-")[1]
    assert shown[:2] == [wheel_version, wheel_version] and script == f"devknow {wheel_version}"
    assert Path(shown[2]).is_relative_to(venv.root)


def test_the_lowest_build_requirements_make_the_same_wheel(built_dists: BuiltDists, tmp_path: Path) -> None:
    # The build-system requirements pinned to their lower bounds (a pip constraints file reaches the build's
    # isolated environment), the wheel built from the sdist with no Node on PATH: same files, same metadata.
    build_system = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    pins = []
    for req in map(Requirement, build_system["requires"]):
        (bound,) = [spec.version for spec in req.specifier if spec.operator == ">="]
        pins.append(f"{req.name}=={bound}")
    (tmp_path / "lowest.txt").write_text("\n".join(pins) + "\n")
    env = {**no_node_env(tmp_path), "PIP_CONSTRAINT": str(tmp_path / "lowest.txt")}
    out, source = tmp_path / "dist", unpacked(built_dists.sdist, tmp_path)
    run = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(source)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    for pin in pins:  # build prints the versions it installed
        name, version = pin.split("==")
        installed = re.search(rf"{re.escape(name)}=={re.escape(version)}(\.0)*(?![.\d])", run.stdout + run.stderr)
        assert installed, (pin, run.stdout[-3000:] + run.stderr[-3000:])
    (wheel,) = out.glob("*.whl")
    assert wheel.name == built_dists.wheel.name
    with zipfile.ZipFile(wheel) as low, zipfile.ZipFile(built_dists.wheel) as usual:
        assert sorted(low.namelist()) == sorted(usual.namelist())
        metadata = next(name for name in low.namelist() if name.endswith(".dist-info/METADATA"))
        # Newer hatchling may write a newer Metadata-Version; every field and the description agree.
        low_meta, usual_meta = (HeaderParser().parsestr(dist.read(metadata).decode()) for dist in (low, usual))
        for meta in (low_meta, usual_meta):
            del meta["Metadata-Version"]
        assert low_meta.items() == usual_meta.items() and low_meta.get_payload() == usual_meta.get_payload()


def unpacked(sdist: Path, into: Path) -> Path:
    """The sdist's folder, extracted under ``into``."""
    with tarfile.open(sdist) as archive:
        archive.extractall(into, filter="data")
    return into / sdist.name.removesuffix(".tar.gz")

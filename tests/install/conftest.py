"""The wheel and the sdist, built once per test run (``python -m build``) for every test of the install shapes.

Both xdist workers ask for them: the first builds under a file lock in the run's shared temporary folder, the
other waits and reuses them. ``python -m build`` makes the sdist, then the wheel from that sdist, so the wheel
is what a user building our sdist gets; the sdist carries the prebuilt JupyterLab panel (pyproject's artifacts).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT


@dataclass(frozen=True)
class BuiltDists:
    """The distributions built from this checkout."""

    wheel: Path
    sdist: Path


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Under xdist each worker has its own basetemp inside the run's one (pytest-N/popen-gwK): share the run's.
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def built_dists(tmp_path_factory: pytest.TempPathFactory) -> BuiltDists:
    """The wheel and sdist of this checkout, built once per run (``python -m build``, build deps through uv)."""
    folder = _run_folder(tmp_path_factory) / "built-dists"
    folder.mkdir(exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until the first worker's build is done
        wheels, sdists = sorted(folder.glob("*.whl")), sorted(folder.glob("*.tar.gz"))
        if not (wheels and sdists):
            build = subprocess.run(
                [sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(folder / "out"), str(ROOT)],
                capture_output=True, text=True, timeout=600,
            )
            assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
            for built in (folder / "out").iterdir():  # moved in only when both exist: a failed build leaves none
                built.rename(folder / built.name)
            wheels, sdists = sorted(folder.glob("*.whl")), sorted(folder.glob("*.tar.gz"))
    (wheel,), (sdist,) = wheels, sdists
    return BuiltDists(wheel=wheel, sdist=sdist)


def no_node_env(tmp: Path) -> dict[str, str]:
    """This environment with PATH reduced to an empty folder: no node, npm or jlpm can be found."""
    empty = tmp / "no-node-bin"
    empty.mkdir(exist_ok=True)
    return {**os.environ, "PATH": str(empty)}

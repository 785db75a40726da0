"""The wheel and sdist, built once per test session as users get them (``python -m build``).

``python -m build`` makes the sdist from this checkout, then the wheel from that sdist, so the wheel is
proof that the sdist stands alone. It runs with no Node on PATH: the prebuilt panel must be enough.
Under pytest-xdist the first worker builds and the others wait on a lock file and reuse the result.
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
    """The two archives ``python -m build`` made."""

    wheel: Path
    sdist: Path


def no_node_env(tmp: Path) -> dict[str, str]:
    """This environment with PATH reduced to an empty folder: no node, npm or jlpm can be found."""
    empty = tmp / "no-node-bin"
    empty.mkdir(exist_ok=True)
    return {**os.environ, "PATH": str(empty)}


@pytest.fixture(scope="session")
def built_dists(tmp_path_factory: pytest.TempPathFactory) -> BuiltDists:
    """The wheel and sdist of this checkout, built once for all workers."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common folder
    out = shared / "built-dists"
    with open(shared / "built-dists.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (out / "done").exists():
            out.mkdir(exist_ok=True)
            run = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                                 capture_output=True, text=True, timeout=600, env=no_node_env(shared))
            (out / "build.log").write_text(run.stdout + run.stderr)
            assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
            (out / "done").touch()
    (wheel,) = out.glob("devknow_jupyter-*.whl")
    (sdist,) = out.glob("devknow_jupyter-*.tar.gz")
    return BuiltDists(wheel=wheel, sdist=sdist)

"""The built wheel carries the JupyterLab panel and enables both extensions in a fresh virtualenv.

The wheel is built from this checkout with ``pip wheel`` (hatch-jupyter-builder runs the JS build unless the
bundle is already built, as ``pip install -e .`` leaves it) and installed with ``--no-deps`` into a new
virtualenv; that venv borrows this environment's packages (Jupyter, IPython, ...) through a path file, which
keeps the test offline and under a minute, while our package, its shared data and its enable file come
only from the wheel. Then ``jupyter labextension list`` and ``jupyter server extension list`` must show
both enabled. No Node on PATH for the install and the listing: the wheel needs none.
"""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

NPM_NAME = "devknow-jupyter"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (built,) = out.glob("devknow_jupyter-*.whl")
    return built


def test_wheel_holds_the_bundle_schema_and_enable_file(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    data = next(name.split("/", 1)[0] for name in names if ".data/" in name)
    share = f"{data}/data/share/jupyter/labextensions/{NPM_NAME}"
    assert f"{share}/package.json" in names
    assert any(re.fullmatch(rf"{re.escape(share)}/static/remoteEntry\.[0-9a-f]+\.js", name) for name in names)
    assert f"{share}/schemas/{NPM_NAME}/plugin.json" in names
    # The plugin that shows a saved devknow output's HTML twin when its widget model is gone.
    bundle = zipfile.ZipFile(wheel)
    assert any(b"devknow-jupyter:saved-results" in bundle.read(name) for name in names
               if name.startswith(f"{share}/static/") and name.endswith(".js"))
    assert f"{data}/data/etc/jupyter/jupyter_server_config.d/devknow_jupyter.labext.json" in names
    assert "devknow_jupyter/labext/handlers.py" in names
    assert not [name for name in names if "node_modules" in name or name.startswith("labextension/")]


def test_fresh_venv_lists_both_extensions_enabled(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # Borrow this environment's packages (after the venv's own), but not an editable install of ours.
    borrowed = [path for path in [*site.getsitepackages(), site.getusersitepackages()] if os.path.isdir(path)]
    Path(purelib, "_borrowed.pth").write_text("\n".join(borrowed) + "\n")
    clean_env = {
        "PATH": str(env_dir / "bin") + os.pathsep + "/usr/bin:/bin",  # no node in the venv: not needed
        "HOME": str(tmp_path / "home"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        capture_output=True, text=True, timeout=300, env={**os.environ, **clean_env},
    )
    assert install.returncode == 0, install.stdout + install.stderr
    where = subprocess.run([str(python), "-c", "import devknow_jupyter; print(devknow_jupyter.__file__)"],
                           capture_output=True, text=True, env=clean_env, check=True, cwd=tmp_path).stdout
    assert where.startswith(purelib), where  # ours comes from the wheel, not from a checkout

    # The modules behind `jupyter labextension` / `jupyter server extension` (the borrowed packages' scripts
    # are not on this venv's PATH).
    lab = _run(python, ["jupyterlab.labextensions", "list"], clean_env, tmp_path)
    assert re.search(rf"{NPM_NAME} v\S+ enabled\s+OK", lab), lab
    assert str(env_dir / "share" / "jupyter" / "labextensions") in lab
    server = _run(python, ["jupyter_server.extension.serverextension", "list"], clean_env, tmp_path)
    assert re.search(r"devknow_jupyter\.labext enabled", server), server
    assert re.search(r"devknow_jupyter\.labext\s+OK", server), server  # it imported and validated


def _run(python: Path, args: list[str], env: dict[str, str], cwd: Path) -> str:
    # cwd away from the checkout: `python -m` puts the working directory first on sys.path.
    result = subprocess.run([str(python), "-m", *args], capture_output=True, text=True, env=env,
                            timeout=120, cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    return ANSI.sub("", result.stdout + result.stderr)

"""The Binder configuration builds a working environment, and the examples run in it with no key.

repo2docker is not available here (it needs Docker), so this test performs the steps repo2docker runs
for ``binder/`` on a copy of the repository, in the same order and from the same working directory:

1. a fresh virtual environment (repo2docker: the notebook environment, Python from ``runtime.txt``);
2. ``pip install -r binder/requirements.txt`` from the repository root;
3. ``chmod +x binder/postBuild && ./binder/postBuild`` from the repository root, with that
   environment first on ``PATH``.

Then it executes every example notebook with that environment's ``jupyter nbconvert --execute`` (its
own kernel, its own installed copy of the package), offline, with no key. The only difference from
repo2docker: pip may use its cache for step 2 (repo2docker passes ``--no-cache-dir``), which keeps this
test quick without changing what gets installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.corpus_repos import CORPUS, make_repo

BINDER = ROOT / "binder"
NOTEBOOKS = ("quickstart.ipynb", "offline-and-serve.ipynb", "python-api.ipynb")
# What a clone of the repository would not hold, or what would only slow the copy down.
_NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git",
    ".lab",  # make lab's git-ignored working copy; the make-lab test makes and removes it on the other worker
    ".venv",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    "test-artifacts",
    "results",
    "build",
    "dist",
    "*.egg-info",
    ".ipynb_checkpoints",
    "*.sqlite3",
)


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-6000:]}"
    return done.stdout


def test_binder_files_are_what_repo2docker_reads() -> None:
    names = {path.name for path in BINDER.iterdir()}
    assert {"requirements.txt", "postBuild", "runtime.txt"} <= names
    assert re.fullmatch(r"python-3\.\d+\s*", (BINDER / "runtime.txt").read_text())
    post_build = (BINDER / "postBuild").read_text()
    assert post_build.startswith("#!"), "repo2docker runs ./binder/postBuild directly"
    assert os.access(BINDER / "postBuild", os.X_OK)
    assert b"\r\n" not in (BINDER / "postBuild").read_bytes()  # a CR would break the shebang line
    assert re.search(r"pip install .*\.\[?", post_build), "postBuild must install this checkout"
    # Binder has no secrets: no key, no key variable with a value, anywhere in the configuration.
    for path in BINDER.iterdir():
        text = path.read_text()
        assert "AIza" not in text
        assert not re.search(r"(DEVKNOW|GOOGLE)_API_KEY\s*=", text)
    assert (ROOT / "examples" / "quickstart.ipynb").is_file()  # the Binder link's urlpath


# Installing JupyterLab into a fresh environment takes one to three minutes, more on a busy machine.
@pytest.mark.timeout(1200)
def test_binder_environment_runs_the_examples(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=_NOT_IN_A_CLONE, symlinks=True)
    venv = tmp_path / "binder-env"
    bin_dir = venv / "bin"

    env = {key: value for key, value in os.environ.items() if not key.startswith(("DEVKNOW_", "GOOGLE_API"))}
    env.pop("PYTHONPATH", None)
    env.update(
        VIRTUAL_ENV=str(venv),
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        DEVKNOW_CACHE_DIR=str(tmp_path / "devknow-cache"),
        IPYTHONDIR=str(tmp_path / "ipython"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter" / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "jupyter" / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "jupyter" / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        TMPDIR=str(tmp_path),
    )
    env.pop("JUPYTER_PATH", None)

    # postBuild builds a knowledge pack from the shipped recipes: here from local git repositories rebuilt from
    # the shared corpus (no network); without the corpus, from missing copies, which it must skip and go on.
    recipes = ("go", "firebase-js")
    if CORPUS.is_dir():
        local = {name: make_repo(name, tmp_path / "doc-repos")[0] for name in recipes}
    else:
        local = {name: tmp_path / "missing" / name for name in recipes}
    env.update(
        DEVKNOW_BINDER_RECIPES=" ".join(recipes),
        DEVKNOW_PACK_REPOS=" ".join(f"{name}={path}" for name, path in local.items()),
    )

    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    _run([str(bin_dir / "pip"), "install", "-q", "-r", "binder/requirements.txt"], repo, env)
    _run(["chmod", "+x", "binder/postBuild"], repo, env)
    built = _run(["./binder/postBuild"], repo, env)
    if not CORPUS.is_dir():
        assert "go: no such folder or repository" in built and "no knowledge pack was built" in built

    # The package came from this checkout into the environment, not from the source folder.
    probe = "import devknow_jupyter, sys; print(devknow_jupyter.__file__); print(sys.prefix)"
    where, prefix = _run([str(bin_dir / "python"), "-c", probe], tmp_path, env).split()
    assert Path(where).is_relative_to(venv) and Path(prefix) == venv
    # The widget manager JupyterLab needs for the hit list is installed and enabled.
    extensions = _run([str(bin_dir / "jupyter"), "labextension", "list"], tmp_path, env)
    assert re.search(r"@jupyter-widgets/jupyterlab-manager \S+ .*enabled", extensions), extensions
    assert "devknow" in _run([str(bin_dir / "devknow"), "--help"], tmp_path, env)

    # Run the notebooks with that environment's own nbconvert and kernel, offline and with no key.
    out = tmp_path / "executed"
    run_env = dict(env, HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1")
    _run(
        [
            str(bin_dir / "jupyter"),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--output-dir",
            str(out),
            "--ExecutePreprocessor.timeout=300",
            "--ExecutePreprocessor.kernel_name=python3",
            *(f"examples/{name}" for name in NOTEBOOKS),
        ],
        repo,
        run_env,
        timeout=1200,
    )
    for name in NOTEBOOKS:
        nb = json.loads((out / name).read_text())
        code = [cell for cell in nb["cells"] if cell["cell_type"] == "code" and cell["source"]]
        assert all(cell["execution_count"] for cell in code)
        assert not [o for cell in code for o in cell["outputs"] if o["output_type"] == "error"]
    quickstart = (out / "quickstart.ipynb").read_text()
    assert "application/vnd.jupyter.widget-view+json" in quickstart
    assert "devknow-jupyter.dev/guide/create-an-api-key" in quickstart
    if CORPUS.is_dir():  # the quickstart's offline section finds pages of the pack postBuild installed
        assert "documents/go.dev/ref/mod" in quickstart or "documents/go.dev/doc/modules" in quickstart
        assert "From the pack google-docs (Firebase JavaScript SDK reference, Apache-2.0)" in quickstart

"""The example notebooks: committed clean, and each runs top to bottom on a real kernel, offline, with no key.

Each notebook is copied into a temporary folder and executed there with nbclient (a real ipykernel
from this environment). The autouse fixture in ``conftest.py`` has already removed every key variable
and pointed ``DEVKNOW_CACHE_DIR`` and ``IPYTHONDIR`` at the test's temporary folder. On top of that the
proxy variables point at a closed port on 127.0.0.1, so any attempt to reach the internet over HTTP
fails the run instead of silently succeeding.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
NOTEBOOKS = ("quickstart.ipynb", "offline-and-serve.ipynb", "python-api.ipynb")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _outputs(nb: Any, marker: str) -> list[dict[str, Any]]:
    """The outputs of the first code cell whose source contains ``marker``."""
    for cell in nb.cells:
        if cell.cell_type == "code" and marker in cell.source:
            return cell.outputs
    raise AssertionError(f"no code cell contains {marker!r}")


def _text(outputs: list[dict[str, Any]]) -> str:
    """Everything a reader of the saved notebook sees as text: streams and text/plain or text/markdown."""
    parts = []
    for output in outputs:
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        data = output.get("data", {})
        parts += [data.get("text/plain", ""), data.get("text/markdown", "")]
    return "\n".join(parts)


def _mimetypes(outputs: list[dict[str, Any]]) -> set[str]:
    return {mimetype for output in outputs for mimetype in output.get("data", {})}


def _kill_leftovers(folder: Path) -> list[int]:
    """End processes (by id) whose command line mentions ``folder``: a server a failed notebook left behind."""
    try:
        import psutil
    except ImportError:  # psutil comes with the bench extra; without it there is nothing to look with
        return []
    killed = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if any(str(folder) in part for part in proc.info["cmdline"] or ()):
            try:
                proc.kill()
                killed.append(proc.pid)
            except psutil.Error:
                pass
    return killed


@pytest.fixture
def offline_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No internet for the kernel (dead proxy), scratch files in the test's folder, loopback still direct."""
    dead_proxy = "http://127.0.0.1:9"
    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(variable, dead_proxy)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # tempfile.mkdtemp() in the notebooks lands here
    return tmp_path


def run_notebook(name: str, folder: Path) -> Any:
    """Execute a fresh copy of ``examples/<name>`` in ``folder``; returns the executed notebook."""
    path = folder / name
    shutil.copyfile(EXAMPLES / name, path)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3", allow_errors=False, resources={"metadata": {"path": str(folder)}}
    )
    try:
        client.execute()
    finally:
        nbformat.write(nb, folder / f"executed-{name}")
        _kill_leftovers(folder)
    return nb


def test_the_three_examples_exist() -> None:
    assert sorted(path.name for path in EXAMPLES.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name: str) -> None:
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert "widgets" not in nb.metadata  # no saved widget state
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, "a notebook without code"
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, cell.source
    # Every step is explained: a new user reads at least as many markdown cells as half the code cells.
    assert sum(cell.cell_type == "markdown" for cell in nb.cells) * 2 >= len(code)


def test_notebooks_match_their_generator() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_examples.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_no_key_in_any_notebook() -> None:
    for name in NOTEBOOKS:
        text = (EXAMPLES / name).read_text(encoding="utf-8")
        assert "AIza" not in text  # the prefix of Google API keys
        for cell in nbformat.reads(text, as_version=4).cells:
            # A key is only ever typed at the hidden prompt; the prompt itself is commented out.
            for line in cell.source.splitlines():
                if cell.cell_type == "code" and "--api-key" in line:
                    assert line.lstrip().startswith("#"), line


def test_quickstart_runs(offline_env: Path) -> None:
    nb = run_notebook("quickstart.ipynb", offline_env)
    search = _outputs(nb, "%devsearch -n 5")
    assert WIDGET_VIEW in _mimetypes(search)  # the hit list with its Open buttons
    assert "create-an-api-key" in _text(search)  # and a readable text twin
    links = _text(_outputs(nb, "[hit.uri for hit in _devsearch]"))
    assert links.count("https://") >= 2
    page = _text(_outputs(nb, "%devget _devsearch[0]"))
    assert "#" in page or "documents/" in page
    quotas = _text(_outputs(nb, "%devget documents/devknow-jupyter.dev/guide/quotas-and-limits"))
    assert "Quotas and limits" in quotas
    answer = _outputs(nb, "%%devask")
    assert "get-documents-tool" in _text(answer)  # a reference to the page that holds the answer
    references = _text(_outputs(nb, "answer.references"))
    assert "documents/" in references
    assert "→  https://" in _text(_outputs(nb, "for hit in quota_hits"))
    status = _text(_outputs(nb, "%devknow"))
    assert "local" in status


def test_offline_and_serve_runs(offline_env: Path) -> None:
    nb = run_notebook("offline-and-serve.ipynb", offline_env)
    assert "deploy.md" in _text(_outputs(nb, "sorted(path.name"))
    found = _text(_outputs(nb, "%devsearch -n 3 roll back"))
    assert "wiki.example.com/runbooks/deploy" in found
    assert "Roll back a bad release" in _text(_outputs(nb, "%devget https://wiki.example.com"))
    team = _text(_outputs(nb, 'team.search_documents("rotate credentials")'))
    assert "on-call" in team.lower()
    assert "search_documents" in _text(_outputs(nb, "remote.list_tools()"))
    assert "wiki.example.com/runbooks/deploy" in _text(_outputs(nb, "remote.search_documents"))
    assert "devknow serve stopped" in _text(_outputs(nb, "server.terminate()"))
    assert not list((offline_env / "scratch").glob("devknow-example-*")), "the notebook did not clean up"


def test_python_api_runs(offline_env: Path) -> None:
    nb = run_notebook("python-api.ipynb", offline_env)
    assert "endpoint='local'" in _text(_outputs(nb, "client = DevKnowClient()"))
    assert '"parent": "documents/' in _text(_outputs(nb, "json.dumps(hits[0].to_dict()"))
    missing = _text(_outputs(nb, "except DocumentNotFoundError"))
    assert "no-such-page" in missing and "documents/devknow-jupyter.dev/guide/tools" in missing
    assert "cached: True | refreshed: False" in _text(_outputs(nb, "refresh=True"))
    assert "hits" in _text(_outputs(nb, 'with DevKnowClient("local") as local'))

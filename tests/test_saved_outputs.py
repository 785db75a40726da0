"""What a saved notebook keeps of devknow's outputs, run by nbclient in a real python3 kernel.

The "Searching…" placeholder of a call is its cell's first output; once the call ends it is removed whole,
so the saved file holds no empty ``text/plain`` display of ours. Outputs printed before the call stay.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CELLS = {
    "load": "%load_ext devknow_jupyter",
    "status": "%devknow",
    "search": "%devsearch -n 3 restrict an API key",
    "get": "%devget _devsearch",
    "ask": "%%devask\nHow do I install devknow?",
    "assigned": "hits = %devsearch install",
    "silenced": "%devsearch quota units;",
    "json": "%devsearch --json install",
    "printed": "print('printed first')\n%devsearch -n 2 install",
    "after": "print(len(hits))",
}


def _saved(tmp_path: Path) -> dict[str, list]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS.values()]
    client = NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env={**os.environ, "DEVKNOW_ENDPOINT": "local"})
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, path)
    saved = nbformat.read(path, as_version=4)
    return dict(zip(CELLS, (cell.outputs for cell in saved.cells), strict=True))


def _empty(output) -> bool:
    data = output.get("data")
    return output.output_type in ("display_data", "execute_result") and not any(
        value for value in (data or {}).values()
    )


def test_a_saved_notebook_holds_no_empty_devknow_display(tmp_path: Path) -> None:
    outputs = _saved(tmp_path)
    empty = {key: [out for out in outs if _empty(out)] for key, outs in outputs.items()}
    assert {key: outs for key, outs in empty.items() if outs} == {}
    for key in ("status", "search", "get", "ask", "json", "printed"):  # the results themselves are kept
        assert [out for out in outputs[key] if out.output_type == "execute_result"], (key, outputs[key])
    assert outputs["assigned"] == [] and outputs["silenced"] == []
    assert outputs["printed"][0].output_type == "stream" and "printed first" in outputs["printed"][0].text
    assert outputs["after"][0].text.strip().isdigit()

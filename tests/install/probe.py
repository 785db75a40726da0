"""Run inside an installed environment (a shape's virtualenv, or this one with the extras blocked): use the package
as a user of that install would and print one JSON line with what each step saw, for the test to check.

A script, not a module of ``tests``: it is run by path with the environment's own Python and a working directory
away from the checkout, so ``devknow_jupyter`` comes from that environment's install. Steps (argv[1:]):

- ``imports``: where the package was imported from, which extras are installed, after importing the modules
  every user's session imports (client, magics, CLI, the local index).
- ``api MCP_URL UNREACHABLE_URL``: the offline index (search, get, answer), a live MCP server, the fallback to
  the offline index with a key set and the service unreachable, and REST without its extra (one line).
- ``magics MCP_URL``: ``%load_ext`` and the three magics in a real IPython shell.
- ``rest REST_URL KEY``: a search, a get and an answer over the REST surface.
- ``semantic DOCS_FOLDER INDEX_PATH``: a folder indexed and searched with semantic fusion.

Each report ends with ``extras_imported``: the modules of the extras (``devknow_jupyter.extras``) that got imported.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def imports() -> dict[str, Any]:
    import devknow_jupyter
    import devknow_jupyter.cli
    import devknow_jupyter.client
    import devknow_jupyter.local.backend
    import devknow_jupyter.magics
    from devknow_jupyter.extras import EXTRA_MODULES, extra_installed

    return {
        "package": devknow_jupyter.__file__,
        "version": devknow_jupyter.__version__,
        "extras_installed": sorted(extra for extra in EXTRA_MODULES if extra_installed(extra)),
    }


def api(mcp_url: str, unreachable_url: str) -> dict[str, Any]:
    from devknow_jupyter import ConfigurationError, DevKnowClient

    seen: dict[str, Any] = {}
    with DevKnowClient("local") as client:
        hits = client.search_documents("api key", page_size=3, since="2020-01-01")
        seen["local_search"] = hits.names
        seen["local_get"] = [doc.title for doc in client.get_documents(hits.names[:1])]
        seen["local_answer"] = client.answer_query("How do I create an API key?").references
    with DevKnowClient(mcp_url) as client:
        hits = client.search_documents("restrict an API key", source="docs.example.dev")
        seen["mcp_search"] = hits.names
        seen["mcp_backend"] = hits.info.backend
        seen["mcp_get"] = [doc.name for doc in client.get_documents(hits.names[:1])]
    with DevKnowClient(unreachable_url, api_key="probe-key-not-real") as client:
        hits = client.search_documents("clear the result cache")
        seen["fallback_backend"] = client.status()["answered_by"]
        seen["fallback_search"] = hits.names
        seen["fallback_notices"] = hits.info.notices
    try:
        DevKnowClient(mcp_url.rsplit("/mcp", 1)[0], protocol="rest").search_documents("api key")
        seen["rest_without_extra"] = None
    except ConfigurationError as exc:
        seen["rest_without_extra"] = str(exc)
    return seen


def magics(mcp_url: str) -> dict[str, Any]:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    seen: dict[str, Any] = {}
    with capture_output() as loading:
        ok = shell.run_cell("%load_ext devknow_jupyter").success
    seen["load_ext"] = ok and not loading.stderr
    seen["magics"] = sorted(name for name in shell.magics_manager.lsmagic()["line"] if name.startswith("dev"))
    seen["cell_magics"] = sorted(name for name in shell.magics_manager.lsmagic()["cell"] if name.startswith("dev"))
    cells = {
        "devknow": f"%devknow --endpoint {mcp_url}",
        "devsearch": "hits = %devsearch restrict an API key",
        "devget": "page = %devget documents/docs.example.dev/keys/restrict",
        "devask": "%%devask -o answer\nHow do I restrict an API key?",
    }
    for name, cell in cells.items():
        with capture_output() as out:
            result = shell.run_cell(cell)
        seen[name] = {"success": result.success, "stderr": out.stderr}
    seen["hits"] = list(shell.user_ns["hits"].names)
    seen["page"] = [doc.name for doc in shell.user_ns["page"]]
    seen["answer_references"] = list(shell.user_ns["answer"].references)
    return seen


def rest(url: str, key: str) -> dict[str, Any]:
    from devknow_jupyter import DevKnowClient

    with DevKnowClient(url, protocol="rest", api_key=key) as client:
        hits = client.search_documents("bucket", source="docs.cloud.google.com", page_size=2)
        answer = client.answer_query("What is a bucket?")
        return {
            "protocol": client.status()["protocol"],
            "search": hits.names,
            "next_page": hits.next_page_token is not None,
            "get": [doc.title for doc in client.get_documents(hits.names[:1])],
            "answer": answer.answer_text,
        }


def semantic(docs: str, index_path: str) -> dict[str, Any]:
    import sqlite3

    from devknow_jupyter.local import semantic as fusion
    from devknow_jupyter.local.index import LocalIndex

    with LocalIndex(index_path) as index:
        index.add_folder(docs)
        hits = [hit["parent"] for hit in index.search("keep someone else from using my key")]
    with sqlite3.connect(index_path) as db:
        vectors = db.execute("SELECT count(*) FROM page_vectors WHERE model = ?", (fusion.MODEL_NAME,)).fetchone()[0]
    return {"enabled": fusion.enabled(), "hits": hits, "page_vectors": vectors}


STEPS = {"imports": imports, "api": api, "magics": magics, "rest": rest, "semantic": semantic}


def extras_imported() -> list[str]:
    """The extras' modules now in ``sys.modules``."""
    from devknow_jupyter.extras import EXTRA_MODULES

    modules = [module for group in EXTRA_MODULES.values() for module in group]
    return sorted(name for name in sys.modules if any(name == m or name.startswith(f"{m}.") for m in modules))


if __name__ == "__main__":
    step, *args = sys.argv[1:]
    report = STEPS[step](*args)
    report["extras_imported"] = extras_imported()
    print(json.dumps(report))

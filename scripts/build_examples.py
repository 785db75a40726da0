"""Write the example notebooks in ``examples/`` from the cell lists below (outputs empty).

Run ``python scripts/build_examples.py`` after editing a notebook's cells here, and commit both. With
``--check`` it only reports notebooks that differ from what this script would write (the test suite
runs that check, so the committed notebooks never drift from this source or carry outputs).

Each notebook must run top to bottom with no API key and no network: on the embedded offline index.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# A cell is ("md", text) or ("py", source).
Cells = list[tuple[str, str]]

QUICKSTART: Cells = [
    (
        "md",
        """\
# Quickstart: Google's developer documentation in your notebook

`devknow_jupyter` adds four magics to Jupyter for the **Developer Knowledge API**, Google's service
for searching and reading its developer documentation:

| Magic | What it does |
|---|---|
| `%devsearch QUERY` | finds passages that match your words |
| `%devget NAME_OR_URL ...` | shows whole pages |
| `%%devask` | answers the question written in the cell, with references |
| `%devknow` | status, API key, endpoint, cache |

**No key needed to try it.** Without an API key everything runs on the *offline index* that ships
with the package: a small starter pack of pages about the Developer Knowledge API and this
extension. The last section shows how to add a key safely; then the same cells search all of
Google's developer documentation.

Run the cells one by one with **Shift+Enter**, or all at once with **Run ▸ Run All Cells**.""",
    ),
    (
        "md",
        """\
## 1. Load the extension

This registers the magics in this kernel. Without a key it says once that it uses the offline index.""",
    ),
    ("py", "%load_ext devknow_jupyter"),
    (
        "md",
        """\
## 2. Search

`%devsearch` takes plain words, no quotes needed. Each hit shows the page title, its link and the
passage that matched. `-n 5` keeps at most five hits.

Every hit has an **Open** button: click it to read the whole page in place of the list, without
leaving the notebook; **← Back** (or Esc) shows the hits again. Click the list (or Tab to it) and
↑/↓ move through the hits, Enter opens one. **More** shows further hits.""",
    ),
    ("py", "%devsearch -n 5 create an API key"),
    (
        "md",
        """\
The hits are also a Python value, `_devsearch` (a list of hits with `.title`, `.uri`, `.content`).
For example, collect the links of all hits:""",
    ),
    ("py", "[hit.uri for hit in _devsearch]"),
    (
        "md",
        """\
## 3. Read whole pages

`%devget` fetches complete pages, as rendered Markdown. It accepts variables holding hits (such
as `_devsearch`, for the pages of all hits), document names (`documents/...`, as the service names
pages) and page URLs. A variable may be followed by an index or an attribute: `_devsearch[0]`,
`hits[:3]`, `answer.references`. Here: the page behind the first hit.""",
    ),
    ("py", "%devget _devsearch[0]"),
    (
        "md",
        "By document name; the page URL `https://devknow-jupyter.dev/guide/quotas-and-limits` works too:",
    ),
    ("py", "%devget documents/devknow-jupyter.dev/guide/quotas-and-limits"),
    (
        "md",
        """\
## 4. Ask a question

In a `%%devask` cell, the cell body is the question. The answer lists its **references**, each
with an **Open** button.

- On the live service the answer is written by a model grounded in the documentation. Answers have
  a small quota (per project about 50 a day and 10 a minute). When it is used up, `%%devask` says
  so in one line and shows **search results** for the same question instead, so the notebook keeps
  going. Add `--no-fallback` to make the cell fail instead.
- Offline there is no model: the answer is *extractive*, the best matching passages quoted, and
  it says so.""",
    ),
    ("py", "%%devask\nHow many document names can one get_documents call take?"),
    (
        "md",
        """\
## 5. Use the results in Python

Each magic stores its result: `_devsearch`, `_devget` and `_devask`. With `-o NAME` it is also
stored under a name of your choice, so later searches don't overwrite it. The values are plain
objects with `.to_dict()` (the service's JSON) and `.to_markdown()`.""",
    ),
    (
        "py",
        """\
answer = _devask
print(answer.answer_text[:300], "...")
answer.references""",
    ),
    ("py", "%devsearch -n 3 -o quota_hits quota exceeded 429"),
    (
        "py",
        """\
for hit in quota_hits:
    print(f"{hit.title}  →  {hit.uri}")""",
    ),
    (
        "md",
        """\
## 6. Status

`%devknow` shows where the magics connect and why, where the key came from (never the key itself),
and how well the cache is doing. Repeated searches come from the cache; add `--refresh` to a magic
to ask again.""",
    ),
    ("py", "%devknow"),
    (
        "md",
        """\
## 7. Real Google documentation offline: knowledge packs

A *knowledge pack* is one file holding documentation pages already indexed, built from a public
repository by a recipe that the package ships (`devknow pack recipes` lists them: Go, Dart, Firebase JS,
Gemini CLI, ADK, Genkit, TensorFlow). On Binder, the image build makes one from several of them; on your
machine, `devknow pack build go firebase-js -o docs.pack` then `devknow pack add docs.pack` does it.
Installed packs are searched together with the starter pack, and each hit says which pack it came
from and under which licence.""",
    ),
    (
        "py",
        """\
from devknow_jupyter import packs

for pack in packs.installed():
    print(pack["name"], [(source["name"], source["pages"], source["license"]) for source in pack["sources"]])
if not packs.installed():
    print("No packs installed here: devknow pack build go -o go.pack && devknow pack add go.pack")""",
    ),
    ("py", "%devsearch -n 3 go modules replace directive"),
    ("py", "%devsearch -n 3 firestore collection reference"),
    (
        "md",
        """\
## 8. Use the live service with your own key

To search all of Google's developer documentation you need an API key for the Developer Knowledge
API (the starter pack explains how: `%devget documents/devknow-jupyter.dev/guide/create-an-api-key`).

**Never paste a key into a cell**: notebooks are saved, shared and committed. Instead:

- run `%devknow --api-key`: it asks for the key in a hidden prompt, keeps it in this kernel's memory
  only, and switches the magics to the live service; or
- set the environment variable `DEVKNOW_API_KEY` before you start Jupyter.

On Binder there is no safe place for secrets, so type the key at the prompt and nowhere else.
`%devknow --endpoint local` switches back to the offline index.

Remove the `# ` in the next cell and run it to enter your key:""",
    ),
    ("py", "# %devknow --api-key"),
    (
        "md",
        """\
## Next steps

- [python-api.ipynb](python-api.ipynb): the same from plain Python, without magics.
- [offline-and-serve.ipynb](offline-and-serve.ipynb): index your own Markdown and serve it to other MCP clients.
- `%devsearch?`, `%devget?`, `%%devask?` and `%devknow?` list every option.""",
    ),
]

OFFLINE_AND_SERVE: Cells = [
    (
        "md",
        """\
# Your own documentation: offline index and MCP server

The offline index is not only the starter pack: you can add your team's Markdown to it, search it
with the same magics, and serve it as an MCP server to other clients (Gemini CLI, IDE agents, your
own code). This notebook

1. writes two small Markdown pages into a scratch folder,
2. indexes the folder with `devknow index` and searches it,
3. searches the folder on its own with `DevKnowClient("local:FOLDER")`,
4. starts `devknow serve`, calls a tool over MCP, and stops the server.

Everything runs locally; no key and no network needed.""",
    ),
    (
        "md",
        """\
## 1. A folder of Markdown

Any `*.md` files will do. A page may start with YAML front matter (`name`, `uri`, `title`,
`description`); without it the title comes from the first heading and the name from the path.

This notebook keeps its index in a scratch folder (`DEVKNOW_CACHE_DIR`), so your own offline index
is left alone. The `PATH` line makes sure `!devknow` finds the command of this kernel's
environment even when that environment isn't activated.""",
    ),
    (
        "py",
        """\
import os
import sys
import tempfile
from pathlib import Path

os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
scratch = Path(tempfile.mkdtemp(prefix="devknow-example-"))
previous_cache_dir = os.environ.get("DEVKNOW_CACHE_DIR")
os.environ["DEVKNOW_CACHE_DIR"] = str(scratch / "cache")

docs = scratch / "team-docs"
docs.mkdir()
(docs / "deploy.md").write_text('''---
uri: https://wiki.example.com/runbooks/deploy
title: Deploy the report service
description: Release steps and how to roll back a bad release.
---
# Deploy the report service

Releases go out from the `release` branch every Tuesday.

## Release steps

1. Tag the commit: `git tag v1.4.0 && git push --tags`.
2. Wait for the canary to pass its health checks (about 15 minutes).
3. Promote the canary to all regions.

## Roll back a bad release

Run `reportctl rollback --to previous`. The rollback takes about two minutes; the dashboards
recover within five.
''')
(docs / "on-call.md").write_text('''# On-call handbook

## Paging rules

Pages go to the primary first, to the secondary after 10 minutes without acknowledgement.

## Rotate the service credentials

Credentials rotate every 90 days. Run `reportctl rotate-credentials`, then restart the workers
one region at a time.
''')
sorted(path.name for path in docs.iterdir())""",
    ),
    (
        "md",
        """\
## 2. Index it and search

`devknow index FOLDER` adds every page under the folder to the offline index (run it again after
edits: it only re-reads changed files). The magics then find your pages next to the starter pack.
`%devknow --endpoint local` makes sure they use the offline index even if you have set a key.""",
    ),
    ("py", "!devknow index {docs}"),
    (
        "py",
        """\
%load_ext devknow_jupyter
%devknow --endpoint local""",
    ),
    ("py", "%devsearch -n 3 roll back a bad release"),
    (
        "md",
        """\
Open a hit to read the page, or fetch it with `%devget`: the page URL from its front matter works,
as does the document name the index gave it (`documents/` + the URL without `https://`).""",
    ),
    ("py", "%devget https://wiki.example.com/runbooks/deploy"),
    (
        "md",
        """\
## 3. One folder on its own

`DevKnowClient("local:FOLDER")` searches only that folder, with an index of its own (kept in the
cache directory and updated when files change). This is the plain Python API; see
`python-api.ipynb` for more.""",
    ),
    (
        "py",
        """\
from devknow_jupyter import DevKnowClient

team = DevKnowClient(f"local:{docs}")
hits = team.search_documents("rotate credentials")
[(hit.title, hit.parent) for hit in hits]""",
    ),
    (
        "md",
        """\
## 4. Serve the folder to other MCP clients

`devknow serve --docs FOLDER --port PORT` offers the same three tools (`search_documents`,
`get_documents`, `answer_query`) over MCP Streamable HTTP at `http://127.0.0.1:PORT/mcp`. In a
terminal you would just run it; here we start it in the background on a free port, wait until it
listens, and connect a `DevKnowClient` to it exactly like any MCP client would.""",
    ),
    (
        "py",
        """\
import socket
import subprocess
import time

with socket.socket() as sock:
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

log = open(scratch / "serve.log", "wb")
server = subprocess.Popen(
    ["devknow", "serve", "--docs", str(docs), "--port", str(port)],
    stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
)

deadline = time.monotonic() + 60
while True:
    if server.poll() is not None:
        raise RuntimeError("devknow serve exited:\\n" + (scratch / "serve.log").read_text())
    with socket.socket() as sock:
        if sock.connect_ex(("127.0.0.1", port)) == 0:
            break
    if time.monotonic() > deadline:
        raise TimeoutError("devknow serve did not start within a minute")
    time.sleep(0.2)
url = f"http://127.0.0.1:{port}/mcp"
print("serving", docs, "at", url)""",
    ),
    (
        "py",
        """\
remote = DevKnowClient(url)
[tool["name"] for tool in remote.list_tools()]""",
    ),
    (
        "py",
        """\
found = remote.search_documents("rollback takes two minutes")
found""",
    ),
    (
        "md",
        """\
Another MCP client only needs the URL. For example, Gemini CLI reads servers from its
`settings.json`:

```json
{"mcpServers": {"team-docs": {"httpUrl": "http://127.0.0.1:8765/mcp"}}}
```

## 5. Clean up

Close the clients, stop the server by its process handle, unload the extension (which closes its
client), and delete the scratch folder.""",
    ),
    (
        "py",
        """\
import shutil

remote.close()
team.close()
server.terminate()
server.wait(timeout=30)
log.close()
print("devknow serve stopped")
%unload_ext devknow_jupyter
if previous_cache_dir is None:
    del os.environ["DEVKNOW_CACHE_DIR"]
else:
    os.environ["DEVKNOW_CACHE_DIR"] = previous_cache_dir
shutil.rmtree(scratch, ignore_errors=True)""",
    ),
]

PYTHON_API: Cells = [
    (
        "md",
        """\
# The Python API: `DevKnowClient`

Everything the magics do is available from plain Python, for scripts, tests and other tools. This
notebook uses no magics. Without an API key the client uses the offline index, so every cell runs
as is.""",
    ),
    (
        "md",
        """\
## 1. Create a client

`DevKnowClient()` picks its endpoint: the `endpoint` argument, else `DEVKNOW_ENDPOINT`, else
Google's server when a key is set (`api_key=` or `DEVKNOW_API_KEY`), else the offline index
(`"local"`). Its repr tells you which, and where the key came from, never the key.""",
    ),
    (
        "py",
        """\
from devknow_jupyter import DevKnowClient

client = DevKnowClient()
client""",
    ),
    (
        "md",
        """\
## 2. Search

`search_documents` returns `SearchResults`: a sequence of hits (`DocumentChunk`) with `.parent`
(the document name), `.uri`, `.title` and `.content` (the passage, Markdown). Displayed in
Jupyter it renders as the same list `%devsearch` shows.""",
    ),
    (
        "py",
        """\
hits = client.search_documents("restrict an API key")
for hit in hits:
    print(f"{hit.title:60.60}  {hit.uri}")""",
    ),
    ("py", "hits[:2]"),
    ("md", "`to_dict()` gives the service's own JSON shape, ready for `json.dumps`:"),
    (
        "py",
        """\
import json

print(json.dumps(hits[0].to_dict(), indent=2)[:500])""",
    ),
    (
        "md",
        """\
## 3. Fetch whole documents

`get_documents` takes document names, page URLs, hits or whole search results. It drops
duplicates, keeps your order, and sends at most 20 names per call (several calls run in
parallel). The result is a list of `Document` with `.name`, `.uri`, `.title`, `.description` and
`.content` (the page's Markdown).""",
    ),
    (
        "py",
        """\
docs = client.get_documents(hits.names[:2])
[(doc.title, doc.uri) for doc in docs]""",
    ),
    ("py", "print(docs[0].content[:400])"),
    (
        "md",
        """\
## 4. Ask

`answer_query` returns an `Answer` with `.answer_text` (Markdown) and `.references` (document
names). Offline the answer is `extractive` (quoted passages, no model). On the live service
answers have a small daily quota; when it is used up the call raises `QuotaExceededError`, and
you can fall back to `search_documents` as `%%devask` does.""",
    ),
    (
        "py",
        """\
answer = client.answer_query("What is the daily answer quota?")
print("extractive:", answer.extractive)
print(answer.answer_text[:400])
answer.references""",
    ),
    ("py", "answer.to_dict().keys()"),
    (
        "md",
        """\
## 5. Errors

Every error is a `devknow_jupyter.errors.DevKnowError` with a short message that says what to do.
`DocumentNotFoundError` still carries the documents that *were* found.""",
    ),
    (
        "py",
        """\
from devknow_jupyter.errors import DevKnowError, DocumentNotFoundError

try:
    client.get_documents([
        "documents/devknow-jupyter.dev/guide/tools",
        "documents/devknow-jupyter.dev/guide/no-such-page",
    ])
except DocumentNotFoundError as err:
    print("message:", err)
    print("missing:", err.missing)
    print("found:  ", [doc.name for doc in err.documents])""",
    ),
    (
        "py",
        """\
try:
    client.search_documents("   ")
except DevKnowError as err:
    print(type(err).__name__, "-", err)""",
    ),
    (
        "md",
        """\
## 6. Cache

Results are cached (in memory, shared by the clients of one process), so repeating a call costs
nothing; `refresh=True` asks again. `status()` shows the endpoint, where the key came from, and
the cache figures.""",
    ),
    (
        "py",
        """\
again = client.search_documents("restrict an API key")
fresh = client.search_documents("restrict an API key", refresh=True)
print("cached:", again.from_cache, "| refreshed:", fresh.from_cache)
client.status()""",
    ),
    (
        "md",
        """\
## 7. Other servers, and closing

Pass an endpoint to talk to another MCP server, e.g. one started with `devknow serve` (see
`offline-and-serve.ipynb`), or `api_key=` for Google's service (read it with `getpass`, never
write it into a notebook):

```python
from getpass import getpass
live = DevKnowClient(api_key=getpass("Developer Knowledge API key: "))
```

A client is a context manager; `close()` ends its server session.""",
    ),
    (
        "py",
        """\
client.close()

with DevKnowClient("local") as local:
    print(len(local.search_documents("get_documents batch of names")), "hits")""",
    ),
]

NOTEBOOKS: dict[str, Cells] = {
    "quickstart": QUICKSTART,
    "offline-and-serve": OFFLINE_AND_SERVE,
    "python-api": PYTHON_API,
}


def build(stem: str, cells: Cells) -> nbformat.NotebookNode:
    """One notebook with stable cell ids (``<stem>-<n>``), so rebuilding changes nothing."""
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for number, (kind, text) in enumerate(cells):
        cell = new_markdown_cell(text) if kind == "md" else new_code_cell(text)
        cell.id = f"{stem}-{number:02d}"
        nb.cells.append(cell)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    """The notebook's file text (nbformat's JSON, with a final newline)."""
    return nbformat.writes(nb) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the notebooks, or with ``--check`` list those that differ (exit status 1)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks that are out of date")
    args = parser.parse_args(argv)
    stale = []
    for stem, cells in NOTEBOOKS.items():
        path = EXAMPLES / f"{stem}.ipynb"
        text = render(build(stem, cells))
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("out of date (run python scripts/build_examples.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Local git repositories rebuilt from the shared corpus, so recipes run here without network.

Each corpus page's body is written back at its front matter's ``source_path`` (with its title and
description as front matter, as the source files have them) in one repository per source; pages that
the site generates from a JSON data file (``path.json#id``) become entries of that file. Nothing of the
corpus is stored in this repository: the repositories live in a temporary folder.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT

CORPUS = ROOT.parent / "shared" / "corpus"
SOURCES = ("adk-docs", "gemini-cli", "dart", "go", "firebase-js")
# The body field each generated data file's entries carry (as the dart recipe reads them).
_DATA_FIELDS = {
    "src/data/diagnostics.json": ("id", {"hasDocumentation": True}, "documentation"),
    "src/data/linter_rules.json": ("name", {"state": "stable"}, "description"),
}


def corpus_pages(source: str) -> list[dict[str, Any]]:
    """The corpus pages of one source: their front matter fields and ``body``."""
    pages = []
    for path in sorted((CORPUS / source).rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, block, body = text.split("---\n", 2)
        meta = yaml.safe_load(block)
        meta["body"] = body.lstrip("\n")
        pages.append(meta)
    return pages


def make_repo(source: str, where: Path) -> tuple[Path, str, list[dict[str, Any]]]:
    """A git repository of one source's pages under ``where``; returns ``(path, commit, pages)``."""
    repo = where / source
    repo.mkdir(parents=True)
    pages = corpus_pages(source)
    data: dict[str, list[dict[str, Any]]] = {}
    for page in pages:
        relative, _, ident = page["source_path"].partition("#")
        if ident:
            key, extra, field = _DATA_FIELDS[relative]
            data.setdefault(relative, []).append({key: ident, **extra, field: page["body"]})
            continue
        target = repo / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.suffix == ".html":
            target.write_text(page["body"], encoding="utf-8")
            continue
        front = {"title": page["title"], "description": page.get("description") or ""}
        target.write_text("---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n\n" + page["body"], "utf-8")
    for relative, entries in data.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(json.dumps(entries), encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.test", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pages"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    return repo, commit, pages

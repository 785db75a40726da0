"""The public API is what ``devknow_jupyter`` exports (as httpx's test_exported_members checks its own)."""

from __future__ import annotations

import subprocess
import sys

import devknow_jupyter
from devknow_jupyter import errors
from tests.conftest import ROOT


def test_all_is_sorted_unique_and_every_name_resolves() -> None:
    assert devknow_jupyter.__all__ == sorted(set(devknow_jupyter.__all__))
    for name in devknow_jupyter.__all__:
        assert getattr(devknow_jupyter, name) is not None, name
    assert sorted(dir(devknow_jupyter)) == devknow_jupyter.__all__


def test_every_error_class_is_exported_at_the_top_level() -> None:
    classes = {name for name in errors.__all__ if isinstance(getattr(errors, name), type)}
    assert classes <= set(devknow_jupyter.__all__)
    for name in classes:
        assert getattr(devknow_jupyter, name) is getattr(errors, name)


def test_from_import_of_an_error_and_star_import_work_in_a_fresh_interpreter() -> None:
    code = (
        "from devknow_jupyter import DocumentNotFoundError, ToolError\n"
        "assert issubclass(DocumentNotFoundError, ToolError)\n"
        "ns = {}\n"
        "exec('from devknow_jupyter import *', ns)\n"
        "import devknow_jupyter\n"
        "missing = set(devknow_jupyter.__all__) - set(ns)\n"
        "assert not missing, missing\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_result_types_are_exported_at_the_top_level() -> None:
    from devknow_jupyter import models

    for name in ("Answer", "Citation", "Document", "DocumentChunk", "Documents", "SearchResults"):
        assert name in devknow_jupyter.__all__, name
        assert getattr(devknow_jupyter, name) is getattr(models, name)
    from devknow_jupyter import Citation

    answer = devknow_jupyter.Answer.from_dict(
        {"answerText": "ok", "references": ["d/a"], "citations": [{"endIndex": 2, "sources": [{}]}]}, query="q"
    )
    assert answer.citations == [Citation("ok", 0, 2, 0, 2, ["d/a"])]

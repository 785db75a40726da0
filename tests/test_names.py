"""What get_documents accepts, turned into document names."""

from __future__ import annotations

import pytest

from devknow_jupyter.errors import ConfigurationError
from devknow_jupyter.models import Document, DocumentChunk, SearchResults
from devknow_jupyter.names import normalize_name, normalize_names


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("documents/docs.example.dev/a", "documents/docs.example.dev/a"),
        ("https://docs.example.dev/a", "documents/docs.example.dev/a"),
        ("https://docs.example.dev/a/#section", "documents/docs.example.dev/a"),
        ("http://docs.example.dev/a?hl=en", "documents/docs.example.dev/a?hl=en"),
        ("docs.example.dev/a", "documents/docs.example.dev/a"),
        ("  documents/docs.example.dev/a  ", "documents/docs.example.dev/a"),
    ],
)
def test_names_and_urls(given, name):
    assert normalize_name(given) == name


@pytest.mark.parametrize("bad", ["", "   ", "not a name", "storage", "documents/" + "x" * 600, 42])
def test_bad_names_get_a_clear_error(bad):
    with pytest.raises(ConfigurationError):
        normalize_name(bad)


def test_mixed_inputs_flatten_dedupe_and_keep_order():
    hits = SearchResults(
        "q", [DocumentChunk("documents/a.dev/2", "1", "x"), DocumentChunk("documents/a.dev/1", "2", "y")]
    )
    names = normalize_names(
        ["https://a.dev/1", hits, Document("documents/a.dev/3"), DocumentChunk("documents/a.dev/2", "9", "z")]
    )
    assert names == ["documents/a.dev/1", "documents/a.dev/2", "documents/a.dev/3"]
    assert normalize_names("https://a.dev/1") == ["documents/a.dev/1"]

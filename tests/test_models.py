"""Result types: the service's JSON shapes round-trip, and the sequences behave like sequences."""

from __future__ import annotations

from devknow_jupyter.models import Answer, Document, DocumentChunk, Documents, SearchResults, name_to_uri


def test_chunk_round_trips_the_service_shape_and_derives_uri_and_title():
    data = {"parent": "documents/docs.example.dev/storage/buckets", "id": "3", "content": "## Choose a region\n\nx"}
    chunk = DocumentChunk.from_dict(data)
    assert chunk.to_dict() == data
    assert chunk.uri == "https://docs.example.dev/storage/buckets"
    assert chunk.title == "Choose a region"
    assert DocumentChunk("documents/a.dev/set-up_keys", "1", "no heading").title == "Set up keys"


def test_search_results_is_a_sequence_with_query_slices_and_names():
    hits = SearchResults.from_dict(
        {
            "results": [
                {"parent": "documents/a.dev/x", "id": "1", "content": "one"},
                {"parent": "documents/a.dev/y", "id": "2", "content": "two"},
                {"parent": "documents/a.dev/x", "id": "3", "content": "three"},
            ]
        },
        query="q",
    )
    assert len(hits) == 3 and hits.query == "q"
    assert [h.id for h in hits] == ["1", "2", "3"]
    assert isinstance(hits[1:], SearchResults) and hits[1:].query == "q" and len(hits[1:]) == 2
    assert hits.names == ["documents/a.dev/x", "documents/a.dev/y"]
    assert hits.to_dict()["results"][2] == {"parent": "documents/a.dev/x", "id": "3", "content": "three"}
    assert "3 hits" in hits.to_markdown() and "https://a.dev/y" in hits.to_markdown()
    assert repr(hits) == "<SearchResults query='q' hits=3>"
    assert SearchResults.from_dict({"results": []}, "none").to_dict() == {"results": []}


def test_document_fills_missing_uri_and_title_and_keeps_service_shape():
    doc = Document.from_dict({"name": "documents/a.dev/guide", "content": "# The guide\n\nBody"})
    assert doc.uri == "https://a.dev/guide" and doc.title == "The guide"
    assert set(doc.to_dict()) == {"name", "uri", "content", "description", "title"}
    docs = Documents([doc])
    assert isinstance(docs, list) and docs.to_dict() == {"documents": [doc.to_dict()]}
    assert Documents.from_dict(docs.to_dict()) == docs


def test_answer_uses_camel_case_and_accepts_reference_objects():
    refs = ["documents/a.dev/x", {"name": "documents/b.dev/y"}]
    answer = Answer.from_dict({"answerText": "Use X.", "references": refs})
    assert answer.to_dict() == {"answerText": "Use X.", "references": ["documents/a.dev/x", "documents/b.dev/y"]}
    markdown = answer.to_markdown()
    assert "1. [https://a.dev/x]" in markdown and "2. [https://b.dev/y]" in markdown


def test_name_to_uri_keeps_existing_schemes():
    assert name_to_uri("documents/a.dev/x") == "https://a.dev/x"
    assert name_to_uri("documents/http://a.dev/x") == "http://a.dev/x"

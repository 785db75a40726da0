"""Citations: UTF-8 byte offsets → string indexes, and the repairs of bad citations, by hand-made tables.

The byte offsets below are counted by hand (é is 2 bytes, 東 3, 📦 4), not computed with ``encode``,
so the conversion is checked against independent figures.
"""

from __future__ import annotations

import pickle

import pytest

from devknow_jupyter.models import Answer, Citation, byte_offset_to_index, resolve_citations

# (text, byte offset, round_up, expected index)
OFFSETS = [
    ("abc", 0, False, 0),
    ("abc", 3, False, 3),
    ("abc", 2, True, 2),
    ("é", 2, False, 1),  # é = C3 A9
    ("é", 1, False, 0),  # inside é: back to its start
    ("é", 1, True, 1),  # inside é: forward past its end
    ("a📦b", 1, False, 1),  # 📦 = 4 bytes, at bytes 1..4
    ("a📦b", 3, False, 1),
    ("a📦b", 3, True, 2),
    ("a📦b", 5, False, 2),
    ("a📦b", 6, False, 3),
    ("東京", 3, False, 1),  # each 3 bytes
    ("東京", 4, False, 1),
    ("東京", 4, True, 2),
    ("東京", 6, True, 2),
    ("e\u0301x", 1, False, 1),  # e + combining acute (2 bytes): a code-point boundary
    ("e\u0301x", 2, True, 2),
    ("abc", -4, False, 0),  # clamped
    ("abc", 99, True, 3),
    ("", 0, True, 0),
]


@pytest.mark.parametrize(("text", "offset", "round_up", "expected"), OFFSETS)
def test_byte_offset_to_index(text: str, offset: int, round_up: bool, expected: int) -> None:
    assert byte_offset_to_index(text.encode(), offset, round_up=round_up) == expected


REFS = ["documents/a.example/one", "documents/b.example/two", "documents/c.example/three"]


def cite(start: object, end: object, *refs: int) -> dict:
    return {"startIndex": start, "endIndex": end, "sources": [{"referenceIndex": i} for i in refs]}


# (case, text, raw citations, expected [(segment, reference numbers)], a word every note must hold or None)
CASES = [
    ("ascii", "Make a bucket. Then upload.", [cite(0, 14, 0), cite(15, 27, 1)],
     [("Make a bucket.", [0]), ("Then upload.", [1])], None),
    ("after an emoji", "📦 ok", [cite(5, 7, 2)], [("ok", [2])], None),
    ("after CJK", "東京で bucket", [cite(10, 16, 0)], [("bucket", [0])], None),
    ("after an accent", "café au lait", [cite(6, 8, 1)], [("au", [1])], None),
    ("the emoji itself", "x📦y", [cite(1, 5, 0)], [("📦", [0])], None),
    ("start inside é snaps back", "éa", [cite(1, 3, 0)], [("éa", [0])], None),
    ("end inside 📦 snaps forward", "a📦", [cite(0, 2, 0)], [("a📦", [0])], None),
    ("zero start left out (proto3)", "abc def", [{"endIndex": 3, "sources": [{}]}], [("abc", [0])], None),
    ("offsets as strings (int64 JSON)", "abc def", [cite("4", "7", 1)], [("def", [1])], None),
    ("several references", "abc", [cite(0, 3, 2, 0, 2)], [("abc", [2, 0])], None),
    ("end beyond the text", "abc", [cite(1, 50, 0)], [("bc", [0])], "clamped"),
    ("start beyond the text", "abc", [cite(7, 9, 0)], [], "outside"),
    ("reversed", "abcdef", [cite(4, 2, 0)], [], "ends before"),
    ("empty span", "abcdef", [cite(2, 2, 0)], [], "empty"),
    ("not numbers", "abc", [cite("x", 2, 0)], [], "not numbers"),
    ("unknown reference", "abc", [cite(0, 3, 7)], [], "no listed reference"),
    ("one bad reference of two", "abc", [cite(0, 3, 9, 1)], [("abc", [1])], None),
    ("garbage item", "abc", ["nonsense", cite(0, 1, 0)], [("a", [0])], "not a citation"),
    ("overlap is trimmed", "abcdefgh", [cite(0, 5, 0), cite(3, 8, 1)],
     [("abcde", [0]), ("fgh", [1])], "trimmed"),
    ("inside another is merged", "abcdefgh", [cite(0, 8, 0), cite(2, 4, 1)],
     [("abcdefgh", [0, 1])], "merged"),
    ("out of order", "abcdefgh", [cite(4, 8, 1), cite(0, 4, 0)], [("abcd", [0]), ("efgh", [1])], None),
    ("none", "abc", [], [], None),
]  # fmt: skip


@pytest.mark.parametrize(("text", "raw", "expected", "note"), [case[1:] for case in CASES], ids=[c[0] for c in CASES])
def test_resolve_citations(text: str, raw: list, expected: list, note: str | None) -> None:
    citations, notes = resolve_citations(text, raw, REFS)
    assert [(c.text, [REFS.index(name) for name in c.references]) for c in citations] == expected
    for citation in citations:
        assert text[citation.start : citation.end] == citation.text  # string indexes, never a split character
    if note is None:
        assert notes == []
    else:
        assert notes and any(note in line for line in notes), notes


def test_answer_from_the_rest_shape_and_back() -> None:
    service = {
        "answerText": "Créez un bucket 📦. 東京.",
        # "Créez un bucket 📦." is 1+2+3+1+2+1+6+1+4+1 = 22 bytes; " " then "東京." from byte 23 to 30.
        "citations": [cite(0, 22, 0), cite(23, 30, 1)],
        "references": [{"documentReference": {"documentChunk": {"parent": REFS[0]}}}, REFS[1]],
    }
    answer = Answer.from_dict(service, query="q")
    assert [c.text for c in answer.citations] == ["Créez un bucket 📦.", "東京."]
    assert answer.citations[1] == Citation("東京.", 19, 22, 23, 30, [REFS[1]])
    assert answer.info.notices == []
    assert answer.to_dict() == {**service, "references": REFS[:2]}
    again = Answer.from_dict(answer.to_dict())
    assert again.citations == answer.citations
    assert pickle.loads(pickle.dumps(answer)).citations == answer.citations


def test_answer_without_citations_keeps_the_mcp_shape() -> None:
    answer = Answer.from_dict({"answerText": "Plain.", "references": REFS[:1]})
    assert answer.citations == [] and answer.to_dict() == {"answerText": "Plain.", "references": REFS[:1]}


def test_bad_citations_become_one_notice_not_an_exception() -> None:
    answer = Answer.from_dict({"answerText": "abc", "citations": [cite(5, 1, 0), cite(0, 99, 0)], "references": REFS})
    assert [c.text for c in answer.citations] == ["abc"]
    assert len(answer.info.notices) == 1 and "citation 1 dropped" in answer.info.notices[0]

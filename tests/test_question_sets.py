"""The committed question sets are well formed, and the checker catches a hand-moved item or a repeated query."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.questions import validate

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "bench" / "questions"
CORPUS = ROOT.parent / "shared" / "corpus" / "corpus.jsonl"
EXTRA = ROOT.parent / "shared" / "corpus-extra" / "genkit-tensorflow.jsonl"

needs_corpus = pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is not beside the repository")


def item(query: str, kind: str = "keyword", source: str = "go", relevant: str = "documents/a") -> dict:
    """One question in the committed format."""
    return {"query": query, "relevant": [relevant], "kind": kind, "source": source}


def test_split_alternates_and_the_check_catches_a_moved_item(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pool = [item(f"question {n}", kind=("keyword", "howto")[n % 2]) for n in range(8)]
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"name": "documents/a"}) + "\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(pool), encoding="utf-8")
    assert validate.main(["--corpus", str(corpus), "--split", str(tmp_path / "pool.json")]) == 0
    dev = json.loads((tmp_path / "pool-dev.json").read_text(encoding="utf-8"))
    test = json.loads((tmp_path / "pool-test.json").read_text(encoding="utf-8"))
    assert len(dev) == len(test) == 4
    pair = [str(tmp_path / "pool-dev.json"), str(tmp_path / "pool-test.json")]
    assert validate.main(["--corpus", str(corpus), *pair[::-1]]) == 1  # halves swapped: not the rule's split
    (tmp_path / "pool-dev.json").write_text(json.dumps(dev[::-1]), encoding="utf-8")  # order inside is free
    assert validate.main(["--corpus", str(corpus), *pair]) == 0
    (tmp_path / "pool-dev.json").write_text(json.dumps(dev + test[:1]), encoding="utf-8")
    (tmp_path / "pool-test.json").write_text(json.dumps(test[1:]), encoding="utf-8")
    assert validate.main(["--corpus", str(corpus), *pair]) == 1
    assert "differ from a fresh split" in capsys.readouterr().err


def test_problems_names_each_fault() -> None:
    items = [item("Go modules"), item("go modules "), item("x", kind="guess"), item("y", relevant="documents/b")]
    found = "\n".join(validate.problems(items, {"documents/a"}))
    assert "twice" in found and "unknown kind 'guess'" in found and "'documents/b' is not in the corpus" in found


@needs_corpus
@pytest.mark.parametrize(
    "files",
    [
        ("corpus-a-dev.json", "corpus-a-test.json"),
        ("corpus-b-dev.json", "corpus-b-test.json"),
        ("corpus-c-holdout.json",),
        ("corpus-d.json",),
    ],
)
def test_committed_corpus_sets_are_valid(files: tuple[str, ...]) -> None:
    assert validate.main([str(QUESTIONS / name) for name in files]) == 0


@pytest.mark.skipif(not EXTRA.exists(), reason="../shared/corpus-extra is not beside the repository")
@pytest.mark.parametrize("name", ["extra-genkit-tensorflow.json", "extra-d.json"])
def test_committed_extra_sets_are_valid(name: str) -> None:
    assert validate.main(["--corpus", str(EXTRA), str(QUESTIONS / name)]) == 0

"""Validate and split the hand-written question sets of helper B.

Run from the repository root::

    python bench/questions/check_b.py                 # check the committed files
    python bench/questions/check_b.py --split POOL    # write the dev/test split of POOL once

Checks: every item has the four keys, a known kind and source, 1-3 relevant names that all exist in the
corpus file, no duplicate queries; the dev/test files are exactly the split rule applied to their union.
The corpus is read from ``../shared`` (next to the repository), never copied.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "corpus.jsonl"
EXTRA = SHARED / "corpus-extra" / "genkit-tensorflow.jsonl"
DEV, TEST, EXTRA_SET = HERE / "corpus-b-dev.json", HERE / "corpus-b-test.json", HERE / "extra-genkit-tensorflow.json"
KINDS = ("keyword", "howto", "paraphrase", "error", "identifier")
SPLIT_SOURCES = ("go", "firebase-js")
EXTRA_SOURCES = ("genkit", "tensorflow")


def corpus_names(path: Path) -> set[str]:
    """Return the set of document names in a JSON Lines corpus file."""
    with path.open(encoding="utf-8") as handle:
        return {json.loads(line)["name"] for line in handle if line.strip()}


def problems(items: list[dict], names: set[str], sources: tuple[str, ...]) -> list[str]:
    """List what is wrong with a question set (empty when it is valid)."""
    found, seen = [], set()
    for item in items:
        query = item.get("query", "")
        if set(item) != {"query", "relevant", "kind", "source"}:
            found.append(f"bad keys {sorted(item)}: {query!r}")
        if item.get("kind") not in KINDS or item.get("source") not in sources:
            found.append(f"bad kind/source {item.get('kind')}/{item.get('source')}: {query!r}")
        relevant = item.get("relevant", [])
        if not 1 <= len(relevant) <= 3 or len(set(relevant)) != len(relevant):
            found.append(f"need 1-3 distinct relevant names: {query!r}")
        found += [f"unknown name {name}: {query!r}" for name in relevant if name not in names]
        if query.strip().lower() in seen:
            found.append(f"duplicate query: {query!r}")
        seen.add(query.strip().lower())
    return found


def split(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """Split once: in each (source, kind) group, sort by sha1 of the query and alternate dev/test (dev first)."""
    dev, test = [], []
    for source in SPLIT_SOURCES:
        for kind in KINDS:
            group = [item for item in items if item["source"] == source and item["kind"] == kind]
            group.sort(key=lambda item: hashlib.sha1(item["query"].encode("utf-8")).hexdigest())
            dev += group[0::2]
            test += group[1::2]
    return dev, test


def counts(items: list[dict]) -> dict[str, dict[str, int]]:
    """Count questions per source and kind."""
    table: dict[str, dict[str, int]] = {}
    for item in items:
        row = table.setdefault(item["source"], dict.fromkeys(KINDS, 0))
        row[item["kind"]] += 1
    return table


def write(path: Path, items: list[dict]) -> None:
    """Write a question list as a 2-space indented UTF-8 JSON array."""
    path.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load(path: Path) -> list[dict]:
    """Read a question list."""
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """Check the committed sets, or split a pool into the dev/test files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", type=Path, help="pool of corpus questions to split into the dev/test files")
    args = parser.parse_args(argv)
    names = corpus_names(CORPUS)
    if args.split:
        pool = load(args.split)
        if errors := problems(pool, names, SPLIT_SOURCES):
            print("\n".join(errors))
            return 1
        dev, test = split(pool)
        write(DEV, dev)
        write(TEST, test)
    errors = []
    dev, test = load(DEV), load(TEST)
    errors += problems(dev + test, names, SPLIT_SOURCES)
    if (dev, test) != split(dev + test):
        errors.append("dev/test files do not follow the split rule")
    print("corpus dev", counts(dev), "\ncorpus test", counts(test))
    if EXTRA_SET.exists():
        extra = load(EXTRA_SET)
        errors += problems(extra, corpus_names(EXTRA), EXTRA_SOURCES)
        print("extra", counts(extra))
    print("\n".join(errors) or "all valid")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

"""Check and split a hand-written question set over the shared corpus (every set under ``bench/questions``).

Usage (from the repository root)::

    python bench/questions/validate.py --split ALL.json --prefix bench/questions/corpus-a
    python bench/questions/validate.py bench/questions/corpus-a-dev.json bench/questions/corpus-a-test.json
    python bench/questions/validate.py bench/questions/corpus-c-holdout.json
    python bench/questions/validate.py --corpus ../shared/corpus-extra/genkit-tensorflow.jsonl \
        bench/questions/extra-genkit-tensorflow.json

The first form writes ``<prefix>-dev.json`` and ``<prefix>-test.json`` from one list; the second checks
a dev/test pair: every item well formed, every relevant name present in ``corpus.jsonl``, no query twice
(case aside), and re-splitting the union gives the same halves (so nobody moved an item by hand; the order
inside a half is not checked). One file alone (a held-out set, not split) gets the item checks only.

The split rule: group by (source, kind), sort each group by the SHA-1 of the query's UTF-8 text, and
alternate dev/test starting with dev. It reads only the corpus's page names, never a ranking.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "corpus.jsonl"
KINDS = ("keyword", "howto", "paraphrase", "error", "identifier")
KEYS = {"query", "relevant", "kind", "source"}


def corpus_names(path: Path) -> set[str]:
    """Return the document names (``documents/...``) of every page in a JSON Lines corpus."""
    with path.open(encoding="utf-8") as handle:
        return {json.loads(line)["name"] for line in handle if line.strip()}


def problems(items: list[dict], names: set[str]) -> list[str]:
    """List what is wrong with a question list (empty when it is fine)."""
    found = []
    seen: set[str] = set()
    for number, item in enumerate(items):
        where = f"item {number} ({item.get('query', '?')!r})"
        if set(item) != KEYS:
            found.append(f"{where}: keys {sorted(item)} instead of {sorted(KEYS)}")
            continue
        if item["kind"] not in KINDS:
            found.append(f"{where}: unknown kind {item['kind']!r}")
        if not 1 <= len(item["relevant"]) <= 3:
            found.append(f"{where}: {len(item['relevant'])} relevant pages (want 1-3)")
        if len(set(item["relevant"])) != len(item["relevant"]):
            found.append(f"{where}: a relevant page is listed twice")
        found.extend(f"{where}: {name!r} is not in the corpus" for name in item["relevant"] if name not in names)
        query = item["query"].strip().lower()
        if query in seen:
            found.append(f"{where}: the same query appears twice")
        seen.add(query)
    return found


def query_hash(item: dict) -> str:
    """SHA-1 of the query text, the sort key inside each (source, kind) group."""
    return hashlib.sha1(item["query"].encode("utf-8")).hexdigest()


def split(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """Split deterministically into (dev, test): per (source, kind), by query hash, alternating."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for item in items:
        groups.setdefault((item["source"], item["kind"]), []).append(item)
    dev, test = [], []
    for key in sorted(groups):
        for position, item in enumerate(sorted(groups[key], key=query_hash)):
            (dev if position % 2 == 0 else test).append(item)
    return dev, test


def same_halves(halves: tuple[list[dict], list[dict]], other: tuple[list[dict], list[dict]]) -> bool:
    """Whether two (dev, test) pairs hold the same queries in each half, in any order."""
    queries = [[sorted(i["query"] for i in half) for half in pair] for pair in (halves, other)]
    return queries[0] == queries[1]


def counts_table(dev: list[dict], test: list[dict]) -> str:
    """A Markdown table of question counts per source and kind, dev/test."""
    halves = (("dev", dev), ("test", test))
    tally = Counter((item["source"], item["kind"], half) for half, part in halves for item in part)
    sources = sorted({source for source, _, _ in tally})
    lines = ["| source | " + " | ".join(KINDS) + " | total |", "|---" * (len(KINDS) + 2) + "|"]
    for source in sources:
        cells = [f"{tally[source, kind, 'dev']}/{tally[source, kind, 'test']}" for kind in KINDS]
        total_dev = sum(tally[source, kind, "dev"] for kind in KINDS)
        total_test = sum(tally[source, kind, "test"] for kind in KINDS)
        lines.append(f"| {source} | " + " | ".join(cells) + f" | {total_dev}/{total_test} |")
    return "\n".join(lines)


def write(path: Path, items: list[dict]) -> None:
    """Write a question list as a UTF-8 JSON array with 2-space indent."""
    path.write_text(json.dumps(items, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="a dev file and a test file, or one held-out file")
    parser.add_argument("--split", type=Path, help="one question list to split into dev and test")
    parser.add_argument("--prefix", type=Path, help="--split writes PREFIX-dev.json, PREFIX-test.json")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus.jsonl with the page names")
    args = parser.parse_args(argv)
    names = corpus_names(args.corpus)
    if args.split:
        items = json.loads(args.split.read_text(encoding="utf-8"))
        found = problems(items, names)
        if found:
            print("\n".join(found), file=sys.stderr)
            return 1
        dev, test = split(items)
        prefix = args.prefix or args.split.with_suffix("")
        write(Path(f"{prefix}-dev.json"), dev)
        write(Path(f"{prefix}-test.json"), test)
    else:
        if len(args.files) not in (1, 2):
            parser.error("give a dev file and a test file, one held-out file, or --split")
        sets = [json.loads(path.read_text(encoding="utf-8")) for path in args.files]
        dev, test = sets if len(sets) == 2 else (sets[0], [])
        found = problems(dev + test, names)
        if len(sets) == 2 and not same_halves(split(dev + test), (dev, test)):
            found.append("the halves differ from a fresh split of their union")
        if found:
            print("\n".join(found), file=sys.stderr)
            return 1
    sizes = f"{len(dev)} dev + {len(test)} test" if test else f"{len(dev)}"
    print(f"{sizes} questions, all relevant pages found\n")
    print(counts_table(dev, test))
    return 0


if __name__ == "__main__":
    sys.exit(main())

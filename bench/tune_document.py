"""Document-side changes to what the ranker counts, judged by leave-one-set-out cross-validation as ``tune_ranking``
judges the settings (tried 2026-12-01; none shipped: see ``bench/README.md``).

``python -m bench.tune_document --index PATH [--extra-index PATH]`` (the indexes of ``tune_ranking``, built when
empty). Each variant rewrites every page's text the same way before its terms are counted (:func:`variants`),
computed from the index's own pages only (nothing keys on a page, site or question), builds a ranker with the
shipped settings, scores every question of the 11 folds lexically and fused with the dense scores (share 0.4),
and is compared with the shipped ranking: pooled, paired bootstrap 95% interval of the MRR@5 difference; then
one set is left out at a time, the variant that scores best on the other sets (``tune_ranking.objective``) is
scored on it, and the held-out figures are printed beside the shipped ranking and bm25s, per kind.

Variants: fence info strings (```` ```typescript ````) dropped from the body; a lead (the first prose paragraph)
as the description of pages without one; lines of the body found on at least ``T`` pages of the index dropped
(navigation, table headers, "Signature:", lint-rule boilerplate); fenced code dropped; a prior against pages that
are mostly link text (score × (1 − α × share of the page's words inside link texts)); and their combinations.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_index import corpus_path
from bench.bench_quality import KINDS
from bench.tune_ranking import _pools, objective

__all__ = ["main", "variants"]

DENSE_SHARE = 0.4
_FENCE_INFO = re.compile(r"^( {0,3}(?:```|~~~))[^\n]*$", re.MULTILINE)
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
Page = tuple[str, str, str, str]  # title, uri, description, content
Rewrite = Callable[[Page], Page]


def _line_key(line: str) -> str:
    return " ".join(line.lower().split())


def _repeated_lines(pages: list[Page], least: int) -> Rewrite:
    """Drop the body lines (over 3 characters) that at least ``least`` pages of the index hold."""
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({key for key in map(_line_key, page[3].split("\n")) if len(key) > 3})

    def rewrite(page: Page) -> Page:
        kept = [line for line in page[3].split("\n") if counts[_line_key(line)] < least or len(_line_key(line)) <= 3]
        return page[0], page[1], page[2], "\n".join(kept)

    return rewrite


def _fence_info(page: Page) -> Page:
    return page[0], page[1], page[2], _FENCE_INFO.sub(r"\1", page[3])


def _lead(page: Page) -> Page:
    """The first prose paragraph (not a heading, list, table, quote, HTML or code) as a missing description."""
    if page[2].strip():
        return page
    for paragraph in re.split(r"\n\s*\n", _FENCED.sub("", page[3])):
        text = paragraph.strip()
        if len(text) >= 40 and text[0] not in "#<|!-*>=:[`" and not text[:2].isdigit():
            return page[0], page[1], text[:600], page[3]
    return page


def _no_code(page: Page) -> Page:
    return page[0], page[1], page[2], _FENCED.sub("", page[3])


def link_share(pages: list[Page]) -> np.ndarray:
    """Each page's share of words that sit inside link texts (``[text](url)``)."""
    shares = []
    for page in pages:
        words = max(len(page[3].split()), 1)
        shares.append(min(sum(len(m.group(1).split()) for m in _LINK.finditer(page[3])) / words, 1.0))
    return np.array(shares, dtype=np.float32)


def variants(pages: list[Page]) -> dict[str, tuple[list[Rewrite], float]]:
    """Name -> (rewrites applied in order, link prior's α) for one index's pages."""
    repeated = {least: _repeated_lines(pages, least) for least in (3, 5, 10, 25)}
    found: dict[str, tuple[list[Rewrite], float]] = {"shipped": ([], 0.0)}
    found.update(
        {"fence info dropped": ([_fence_info], 0.0), "lead": ([_lead], 0.0), "code dropped": ([_no_code], 0.0)}
    )
    found.update({f"lines on {least}+ pages dropped": ([rewrite], 0.0) for least, rewrite in repeated.items()})
    found.update({f"link prior {alpha}": ([], alpha) for alpha in (0.3, 0.5, 0.7)})
    for alpha in (0.0, 0.5, 0.7):
        tail = f" + link prior {alpha}" if alpha else ""
        found[f"fence info + lead{tail}"] = ([_fence_info, _lead], alpha)
        found[f"lines 5+ + fence info + lead{tail}"] = ([repeated[5], _fence_info, _lead], alpha)
    return found


def _scores(pool: Any, rewrites: list[Rewrite], pages: list[Page], alpha: float, shares: np.ndarray) -> np.ndarray:
    """The pool's per-question metrics (lexical rr, recall; fused rr, recall) with the pages rewritten."""
    from devknow_jupyter.local.ranker import LexicalRanker, page_terms

    ranker = pool.base
    if rewrites:
        rewritten = []
        for page in pages:
            for rewrite in rewrites:
                page = rewrite(page)
            rewritten.append(page)
        terms = ((int(doc), page_terms(*page)) for doc, page in zip(pool.base.doc_ids, rewritten, strict=True))
        ranker = LexicalRanker.build(terms, pool.base.settings)
    pool.base, shipped = ranker, pool.base
    try:
        lexical = pool.lexical({})
    finally:
        pool.base = shipped
    if alpha:
        lexical = lexical * (1.0 - alpha * shares)[None, :]
        lexical /= np.maximum(lexical.max(axis=1, keepdims=True), 1e-9)
    rr, recall = pool.metrics(lexical)
    fused_rr, fused_recall = pool.metrics((1 - DENSE_SHARE) * lexical + DENSE_SHARE * pool.dense)
    return np.stack([rr, recall, fused_rr, fused_recall])


def _bootstrap(difference: np.ndarray, rounds: int = 5000) -> tuple[float, float]:
    """The paired bootstrap 95% interval of a mean difference over questions."""
    picks = np.random.default_rng(0).integers(0, len(difference), (rounds, len(difference)))
    means = difference[picks].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main(argv: list[str] | None = None) -> int:
    """Score every variant, compare each with the shipped ranking, cross-validate the choice among them."""
    parser = argparse.ArgumentParser(description="Document-side variants by leave-one-set-out cross-validation.")
    parser.add_argument("--index", type=Path, required=True, help="an index of ../shared/corpus (built when empty)")
    parser.add_argument("--extra-index", type=Path, default=None, help="an index of the Genkit + TensorFlow pages")
    args = parser.parse_args(argv)
    from devknow_jupyter.local.index import LocalIndex

    args.lexical = False  # the pools' page vectors are fused with every variant
    args.extra_index = args.extra_index or args.index.with_name(args.index.stem + "-extra.sqlite3")
    if corpus_path() is None:
        print("tune_document: ../shared/corpus is not present")
        return 0
    pairs = _pools(args, corpus_path())
    pools = [pool for pool, _ in pairs]
    if any(pool.dense is None for pool in pools):
        print("tune_document: needs the semantic extra (DEVKNOW_SEMANTIC=1)")
        return 1
    results: dict[str, list[np.ndarray]] = {}
    for pool, path in zip(pools, (args.index, args.extra_index), strict=False):
        with LocalIndex(path, semantic=False) as index:
            rows = {
                row[0]: row[1:]
                for row in index.store.db.execute("SELECT id, title, uri, description, content FROM documents")
            }
        pages = [rows[int(doc_id)] for doc_id in pool.base.doc_ids]
        shares = link_share(pages)
        for name, (rewrites, alpha) in variants(pages).items():
            results.setdefault(name, []).append(_scores(pool, rewrites, pages, alpha, shares))
    table = {name: np.concatenate(parts, axis=1) for name, parts in results.items()}
    questions = [item for pool in pools for item in pool.questions]
    groups = np.array([item["group"] for item in questions])
    kinds = np.array([item["kind"] for item in questions])
    shipped = table["shipped"]
    bm25s = np.concatenate([np.stack(pool.baseline(pages)) for pool, pages in pairs], axis=1)
    print(
        f"{len(questions)} questions; pooled MRR@5 / recall@5 (shipped: lexical {shipped[0].mean():.4f} /"
        f" {shipped[1].mean():.4f}, + semantic {shipped[2].mean():.4f} / {shipped[3].mean():.4f});"
        " the MRR@5 difference and its 95% interval"
    )
    for name, scores in table.items():
        cells = []
        for mode, column in (("lexical", 0), ("+ semantic", 2)):
            low, high = _bootstrap(scores[column] - shipped[column])
            cells.append(
                f"{mode} {scores[column].mean():.4f} / {scores[column + 1].mean():.4f}"
                f" ({scores[column].mean() - shipped[column].mean():+.4f} [{low:+.4f}, {high:+.4f}])"
            )
        print(f"  {name:42s} {'  '.join(cells)}")
    names = list(table)
    held = np.zeros((4, len(questions)))
    picked: Counter[str] = Counter()
    for fold in sorted(set(groups)):
        test = groups == fold
        for column in (0, 2):  # each mode picks its own variant on the other folds
            best = max(
                names, key=lambda n: objective(table[n][column, ~test].mean(), table[n][column + 1, ~test].mean())
            )
            picked[best] += 1
            held[column : column + 2, test] = table[best][column : column + 2, test]
    print(
        "\nheld out, one set left out at a time (MRR@5 / recall@5):\n| kind | n | shipped, lexical |"
        " variants, lexical | shipped, + semantic | variants, + semantic | bm25s |"
    )
    for kind in ("all", *KINDS, "mixed"):
        mask = np.ones(len(questions), bool) if kind == "all" else kinds == kind
        if mask.any():
            pairs_shown = [(array, c) for c in (0, 2) for array in (shipped, held)] + [(bm25s, 0)]
            cells = [f"{array[c][mask].mean():.3f} / {array[c + 1][mask].mean():.3f}" for array, c in pairs_shown]
            print(f"| {kind} | {int(mask.sum())} | {' | '.join(cells)} |")
    for column, mode in ((0, "lexical"), (2, "+ semantic")):
        low, high = _bootstrap(held[column] - shipped[column])
        gain = held[column].mean() - shipped[column].mean()
        print(f"{mode}: held out {gain:+.4f} MRR@5 over shipped, 95% interval [{low:+.4f}, {high:+.4f}]")
    print("picked (fold × mode):", dict(picked.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

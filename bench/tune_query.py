"""Query-side ideas for the local ranking, judged by leave-one-set-out cross-validation over tune_ranking's folds.

Nothing here is shipped (the figures and the verdict are in ``bench/README.md``): this is the command that measured
them. ``python -m bench.tune_query --index PATH [--extra-index PATH] [--markdown]`` (the indexes of
``tune_ranking``; built when empty; ``DEVKNOW_SEMANTIC=1`` with the semantic extra for the fused column):

1. **message rewrites** and **query-term reweightings** (:data:`REWEIGHTINGS`): the shipped
   :func:`~devknow_jupyter.local.query.rewrite_message` beside variants of it (no rewrite at all; stack frames
   dropped, as shipped, or kept minus their marker and location; frames and a path's file name kept; the boilerplate
   words kept; question-shaped text never rewritten), and the shipped query's terms weighted by how often they are
   typed, or an identifier's parts sharing its weight. A variant has no parameter, so its score on every question
   is already held out; each is scored exactly (the whole ranking, every page).
2. **learned query-term weights**: each query term's weight in the BM25F sum is multiplied by
   ``exp(theta . features)``, over query-relative features (:data:`FEATURES`: idf relative to the query's rarest
   term, document-frequency share, word pair, whole identifier, part of one, number, has digits, length, inside
   quotes or backticks, position, query length, share of the first pass's 10 best pages holding it in their title,
   pasted message, and two products). ``theta`` is fitted by a listwise softmax loss (the relevant pages' share of
   the softmax over the 300 best pages of the first pass, and the 50 best dense ones) with L2, on ten folds; the
   eleventh is scored with it. Scores of one fixed weighting are exact over those candidates.

Beside each: the shipped ranking on the same questions and bm25s, per kind and per fold, and the paired bootstrap
interval (95%, 2,000 resamples) of the MRR@5 difference from the shipped ranking.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_index import corpus_path
from bench.bench_quality import KINDS, K
from bench.tune_ranking import _pools

__all__ = ["FEATURES", "REWEIGHTINGS", "features", "fit", "main", "rewrites"]

#: The learned weighting's features of one query term (see :func:`features`).
FEATURES = (
    "bias", "idf / query's max", "log df share", "word pair", "whole identifier", "part of one", "number",
    "has digits", "length", "quoted", "position", "query length", "title of first 10", "message", "message × idf",
    "idf × query length",
)
CANDIDATES = 300
DENSE_SHARE = 0.4


# -- message rewrites ---------------------------------------------------------------------------------


def _rewrite(text: str, *, frames: str = "drop", file_names: bool = False, boilerplate: bool = True,
             gate: Callable[[str], bool] | None = None) -> str:
    """A variant of ``rewrite_message``: frames dropped or kept (minus marker and location), file names kept or not,
    boilerplate words dropped or not; ``gate`` decides which texts are messages."""
    from devknow_jupyter.local import query as q

    if not (gate or q.looks_like_message)(text):
        return text
    if frames == "drop":
        text = q._STACK_FRAME.sub(" ", text)
    else:
        text = re.sub(r"^(\s*)(?:at\s+(?=\S)|#\d+\s+)", r"\1", text, flags=re.MULTILINE)
        text = re.sub(r"^\s*(?:File \".*|\.\.\. \d+ more)$", " ", text, flags=re.MULTILINE)
        text = re.sub(r"\+0x[0-9a-fA-F]+\b", " ", text)

    def path(match: re.Match[str]) -> str:
        name = re.split(r"[/\\]", re.sub(r"(?::\d+)+$", "", match.group(0)).rstrip("/\\"))[-1]
        return f" {name} " if file_names and "." in name.strip(".") else " "

    text = q._LINE_NUMBERS.sub(" ", q._PATH.sub(path, text))
    if boilerplate:
        text = "".join(w for w in re.split(r"(\s+)", text) if w.strip(":.,;!()[]").lower() not in q._BOILERPLATE)
    return " ".join(text.split()) or text


_STRONG = re.compile(r"\w+(?:Error|Exception)\b|\w+\.\w+:\d+|^\s*(?:at |#\d+ |File \")|traceback|^\S+:", re.M | re.I)
_QUESTION = re.compile(r"\s*(?:how|what|why|when|where|which|who|can|could|should|is|are|do|does|if|i|my)\b", re.I)


def _not_questions(text: str) -> bool:
    """A message when it has a strong sign (a typed error name, a frame, ``path:line``), or weak signs only and
    does not read as a question."""
    from devknow_jupyter.local.query import looks_like_message

    if not looks_like_message(text):
        return False
    return bool(_STRONG.search(text)) or not (_QUESTION.match(text) or text.rstrip().endswith("?"))


def rewrites() -> dict[str, Callable[[str], str]]:
    """The rewrites compared (the first is the shipped one)."""
    from devknow_jupyter.local.query import rewrite_message

    return {
        "shipped": rewrite_message,
        "no rewrite": lambda text: text,
        "frames dropped": partial(_rewrite, frames="drop"),
        "frames kept": partial(_rewrite, frames="keep"),
        "frames + file names kept": partial(_rewrite, frames="keep", file_names=True),
        "boilerplate kept": partial(_rewrite, boilerplate=False),
        "questions not rewritten": partial(_rewrite, gate=_not_questions),
    }


def _parser(rewrite: Callable[[str], str]) -> Callable[[str], Any]:
    """``ranking_query`` with another rewrite."""
    from devknow_jupyter.local import query

    def parse(text: str) -> Any:
        saved = query.rewrite_message
        query.rewrite_message = rewrite
        try:
            return query.ranking_query(text)
        finally:
            query.rewrite_message = saved

    return parse


def _term_frequency(power: float) -> Callable[..., dict[str, float]]:
    """A term typed ``n`` times weighs ``n ** power`` times more (the shipped ranking counts it once)."""
    from collections import Counter

    from devknow_jupyter.local.tokens import PAIR_JOINER, tokens

    def weights(item: dict[str, Any], query: Any, base: dict[str, float]) -> dict[str, float]:
        counts = Counter(tokens(query.text))
        return {t: w * (1.0 if PAIR_JOINER in t else counts.get(t, 1) ** power) for t, w in base.items()}

    return weights


def _shared_parts(power: float) -> Callable[..., dict[str, float]]:
    """The word parts of a whole identifier weigh ``1 / parts ** power`` (unless also typed alone)."""
    from devknow_jupyter.local.tokens import _RUN, split_identifier

    def weights(item: dict[str, Any], query: Any, base: dict[str, float]) -> dict[str, float]:
        alone, share = set(), {}
        for run in _RUN.findall(query.text):
            parts = split_identifier(run)
            if len(parts) > 1 or not run.isalnum():
                for part in parts:
                    share[part] = max(share.get(part, 0.0), 1.0 / len(parts) ** power)
            else:
                alone.add(run.lower())
        return {t: w * share[t] if t in share and t not in alone else w for t, w in base.items()}

    return weights


#: Reweightings of the shipped query's terms compared (no parameter fitted: every score is held out).
REWEIGHTINGS = {
    "term frequency ^0.5": _term_frequency(0.5),
    "term frequency ^1": _term_frequency(1.0),
    "identifier parts share, 1/sqrt(n)": _shared_parts(0.5),
    "identifier parts share, 1/n": _shared_parts(1.0),
}


class Corpus:
    """One pool (tune_ranking's questions over one set of pages), its page vectors and bm25s's scores."""

    def __init__(self, pool: Any, pages: Path, dense: tuple[Any, np.ndarray] | None) -> None:
        self.pool, self.dense = pool, dense
        self.bm25s = pool.baseline(pages)

    def scored(self, parse: Callable[[str], Any], term_weights: Callable[..., dict[str, float]] | None = None):
        """(lexical rr, recall), (fused rr, recall) per question, with ``parse`` and optional ``term_weights``."""
        from devknow_jupyter.local.ranker import query_weights

        pool, ranker = self.pool, self.pool.base
        parsed = [parse(item["query"]) for item in pool.questions]
        lexical = np.zeros((len(parsed), len(pool.names)), dtype=np.float32)
        for row, (item, query) in enumerate(zip(pool.questions, parsed, strict=True)):
            weights = query_weights(query.tokens, ranker.settings, query.pairs)
            if term_weights is not None:
                weights = term_weights(item, query, weights)
            lexical[row] = ranker.scores(weights)
        top = lexical.max(axis=1, keepdims=True)
        lexical = np.where(top > 0, lexical / np.maximum(top, 1e-12), lexical)
        out = [pool.metrics(lexical)]
        if self.dense is not None:
            model, vectors = self.dense
            similarity = model.embed([query.text for query in parsed]) @ vectors.T
            low, high = similarity.min(axis=1, keepdims=True), similarity.max(axis=1, keepdims=True)
            dense = (similarity - low) / np.maximum(high - low, 1e-9)
            out.append(pool.metrics((1 - DENSE_SHARE) * lexical + DENSE_SHARE * dense))
        return out


# -- learned query-term weights -------------------------------------------------------------------------

_QUOTED = re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|`[^`\n]{1,80}`")


def features(text: str, terms: list[str], df: np.ndarray, pages: int, title_top: np.ndarray, message: bool):
    """The :data:`FEATURES` of each known query term (``df``: its page count; ``title_top``: the share of the first
    pass's 10 best pages holding it in their title), one row per term."""
    from devknow_jupyter.local.tokens import PAIR_JOINER, split_identifier

    idf = np.log1p((pages - df + 0.5) / (df + 0.5))
    relative = idf / max(float(idf.max(initial=0.0)), 1e-9)
    lowered = text.lower()
    quoted = " ".join(_QUOTED.findall(text)).lower()
    wholes = [term for term in terms if PAIR_JOINER not in term and not term.isalnum()]
    parts = {part for whole in wholes for part in split_identifier(whole)}
    length = np.log(sum(PAIR_JOINER not in term for term in terms) + 1) / 3
    rows = []
    for i, term in enumerate(terms):
        pair = PAIR_JOINER in term
        at = lowered.find(term.split(PAIR_JOINER)[0])
        rows.append([
            1.0, relative[i], np.log(df[i] / pages + 1e-4) / 9.2, pair, not pair and not term.isalnum(),
            not pair and term.isalnum() and term in parts, term.isdigit(),
            any(c.isdigit() for c in term) and not term.isdigit(), min(len(term), 30) / 10,
            bool(quoted) and not pair and term in quoted, at / max(len(lowered), 1) if at >= 0 else 1.0, length,
            title_top[i], message, message * relative[i], relative[i] * length,
        ])
    return np.array(rows, dtype=np.float64).reshape(len(terms), len(FEATURES))


class Candidates:
    """Per question: each known query term's BM25F part over the first pass's best pages, and its features."""

    def __init__(self, corpus: Corpus, parse: Callable[[str], Any]) -> None:
        from devknow_jupyter.local.query import looks_like_message
        from devknow_jupyter.local.ranker import query_weights

        pool, ranker = corpus.pool, corpus.pool.base
        pages = len(ranker.doc_ids)
        self.items = []
        for item, relevant in zip(pool.questions, pool.relevant, strict=True):
            query = parse(item["query"])
            weights = query_weights(query.tokens, ranker.settings, query.pairs)
            known = [(term, slot) for term, slot in zip(weights, ranker.slots(list(weights)), strict=True) if slot]
            parts = np.zeros((len(known), pages), dtype=np.float32)
            titled = np.zeros((len(known), pages), dtype=bool)
            for row, (_, slot) in enumerate(known):
                start, end = ranker.offsets[slot], ranker.offsets[slot + 1]
                parts[row, ranker.postings[start:end]] = ranker.impacts[start:end]
                titled[row, ranker.postings[start:end]] = ranker.counts[start:end, 0] > 0
            base = np.array([weights[term] for term, _ in known], dtype=np.float32)
            first = base @ parts if len(known) else np.zeros(pages, dtype=np.float32)
            top = ranker.top(first, 10)
            df = np.array([ranker.offsets[s + 1] - ranker.offsets[s] for _, s in known], dtype=np.float64)
            shares = titled[:, top].mean(axis=1) if len(top) else np.zeros(len(known))
            chosen = list(np.argsort(-first, kind="stable")[:CANDIDATES]) + sorted(relevant)
            if corpus.dense is not None:
                model, vectors = corpus.dense
                similarity = vectors @ model.embed([query.text])[0]
                chosen += list(np.argsort(-similarity, kind="stable")[:50])
                dense = (similarity - similarity.min()) / max(float(similarity.max() - similarity.min()), 1e-9)
            else:
                dense = np.zeros(pages)
            chosen = np.array(list(dict.fromkeys(int(c) for c in chosen)))
            message = looks_like_message(item["query"])
            self.items.append({
                "parts": parts[:, chosen], "base": base, "relevant": np.isin(chosen, list(relevant)),
                "total": len(item["relevant"]), "dense": dense[chosen], "top": float(first.max(initial=0.0)),
                "features": features(item["query"], [t for t, _ in known], df, pages, shares, message),
            })


def _metrics(scores: np.ndarray, relevant: np.ndarray, total: int) -> tuple[float, float]:
    order = [i for i in np.argsort(-scores, kind="stable")[:K] if scores[i] > 0]
    hits = [rank for rank, i in enumerate(order, 1) if relevant[i]]
    return (1.0 / hits[0] if hits else 0.0), len(hits) / max(total, 1)


def evaluate(items: list[dict[str, Any]], thetas: list[np.ndarray]) -> tuple[tuple, tuple]:
    """(lexical rr, recall), (fused rr, recall) of each question with its own ``theta``."""
    out = np.zeros((4, len(items)))
    for i, (item, theta) in enumerate(zip(items, thetas, strict=True)):
        weights = item["base"] * np.exp(item["features"] @ theta) if len(item["base"]) else item["base"]
        lexical = weights @ item["parts"] if len(weights) else np.zeros(len(item["dense"]))
        top = float(lexical.max(initial=0.0))
        fused = (1 - DENSE_SHARE) * (lexical / top if top > 0 else lexical) + DENSE_SHARE * item["dense"]
        out[0, i], out[1, i] = _metrics(lexical, item["relevant"], item["total"])
        out[2, i], out[3, i] = _metrics(fused, item["relevant"], item["total"])
    return (out[0], out[1]), (out[2], out[3])


def fit(items: list[dict[str, Any]], l2: float = 0.01, temperature: float = 10.0, steps: int = 300) -> np.ndarray:
    """``theta`` maximising the relevant pages' softmax share (lexical scores, each question's first-pass best
    at 1), with L2 on all but the bias; Adam, ``steps`` full-batch steps."""
    used = [it for it in items if it["relevant"].any() and len(it["base"]) and it["top"] > 0]
    rows, cols, values, starts, relevant, feats, base = [], [], [], [], [], [], []
    row0 = col0 = 0
    for item in used:
        parts = item["parts"] / item["top"]
        term, page = np.nonzero(parts)
        rows.append(page + row0)
        cols.append(term + col0)
        values.append(parts[term, page])
        starts.append(row0)
        relevant.append(item["relevant"])
        feats.append(item["features"])
        base.append(item["base"])
        row0, col0 = row0 + parts.shape[1], col0 + parts.shape[0]
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(values)
    starts_a, rel, F, w0 = np.array(starts), np.concatenate(relevant), np.vstack(feats), np.concatenate(base)
    segment = np.repeat(np.arange(len(starts_a)), np.diff(np.append(starts_a, row0)))
    scale = l2 * len(used) / 100
    theta, m, s = np.zeros(len(FEATURES)), np.zeros(len(FEATURES)), np.zeros(len(FEATURES))
    for step in range(1, steps + 1):
        w = w0 * np.exp(F @ theta)
        z = temperature * np.bincount(r, v * w[c], minlength=row0)
        e = np.exp(z - np.maximum.reduceat(z, starts_a)[segment])
        total, hit = np.add.reduceat(e, starts_a), np.add.reduceat(e * rel, starts_a)
        dz = e / total[segment] - e * rel / hit[segment]
        grad = F.T @ (temperature * np.bincount(c, v * dz[r], minlength=col0) * w)
        grad[1:] += 2 * scale * theta[1:]
        m, s = 0.9 * m + 0.1 * grad, 0.999 * s + 0.001 * grad * grad
        theta -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(s / (1 - 0.999**step)) + 1e-8)
    return theta


# -- tables ---------------------------------------------------------------------------------------------


def _bootstrap(new: np.ndarray, old: np.ndarray, rounds: int = 2000) -> str:
    diff = new - old
    means = diff[np.random.default_rng(0).integers(0, len(diff), (rounds, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return f"{diff.mean():+.4f} [{low:+.4f}, {high:+.4f}], {int((diff > 0).sum())} up, {int((diff < 0).sum())} down"


def _table(rows: dict[str, tuple], labels: np.ndarray, kinds: np.ndarray, markdown: bool) -> None:
    names = list(rows)
    lines = [("all", np.ones(len(labels), bool))] + [(kind, kinds == kind) for kind in (*KINDS, "mixed")]
    lines += [(f"fold {fold}", labels == fold) for fold in sorted(set(labels))]
    if markdown:
        print("| | n | " + " | ".join(names) + " |\n|---|---:|" + "---:|" * len(names))
    else:
        print("  columns: " + "; ".join(names))
    for name, mask in lines:
        if not mask.any():
            continue
        cells = [f"{rows[n][0][mask].mean():.3f} / {rows[n][1][mask].mean():.3f}" for n in names]
        if markdown:
            print(f"| {name} | {int(mask.sum())} | " + " | ".join(cells) + " |")
        else:
            print(f"  {name:12s} {int(mask.sum()):4d}  " + "  ".join(cells))


def main(argv: list[str] | None = None) -> int:
    """Score the rewrites and the learned term weights, held out one set at a time; print the tables."""
    parser = argparse.ArgumentParser(description="Query-side ideas, by leave-one-set-out cross-validation.")
    parser.add_argument("--index", type=Path, required=True, help="an index of ../shared/corpus (built when empty)")
    parser.add_argument("--extra-index", type=Path, default=None, help="an index of the Genkit + TensorFlow pages")
    parser.add_argument("--rewrite", default="frames kept", help="the rewrite the learned weights are fitted over")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    from devknow_jupyter.local.index import LocalIndex

    if corpus_path() is None:
        print("tune_query: ../shared/corpus is not present")
        return 0
    args.extra_index = args.extra_index or args.index.with_name(args.index.stem + "-extra.sqlite3")
    args.lexical = False
    corpora = []
    for (pool, pages), path in zip(_pools(args, corpus_path()), (args.index, args.extra_index), strict=False):
        with LocalIndex(path) as index:
            corpora.append(Corpus(pool, pages, index.snapshot.current().dense))
    semantic = all(corpus.dense is not None for corpus in corpora)
    questions = [item for corpus in corpora for item in corpus.pool.questions]
    labels = np.array([item["group"] for item in questions])
    kinds = np.array([item["kind"] for item in questions])
    bm25s = tuple(np.concatenate([corpus.bm25s[i] for corpus in corpora]) for i in (0, 1))
    modes = ("lexical", "+ semantic") if semantic else ("lexical",)

    def joined(parts: list[list[tuple]]) -> list[tuple]:
        return [tuple(np.concatenate([p[m][i] for p in parts]) for i in (0, 1)) for m in range(len(modes))]

    scored = {name: joined([c.scored(_parser(rw)) for c in corpora]) for name, rw in rewrites().items()}
    from devknow_jupyter.local.query import ranking_query

    reweighted = {name: joined([c.scored(ranking_query, f) for c in corpora]) for name, f in REWEIGHTINGS.items()}
    shipped = scored["shipped"]
    print(f"{len(questions)} questions, {len(set(labels))} folds; MRR@{K} / recall@{K}")
    for m, mode in enumerate(modes):
        print(f"\n## message rewrites, {mode} (no parameters: every score is held out)")
        _table({**{name: rows[m] for name, rows in scored.items()}, "bm25s": bm25s}, labels, kinds, args.markdown)
        for name, rows in scored.items():
            if name != "shipped":
                print(f"  {name} vs shipped: {_bootstrap(rows[m][0], shipped[m][0])}")

    for m, mode in enumerate(modes):
        print(f"\n## query-term reweightings, {mode} (no parameters: every score is held out)")
        _table({"shipped": shipped[m], **{n: rows[m] for n, rows in reweighted.items()}}, labels, kinds, args.markdown)
        for name, rows in reweighted.items():
            print(f"  {name} vs shipped: {_bootstrap(rows[m][0], shipped[m][0])}")

    items = [it for c in corpora for it in Candidates(c, _parser(rewrites()[args.rewrite])).items]
    thetas: list[np.ndarray] = [np.zeros(len(FEATURES))] * len(items)
    for fold in sorted(set(labels)):
        theta = fit([it for it, label in zip(items, labels, strict=True) if label != fold])
        thetas = [theta if label == fold else old for old, label in zip(thetas, labels, strict=True)]
        print(f"  fold {fold:8s} theta " + " ".join(f"{x:+.2f}" for x in theta), flush=True)
    held = evaluate(items, thetas)
    for m, mode in enumerate(modes):
        print(f"\n## learned term weights over '{args.rewrite}', held out, {mode}")
        rows = {"shipped": shipped[m], args.rewrite: scored[args.rewrite][m], "+ learned weights": held[m]}
        _table({**rows, "bm25s": bm25s}, labels, kinds, args.markdown)
        print(f"  + learned weights vs shipped: {_bootstrap(held[m][0], shipped[m][0])}")
        print(f"  recall@{K} vs shipped: {held[m][1].mean() - shipped[m][1].mean():+.4f}")
    whole = fit(items)
    print("\non all questions: theta " + ", ".join(f"{n} {x:+.2f}" for n, x in zip(FEATURES, whole, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

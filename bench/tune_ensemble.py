"""An ensemble of lexical scoring models over the index's stored term counts, fused, judged by leave-one-set-out CV.

Different retrieval model families make different mistakes; this bench asks whether fusing them beats the
shipped BM25F alone on the 11 folds of :data:`bench.tune_ranking.GROUPS` (1,208 questions), lexical and with the
semantic extra. Every model is computed from the posting arrays the index already stores (no second index):

- ``bm25f``: the shipped ranking (field-weighted BM25, identifier-aware tokens, word pairs at 0.3, k1 2.0);
- ``ql``: query likelihood with Dirichlet smoothing over the whole page (title twice + description + body,
  as bm25s counts it), ``mu`` in :data:`MUS`;
- ``dph``: the parameter-free DFR model DPH (Amati), same whole-page counts;
- ``pl2``: the DFR model PL2 (Poisson, Laplace after-effect, normalisation 2), ``c`` in :data:`PL2_CS`;
- ``plain``: whole-page BM25 over words as bm25s cuts them (``\\w\\w+``, its 33 stopwords, no identifier splits,
  no pairs; the page's terms restricted to those bm25s would make), k1 1.5, b 0.75, on the rewritten query or
  the query as typed (``plain-raw``).

Each question's candidates are the union of every model's 100 best pages (and the dense list's, with the extra).
A fusion is a weighted sum of the models' scores, each normalised among the candidates (``minmax``: over the
pages it matched; ``z``: z-score; ``max``: over its best), BM25F as shipped (÷ its best), then the dense share
fused as shipped. The weights, normalisation and dense share are chosen on ten folds and scored on the
eleventh (:func:`bench.tune_ranking.objective`); the table is printed beside the shipped ranking and bm25s, per
kind, with a paired bootstrap interval of the held-out difference to the shipped ranking.

``python -m bench.tune_ensemble --index PATH [--extra-index PATH] [--lexical]`` (indexes built when empty).
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from typing import Any

import numpy as np

from bench.bench_quality import KINDS
from bench.tune_ranking import _pools, corpus_for, index_arguments, objective

__all__ = ["main", "model_scores"]

MUS = (500.0, 1000.0, 2000.0, 4000.0)
PL2_CS = (1.0, 3.0, 7.0)
DEPTH = 100
_BM25S_TOKEN = re.compile(r"(?u)\b\w\w+\b")


class Stats:
    """Whole-page term statistics of one pool's ranker, computed once from its stored postings."""

    def __init__(self, ranker: Any) -> None:
        import bm25s.stopwords

        self.ranker = ranker
        self.pages = len(ranker.doc_ids)
        whole_page = np.asarray(ranker.settings.plain_fields, dtype=np.float32)  # title twice + description + body
        self.tf = (ranker.counts.astype(np.float32) @ whole_page).astype(np.float32)
        self.length = np.maximum(ranker.lengths @ whole_page, 1.0)
        self.average = float(self.length.mean())
        sizes = np.diff(ranker.offsets)
        starts = ranker.offsets[:-1]
        nonempty = sizes > 0
        self.cf = np.zeros(len(sizes), dtype=np.float64)
        self.cf[nonempty] = np.add.reduceat(self.tf.astype(np.float64), starts[nonempty])
        self.df = sizes.astype(np.float64)
        self.total = float(self.length.sum())
        # The terms bm25s would make: word characters only, two or more, not its stopwords (no pairs).
        stop = set(bm25s.stopwords.STOPWORDS_EN)
        plain = np.zeros(len(sizes), dtype=bool)
        plain[: len(ranker.vocabulary)] = [
            len(term) >= 2 and term.replace("_", "a").isalnum() and term not in stop for term in ranker.vocabulary
        ]
        self.plain_term = plain
        kept = np.repeat(plain, sizes)
        self.plain_length = np.maximum(
            np.bincount(ranker.postings[kept], weights=self.tf[kept], minlength=self.pages), 1.0
        )
        self.plain_average = float(self.plain_length.mean())
        self.stop = stop

    def gather(self, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The postings of the query's terms: (slot per posting, page per posting, query weight per posting)."""
        slots, qw = [], []
        for term, slot in zip(weights, self.ranker.slots(list(weights)), strict=True):
            if slot is not None:
                slots.append(slot)
                qw.append(weights[term])
        if not slots:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        offsets = self.ranker.offsets
        sizes = np.array([offsets[s + 1] - offsets[s] for s in slots])
        index = np.concatenate([np.arange(offsets[s], offsets[s + 1]) for s in slots])
        return index, np.repeat(np.array(slots), sizes), np.repeat(np.array(qw), sizes)


def model_scores(stats: Stats, weights: dict[str, float], raw_words: list[str], text_words: list[str]) -> dict:
    """Every model's score of every page (NaN where the model matched nothing), one question."""
    out: dict[str, np.ndarray] = {}
    words = {term: w for term, w in weights.items() if " " not in term}  # no pairs in the whole-page models
    index, slot, qw = stats.gather(words)
    pages = stats.ranker.postings[index]
    tf = stats.tf[index].astype(np.float64)
    live = tf > 0
    index, slot, qw, pages, tf = index[live], slot[live], qw[live], pages[live], tf[live]
    n = stats.pages
    matched = np.bincount(pages, minlength=n) > 0
    length = stats.length[pages]

    def finish(contribution: np.ndarray, constant: np.ndarray | float = 0.0) -> np.ndarray:
        score = np.bincount(pages, weights=contribution, minlength=n) + constant
        return np.where(matched, score, np.nan)

    prob = stats.cf[slot] / stats.total
    total_weight = float(sum(w for t, w in words.items() if stats.ranker.slots([t])[0] is not None))
    for mu in MUS:
        out[f"ql{int(mu)}"] = finish(qw * np.log1p(tf / (mu * prob)), total_weight * np.log(mu / (stats.length + mu)))
    f = np.minimum(tf / length, 1 - 1e-6)
    norm = (1 - f) ** 2 / (tf + 1)
    informative = tf * np.log2(tf * stats.average / length * n / stats.cf[slot])
    dph = norm * (informative + 0.5 * np.log2(2 * np.pi * tf * (1 - f)))
    out["dph"] = finish(qw * dph)
    lam = stats.cf[slot] / n
    for c in PL2_CS:
        tfn = tf * np.log2(1 + c * stats.average / length)
        pl2 = (tfn * np.log2(tfn / lam) + (lam - tfn) * np.log2(np.e) + 0.5 * np.log2(2 * np.pi * tfn)) / (tfn + 1)
        out[f"pl2-{c:g}"] = finish(qw * pl2)
    for name, query_words in (("plain", text_words), ("plain-raw", raw_words)):
        counted: dict[str, float] = {}
        for word in query_words:
            counted[word] = counted.get(word, 0.0) + 1.0
        pidx, pslot, pqw = stats.gather(counted)
        keep = stats.plain_term[pslot] if len(pslot) else np.zeros(0, bool)
        pidx, pslot, pqw = pidx[keep], pslot[keep], pqw[keep]
        ppages = stats.ranker.postings[pidx]
        ptf = stats.tf[pidx].astype(np.float64)
        df = stats.df[pslot]
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        k1, b = 1.5, 0.75
        denom = ptf + k1 * (1 - b + b * stats.plain_length[ppages] / stats.plain_average)
        score = np.bincount(ppages, weights=pqw * idf * ptf * (k1 + 1) / np.maximum(denom, 1e-9), minlength=n)
        out[name] = np.where(score > 0, score, np.nan)
    return out


def bm25s_words(text: str, stop: set[str]) -> list[str]:
    """A text's words as bm25s cuts them (lower-cased ``\\w\\w+``, its stopwords dropped)."""
    return [word for word in _BM25S_TOKEN.findall(text.lower()) if word not in stop]


def normalise(scores: np.ndarray, how: str, stats: np.ndarray) -> np.ndarray:
    """Scores (questions, candidates; NaN = not matched) scaled per question with the model's min, max, mean and
    std over every page it matched (``stats``: questions × 4, as shipped code would compute them); unmatched -> 0."""
    low, high, mean, std = (stats[:, i : i + 1] for i in range(4))
    with np.errstate(all="ignore"):
        if how == "minmax":  # a page matched alone scores 1
            out = np.where(high > low, (scores - low) / np.where(high > low, high - low, 1.0), scores * 0 + 1.0)
        elif how == "z":
            z_low, z_high = (low - mean) / np.where(std > 0, std, 1.0), (high - mean) / np.where(std > 0, std, 1.0)
            out = ((scores - mean) / np.where(std > 0, std, 1.0) - z_low) / np.where(z_high > z_low, z_high - z_low, 1)
        else:  # "max": over the best, the rest clipped at 0
            out = np.maximum(scores, 0) / np.where(high > 0, high, 1.0)
    return np.nan_to_num(out, nan=0.0).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    """Score every model and fusion on every question, cross-validate the choice, print the tables."""

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    index_arguments(parser)
    parser.add_argument("--seed", type=int, default=7, help="of the paired bootstrap")
    parser.add_argument("--wide", action="store_true", help="the wider grid of weights (and triples)")
    parser.add_argument("--cache", action="store_true", help="reuse the scores saved beside the index")
    args = parser.parse_args(argv)
    corpus = corpus_for(args, "tune_ensemble")
    if corpus is None:
        return 0
    cache = args.index.with_name(args.index.stem + f"-ensemble{'-lexical' if args.lexical else ''}.npz")
    if args.cache and cache.exists():
        data = dict(np.load(cache, allow_pickle=True))
    else:
        data = collect(_pools(args, corpus))
        np.savez(cache, **data)
    return evaluate(data, args.seed, args.wide)


def collect(pools: list[Any]) -> dict[str, Any]:
    """Every model's scores of each question's candidates (models × questions × candidates), and the metrics' needs."""
    from devknow_jupyter.local.ranker import RankSettings, query_weights

    semantic = all(pool.dense is not None for pool, _ in pools)
    settings = RankSettings()
    names: list[str] = []
    blocks, relevant_blocks, counts, groups, kinds, summary = [], [], [], [], [], []
    for pool, _ in pools:
        stats = Stats(pool.base)
        bm25f = pool.lexical({})  # ÷ its best, as shipped
        for row, (item, parsed) in enumerate(zip(pool.questions, pool.parsed, strict=True)):
            weights = query_weights(parsed.tokens, settings, parsed.pairs)
            models = model_scores(
                stats, weights, bm25s_words(item["query"], stats.stop), bm25s_words(parsed.text, stats.stop)
            )
            models = {"bm25f": np.where(bm25f[row] > 0, bm25f[row], np.nan), **models}
            if semantic:
                models["dense"] = pool.dense[row]
            names = names or list(models)
            top: set[int] = set()
            for values in models.values():
                filled = np.nan_to_num(values, nan=-np.inf)
                part = np.argpartition(-filled, DEPTH)[:DEPTH]
                top.update(int(p) for p in part if np.isfinite(filled[p]))
            candidates = np.array(sorted(top), dtype=np.int64)  # page order: ties go to the lower position
            blocks.append(np.stack([models[name][candidates] for name in names]))
            summary.append([[np.nanmin(v), np.nanmax(v), np.nanmean(v), np.nanstd(v)] if np.isfinite(v).any()
                            else [0.0, 0.0, 0.0, 0.0] for v in models.values()])
            relevant_blocks.append(np.isin(candidates, list(pool.relevant[row])))
            counts.append(max(len(item["relevant"]), 1))
            groups.append(item["group"])
            kinds.append(item["kind"])
    width = max(block.shape[1] for block in blocks)
    raw = np.full((len(names), len(blocks), width), np.nan, dtype=np.float64)
    relevant = np.zeros((len(blocks), width), dtype=bool)
    for i, (block, rel) in enumerate(zip(blocks, relevant_blocks, strict=True)):
        raw[:, i, : block.shape[1]] = block
        relevant[i, : block.shape[1]] = rel
    base = [pool.baseline(pages) for pool, pages in pools]
    return {
        "names": np.array(names), "raw": raw, "relevant": relevant, "counts": np.array(counts, dtype=np.float64),
        "summary": np.array(summary, dtype=np.float64).transpose(1, 0, 2),
        "groups": np.array(groups), "kinds": np.array(kinds),
        "base_rr": np.concatenate([b[0] for b in base]), "base_recall": np.concatenate([b[1] for b in base]),
    }


def grid(names: list[str], wide: bool = False) -> list[tuple[tuple[str, str, float], ...]]:
    """The fusions tried beside BM25F: each model alone at a few weights, and pairs of families (weights 0.1-0.3;
    ``wide``: 0.1-0.5, and triples QL + plain + DPH)."""
    others = [n for n in names if n not in ("bm25f", "dense")]
    families = {
        "ql": [n for n in others if n.startswith("ql")], "dph": ["dph"],
        "pl2": [n for n in others if n.startswith("pl2")], "plain": ["plain", "plain-raw"],
    }
    configs: list[tuple[tuple[str, str, float], ...]] = [()]
    for model in others:
        for how in ("minmax", "z", "max"):
            configs += [((model, how, w),) for w in (0.1, 0.2, 0.3, 0.5, 0.8)]
    weights = (0.1, 0.2, 0.3, 0.5) if wide else (0.1, 0.2, 0.3)
    for fa, fb in itertools.combinations(families, 2):
        for how, ma, mb in itertools.product(("minmax", "z"), families[fa], families[fb]):
            configs += [((ma, how, wa), (mb, how, wb)) for wa, wb in itertools.product(weights, weights)]
    for how, mq, mp in itertools.product(("minmax",) if wide else (), families["ql"], families["plain"]):
        for wq, wp, wd in itertools.product((0.1, 0.2, 0.3, 0.5), (0.1, 0.2, 0.3), (0.1, 0.2)):
            configs.append(((mq, how, wq), (mp, how, wp), ("dph", how, wd)))
    return configs


def evaluate(data: dict[str, Any], seed: int, wide: bool = False) -> int:
    """Cross-validate the fusions (lexical; then the dense share over the lexical pick), print the tables."""
    names = [str(n) for n in data["names"]]
    raw, relevant, counts = data["raw"], data["relevant"], data["counts"]
    groups, kinds = data["groups"], data["kinds"]
    base_rr, base_recall = data["base_rr"], data["base_recall"]
    semantic = "dense" in names
    q = raw.shape[1]
    print(f"{q} questions, {raw.shape[2]} candidates at most, models: {', '.join(names)}")

    def metrics(fused: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fused = np.where(valid, fused, -np.inf)
        order = np.argsort(-fused, axis=1, kind="stable")[:, :5]
        hit = np.take_along_axis(relevant, order, 1) & np.isfinite(np.take_along_axis(fused, order, 1))
        first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)
        rr = np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)
        return rr, hit.sum(axis=1) / counts

    with np.errstate(all="ignore"):
        normalised = {
            (name, how): normalise(raw[i], how, data["summary"][i])
            for i, name in enumerate(names)
            if name not in ("bm25f", "dense")
            for how in ("minmax", "z", "max")
        }
    bm25f = np.nan_to_num(raw[names.index("bm25f")], nan=0.0)
    dense = np.nan_to_num(raw[names.index("dense")], nan=0.0) if semantic else None
    lexical_valid = ~np.all(np.isnan(raw[[i for i, n in enumerate(names) if n != "dense"]]), axis=0)
    all_valid = ~np.all(np.isnan(raw), axis=0)
    configs = grid(names, wide)
    dense_shares = (0.3, 0.4, 0.5) if semantic else ()
    print(f"{len(configs)} lexical fusions, dense shares {dense_shares}")

    def fuse(parts: tuple[tuple[str, str, float], ...], dense_share: float) -> np.ndarray:
        lexical = bm25f.copy()
        for model, how, weight in parts:
            lexical += weight * normalised[(model, how)]
        lexical /= 1.0 + sum(weight for _, _, weight in parts)
        if dense is None or dense_share == 0:
            return lexical
        high = lexical.max(axis=1, keepdims=True)
        return (1 - dense_share) * lexical / np.where(high > 0, high, 1.0) + dense_share * dense

    lex = np.array([metrics(fuse(parts, 0.0), lexical_valid) for parts in configs])  # (configs, 2, q)
    print("\neach model alone, MRR@5 / recall@5 (no choice made: in-sample for each parameter)")
    print(f"| model | all | {' | '.join(KINDS)} |\n|---|---:|{'---:|' * len(KINDS)}")
    for name in [*names, "bm25s"]:
        if name == "bm25s":
            rr, rec = base_rr, base_recall
        else:
            alone = bm25f if name == "bm25f" else dense if name == "dense" else normalised[(name, "minmax")]
            rr, rec = metrics(alone, ~np.isnan(raw[names.index(name)]))
        cells = [f"{rr[kinds == kind].mean():.3f}" for kind in KINDS]
        print(f"| {name} | {rr.mean():.3f} / {rec.mean():.3f} | {' | '.join(cells)} |")
    sem_cache: dict[tuple[int, float], tuple[np.ndarray, np.ndarray]] = {}

    def sem(c: int, d: float) -> tuple[np.ndarray, np.ndarray]:
        if (c, d) not in sem_cache:
            sem_cache[(c, d)] = metrics(fuse(configs[c], d), all_valid)
        return sem_cache[(c, d)]

    def pick(mask: np.ndarray) -> int:
        return int(np.argmax(objective(lex[:, 0, mask].mean(axis=1), lex[:, 1, mask].mean(axis=1))))

    rng = np.random.default_rng(seed)

    def report(mode: str, held: np.ndarray, current: np.ndarray) -> None:
        diff = held[0] - current[0]
        boot = np.array([diff[rng.integers(0, q, q)].mean() for _ in range(5000)])
        print(f"  all: ensemble {held[0].mean():.3f} / {held[1].mean():.3f}, current {current[0].mean():.3f} / "
              f"{current[1].mean():.3f}, bm25s {base_rr.mean():.3f} / {base_recall.mean():.3f}; MRR@5 diff "
              f"{diff.mean():+.4f} [{np.percentile(boot, 2.5):+.4f}, {np.percentile(boot, 97.5):+.4f}]; "
              f"{int((diff > 0).sum())} up, {int((diff < 0).sum())} down; "
              f"recall diff {(held[1] - current[1]).mean():+.4f}")
        print(f"| kind | n | current, {mode} | ensemble, {mode} | bm25s |\n|---|---:|---:|---:|---:|")
        for kind in ("all", *KINDS, "mixed"):
            mask = np.ones(q, bool) if kind == "all" else kinds == kind
            if mask.any():
                print(f"| {kind} | {int(mask.sum())} | {current[0, mask].mean():.3f} / {current[1, mask].mean():.3f} | "
                      f"{held[0, mask].mean():.3f} / {held[1, mask].mean():.3f} | "
                      f"{base_rr[mask].mean():.3f} / {base_recall[mask].mean():.3f} |")

    held = np.zeros((2, q))
    held_sem = np.zeros((2, q))
    print("\n== held out, one set left out at a time (lexical fusion picked without the dense scores) ==")
    for fold in sorted(set(groups)):
        test = groups == fold
        chosen = pick(~test)
        held[:, test] = lex[chosen][:, test]
        line = f"  {fold:8s} {int(test.sum()):4d} lexical {held[0, test].mean():.3f}"
        line += f" (current {lex[0, 0, test].mean():.3f})"
        if semantic:
            scores = [objective(*(m[~test].mean() for m in sem(chosen, d))) for d in dense_shares]
            d = dense_shares[int(np.argmax(scores))]
            held_sem[:, test] = np.array(sem(chosen, d))[:, test]
            line += f"  semantic {held_sem[0, test].mean():.3f} (current {sem(0, 0.4)[0][test].mean():.3f}) d={d}"
        print(f"{line}  <- {configs[chosen]}")
    report("lexical", held, lex[0])
    if semantic:
        report("semantic", held_sem, np.array(sem(0, 0.4)))
    whole = pick(np.ones(q, bool))
    print(f"\non all the questions: {configs[whole]}, in-sample lexical {lex[whole, 0].mean():.3f} / "
          f"{lex[whole, 1].mean():.3f}")
    if semantic:
        for d in dense_shares:
            rr, rec = sem(whole, d)
            print(f"  with dense share {d}: {rr.mean():.3f} / {rec.mean():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The bench's paired bootstrap interval and the quality report built on it, on small constructed cases whose
answers are known without a bootstrap (this tests bench/ itself, so it imports it)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.bench_quality import DEVELOPMENT, _report, evaluate, to_markdown, versus
from bench.stats import paired_bootstrap


def test_a_constant_difference_has_an_interval_of_one_point_whatever_the_spread_of_the_scores() -> None:
    # Paired: each question's own difference is 0.5, though the scores themselves range from -0.3 to 1.0.
    found = paired_bootstrap([0.5, 1.0, 0.25, 0.75], [0.0, 0.5, -0.25, 0.25])
    assert found["difference"] == pytest.approx(0.5)
    assert found["low"] == pytest.approx(0.5) and found["high"] == pytest.approx(0.5)


def test_one_win_in_four_gives_the_binomial_percentiles() -> None:
    """Differences (1, 0, 0, 0): a resample's mean is k/4 with k ~ Binomial(4, 1/4); P(k = 0) = 0.316 > 0.025, so
    the 2.5th percentile is 0; P(k ≤ 2) = 0.949 < 0.975 ≤ P(k ≤ 3) = 0.996, so the 97.5th is 3/4."""
    found = paired_bootstrap([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0])
    assert found == {"difference": 0.25, "low": 0.0, "high": 0.75}


def test_the_interval_is_seeded_and_widens_with_a_higher_level() -> None:
    ours = [1.0, 0.5, 0.0, 1.0, 0.33, 0.0, 0.2, 1.0, 0.25, 0.5]
    base = [0.5, 0.5, 0.2, 1.0, 1.0, 0.0, 0.0, 0.33, 0.25, 1.0]
    first, again = paired_bootstrap(ours, base), paired_bootstrap(ours, base)
    assert first == again
    assert first["low"] < first["difference"] < first["high"]
    wider = paired_bootstrap(ours, base, level=0.99)
    assert wider["low"] < first["low"] and wider["high"] > first["high"]
    assert paired_bootstrap(ours, base, seed=7) != first  # the seed is what makes it repeat


def test_unpaired_lengths_are_refused_and_nothing_gives_zeros() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap([1.0, 0.0], [1.0])
    assert paired_bootstrap([], []) == {"difference": 0.0, "low": 0.0, "high": 0.0}


def _ranked(pages: dict[str, list[str]]) -> Any:
    return lambda query: pages[query]


QUESTIONS = [
    {"query": "q1", "relevant": ["a"], "kind": "howto"},
    {"query": "q2", "relevant": ["b"], "kind": "howto"},
    {"query": "q3", "relevant": ["c", "d"], "kind": "error"},
]


def test_versus_pairs_two_rankings_question_by_question_overall_and_per_kind() -> None:
    ours = evaluate(_ranked({"q1": ["a"], "q2": ["x", "b"], "q3": ["c", "d"]}), QUESTIONS)
    base = evaluate(_ranked({"q1": ["x", "a"], "q2": ["b"], "q3": ["x"]}), QUESTIONS)
    whole = versus(ours, base)
    assert whole["n"] == 3
    assert whole["mrr@5"]["ours"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert whole["mrr@5"]["bm25s"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert whole["mrr@5"]["difference"] == pytest.approx(1 / 3)
    howto = versus(ours, base, "howto")
    assert howto["n"] == 2 and howto["mrr@5"]["difference"] == pytest.approx(0.0)
    assert (howto["mrr@5"]["low"], howto["mrr@5"]["high"]) == (pytest.approx(-0.5), pytest.approx(0.5))
    error = versus(ours, base, "error")
    assert error["recall@5"]["ours"] == 1.0 and error["recall@5"]["bm25s"] == 0.0


def test_the_report_checks_every_kind_against_bm25s_on_an_untouched_set_only() -> None:
    ours = evaluate(_ranked({"q1": ["a"], "q2": ["x", "b"], "q3": ["c", "d"]}), QUESTIONS)
    base = evaluate(_ranked({"q1": ["a"], "q2": ["b"], "q3": ["x"]}), QUESTIONS)
    results = {name: {"ours": ours, "bm25s": base, "questions": 3} for name in ("fresh", "H")}
    assert "H" in DEVELOPMENT and "fresh" not in DEVELOPMENT
    report = _report(results, {}, semantic=False)
    goals = {goal["goal"]: goal["met"] for goal in report["goals"]}
    assert all(text.startswith("fresh") for text in goals)  # no goal on a development set
    assert goals["fresh, error (n 1): MRR@5 ≥ bm25s"] is True
    assert goals["fresh, howto (n 2): MRR@5 ≥ bm25s"] is False  # q2 ranks its page second, bm25s first
    markdown = to_markdown(report)
    assert "| fresh | howto | 2 | 0.750 / 1.000 | -0.250 [-0.500, +0.000] |" in markdown

"""Turn what a user types into a safe FTS5 query: quoted terms joined with OR, ranked by BM25.

FTS5 has its own query syntax (``"``, ``:``, ``-``, ``*``, ``^``, parentheses, ``AND``/``OR``/``NOT``/
``NEAR``). User text is never passed through: it is cut into word terms the way the index's
``unicode61`` tokenizer cuts text, common English words are dropped (they match nearly every passage
and slow the query down without telling passages apart), and each term is double-quoted. OR lets a
passage that matches only some terms still rank, and BM25 puts those matching more, rarer terms first.
"""

from __future__ import annotations

import re

__all__ = ["MAX_TERMS", "STOPWORDS", "fts_expression", "fts_query", "query_terms"]

#: Longer questions keep their first this-many distinct terms (each OR term costs a posting-list scan).
MAX_TERMS = 16

# Question words and glue words. Not dropped on purpose: words that name things in developer docs
# ("go", "new", "get", "set", "key", "use", "run", "test", "not", "null", "all", "first", "last").
_STOPWORD_TEXT = """
    a about above after again against am an and any are as at be because been before being below between
    both but by can could did do does doing done down during each either else ever few for from further
    had has have having he her here hers herself him himself his how however i if in into is it its itself
    just let me might more most must my myself no nor of off on once only or other our ours ourselves out
    over own please same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very via was we were what when where which while
    who whom why will with within without would you your yours yourself yourselves s t
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# unicode61 splits at anything that is not a letter, number or private-use character; "_" splits too.
_TERM = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(text: str, *, max_terms: int = MAX_TERMS) -> list[str]:
    """The distinct search terms of ``text``, lower-cased, stopwords dropped (unless nothing else is left)."""
    words = [word.lower() for word in _TERM.findall(text or "")]  # not casefold(): "ß" must stay "ß" as in the index
    words = list(dict.fromkeys(words))
    kept = [word for word in words if word not in STOPWORDS]
    return (kept or words)[:max_terms]


def fts_expression(terms: list[str]) -> str:
    """``"term1" OR "term2" ...`` for terms from :func:`query_terms` (word characters only, so quoting is safe)."""
    return " OR ".join(f'"{term}"' for term in terms)


def fts_query(text: str, *, prefix_last: bool = False, max_terms: int = MAX_TERMS) -> str:
    """An FTS5 MATCH expression for ``text``: ``"term1" OR "term2" ...``; ``""`` when there are no terms.

    With ``prefix_last`` the last term also matches as a prefix (``"term" OR "term"*``), for queries typed
    as you go; only for terms of three letters or more, since short prefixes match half the index.
    """
    terms = query_terms(text, max_terms=max_terms)
    parts = [f'"{term}"' for term in terms]  # a term has no quote in it: _TERM matches word characters only
    if prefix_last and terms and len(terms[-1]) >= 3:
        parts.append(f'"{terms[-1]}"*')
    return " OR ".join(parts)

"""What a user types, turned into ranking tokens (:func:`ranking_query`) and into a safe FTS5 query.

A pasted compiler or runtime message is first rewritten (:func:`rewrite_message`): file paths, line and
column numbers, stack frames, a runtime's notes on its graph, the numbers the user's code passed and the
message's boilerplate words (``error``, ``uncaught``, ``exception``) go; quoted names and type names stay.
Then :mod:`.tokens` cuts the text into words and whole identifiers.

For the FTS5 passage index (used to choose the excerpt shown with a hit):

FTS5 has its own query syntax (``"``, ``:``, ``-``, ``*``, ``^``, parentheses, ``AND``/``OR``/``NOT``/
``NEAR``). User text is never passed through: it is cut into word terms the way the index's
``unicode61`` tokenizer cuts text, common English words are dropped (they match nearly every passage
and slow the query down without telling passages apart), and each term is double-quoted. OR lets a
passage that matches only some terms still rank, and BM25 puts those matching more, rarer terms first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .tokens import STOPWORDS, tokens, word_pairs, word_tokens

__all__ = [
    "MAX_TERMS",
    "STOPWORDS",
    "RankingQuery",
    "fts_expression",
    "fts_query",
    "query_terms",
    "ranking_query",
    "rewrite_message",
]

#: Longer questions keep their first this-many distinct terms (each OR term costs a posting-list scan).
MAX_TERMS = 16


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


# -- pasted messages --------------------------------------------------------------------------------

# Words every message repeats and no page is about; only dropped from text that looks like a message.
_BOILERPLATE_TEXT = """
    error errors warning warnings info hint fatal severe uncaught unhandled exception thrown caught
    line lines column col file stack trace traceback recent call last at
"""
_BOILERPLATE = frozenset(_BOILERPLATE_TEXT.split())
# "lib/main.dart:12:5", "/app/src/index.js:10", "C:\\src\\x.py", "file:///..."; also "(line 12)".
_PATH = re.compile(
    r"(?:[A-Za-z]:\\|file://|\.{0,2}/)?(?:[\w.@-]+[/\\])+[\w.@-]+\.\w{1,5}(?::\d+)*|\b[\w-]+\.\w{1,5}:\d+(?::\d+)*"
    r"|(?<![\w.])(?:~|[A-Za-z]:)?[/\\](?:[\w.@-]+[/\\])+[\w.@-]*"
)
_LINE_NUMBERS = re.compile(r"\b(?:line|col(?:umn)?)\s+\d+\b|(?<![\w.])\d+:\d+(?::\d+)?\b", re.IGNORECASE)
# One stack frame, up to the end of its location only: the client joins a pasted traceback into one line, so
# "to the end of the line" would take the exception's message with the frame (and leave nothing to search).
# Python `File "x.py", line 3, in main`; JavaScript/Java `at f (x.js:1:2)`, `at x.js:1:2`, `at a.B.c(B.java:9)`;
# Dart `#0  main (file:///x.dart:5:3)`; `... 3 more`.
_STACK_FRAME = re.compile(
    r"""File\s+"[^"\n]*",\s+line\s+\d+(?:,\s+in\s+[\w<>.$]+)?"""
    r"|\bat\s+(?:async\s+|new\s+)?(?:[\w$.<>\[\]/-]+(?:\s+\[as\s+[\w$]+\])?\s*)?"
    r"\((?:[^()\n]*:\d+(?::\d+)?|Native Method|Unknown Source|native|<anonymous>)\)"
    r"|\bat\s+(?:async\s+)?\S+:\d+(?::\d+)?\b"
    r"|(?<!\w)#\d+\s+[^()\n]{0,200}?\s*\([^()\n]*:\d+(?::\d+)?\)"
    r"|\.\.\.\s+\d+\s+more\b"
)
# What a runtime says about its own graph and devices, not about the error: TensorFlow's `[[{{node x}}]]` and
# `{{function_node __wrapped__Op_device_/job:localhost/replica:0/task:0/device:CPU:0}}` (the user's node names).
_RUNTIME_NOTE = re.compile(r"\[*\{\{[^{}\n]{0,300}\}\}\]*")
# A number the user's own code passed (`beta1=0.9`, `learning_rate=1e-3` in a pasted source line): the name stays,
# the value goes, as a template's placeholder would. A comparison (`x == 5`) and a bare number are kept.
_ASSIGNED_NUMBER = re.compile(r"(?<=[\w\]])\s*=\s*-?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+)\b", re.IGNORECASE)
_MESSAGE_SIGNS = re.compile(
    r"\b(?:error|exception|warning|uncaught|failed|fatal|isn't|can't|cannot|undefined|unexpected|expected|"
    r"not found|no such|traceback)\b|\w+(?:Error|Exception)\b|\w+\.\w+:\d+",
    re.IGNORECASE,
)


def looks_like_message(text: str) -> bool:
    """Whether ``text`` reads like a pasted compiler or runtime message rather than a question."""
    return bool(_MESSAGE_SIGNS.search(text or ""))


def rewrite_message(text: str) -> str:
    """A pasted message without what no page contains: paths, line numbers, stack frames, a runtime's notes on its
    own graph (``{{node x}}``), the values the user's code passed (``beta1=0.9``), boilerplate words.

    Quoted names (``'fromJson'``) and type names (``TypeError``, ``Future<void>``) are kept. Text that does
    not look like a message comes back unchanged.
    """
    if not looks_like_message(text):
        return text
    original = text
    text = _RUNTIME_NOTE.sub(" ", text)
    text = _ASSIGNED_NUMBER.sub("=", text)
    text = _STACK_FRAME.sub(" ", text)
    text = _PATH.sub(" ", text)
    text = _LINE_NUMBERS.sub(" ", text)
    kept = [word for word in re.split(r"(\s+)", text) if word.strip(":.,;!()[]").lower() not in _BOILERPLATE]
    rewritten = " ".join("".join(kept).split())
    return rewritten or original  # nothing but boilerplate: search what was pasted rather than nothing


@dataclass(frozen=True)
class RankingQuery:
    """A query ready for the ranker: its ``tokens`` (words and whole identifiers, no stopwords), its
    content ``words`` (what the weak-match check counts) and its neighbouring word ``pairs``."""

    text: str
    tokens: tuple[str, ...]
    words: tuple[str, ...]
    pairs: tuple[str, ...] = ()


def ranking_query(text: str, *, max_tokens: int = 48) -> RankingQuery:
    """The ranking tokens of what a user typed or pasted (see :func:`rewrite_message`)."""
    rewritten = rewrite_message(text or "")
    found = list(dict.fromkeys(token for token in tokens(rewritten) if token not in STOPWORDS))
    words = list(dict.fromkeys(word for word in word_tokens(rewritten) if word not in STOPWORDS))
    if not found:  # only stopwords ("how do I"): search them rather than nothing
        found = list(dict.fromkeys(tokens(rewritten)))
        words = list(dict.fromkeys(word_tokens(rewritten)))
    pairs = tuple(dict.fromkeys(word_pairs(rewritten)))[:max_tokens]
    return RankingQuery(rewritten, tuple(found[:max_tokens]), tuple(words[:max_tokens]), pairs)

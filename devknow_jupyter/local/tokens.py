"""Identifier-aware tokens for ranking: words, and the identifiers developers type, whole and split.

Developer questions name things as they are written: ``prefer_const_constructors``, ``tf.keras.layers``,
``fromJson``, ``Future<void>``, ``String?``, ``auth/popup-closed-by-user``. A plain word tokenizer cuts
these into common words (``prefer``, ``const``) and the page named after the identifier drowns among
pages that merely use those words. So every identifier yields its **whole** form (a rare token, with a
high IDF) as well as its **parts** (``prefer``, ``const``, ``constructors``; ``from``, ``json``), and the
same function cuts both the pages and the queries.

Stemming loses exact identifiers, so it is never applied to the token itself: :func:`stem` gives a
second, separate form of plain words (``STEM_MARK`` + stem), which the ranker may weigh lower.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from itertools import pairwise

__all__ = [
    "PAIR_JOINER",
    "STEM_MARK",
    "STOPWORDS",
    "is_compound",
    "split_identifier",
    "stem",
    "tokens",
    "word_pairs",
    "word_tokens",
]

#: Prefix of a stemmed form, so that it never collides with a token as written.
STEM_MARK = "~"
#: Joins the two words of a word pair (``command line``): no token holds a space, so pairs never collide.
PAIR_JOINER = " "

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

# An identifier-like run: word characters joined by . / - :: and optionally ending in <...> or ?.
# "Future<void>", "Map<String, dynamic>" (no spaces inside, up to 40 chars), "String?".
_RUN = re.compile(
    r"[^\W_][\w$]*(?:(?:\.|/|-|::|#)[\w$]+)*(?:<[\w$.,<>?]{1,40}>)?\??|_[\w$]+(?:(?:\.|/|-|::)[\w$]+)*",
    re.UNICODE,
)
_NULLABLE_BUILTINS = frozenset({"int", "double", "num", "bool", "dynamic", "void", "object"})
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# camelCase and PascalCase boundaries: "fromJson" -> from|Json, "HTTPServer" -> HTTP|Server, "v2Api" -> v2|Api.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+", re.UNICODE)


def split_identifier(text: str) -> list[str]:
    """The lower-case word parts of one identifier: ``fromJson`` -> ``["from", "json"]``."""
    parts: list[str] = []
    for piece in _WORD.findall(text):
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts.extend(word.lower() for word in _CAMEL.findall(piece))
        else:
            parts.append(piece.lower())
    return parts


def is_compound(token: str) -> bool:
    """Whether a token is a whole identifier (it has joiners or case changes), not a plain word."""
    return not token.isalnum() or not (token.islower() or token.isupper() or token.istitle())


def _emit(run: str) -> Iterator[str]:
    """Tokens of one run: the whole identifier, some of its joined segments, then its word parts."""
    if run.endswith("?") and not (run[0].isupper() or run[:-1] in _NULLABLE_BUILTINS):
        run = run[:-1]  # "bucket?" ends a question; "String?" and "int?" are nullable types
    lowered = run.lower()
    parts = split_identifier(run)
    if len(parts) > 1 or not run.isalnum():
        yield lowered
        if "." in lowered and "/" not in lowered:  # "tf.keras.layers": also "keras.layers"
            dotted = lowered.split(".")
            for start in range(1, len(dotted) - 1):
                yield ".".join(dotted[start:])
        for segment in re.split(r"[/.<>?#]|::", lowered):  # "auth/popup-closed-by-user": "popup-closed-by-user"
            if segment and segment != lowered and not segment.isalnum() and len(split_identifier(segment)) > 1:
                yield segment
    yield from parts


def runs(text: str) -> list[str]:
    """The identifier-like runs of ``text`` that :func:`tokens` and :func:`word_pairs` cut (to cut them once)."""
    return _RUN.findall(text or "")


def tokens(text: str, found: list[str] | None = None) -> list[str]:
    """Every token of ``text`` in order: whole identifiers and their word parts, lower-case (``found``: its
    :func:`runs`, when already cut)."""
    out: list[str] = []
    append, extend = out.append, out.extend
    for run in runs(text) if found is None else found:
        if run.isascii() and run.isalnum():
            if run.islower():  # most prose: nothing to split
                append(run)
                continue
            if run[1:].islower() and run.isalpha():  # a capitalised word
                append(run.lower())
                continue
        extend(_emit_cached(run))
    return out


@lru_cache(maxsize=65536)
def _emit_cached(run: str) -> tuple[str, ...]:
    if not run.isascii():  # "Café" and "cafe" are one word (as FTS5's remove_diacritics has it)
        run = "".join(char for char in unicodedata.normalize("NFKD", run) if not unicodedata.combining(char))
    return tuple(_emit(run))


def word_tokens(text: str) -> list[str]:
    """Only the plain lower-case words of ``text`` (what the weak-match check counts)."""
    return [part for match in _RUN.finditer(text or "") for part in split_identifier(match.group(0))]


def word_pairs(text: str, found: list[str] | None = None) -> list[str]:
    """Each pair of neighbouring content words of ``text`` (stopwords skipped), joined by ``PAIR_JOINER``:
    ``"run a command line tool"`` -> ``["run command", "command line", "line tool"]`` (``found``: its
    :func:`runs`, when already cut)."""
    words: list[str] = []
    for run in runs(text) if found is None else found:
        if run.isascii() and run.isalnum() and run.islower():  # most prose: one word, nothing to split
            if run not in STOPWORDS:
                words.append(run)
        else:
            words.extend(_content_words(run))
    return [f"{first}{PAIR_JOINER}{second}" for first, second in pairwise(words) if first != second]


@lru_cache(maxsize=65536)
def _content_words(run: str) -> tuple[str, ...]:
    """The word parts of one identifier-like run that are not stopwords (runs repeat: a page's pairs and
    tokens are cut from the same text, and identifiers recur across pages)."""
    return tuple(word for word in split_identifier(run) if word not in STOPWORDS)


_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ities", "ity"),
    ("iness", "y"),
    ("ments", "ment"),
    ("ingly", ""),
    ("ously", "ous"),
    ("ies", "y"),
    ("ing", ""),
    ("ers", "er"),
    ("ied", "y"),
    ("ed", ""),
    ("es", ""),
    ("ly", ""),
    ("s", ""),
)


def stem(word: str) -> str:
    """A light English stem of a plain word (``creating`` -> ``creat``, ``buckets`` -> ``bucket``), or ``""``
    when the word is an identifier, a number or too short to stem safely."""
    if len(word) < 5 or not word.isalpha() or not word.isascii():
        return ""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: len(word) - len(suffix)] + replacement
            if suffix in ("ing", "ed", "es") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # "running" -> "run", "stopped" -> "stop"
            if base.endswith("e") and len(base) > 4:
                base = base[:-1]  # "create", "creating" -> "creat"
            return base if base != word else ""
    return word[:-1] if word.endswith("e") and len(word) > 4 else ""

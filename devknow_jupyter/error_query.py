"""A search query for an error: from an exception object (``%deverror``) or from pasted or piped text
(``devknow search -``).

What a docs page about an error shares with the error is its type, its message and the library it came from,
never the user's paths, line numbers or own code. So the query is ``Type: message`` followed by the names of the
libraries whose frames the traceback passes through (``litellm``, ``google.genai``), innermost first. Frames
from the user's own files and from the standard library name nothing a page is about, and are left out.

Nothing here imports IPython or the client; the query is cut to :data:`MAX_QUERY_CHARS`, and known secrets are
masked (the message of an exception can hold a key the user passed in).
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterable

__all__ = ["MAX_QUERY_CHARS", "query_from_exception", "query_from_text"]

#: The longest query made: the type, the start of the message and a few library names fit well within it.
MAX_QUERY_CHARS = 500
_MAX_MESSAGE_CHARS = 300
_MAX_LIBRARIES = 3
# Folders that hold installed packages: what follows is a library's top-level package.
_PACKAGES_FOLDER = re.compile(r"[/\\](?:site|dist)-packages[/\\]([A-Za-z_][\w]*)")
# Frames of a Python traceback as printed, and its last line ("ValueError: message", "KeyError: 'x'").
_TRACEBACK_START = "Traceback (most recent call last):"
_PRINTED_FRAME = re.compile(r'^\s*File "([^"\n]*)", line \d+', re.MULTILINE)
# The exception's line, the first unindented one after the frames: "ValueError: bad", "pkg.errors.NotFound: 404".
_EXCEPTION_LINE = re.compile(r"([A-Za-z_][\w.]*)(?::[ \t]*(.*))?")


def _library(filename: str) -> str | None:
    """The top-level package of an installed library that ``filename`` belongs to, or None (user or stdlib)."""
    match = _PACKAGES_FOLDER.search(filename)
    if match is None or match.group(1) == "_distutils_hack":
        return None
    return match.group(1)


def _libraries(filenames: Iterable[str]) -> list[str]:
    """The distinct libraries of ``filenames`` (outermost frame first), innermost first, at most a few."""
    found = [name for name in map(_library, filenames) if name]
    return list(dict.fromkeys(reversed(found)))[:_MAX_LIBRARIES]


def _compose(kind: str, message: str, libraries: list[str]) -> str:
    from .errors import redact

    message = " ".join(message.split())
    if len(message) > _MAX_MESSAGE_CHARS:
        message = message[:_MAX_MESSAGE_CHARS].rsplit(" ", 1)[0]
    head = f"{kind}: {message}" if message else kind
    extra = [name for name in libraries if name.lower() not in head.lower()]
    return redact(" ".join([head, *extra]))[:MAX_QUERY_CHARS].strip()


def query_from_exception(exc: BaseException) -> str:
    """The query for ``exc``: ``Type: message`` and the libraries its traceback passed through.

    A type defined outside the built-ins is named with its module's top-level package first when that is not
    already in the message (``google.api_core.exceptions.NotFound`` gives ``NotFound`` and ``google``).
    """
    kind = type(exc).__qualname__
    filenames = [frame.filename for frame in traceback.extract_tb(exc.__traceback__)] if exc.__traceback__ else []
    # The frames before the first of the user's own are the shell's that ran the cell (IPython, ipykernel).
    first_own = next((index for index, name in enumerate(filenames) if _library(name) is None), 0)
    libraries = _libraries(filenames[first_own:])
    module = type(exc).__module__ or ""
    top = module.split(".")[0]
    if module not in ("builtins", "__main__", "") and not top.startswith("_") and top not in libraries:
        libraries.append(top)
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not break the search for it
        message = ""
    return _compose(kind, message, libraries)


# IPython's own traceback (a notebook's error output): "ValueError   Traceback (most recent call last)", frames
# as "Cell In[1], line 4" or "File ~/venv/.../site-packages/pkg/mod.py:12, in f()", the exception line last.
_IPYTHON_HEADER = re.compile(r"^([A-Za-z_][\w.]*)\s+Traceback \(most recent call last\)", re.MULTILINE)
_IPYTHON_FRAME = re.compile(r"^File (\S[^\n]*?):\d+, in ", re.MULTILINE)


def _ipython_traceback(text: str) -> str | None:
    """The query for a traceback as IPython shows it, or None when ``text`` is not one."""
    headers = list(_IPYTHON_HEADER.finditer(text))  # the last traceback shown is the error's own
    header = headers[-1] if headers else None
    if header is None:
        return None
    tail = text[header.end() :]
    lines = [line.rstrip() for line in tail.split("\n") if line.strip() and not line[0].isspace()]
    kind = header.group(1).rsplit(".", 1)[-1]
    for line in reversed(lines):
        match = _EXCEPTION_LINE.fullmatch(line)
        if match and match.group(1).rsplit(".", 1)[-1] == kind:
            libraries = _libraries(frame.group(1) for frame in _IPYTHON_FRAME.finditer(tail))
            return _compose(kind, match.group(2) or "", libraries)
    return None


def query_from_text(text: str) -> str:
    """The query for pasted or piped text: for a Python traceback, its last exception line and the libraries
    of its frames; any other text (a compiler's or analyzer's output, a question) as it is, up to
    :data:`MAX_QUERY_CHARS` (its last characters: in a program's output the error comes at the end)."""
    text = text or ""
    start = text.rfind(_TRACEBACK_START)
    if start >= 0:
        tail = text[start + len(_TRACEBACK_START) :]
        frames = list(_PRINTED_FRAME.finditer(tail))
        after = tail[frames[-1].end() :].split("\n")[1:] if frames else tail.split("\n")
        for line in after:
            if line.strip() and not line[0].isspace():
                match = _EXCEPTION_LINE.fullmatch(line.rstrip())
                if match:
                    kind = match.group(1).rsplit(".", 1)[-1]
                    return _compose(kind, match.group(2) or "", _libraries(frame.group(1) for frame in frames))
                break
    shown = _ipython_traceback(text)
    if shown:
        return shown
    from .errors import redact

    text = " ".join(text.split())
    return redact(text[-MAX_QUERY_CHARS:].lstrip() if len(text) > MAX_QUERY_CHARS else text)

"""The exceptions devknow_jupyter raises.

Every error is a :class:`DevKnowError`, so ``except DevKnowError`` catches them all::

    DevKnowError
     ├── ConfigurationError        a bad endpoint, option or argument (e.g. an empty query)
     ├── AuthenticationError       HTTP 401/403, or no key for the live service
     ├── QuotaExceededError        HTTP 429 or RESOURCE_EXHAUSTED (``.retry_after`` in seconds, or None)
     ├── ToolError                 the server's own error for a tool call (``.code`` when it gave one)
     │    └── DocumentNotFoundError   names the service does not know (``.missing``, ``.documents``)
     ├── ProtocolError             a reply that is not valid MCP / JSON-RPC
     ├── LocalIndexError           the local index is damaged, or its disk or folder can't be written
     └── TransportError            network, TLS, proxy and timeout failures
          └── RequestTimeout       no complete reply within the call's timeout (a deadline for the whole call)

In IPython and Jupyter these errors show as one short, coloured line instead of a traceback
(through IPython's ``_render_traceback_`` hook); ``%devknow --debug`` switches full tracebacks
back on. Messages never contain an API key: every key the package knows about is registered
with :func:`register_secret` and masked out of every message.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from .models import Documents

__all__ = [
    "AuthenticationError",
    "ConfigurationError",
    "DevKnowError",
    "DocumentNotFoundError",
    "LocalIndexError",
    "ProtocolError",
    "QuotaExceededError",
    "RequestTimeout",
    "ToolError",
    "TransportError",
    "redact",
    "register_secret",
    "set_short_errors",
    "split_url_credentials",
]

_secrets: set[str] = set()
_secrets_lock = threading.Lock()
_secrets_pattern: re.Pattern[str] | None = None
_short_errors = True

#: A secret's prefix of at least this many characters is masked too (a server may echo a cut key).
SECRET_PREFIX_CHARS = 8
#: The environment variables that hold an API key, in the order they are read.
KEY_VARIABLES = ("DEVKNOW_API_KEY", "GOOGLE_API_KEY")
#: Query parameters of an endpoint URL that hold an API key, and those that hold a bearer token.
_KEY_PARAMS = frozenset({"key", "api_key", "apikey", "x-goog-api-key"})
_TOKEN_PARAMS = frozenset({"access_token", "token"})
#: What a Google API key looks like (a key under another parameter name, or echoed by a server, is one too).
_GOOGLE_KEY = re.compile(r"AIza[0-9A-Za-z_\-]{35}")


def register_secret(value: str | None) -> None:
    """Remember ``value`` (an API key or token) so that it is masked out of every error message.

    Surrounding whitespace is ignored (a key read from a file often ends in a newline).
    """
    global _secrets_pattern
    value = (value or "").strip()
    if len(value) >= 4:
        with _secrets_lock:
            if value not in _secrets:
                _secrets.add(value)
                _secrets_pattern = None


def _pattern() -> re.Pattern[str] | None:
    """One case-insensitive pattern for every secret and each of its prefixes of 8+ characters."""
    global _secrets_pattern
    with _secrets_lock:
        if _secrets_pattern is None and _secrets:
            alternatives = []
            for secret in sorted(_secrets, key=len, reverse=True):
                head, tail = secret[:SECRET_PREFIX_CHARS], secret[SECRET_PREFIX_CHARS:]
                # head(?:t(?:a(?:i(?:l)?)?)?)? : the longest prefix present is masked whole.
                optional = "".join(f"(?:{re.escape(char)}" for char in tail) + ")?" * len(tail)
                alternatives.append(re.escape(head) + optional)
            _secrets_pattern = re.compile("|".join(alternatives), re.IGNORECASE)
        return _secrets_pattern


def redact(text: str) -> str:
    """Return ``text`` with every registered secret, in any letter case, and each of its prefixes of
    :data:`SECRET_PREFIX_CHARS` or more characters replaced by ``***``; so is anything shaped like a Google
    API key (``AIza`` and 35 more characters), registered or not."""
    if not text:
        return text
    if "AIza" in text:  # one substring search on the usual path
        text = _GOOGLE_KEY.sub("***", text)
    pattern = _pattern()
    return pattern.sub("***", text) if pattern is not None else text


def _is_secret(value: str) -> bool:
    """Whether ``value`` is, or holds, a registered secret or something shaped like a Google API key."""
    return bool(value.strip()) and redact(value) != value


def split_url_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``url`` without the credentials a user may have put in it, and those credentials.

    Returns ``(clean_url, api_key, access_token)``: a password (or a lone user name) in the URL's userinfo
    and a ``key=``/``api_key=`` query parameter are an API key, an ``access_token=``/``token=`` parameter
    a bearer token, and so is a parameter of any other name (``google_api_key=``) whose value is shaped like
    a Google API key. A parameter whose value holds a registered secret is removed too (the secret is in use
    already, under its own name). Each found is registered as a secret at once, so no message can show it.
    """
    parts = urlsplit(url)
    if not parts.netloc:
        return url, None, None
    key = token = None
    dropped = False
    if "@" in parts.netloc:
        userinfo, _, hostport = parts.netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        key = unquote(password or user) or None
        parts = parts._replace(netloc=hostport)
    kept = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() in _KEY_PARAMS | _TOKEN_PARAMS:
            register_secret(value)  # even one not used (a second key=) must never show
        if name.lower() in _KEY_PARAMS and value:
            key = key or value
        elif name.lower() in _TOKEN_PARAMS and value:
            token = token or value
        elif _GOOGLE_KEY.fullmatch(value.strip()):
            register_secret(value)
            key = key or value
        elif _is_secret(value):
            dropped = True
        else:
            kept.append((name, value))
    if key is None and token is None and not dropped:
        return url, None, None
    register_secret(key)
    return urlunsplit(parts._replace(query=urlencode(kept))), (key or "").strip() or None, (token or "").strip() or None


def set_short_errors(short: bool) -> None:
    """Show errors as one line in IPython (the default) or, with ``False``, as full tracebacks."""
    global _short_errors
    _short_errors = bool(short)


class DevKnowError(Exception):
    """Base class of every error raised by devknow_jupyter.

    ``hint`` is one line on what to do about it, in the notebook's words; :meth:`hint_for` words it for
    another front end. An error without a hint of its own has its class's ``advice`` (a fact such as
    ``"timeout"``), which each front end words itself (:mod:`devknow_jupyter.hints`).
    """

    #: What the hint is about, for the front ends to word (see :mod:`devknow_jupyter.hints`); None: no hint.
    advice: str | None = None
    _own_hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = redact(str(message))
        if hint is not None:
            self._own_hint = redact(hint)
        super().__init__(self.message)

    @property
    def hint(self) -> str | None:
        """One line on what to do about it, worded for notebooks (the magics and the Python API there)."""
        return self.hint_for("notebook")

    @hint.setter
    def hint(self, value: str | None) -> None:
        self._own_hint = redact(value) if value is not None else None

    def hint_for(self, front_end: str) -> str | None:
        """The hint in the words of ``front_end``: ``"notebook"`` or ``"cli"`` (the ``devknow`` command).
        A hint given to this error is the same everywhere."""
        if self._own_hint is not None:
            return self._own_hint
        fixed = getattr(type(self), "hint", None)
        if isinstance(fixed, str):  # a subclass that set ``hint = "..."`` in its body
            return fixed
        if self.advice is None:
            return None
        from .hints import worded

        return worded(self.advice, front_end)

    def __str__(self) -> str:
        return self.message

    def short_message(self) -> str:
        """The error as a user reads it: class name, message and hint on one or two lines.

        Messages often quote a server or a document: control characters in them are shown escaped
        (``\\x1b``), so they can't drive the terminal or start a line of their own.
        """
        from .terminal import terminal_safe

        text = f"{type(self).__name__}: {terminal_safe(self.message, one_line=True)}"
        return f"{text}\n  {terminal_safe(self.hint, one_line=True)}" if self.hint else text

    def __getattr__(self, name: str) -> Any:
        # IPython looks this hook up with hasattr(); hide it while full tracebacks are wanted.
        if name == "_render_traceback_" and _short_errors:
            return self._short_traceback
        raise AttributeError(name)

    def _short_traceback(self) -> list[str]:
        # short_message() has escaped every control character; the colour codes are ours alone.
        red, reset = "\x1b[31m", "\x1b[0m"
        lines = self.short_message().splitlines()
        return [f"{red}{lines[0]}{reset}", *lines[1:]]


class ConfigurationError(DevKnowError):
    """A bad endpoint, setting or argument, found before anything is sent."""


class AuthenticationError(DevKnowError):
    """The service refused the credentials (HTTP 401 or 403), or none are configured."""

    advice = "credentials"

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class QuotaExceededError(DevKnowError):
    """The service's quota is used up (HTTP 429 or RESOURCE_EXHAUSTED).

    ``retry_after`` is the number of seconds the service asked us to wait, when it said.
    """

    advice = "quota"

    def __init__(self, message: str, *, retry_after: float | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class ToolError(DevKnowError):
    """The server reported an error for a tool call; the message is the server's own.

    ``not_found`` is True when the reply said the thing asked for does not exist (``NOT_FOUND``, HTTP 404):
    the code that read the reply decides it, so nothing above has to guess from the message's words.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        tool: str | None = None,
        hint: str | None = None,
        not_found: bool = False,
    ) -> None:
        super().__init__(message, hint=hint)
        self.code = code
        self.tool = tool
        self.not_found = not_found


class DocumentNotFoundError(ToolError):
    """Some requested document names are unknown to the service.

    ``missing`` lists them; ``documents`` holds the documents that *were* found, in request order,
    so nothing fetched is lost.
    """

    advice = "document names"

    def __init__(
        self, missing: Iterable[str], documents: Documents | None = None, *, unreachable: str | None = None
    ) -> None:
        self.missing = list(missing)
        self.documents = documents
        shown = ", ".join(self.missing[:5]) + (" …" if len(self.missing) > 5 else "")
        found = f" ({len(documents)} other document(s) were found)" if documents else ""
        # ``unreachable``: why the service was not asked (the local index was, and lacks these names).
        where = f" in the local index ({unreachable})" if unreachable else ""
        super().__init__(
            f"Unknown document{'s' if len(self.missing) > 1 else ''}{where}: {shown}{found}",
            tool="get_documents",
            not_found=True,
        )


class LocalIndexError(DevKnowError):
    """The local index can't be used: its file is damaged, its disk is full, or its folder can't be written.

    The message says what failed, where, and what to do, on one line. ``kind`` is one of ``"damaged"``,
    ``"full"``, ``"read-only"``, ``"busy"`` or ``"unusable"``; ``path`` is the index file or folder.
    """

    def __init__(self, message: str, *, kind: str, path: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.path = path


class ProtocolError(DevKnowError):
    """The server's reply is not valid MCP or JSON-RPC (e.g. a malformed SSE stream)."""


class TransportError(DevKnowError):
    """The request did not get through: connection, TLS, proxy or timeout failure."""

    advice = "network"
    #: True when the service could not be reached at all (DNS failure, refused connection, connect or
    #: read timeout), as opposed to a reply that refused us: the client may then answer from the local index.
    unreachable: bool = False

    def __init__(self, message: str, *, hint: str | None = None, unreachable: bool | None = None) -> None:
        super().__init__(message, hint=hint)
        if unreachable is not None:
            self.unreachable = unreachable


class RequestTimeout(TransportError):
    """No complete reply arrived within the timeout, which bounds the whole call (retries and waits included)."""

    unreachable = True

    advice = "timeout"

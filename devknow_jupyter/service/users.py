"""The users of a team service, by token, from a TOML file that is read again when it changes.

```toml
[users.alice]
token_sha256 = "9f86d081884c7d65..."   # sha256 of the token, hex (or token = "..." in plain text)
quota = { search = "100/min", answer = "5/day" }   # optional: this user's own quotas

[users.ci]
token = "a-long-random-string"
```

A request names its user with ``Authorization: Bearer TOKEN`` (or ``X-Goog-Api-Key: TOKEN``, as
:class:`~devknow_jupyter.DevKnowClient` sends a key). Tokens are compared as SHA-256 digests in constant
time, so neither the file nor a timing tells a token. A file that can't be read or parsed keeps the users
read before (with a warning once), so a half-saved edit never locks everybody out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .quotas import Quota, parse_quotas

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["User", "UserDirectory", "token_digest"]

_HEX = set("0123456789abcdef")


def token_digest(token: str) -> bytes:
    """The SHA-256 digest of a token, as stored (``token_sha256``, hex) and compared."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True)
class User:
    """One user: a name, the digest of their token, and the quotas that differ from the server's."""

    name: str
    digest: bytes = field(repr=False)
    quotas: dict[str, Quota] = field(default_factory=dict)


def _read_users(path: Path) -> dict[bytes, User]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"Cannot read the users file {path}: {exc.strerror or exc}.") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"The users file {path} is not valid TOML: {exc}.") from None
    table = data.get("users")
    if not isinstance(table, Mapping) or not table:
        raise ConfigurationError(f"The users file {path} has no [users.NAME] tables.")
    users: dict[bytes, User] = {}
    for name, entry in table.items():
        if not isinstance(entry, Mapping):
            raise ConfigurationError(f"users.{name} in {path} is not a table.")
        digest = _entry_digest(name, entry, path)
        if digest in users:
            raise ConfigurationError(f"users.{name} and users.{users[digest].name} in {path} have the same token.")
        quotas = entry.get("quota", {})
        if not isinstance(quotas, Mapping):
            raise ConfigurationError(f"users.{name}.quota in {path} is not a table (e.g. {{ search = \"60/min\" }}).")
        users[digest] = User(str(name), digest, parse_quotas({str(k): str(v) for k, v in quotas.items()}))
    return users


def _entry_digest(name: str, entry: Mapping[str, Any], path: Path) -> bytes:
    token, hashed = entry.get("token"), entry.get("token_sha256")
    if isinstance(hashed, str) and len(hashed) == 64 and set(hashed.lower()) <= _HEX:
        return bytes.fromhex(hashed)
    if isinstance(token, str) and len(token) >= 16:
        return token_digest(token)
    raise ConfigurationError(
        f"users.{name} in {path} needs token_sha256 (64 hex digits) or a token of at least 16 characters."
    )


class UserDirectory:
    """The users file, read at start and again whenever its modification time or size changes.

    A changed file is looked at no more than once a second (``stat`` only); a broken edit keeps the
    previous users and says why once on stderr.
    """

    def __init__(self, path: str | Path, *, recheck_seconds: float = 1.0) -> None:
        self.path = Path(path)
        self._recheck = recheck_seconds
        self._lock = threading.Lock()
        self._stamp = self._stat()
        self._users = _read_users(self.path)  # a broken file at start is an error, not an empty directory
        self._checked = time.monotonic()
        self._warned: tuple[int, int] | None = None

    def _stat(self) -> tuple[int, int]:
        try:
            info = os.stat(self.path)
        except OSError as exc:
            raise ConfigurationError(f"Cannot read the users file {self.path}: {exc.strerror or exc}.") from None
        return (info.st_mtime_ns, info.st_size)

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < self._recheck:
            return
        with self._lock:
            self._checked = now
            try:
                stamp = self._stat()
                if stamp == self._stamp:
                    return
                self._users = _read_users(self.path)
                self._stamp = stamp
            except ConfigurationError as exc:
                if self._warned != getattr(self, "_stamp", None):
                    print(f"devknow serve: warning: {exc.message} Keeping the users read before.", file=sys.stderr)
                    self._warned = self._stamp

    def authenticate(self, token: str) -> User | None:
        """The user whose token this is, or None."""
        if not token:
            return None
        self._refresh()
        given = token_digest(token)
        found = None
        for digest, user in self._users.items():  # every digest compared: the time says nothing of which
            if hmac.compare_digest(digest, given):
                found = user
        return found

    def find(self, name: str) -> list[User]:
        """The user of this name (a list of zero or one), as the file says now."""
        return [user for user in self._users.values() if user.name == name]

    def __len__(self) -> int:
        return len(self._users)

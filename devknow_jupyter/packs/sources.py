"""What a recipe may name: the repository it is built from, the commit it is pinned to, the paths it reads.

A recipe is data from someone else, handed to git: a ref like ``--upload-pack=CMD`` would be read by git as
an option, a repository like ``ext::sh -c CMD`` runs a command, and ``repository = "."`` or
``file = "../x.json"`` reads the user's own files. The checks here keep a recipe to this:

- a commit is a hex commit id or a plain ref name (``main``, ``v1.2``, ``refs/tags/v1``), never starting with ``-``;
- the recipe's repository is a network URL (``https``, ``http``, ``ssh``, ``git``); a local folder, ``file://``
  URL or local git repository is read only when the user names it (``--repo NAME=PATH``, a folder argument,
  ``$DEVKNOW_PACK_REPOS``, :meth:`Recipe.with_repository`); a ``transport::address`` form is never used;
- the paths it reads (include and exclude globs, ``[[generated]]`` files) are relative and stay in the repository.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["NETWORK_SCHEMES", "SourceRefused", "check_path", "check_ref", "check_repository", "git_protocol"]

#: The schemes a recipe file may name its repository with (git's protocol names for them).
NETWORK_SCHEMES = ("https", "http", "ssh", "git")

# A hex commit id (abbreviated or full, SHA-1 or SHA-256), or a ref name made of plain characters.
_HEX = re.compile(r"[0-9a-fA-F]{4,64}")
_REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}")


class SourceRefused(ValueError):
    """A repository, ref or path a recipe may not use; the message says which rule it breaks."""


def check_ref(ref: str) -> str:
    """``ref`` when it is a commit id or a plain ref name; :class:`SourceRefused` otherwise."""
    if _HEX.fullmatch(ref):
        return ref
    plain = _REF.fullmatch(ref) and ".." not in ref and "//" not in ref and not ref.endswith(("/", ".", ".lock"))
    if not plain or any(part.startswith(".") for part in ref.split("/")):
        raise SourceRefused(f"{ref!r} is not a commit id or a plain ref name (letters, digits, '_', '.', '-', '/')")
    return ref


def check_repository(repository: str, *, named_by_user: bool) -> str:
    """The git protocol to allow for ``repository`` (``https``, ``file``, ...); :class:`SourceRefused` otherwise.

    ``named_by_user``: the user gave it (command line, environment, Python call), so a local folder or
    ``file://`` URL is allowed; a recipe file's repository must be a network URL.
    """
    if repository.startswith("-") or "::" in repository.split("://", 1)[0] or "\n" in repository:
        raise SourceRefused(f"{repository!r} is not a repository URL or folder (no git transport:: forms)")
    protocol = git_protocol(repository)
    if protocol == "file" and not named_by_user:
        raise SourceRefused(
            f"a recipe may not read the local folder or repository {repository!r}; name a local copy yourself"
        )
    if protocol not in (*NETWORK_SCHEMES, "file"):
        raise SourceRefused(f"{repository!r}: the {protocol}:// scheme is not one git fetches documentation over")
    if protocol != "file" and (not urlsplit(repository).hostname or urlsplit(repository).netloc.startswith("-")):
        raise SourceRefused(f"{repository!r} names no host")
    return protocol


def git_protocol(repository: str) -> str:
    """The git protocol a repository string is fetched over: its URL scheme, or ``file`` for a path."""
    scheme, sep, _ = repository.partition("://")
    return scheme.lower() if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme) else "file"


def check_path(path: str) -> str:
    """``path`` (a recipe glob or data file) when it is relative and never climbs out with ``..``."""
    if path.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", path) or ".." in re.split(r"[/\\]", path):
        raise SourceRefused(f"{path!r} is not a path inside the repository (absolute, ~ or '..')")
    return path

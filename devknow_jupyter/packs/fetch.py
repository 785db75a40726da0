"""A recipe's repository on disk: a local folder used in place, or a shallow git fetch of its pinned commit.

git runs with a hardened environment, since what it is given comes from a recipe: only the protocol of the
source is allowed (``GIT_ALLOW_PROTOCOL``, which overrides any ``protocol.allow=always`` in the user's config),
no hooks and no templates in the temporary repository, no system config, no inherited ``GIT_DIR``-style
variables, no prompts; positionals come after ``--`` and refs are checked (:mod:`.sources`) so none is read as
an option.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConfigurationError
from .recipe import Recipe
from .sources import SourceRefused, check_ref, check_repository

__all__ = ["FetchError", "checkout"]

GIT_TIMEOUT = 600
# The user's own settings (their global config, how to reach a server); every other GIT_* variable (GIT_DIR,
# GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH, ...) is dropped: it would act on the wrong repository or add config.
_KEPT_GIT_VARIABLES = frozenset(
    {"GIT_CONFIG_GLOBAL", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH"}
)
_HARDENED = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never"]


class FetchError(ConfigurationError):
    """A repository could not be fetched (no git, no network, unknown commit); the message says which."""


@contextmanager
def checkout(recipe: Recipe) -> Iterator[tuple[Path, str]]:
    """The recipe's files on disk and the commit they are at: ``(folder, commit)``.

    A repository that is a plain local folder is used in place (its commit is the recipe's, or
    ``"working tree"``); a git URL, ``file://`` URL or local git repository is fetched shallow at the
    pinned commit into a temporary folder, removed afterwards. A local folder or repository is read only
    when the user named it (:attr:`Recipe.user_repository`); :class:`FetchError` says why otherwise.
    """
    source = recipe.repository
    try:
        protocol = check_repository(source, named_by_user=recipe.user_repository)
        if recipe.commit:
            check_ref(recipe.commit)
    except SourceRefused as exc:
        hint = f"Point the recipe at a copy you choose: --repo {recipe.name}=PATH."
        raise FetchError(f"{recipe.name}: {exc}", hint=hint) from None
    if protocol == "file":
        local = Path(source[len("file://") :] if source.startswith("file://") else source).expanduser()
        if not local.exists():
            raise FetchError(f"{recipe.name}: no such folder or repository: {local}")
        if not (local / ".git").exists() and not (local / "HEAD").is_file():
            yield local, recipe.commit or "working tree"
            return
        source = local.resolve().as_uri()
    if shutil.which("git") is None:
        raise FetchError(f"{recipe.name}: `git` is not on the PATH, so {source} cannot be fetched.")
    folder = Path(tempfile.mkdtemp(prefix=f"devknow-{recipe.name}-"))
    try:
        git = _Git(recipe, protocol)
        git.run(["init", "-q", "--template=", "--", str(folder)])
        git.run(["-C", str(folder), "remote", "add", "--", "origin", source])
        # Only the recipe's folders are checked out, and only their files are downloaded (a partial clone):
        # a documentation folder is a small part of most repositories.
        _sparse(recipe, git, folder)
        # Fetching one commit by id needs the server's allowReachableSHA1InWant; GitHub and local repos allow it.
        fetch = ["-C", str(folder), "fetch", "-q", "--depth", "1", "--filter=blob:none"]
        git.run([*fetch, "--", "origin", recipe.commit or "HEAD"])
        git.run(["-C", str(folder), "checkout", "-q", "FETCH_HEAD"])
        commit = git.run(["-C", str(folder), "rev-parse", "HEAD"]).strip()
        yield folder, commit
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _sparse(recipe: Recipe, git: _Git, folder: Path) -> None:
    """Limit the checkout to the folders the recipe's include patterns and data files name."""
    tops = set()
    for pattern in (*recipe.include, *(item.file for item in recipe.generated)):
        fixed = []
        for part in pattern.split("/"):
            if any(ch in part for ch in "*?{["):
                break
            fixed.append(part)
        tops.add("/" + "/".join(fixed) + ("/" if len(fixed) < len(pattern.split("/")) else ""))
    if "/" in tops or "//" in tops:
        return
    try:  # every pattern starts with "/", so none is read as an option
        git.run(["-C", str(folder), "sparse-checkout", "set", "--no-cone", *sorted(tops)])
    except FetchError:
        pass  # an old git without sparse-checkout: the whole tree is checked out


class _Git:
    """git for one source: only that source's protocol allowed, no hooks, no inherited repository variables."""

    def __init__(self, recipe: Recipe, protocol: str) -> None:
        self.recipe = recipe
        self.remote = protocol != "file"  # a network fetch: without network, a local copy is the way out
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        self.env.update({key: os.environ[key] for key in _KEPT_GIT_VARIABLES if key in os.environ})
        self.env.update(GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", GIT_ALLOW_PROTOCOL=protocol)

    def run(self, args: list[str]) -> str:
        """git's output for ``args``; :class:`FetchError` with git's last line when it fails or takes too long."""
        recipe = self.recipe
        try:
            done = subprocess.run(
                ["git", *_HARDENED, *args],
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT,
                env=self.env,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise FetchError(f"{recipe.name}: git took over {GIT_TIMEOUT} s on {recipe.repository}") from None
        if done.returncode != 0:
            lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
            reason = lines[-1] if lines else "git failed"
            hint = _offline_hint(recipe) if self.remote else None
            raise FetchError(f"{recipe.name}: cannot fetch {recipe.repository}: {reason}", hint=hint)
        return done.stdout


def _offline_hint(recipe: Recipe) -> str:
    """What to do without network: point the recipe at a local copy, or build a folder of Markdown."""
    return (
        f"Without network, point the recipe at a local clone: --repo {recipe.name}=PATH; "
        "or build a folder of Markdown pages: devknow pack build FOLDER -o FILE.pack."
    )

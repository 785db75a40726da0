"""Recipes: one small TOML file per documentation source, saying how its repository becomes documents.

A recipe names the repository and the pinned commit, the files to include and exclude, the rule that
maps a file path to its public URL (the document name is ``documents/`` + the URL without its scheme),
where titles and descriptions come from, the clean-up steps and the licence with its attribution. The
shipped recipes live in ``devknow_jupyter/packs/recipes/``; ``load_recipe("go")`` finds one by name,
``load_recipe("path/to/mine.toml")`` reads any file. See docs/packs.md ("Recipes") for the format.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from .globs import GlobError, compile_glob
from .sources import SourceRefused, check_path, check_ref, check_repository

try:
    import tomllib
except ImportError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["RECIPES_DIR", "Generated", "Recipe", "RecipeError", "load_recipe", "shipped_recipes"]

#: The recipes shipped with the package.
RECIPES_DIR = Path(__file__).resolve().parent / "recipes"

#: Clean-up steps a recipe may list, in the order they run.
CLEANUP_STEPS = (
    "liquid",  # Liquid {% ... %} tags; {% comment %} blocks dropped whole
    "go_template",  # Go template actions {{ ... }}
    "code_excerpt",  # Dart <?code-excerpt ...?> instructions
    "mdx_imports",  # MDX `import X from '...'` lines
    "devsite_header",  # DevSite `Project:`/`Book:`/`page_type:` header lines
    "site_variables",  # {{site.x}} replaced from the recipe's [variables]
    "html_comments",  # <!-- ... --> outside code blocks
    "blank_lines",  # runs of blank lines collapsed
)


class RecipeError(ConfigurationError):
    """A recipe that cannot be read or says something impossible; the message names the file and the field."""


@dataclass(frozen=True)
class Generated:
    """Pages generated from the entries of one JSON data file (e.g. dart.dev's analyzer diagnostics)."""

    file: str
    url: str  # with {id}
    id_field: str = "id"
    title: str = "{id}"
    description: str = ""
    body_fields: tuple[str, ...] = ("documentation",)
    where: dict[str, Any] = field(default_factory=dict)  # keep entries whose fields equal these
    where_not: dict[str, Any] = field(default_factory=dict)  # and drop those whose fields equal these


@dataclass(frozen=True)
class Recipe:
    """One documentation source, as its TOML file describes it."""

    name: str
    title: str
    repository: str
    commit: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    url: str  # a template with {path}: the file path with prefix, suffix and index removed
    strip_prefix: str = ""
    front_matter_names: bool = False  # a page's own front matter name/uri win over the URL rule
    index_names: tuple[str, ...] = ("index",)
    title_fields: tuple[str, ...] = ("title",)
    description_fields: tuple[str, ...] = ("description",)
    cleanup: tuple[str, ...] = ("html_comments", "blank_lines")
    html: bool = False  # convert .html files to Markdown
    notebooks: bool = False  # convert .ipynb files to Markdown
    min_chars: int = 80
    skip_front_matter: dict[str, Any] = field(default_factory=dict)  # e.g. {redirect = "*"}: redirect stubs
    variables: dict[str, str] = field(default_factory=dict)
    generated: tuple[Generated, ...] = ()
    license: str = ""
    attribution: str = ""
    unverified: str = ""
    path: str = ""  # where the recipe was read from
    # The repository was named by the user (a folder argument, --repo, $DEVKNOW_PACK_REPOS, with_repository),
    # not by the recipe file: only then may it be a local folder or repository (see sources.py).
    user_repository: bool = False

    def url_for(self, relative: str) -> str | None:
        """The public URL of the file at ``relative`` (a repository path), or None when it maps to none."""
        if self.strip_prefix:
            if not relative.startswith(self.strip_prefix):
                return None
            relative = relative[len(self.strip_prefix) :]
        stem = relative.rsplit(".", 1)[0] if "." in relative.rsplit("/", 1)[-1] else relative
        parts = stem.split("/")
        if parts and parts[-1] in self.index_names:
            parts = parts[:-1]
        url = self.url.format(path="/".join(parts))
        return url.rstrip("/")

    def wants(self, relative: str) -> bool:
        """Whether the repository file at ``relative`` is one of this recipe's pages."""
        if not any(_glob(pattern).fullmatch(relative) for pattern in self.include):
            return False
        return not any(_glob(pattern).fullmatch(relative) for pattern in self.exclude)

    def with_repository(self, repository: str, commit: str | None = None) -> Recipe:
        """This recipe reading another copy of its repository (a local path, ``file://`` URL or mirror) that the
        user names, at ``commit`` (a commit id or plain ref name; default: the recipe's own).

        Raises :class:`RecipeError` for a ``transport::`` form or a ref git would read as an option."""
        try:
            check_repository(repository, named_by_user=True)
            if commit:
                check_ref(commit)
        except SourceRefused as exc:
            raise RecipeError(f"{self.name}: {exc}") from None
        commit = self.commit if commit is None else commit
        return _replace(self, repository=repository, commit=commit, user_repository=True)


def _replace(recipe: Recipe, **changes: Any) -> Recipe:
    from dataclasses import replace

    return replace(recipe, **changes)


_GLOBS: dict[str, re.Pattern[str]] = {}


def _glob(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex matched in linear time (see :mod:`.globs`); compiled once per pattern."""
    compiled = _GLOBS.get(pattern)
    if compiled is None:
        compiled = _GLOBS[pattern] = compile_glob(pattern)
    return compiled


def shipped_recipes() -> list[str]:
    """The names of the recipes shipped with the package, sorted."""
    return sorted(path.stem for path in RECIPES_DIR.glob("*.toml"))


def load_recipe(spec: str | Path) -> Recipe:
    """The recipe named ``spec`` (a shipped one: ``"go"``) or read from the TOML file at ``spec``.

    Raises :class:`RecipeError` with one line naming the file and what is wrong.
    """
    path = Path(spec)
    if path.suffix != ".toml" and not path.exists():
        path = RECIPES_DIR / f"{spec}.toml"
        if not path.is_file():
            known = ", ".join(shipped_recipes())
            hint = f"Shipped recipes: {known}; or give a .toml path."
            raise RecipeError(f"No recipe named {str(spec)!r}.", hint=hint)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecipeError(f"Cannot read the recipe {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RecipeError(f"{path} is not valid TOML: {exc}") from None
    return parse_recipe(data, str(path))


def parse_recipe(data: dict[str, Any], where: str = "<recipe>") -> Recipe:
    """A :class:`Recipe` from the parsed TOML tables; :class:`RecipeError` names the first bad field."""

    def get(table: str, key: str, kind: type | tuple[type, ...], default: Any = ..., *, required: bool = False) -> Any:
        section = data if not table else data.get(table, {})
        if not isinstance(section, dict):
            raise RecipeError(f"{where}: [{table}] must be a table")
        if key not in section:
            if required:
                raise RecipeError(f"{where}: {_field(table, key)} is missing")
            return default
        value = section[key]
        if not isinstance(value, kind) or (kind is list and not all(isinstance(item, str) for item in value)):
            raise RecipeError(f"{where}: {_field(table, key)} has the wrong type ({type(value).__name__})")
        return value

    name = get("", "name", str, required=True)
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
        raise RecipeError(f"{where}: name {name!r} must be lower-case letters, digits, '.', '-' or '_'")
    url = get("urls", "url", str, required=True)
    if "{path}" not in url or not url.startswith(("https://", "http://")):
        raise RecipeError(f"{where}: urls.url must be an http(s) URL template holding {{path}}")
    _check_template(where, "urls.url", url, "path")
    cleanup = tuple(get("cleanup", "steps", list, ["html_comments", "blank_lines"]))
    unknown = [step for step in cleanup if step not in CLEANUP_STEPS]
    if unknown:
        raise RecipeError(f"{where}: unknown clean-up step {unknown[0]!r} (known: {', '.join(CLEANUP_STEPS)})")
    include = tuple(get("files", "include", list, required=True))
    if not include:
        raise RecipeError(f"{where}: files.include is empty")
    exclude = tuple(get("files", "exclude", list, []))
    generated = _parse_generated(data, where)
    repository, commit = get("source", "repository", str, required=True), get("source", "commit", str, "")
    _check_reach(where, repository, commit, include, exclude)
    return Recipe(
        name=name,
        title=get("", "title", str, name),
        repository=repository,
        commit=commit,
        include=include,
        exclude=exclude,
        url=url,
        strip_prefix=get("urls", "strip_prefix", str, ""),
        front_matter_names=get("urls", "front_matter", bool, False),
        index_names=tuple(get("urls", "index", list, ["index"])),
        title_fields=tuple(get("fields", "title", list, ["title"])),
        description_fields=tuple(get("fields", "description", list, ["description"])),
        cleanup=cleanup,
        html=get("cleanup", "html_to_markdown", bool, False),
        notebooks=get("cleanup", "notebooks_to_markdown", bool, False),
        min_chars=get("cleanup", "min_chars", int, 80),
        skip_front_matter=dict(get("files", "skip_front_matter", dict, {})),
        variables={str(key): str(value) for key, value in get("", "variables", dict, {}).items()},
        generated=generated,
        license=get("license", "spdx", str, required=True),
        attribution=get("license", "attribution", str, required=True),
        unverified=get("", "unverified", str, ""),
        path=where,
    )


def _check_template(where: str, key: str, template: str, field_name: str) -> None:
    """A template may hold only ``{field_name}``: ``str.format`` would otherwise look up other fields,
    indexes or attributes (``{path.__class__}``) and fail with a foreign exception, or show internals."""
    try:
        fields = [parsed[1:] for parsed in string.Formatter().parse(template) if parsed[1] is not None]
    except ValueError as exc:
        raise RecipeError(f"{where}: {key}: {exc} in {template!r}") from None
    for name, spec, conversion in fields:
        if name != field_name or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise RecipeError(f"{where}: {key} may hold only {{{field_name}}}, not {shown}")


def _check_reach(where: str, repository: str, commit: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """What the recipe reaches: a repository and ref git can't mistake for options or commands, globs that stay
    in the repository. A local path passes here; it is refused when fetched unless the user named the copy."""
    for key, check in (
        ("source.repository", lambda: check_repository(repository, named_by_user=True)),
        ("source.commit", lambda: commit and check_ref(commit)),
    ):
        try:
            check()
        except SourceRefused as exc:
            raise RecipeError(f"{where}: {key}: {exc}") from None
    for key, patterns in (("include", include), ("exclude", exclude)):
        _check_globs(where, f"files.{key}", patterns)


def _check_globs(where: str, key: str, patterns: tuple[str, ...]) -> None:
    """Each glob stays inside the repository and compiles (bounded length and alternatives, ``**`` whole)."""
    for pattern in patterns:
        try:
            check_path(pattern)
            _glob(pattern)
        except (SourceRefused, GlobError) as exc:
            raise RecipeError(f"{where}: {key}: {exc}") from None


def _parse_generated(data: dict[str, Any], where: str) -> tuple[Generated, ...]:
    """The recipe's ``[[generated]]`` tables: pages made from a data file, one per record."""
    generated = []
    tables = data.get("generated", [])
    if not isinstance(tables, list):
        raise RecipeError(f"{where}: generated must be an array of tables ([[generated]])")
    for number, item in enumerate(tables, 1):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str) or "{id}" not in str(item.get("url")):
            raise RecipeError(f"{where}: [[generated]] #{number} needs a file and a url holding {{id}}")
        body = item.get("body", ["documentation"])
        if not isinstance(body, list) or not all(isinstance(key, str) for key in body):
            raise RecipeError(f"{where}: [[generated]] #{number} body must be a list of field names")
        if not all(isinstance(item.get(key, {}), dict) for key in ("where", "where_not")):
            raise RecipeError(f"{where}: [[generated]] #{number} where and where_not must be tables")
        try:
            check_path(item["file"])
        except SourceRefused as exc:
            raise RecipeError(f"{where}: [[generated]] #{number} file: {exc}") from None
        for key in ("url", "title", "description"):
            _check_template(where, f"[[generated]] #{number} {key}", str(item.get(key, "")), "id")
        generated.append(
            Generated(
                file=item["file"],
                url=item["url"],
                id_field=str(item.get("id", "id")),
                title=str(item.get("title", "{id}")),
                description=str(item.get("description", "")),
                body_fields=tuple(body),
                where=dict(item.get("where", {})),
                where_not=dict(item.get("where_not", {})),
            )
        )
    return tuple(generated)


def _field(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key

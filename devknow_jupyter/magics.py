"""IPython magics: ``%devsearch``, ``%devget``, ``%%devask`` and ``%devknow`` (``%deverror``: :mod:`.deverror`).

The magics are thin: they parse the line, call the kernel's shared
:class:`~devknow_jupyter.DevKnowClient` (see :mod:`devknow_jupyter.session`), store the result in the
namespace (``_devsearch``, ``_devget``, ``_devask``, and ``-o VAR``) and return it, so the result
displays itself as the cell's output; with ``-b`` the call runs in the background (:mod:`.background`).
Settings are traitlets on :class:`DevKnowMagics`, a :class:`~devknow_jupyter.config.DevKnowConfig` (the
settings every face shares) with the display settings added, reachable with ``%config DevKnowMagics.<name> = ...``
(or ``DevKnowConfig.<name>``), ``ipython_config.py`` and the devknow config file.

Nothing in a magic's line is expanded by IPython (``@no_var_expand``): queries often hold ``$`` and
braces. ``%%devask`` replaces ``{name}`` itself, and only for names defined in the namespace.
``%devget`` evaluates variable references itself (``_devsearch[0]``, ``hits[:3]``, ``answer.references``).

The client, models, cache and errors modules are imported on first use, not at ``%load_ext``: loading
the extension only registers the magics (their help text lives on :class:`DevKnowMagics`).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib.util
import json
import keyword
import re
import sys
import textwrap
import weakref
from collections.abc import Iterator
from typing import Any

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.error import UsageError
from IPython.core.magic import (
    Magics,
    cell_magic,
    line_magic,
    magics_class,
    no_var_expand,
    output_can_be_silenced,
)
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Bool, Int, TraitError, observe, validate

from .background import background_argument, start
from .cell_watch import unwatch, watch
from .config import DevKnowConfig
from .magic_names import any_names, names_from
from .session import Session, register_session, shared_client, unregister_session

__all__ = [
    "DevKnowMagics",
    "Interrupted",
    "interpolate",
    "load_ipython_extension",
    "shared_client",
    "unload_ipython_extension",
]

_PLACEHOLDER_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A leading option token: a quoted string or a run of non-blanks.
_TOKEN = re.compile(r"""\s*("[^"]*"|'[^']*'|\S+)""")
_EMPTY_OUTPUT = {"text/plain": ""}
# Names IPython keeps in the namespace (input and output history, the shell itself); -o must not take them.
_IPYTHON_NAMES = frozenset(
    {"In", "Out", "exit", "quit", "get_ipython", "_", "__", "___", "_i", "_ii", "_iii", "_ih", "_oh", "_dh"}
)
_IPYTHON_HISTORY_NAME = re.compile(r"_i?\d+")  # _3 is output 3, _i3 is input 3


def interpolate(text: str, namespace: dict[str, Any]) -> str:
    """Replace ``{name}`` by ``str(namespace[name])`` where ``name`` is defined; leave all else as typed.

    ``{}``, ``{x}`` for an undefined ``x``, ``{a.b}``, ``$HOME`` and quotes pass through unchanged.
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(namespace[name]) if name in namespace else match.group(0)

    return _PLACEHOLDER_NAME.sub(replace, text)


def _strip_silencing_semicolon(text: str) -> str:
    # `%devsearch q;` reaches us with the `;` that asks IPython to hide the output; it is not part of q.
    try:
        silenced = DisplayHook.semicolon_at_end_of_expression(text)
    except Exception:  # tokenize may reject prose on newer Pythons; then nothing is silenced anyway
        silenced = False
    return text[: text.rindex(";")] if silenced else text


def _split_options(line: str, takes_value: set[str]) -> tuple[str, str]:
    """Split ``line`` into its leading options and the rest, which is kept exactly as typed.

    Options end at the first token that does not start with ``-``, or after ``--``.
    """
    position = 0
    while True:
        match = _TOKEN.match(line, position)
        if match is None:
            break
        token = match.group(1)
        if token == "--":
            return line[:position], line[match.end() :].strip()
        if not token.startswith("-") or token == "-":
            break
        position = match.end()
        attached = "=" in token or (not token.startswith("--") and len(token) > 2)
        if token in takes_value and not attached:
            value = _TOKEN.match(line, position)
            if value is not None:
                position = value.end()
    return line[:position], line[position:].strip()


def _parse(magic: Any, option_text: str) -> Any:
    from .completion import did_you_mean, option_strings

    try:
        return parse_argstring(magic, option_text)
    except ValueError as exc:  # shlex: "No closing quotation"
        raise UsageError(f"{exc} in {option_text.strip()!r}") from None
    except UsageError as exc:  # argparse: a mistyped option gets the nearest real one
        raise UsageError(did_you_mean(str(exc), option_strings(magic))) from None


def _variable_name(name: str | None, shell: Any) -> str | None:
    """``name`` if ``-o`` may bind it; a UsageError for keywords and for names Python or IPython rely on.

    ``-o get_ipython`` would break every later magic and ``-o print`` the built-in, until the kernel restarts.
    """
    if name is None:
        return None
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"-o needs a Python variable name, not {name!r}.")
    if name in _IPYTHON_NAMES or _IPYTHON_HISTORY_NAME.fullmatch(name) or name in shell.user_ns_hidden:
        owner = "IPython's own"
    elif hasattr(builtins, name):
        owner = "Python's built-in"
    elif name.startswith("__") and name.endswith("__"):
        owner = "Python's special name"
    else:
        return name
    raise UsageError(f"-o {name} would replace {owner} {name}; choose another name (e.g. -o result).")


def _print_usage(magic: Any, example: str) -> None:
    # MagicHelpFormatter writes the usage as an RST literal block ("::" and an indent).
    usage = textwrap.dedent(magic.parser.format_usage().replace("::", "", 1)).strip()
    print(f"Usage: {usage}\nExample: {example}\nAll options: %{magic.parser.prog}?")


class Interrupted(KeyboardInterrupt):
    """A magic's call was stopped by Ctrl-C or the kernel's interrupt; IPython shows one line, "Interrupted"."""

    def _render_traceback_(self) -> list[str]:
        return ["Interrupted"]


class _JsonView(dict):
    """The service's raw JSON (a plain ``dict``), displayed as a JSON tree and as indented text."""

    @classmethod
    def of_results(cls, results: Any) -> _JsonView:
        """The JSON view of search results."""
        return cls(results.to_dict())

    def _text(self) -> str:
        return json.dumps(self, indent=2, ensure_ascii=False)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's pretty printer knows dict and would win over the bundle's text/plain.
        printer.text(self._text())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self._text(), "application/json": dict(self)}


class _MarkdownSource(str):
    """Markdown source (a plain ``str``), displayed as a code block rather than rendered."""

    @classmethod
    def of_documents(cls, documents: Any) -> _MarkdownSource:
        """The documents' Markdown, one after the other with a rule between."""
        return cls("\n\n---\n\n".join(doc.content for doc in documents))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))  # the source itself, not a quoted repr

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from .render.markdown import fenced_source

        return {"text/plain": str(self), "text/markdown": fenced_source(str(self), "markdown")}


class _Progress:
    """A "Searching…" line shown while a call runs, then replaced in place (by nothing, a notice or a result).

    Only shown where outputs can be updated in place (kernels, captures); a plain terminal would print
    the line and then a blank one. In a kernel it is shown only as its cell's first output, and removed
    whole at the end, so a saved notebook keeps no empty display (:mod:`.cell_watch`).
    """

    def __init__(self, shell: Any, text: str) -> None:
        from .cell_watch import SKIP, placeholder_way

        self.handle: Any = None
        self.way = placeholder_way(shell)  # a saved notebook keeps no empty display of ours (see cell_watch)
        if type(shell.display_pub) is not DisplayPublisher and self.way != SKIP:
            from .display import placeholder

            self.handle = _display(placeholder(text), display_id=True)

    def show(self, obj: Any) -> None:
        """Put ``obj`` (a displayable or a mimebundle dict) where the placeholder was."""
        if self.handle is None:
            _display(obj)
        else:
            self.handle.update(obj, raw=isinstance(obj, dict))
            self.handle = None

    def clear(self) -> None:
        """Remove the placeholder (the cell's returned value displays the result)."""
        from .cell_watch import CLEAR

        if self.handle is not None:
            if self.way == CLEAR:
                from IPython.display import clear_output

                clear_output()
            else:
                self.handle.update(_EMPTY_OUTPUT, raw=True)  # outputs before it in the cell stay
            self.handle = None

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.clear()


def _display(obj: Any, **kwargs: Any) -> Any:
    return display(obj, raw=isinstance(obj, dict), **kwargs)


def _show_notices(notices: list[str]) -> None:
    # In a notebook, stderr renders as a red error box; a notice is information, not a failure.
    for notice in notices:
        display(_message(notice.removeprefix("devknow: "), kind="info"), raw=True)


def _message(text: str, kind: str = "info") -> dict[str, Any]:
    from .display import message_bundle

    return message_bundle(text, kind=kind)


@magics_class
class DevKnowMagics(Magics, DevKnowConfig):
    """Search, read and ask Google's developer documentation: ``%devsearch``, ``%devget``, ``%%devask``.

    ``%devknow`` shows the status and changes the key, endpoint, cache and error display. The connection's
    settings (endpoint, protocol, timeout, cache, offline store) are :class:`~devknow_jupyter.config.DevKnowConfig`'s:
    ``%config DevKnowConfig.timeout = 60`` and ``%config DevKnowMagics.timeout = 60`` both set them.
    """

    max_results = Int(10, help="How many hits %devsearch shows when -n is not given.").tag(config=True)
    widgets = Bool(True, help="Show results as interactive widgets (False: static Markdown/HTML only).").tag(
        config=True
    )
    short_errors = Bool(True, help="Show expected errors as one short line (False: full tracebacks).").tag(config=True)
    remote_images = Bool(False, help="Load pages' images from the web (False: click to load each).").tag(config=True)
    on_error = Bool(False, help="Show a docs search button under each failed cell's traceback.").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        # The session exists before the traits load, so observers fired by config can reach it.
        self.session = Session(config=self, on_notices=_show_notices)
        super().__init__(shell=shell, **kwargs)

    # -- settings -------------------------------------------------------------------------------

    @validate("max_results")
    def _check_max_results(self, proposal: Any) -> int:
        if proposal["value"] < 1:
            raise TraitError("DevKnowMagics.max_results must be at least 1.")
        return proposal["value"]

    @observe("endpoint", "timeout", "protocol", "offline_store", "offline_fallback")
    def _rebuild_client(self, change: Any) -> None:
        self.session.close()  # the next call builds a client with the new settings

    @observe("cache_ttl", "cache_size")
    def _configure_cache(self, change: Any) -> None:
        self.configure_cache()

    @observe("widgets", "max_results", "remote_images")
    def _set_display_option(self, change: Any) -> None:
        # The traits write the one settings object the renderer reads (display.options is the same object).
        from .render.settings import options

        setattr(options, change["name"], change["new"])

    @observe("short_errors")
    def _set_short_errors(self, change: Any) -> None:
        from .errors import set_short_errors

        set_short_errors(change["new"])

    def close(self) -> None:
        """Close the shared client (the extension is being unloaded)."""
        self.session.close()

    # -- helpers --------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _interruptible(self) -> Iterator[None]:
        """Turn Ctrl-C or a kernel interrupt during a call into :class:`Interrupted` (one line, no traceback).

        The client is left as the interrupted call left it: the next call works (a request cut off midway
        is simply not read any further). With full tracebacks on (``%devknow --debug``) the original shows.
        """
        try:
            yield
        except KeyboardInterrupt:
            if not self.short_errors:
                raise
            raise Interrupted() from None

    def _store(self, name: str, out: str | None, value: Any) -> None:
        self.shell.user_ns[name] = value
        if out:
            self.shell.user_ns[out] = value

    def _in_background(self, label: str, working: str, call: Any, view: Any = None) -> Any:
        """Start ``call(client)`` in a worker thread; the handle it returns shows a spinner, then the result."""
        client = self.session.client()  # built here: its notices show in this cell, now
        return start(label, working, lambda: view(call(client)) if view else call(client))

    # -- the magics -----------------------------------------------------------------------------

    @magic_arguments()
    @argument(
        "-n",
        "--max-results",
        dest="n",
        type=int,
        metavar="N",
        help="Show at most N hits (default: DevKnowMagics.max_results).",
    )
    @argument("-o", "--out", metavar="VAR", help="Also store the hits in the variable VAR.")
    @argument("--source", metavar="DOMAIN", help="Only hits from this site, e.g. firebase.google.com.")
    @argument("--since", metavar="DATE", help="Only pages updated since DATE (YYYY-MM-DD; REST and the local index).")
    @argument("--refresh", action="store_true", help="Ask the server even when the result is cached.")
    @background_argument
    @argument(
        "--json",
        action="store_true",
        help="Show (and return) the service's raw JSON instead; _devsearch still holds the hits.",
    )
    @argument(
        "query",
        nargs="*",
        help="What to look for, in plain words, after the options. Taken as typed: quotes, $ and {} are not expanded.",
    )
    @no_var_expand
    @output_can_be_silenced
    @line_magic
    def devsearch(self, line: str) -> Any:
        """Search Google's developer documentation and show the matching passages.

        The hits are returned and stored in ``_devsearch`` (and in VAR with ``-o``), so
        ``hits = %devsearch create a bucket`` works and ``%devget _devsearch`` fetches the pages.
        Options go before the query; end them with ``--`` if the query starts with ``-``.

        Examples::

            %devsearch create a Cloud Storage bucket
            %devsearch -n 3 --source firebase.google.com sign in with email
        """
        line = _strip_silencing_semicolon(line)
        options, query = _split_options(line, {"-n", "--max-results", "-o", "--out", "--source", "--since"})
        args = _parse(self.devsearch, options)
        out = _variable_name(args.out, self.shell)
        if not query:
            _print_usage(self.devsearch, "%devsearch create a Cloud Storage bucket")
            return None
        from .render import settings

        limit = settings.options.max_results if args.n is None else args.n
        if limit < 1:
            raise UsageError("-n must be at least 1.")

        def search(client: Any) -> Any:
            found = client.search_documents(
                query, source=args.source, since=args.since, page_size=limit, refresh=args.refresh
            )
            results = found[:limit] if len(found) > limit else found
            self._store("_devsearch", out, results)
            return results

        if args.background:
            view = _JsonView.of_results if args.json else None
            return self._in_background(f"%devsearch {query!r}", "Searching…", search, view)
        with self._interruptible(), _Progress(self.shell, "Searching…") as progress:
            results = search(self.session.client())
            if args.json and results.info.notices:  # the rendered hits show their notices themselves
                progress.show(_message(" ".join(results.info.notices), "info"))
        return _JsonView(results.to_dict()) if args.json else results

    @magic_arguments()
    @argument("-o", "--out", metavar="VAR", help="Also store the documents in the variable VAR.")
    @argument(
        "--raw",
        action="store_true",
        help="Show (and return) the Markdown source instead of the rendered page; _devget still holds the documents.",
    )
    @argument("--refresh", action="store_true", help="Fetch again even when the documents are cached.")
    @background_argument
    @argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="Document names (documents/...), page URLs (https://...), "
        "or variables holding hits, search results, documents, an answer or names, with any subscripts or "
        "attributes (e.g. _devsearch, _devsearch[0], hits[:3], answer.references).",
    )
    @no_var_expand
    @output_can_be_silenced
    @line_magic
    def devget(self, line: str) -> Any:
        """Fetch whole documentation pages (Markdown) by name, page URL or search hits.

        The documents are returned, in request order, and stored in ``_devget`` (and in VAR with
        ``-o``). When some names are unknown, the error names them and ``_devget`` still holds the
        documents that were found.

        Examples::

            %devget _devsearch
            %devget _devsearch[0]
            %devget https://developers.google.com/knowledge/mcp
            %devget --raw documents/developers.google.com/knowledge/mcp
        """
        args = _parse(self.devget, _strip_silencing_semicolon(line))
        out = _variable_name(args.out, self.shell)
        if not args.names:
            _print_usage(self.devget, "%devget _devsearch")
            return None
        items = names_from(args.names, self.shell)

        def fetch(client: Any) -> Any:
            from .errors import DocumentNotFoundError
            from .models import Documents

            try:  # no names: e.g. `%devget _devsearch` after a search that found nothing
                documents = client.get_documents(items, refresh=args.refresh) if any_names(items) else Documents()
            except DocumentNotFoundError as exc:
                self._store("_devget", out, exc.documents if exc.documents is not None else Documents())
                raise
            self._store("_devget", out, documents)
            return documents

        view = _MarkdownSource.of_documents if args.raw else None
        if args.background:
            return self._in_background(f"%devget {' '.join(args.names)}", "Fetching…", fetch, view)
        with self._interruptible(), _Progress(self.shell, "Fetching…") as progress:
            from .errors import DocumentNotFoundError

            try:
                documents = fetch(self.session.client())
            except DocumentNotFoundError as exc:
                if exc.documents:
                    progress.show(exc.documents)  # the documents that were found
                raise
        return view(documents) if view else documents

    @magic_arguments()
    @argument("-o", "--out", metavar="VAR", help="Also store the answer in the variable VAR.")
    @argument(
        "--no-fallback",
        action="store_true",
        help="When the answer quota is used up, stop with the "
        "error instead of showing search results for the question.",
    )
    @argument("--source", metavar="DOMAIN", help="Ground the answer in this site's pages (REST and the local index).")
    @argument("--since", metavar="DATE", help="Ground it in pages updated since DATE (YYYY-MM-DD; REST, local index).")
    @argument("--refresh", action="store_true", help="Ask again even when the answer is cached.")
    @background_argument
    @no_var_expand
    @output_can_be_silenced
    @cell_magic
    def devask(self, line: str, cell: str) -> Any:
        """Ask a question (the cell's text); get an answer grounded in the docs, with its references.

        ``{name}`` in the question is replaced by the value of the variable ``name`` if it exists;
        anything else (``{}``, unknown names, ``$``, quotes) stays as typed. The answer is returned
        and stored in ``_devask`` (and in VAR with ``-o``).

        The service allows few answers a day. When they are used up, ``%%devask`` says so in one
        line and shows (and stores) search results for the same question instead, unless
        ``--no-fallback``.

        Example::

            %%devask
            How do I restrict an API key to one API?
        """
        args = _parse(self.devask, line)
        out = _variable_name(args.out, self.shell)
        question = interpolate(_strip_silencing_semicolon(cell), self.shell.user_ns).strip()
        if not question:
            _print_usage(self.devask, "%%devask on the first line, the question below it")
            return None
        def ask(client: Any) -> Any:
            # On an exhausted quota: search results with a notice on them, shown wherever they are displayed.
            fallback = not args.no_fallback
            result = client.ask(question, fallback=fallback, refresh=args.refresh, source=args.source, since=args.since)
            self._store("_devask", out, result)
            return result

        if args.background:
            return self._in_background(f"%%devask {question[:40]!r}", "Asking…", ask)
        with self._interruptible(), _Progress(self.shell, "Asking…"):
            return ask(self.session.client())

    @magic_arguments()
    @argument(
        "--api-key",
        action="store_true",
        help="Type an API key at a hidden prompt; it stays in this kernel's memory only.",
    )
    @argument(
        "--token",
        action="store_true",
        help="Type your token for a team's devknow serve at a hidden prompt; it stays in this kernel's memory only.",
    )
    @argument(
        "--endpoint", metavar="URL", help="Use this MCP server; 'local' for the offline index, 'auto' for the default."
    )
    @argument(
        "--protocol", choices=("mcp", "rest"), help="Talk MCP (default) or the API's REST surface (the rest extra)."
    )
    @argument("--clear-cache", action="store_true", help="Forget every cached result.")
    @argument("--debug", action="store_true", dest="debug", default=None, help="Show full tracebacks for errors.")
    @argument("--no-debug", action="store_false", dest="debug", help="Show errors as one short line (default).")
    @argument("--on-error", action="store_true", default=None, help="A docs search button under each traceback.")
    @argument("--no-on-error", action="store_false", dest="on_error", help="No button under tracebacks (default).")
    @argument(
        "command",
        nargs="*",
        metavar="explore [QUERY]",
        help="Open the documentation explorer, optionally with a first search.",
    )
    @no_var_expand
    @output_can_be_silenced
    @line_magic
    def devknow(self, line: str) -> Any:
        """Show the status of devknow_jupyter, or change its settings.

        Without options: the endpoint, the backend (remote or local), where the API key comes from
        (never the key), the cache size and hit rate, and the server's tools. Settings also live in
        ``%config DevKnowMagics``.

        Examples::

            %devknow
            %devknow --api-key
            %devknow --endpoint http://docs.team.example:8765/mcp --token
            %devknow --endpoint local
            %devknow --clear-cache --debug
            %devknow --on-error
        """
        line = _strip_silencing_semicolon(line)
        first, _, rest = line.strip().partition(" ")
        if first == "explore":
            with self._interruptible():  # its first search runs here
                return self._explore(rest.strip())
        args = _parse(self.devknow, line)
        if (args.api_key or args.token) and args.command:
            # Don't echo it back: it is already in the cell, and would land in the output too.
            raise UsageError(
                "Don't type the key into the cell: it would be saved with the notebook. "
                "Run `%devknow --api-key` alone and paste the key at the hidden prompt."
            )
        if args.command:
            raise UsageError("%devknow takes options, or the subcommand `explore [QUERY]`; see %devknow?")
        from .magic_settings import change_settings

        said = change_settings(self, args)
        if not said:
            with self._interruptible(), _Progress(self.shell, "Checking…"):
                status = self.session.status()
            status.rows.append(("errors", "one short line" if self.short_errors else "full tracebacks (--debug)"))
            status.rows.append(("on error", "docs button under tracebacks" if self.on_error else "off (--on-error)"))
            return status
        _display(_message(" ".join(said)))
        return None

    def _explore(self, query: str) -> Any:
        if importlib.util.find_spec("devknow_jupyter.explorer") is None:
            raise UsageError("The explorer is not part of this version of devknow_jupyter.")
        from .explorer import explore

        return explore(query or None, client=self.session.client())


# -- extension entry points --------------------------------------------------------------------

_loaded: weakref.WeakKeyDictionary[Any, DevKnowMagics] = weakref.WeakKeyDictionary()
# Settings and a prompted key outlive %unload_ext / %reload_ext within the same process.
_carried: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics on ``ipython`` (``%load_ext devknow_jupyter``); a second call does nothing."""
    if ipython in _loaded:
        return
    carried = _carried.pop(ipython, {})
    magics = DevKnowMagics(ipython, config=_config_for(ipython), **carried.get("traits", {}))
    if carried.get("api_key") or carried.get("token"):
        magics.session.configure(api_key=carried.get("api_key"), token=carried.get("token"))
    ipython.register_magics(magics)
    _loaded[ipython] = magics
    from .completion import install

    install(ipython, magics)
    if f"{__package__}.registry" in sys.modules:  # a tool with a face was registered (loading stays light)
        from .tool_faces import register_magics

        register_magics(ipython, magics.session.client)  # the registry's tools without a magic of their own
    register_session(ipython, magics.session)
    watch(ipython)
    _show_notices(magics.session.startup_notices())  # where the notebook loads us, not under the first search


def _config_for(ipython: Any) -> Any:
    """The devknow config file (:func:`~devknow_jupyter.config.load_config`) under the shell's own config."""
    from .config import load_config
    from .errors import ConfigurationError

    try:
        config = load_config()
    except ConfigurationError as exc:
        _show_notices([exc.message])
        return ipython.config
    config.merge(ipython.config)
    return config


def unload_ipython_extension(ipython: Any) -> None:
    """Close the shared client and remove the magics (``%unload_ext`` / ``%reload_ext``)."""
    magics = _loaded.pop(ipython, None)
    if magics is None:
        return
    if f"{__package__}.registry" in sys.modules:
        from .tool_faces import unregister_magics

        unregister_magics(ipython)
    unregister_session(ipython)
    unwatch(ipython)
    _carried[ipython] = {
        "traits": {
            name: getattr(magics, name)
            for name in magics.trait_names(config=True)
            if getattr(magics, name) != magics.trait_defaults(name)
        },
        "api_key": magics.session._api_key,
        "token": magics.session._token,
    }
    magics.close()
    remove_magics(ipython, magics)


def remove_magics(ipython: Any, magics: Any) -> None:
    """Take the magics of one Magics instance off ``ipython`` (IPython has no unregister_magics); used by
    :mod:`.deverror` too."""
    manager = ipython.magics_manager
    for kind, table in magics.magics.items():
        for name, func in table.items():
            if manager.magics[kind].get(name) == func:
                del manager.magics[kind][name]
    if manager.registry.get(type(magics).__name__) is magics:
        manager.registry.pop(type(magics).__name__)
    if magics in ipython.configurables:
        ipython.configurables.remove(magics)

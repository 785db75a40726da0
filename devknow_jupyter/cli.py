"""The ``devknow`` command: search, read and ask from a terminal, index Markdown, serve the index.

::

    devknow search QUERY [-n N] [--source DOMAIN]
    devknow search -                      (the query from stdin: python app.py 2>&1 | devknow search -)
    devknow get NAME_OR_URL...
    devknow ask QUESTION
    devknow index PATH [--follow-symlinks]
    devknow serve [--docs PATH] [--host 127.0.0.1] [--port 8765] [--token T] [--allow-host NAME]...
                  [--json-response] [--stateless]
    devknow status

Global options (before or after the subcommand): ``--endpoint URL|local``, ``--json`` (the service's
JSON shapes, for scripts) and ``--timeout SECONDS``. A thin front end over
:class:`~devknow_jupyter.DevKnowClient` and the local index: an expected error ends in one line on
stderr (``devknow: error: ...``), then its hint (``devknow: hint: ...``), and one exit status per
error class (the most specific one applies)::

    0  success                     5  QuotaExceededError       9  TransportError
    1  any other DevKnowError      6  ToolError               10  RequestTimeout
    2  wrong usage (argparse)      7  DocumentNotFoundError  130  interrupted (Ctrl-C)
    3  ConfigurationError          8  ProtocolError          11  LocalIndexError
    4  AuthenticationError

Keys are never printed.
Text from documents and servers is printed with its control characters visibly escaped
(:mod:`devknow_jupyter.terminal`); ``--json`` keeps the data exact.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from . import errors
from ._version import __version__
from .connection import GOOGLE_ENDPOINT
from .errors import ConfigurationError, DevKnowError, DocumentNotFoundError
from .extras import missing_extra
from .terminal import TerminalWriter, json_safe, terminal_safe

__all__ = ["main"]

PROG = "devknow"
# The packages `devknow serve` needs; a missing one means the optional extra is not installed.
_SERVER_PACKAGES = {"mcp", "mcp_types", "uvicorn", "starlette", "anyio"}


#: The exit status for each error class (the module docstring and docs/cli.md list them); 2 is argparse's usage
#: error and 130 an interrupt, as shells expect.
EXIT_STATUS: dict[type[DevKnowError], int] = {
    errors.DevKnowError: 1,
    errors.ConfigurationError: 3,
    errors.AuthenticationError: 4,
    errors.QuotaExceededError: 5,
    errors.ToolError: 6,
    errors.DocumentNotFoundError: 7,
    errors.ProtocolError: 8,
    errors.TransportError: 9,
    errors.RequestTimeout: 10,
    errors.LocalIndexError: 11,
}
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def exit_status(error: DevKnowError) -> int:
    """The exit status for ``error``: that of its most specific class in :data:`EXIT_STATUS`."""
    return next(EXIT_STATUS[kind] for kind in type(error).__mro__ if kind in EXIT_STATUS)


# -- argument parsing -------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 1 and 65535, not {value}")
    return value


def _global_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    # Registered on the main parser (with defaults) and on every subparser (without), so that the
    # options work before and after the subcommand and a later one never resets an earlier one.
    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument(
        "--endpoint",
        metavar="URL",
        default=default(None),
        help="MCP server URL, or 'local' for the offline index (default: DEVKNOW_ENDPOINT, else Google's "
        "server when DEVKNOW_API_KEY or GOOGLE_API_KEY is set, else the offline index)",
    )
    parser.add_argument(
        "--protocol",
        choices=("mcp", "rest"),
        default=default(None),
        help="how to talk to a remote server: the MCP tools, or the API's REST surface (filters, paging, "
        "citations; needs the rest extra). Default: DEVKNOW_PROTOCOL, else mcp",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print the service's JSON shapes instead of text",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECONDS",
        default=default(None),
        help="seconds one call may take in all, retries and waits included (default: DevKnowConfig.timeout, 30)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=default(None),
        help="a devknow config file (devknow_config.py or .json, c.DevKnowConfig.*) for every setting not given "
        "here (default: DEVKNOW_CONFIG, else ~/.config/devknow/devknow_config.py or .json)",
    )


class _Parser(argparse.ArgumentParser):
    """argparse's parser, adding "did you mean search?" to a mistyped subcommand or option."""

    def error(self, message: str) -> NoReturn:
        from .completion import did_you_mean

        super().error(did_you_mean(message, self._option_string_actions))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``devknow`` command."""
    parser = _Parser(
        prog=PROG,
        description="Search and read Google's developer documentation (Developer Knowledge API), "
        "or a local index of Markdown, from the command line.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _global_options(parser, defaults=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        _global_options(sub, defaults=False)
        return sub

    _search_parser(command("search", "Search passages of documentation."))
    get = command("get", "Print whole documents as Markdown.")
    get.add_argument("names", nargs="+", metavar="NAME_OR_URL", help="document names (documents/...) or page URLs")
    _ask_parser(command("ask", "Answer a question from the documentation, with references."))
    index_help = "Add a folder of Markdown and JSON Lines files, or one .jsonl file, to the default local index."
    _index_parser(command("index", index_help))
    _serve_parser(command("serve", "Serve the local index as an MCP server (Streamable HTTP)."))
    command("status", "Show the endpoint, backend, key source (never the key), cache and tools.")
    _pack_parser(command("pack", "Build, add, list and remove knowledge packs (documentation offline)."))
    if f"{__package__}.registry" in sys.modules:  # a tool with a face was registered (startup stays light)
        from .tool_faces import add_cli_commands

        add_cli_commands(command)  # one command per registry tool without a face of its own
    return parser


def _search_parser(search: argparse.ArgumentParser) -> None:
    search.add_argument(
        "query", nargs="+", metavar="QUERY", help="what to look for (quotes optional); - reads it from stdin"
    )
    search.add_argument(
        "-n", "--max-results", dest="n", type=_positive_int, metavar="N", help="show at most N hits (REST: up to 100)"
    )
    _filter_arguments(
        search,
        source="only hits from this site, e.g. firebase.google.com (repeat for several)",
        since="only pages updated since DATE (YYYY-MM-DD; REST, and the local index's files)",
    )
    search.add_argument("--page-token", metavar="TOKEN", help="the next page of a search (printed after a page)")


def _filter_arguments(parser: argparse.ArgumentParser, *, source: str, since: str) -> None:
    """The site and date filters a search and a question share (each with its own help)."""
    parser.add_argument("--source", metavar="DOMAIN", action="append", help=source)
    parser.add_argument("--since", metavar="DATE", help=since)


def _ask_parser(ask: argparse.ArgumentParser) -> None:
    ask.add_argument(
        "--no-fallback", action="store_true", help="fail when the answer quota is used up (default: search instead)"
    )
    _filter_arguments(
        ask,
        source="ground the answer in this site's pages (REST and the local index; repeat)",
        since="ground it in pages updated since DATE (YYYY-MM-DD; REST and the local index)",
    )
    ask.add_argument("question", nargs="+", metavar="QUESTION", help="the question (quotes optional)")


def _index_parser(index: argparse.ArgumentParser) -> None:
    index.add_argument(
        "path", metavar="PATH", help="folder or .jsonl file to index (again: only changed files are re-read)"
    )
    index.add_argument(
        "--follow-symlinks",
        action="store_true",
        default=None,
        help="also read symlinked files and folders that lead outside PATH (never devices, FIFOs or sockets)",
    )
    index.add_argument(
        "-v", "--verbose", action="store_true", help="list every file skipped (else one line per kind of reason)"
    )


def _serve_parser(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--docs", metavar="PATH", help="serve only this folder of Markdown (default: the default index)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="port to listen on (default: 8765)")
    serve.add_argument(
        "--token",
        metavar="T",
        default=None,
        help="require 'Authorization: Bearer T' or 'X-Goog-Api-Key: T' (default: DEVKNOW_SERVE_TOKEN, else none)",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also accept requests whose Host or Origin is NAME (any port; NAME:PORT for one), e.g. a proxy's or "
        "a DNS name of this machine; repeatable. Other names are refused (DNS rebinding protection)",
    )
    serve.add_argument("--json-response", action="store_true", help="answer application/json instead of SSE")
    serve.add_argument("--stateless", action="store_true", help="issue no sessions")
    serve.add_argument(
        "--pack", action="append", default=[], metavar="FILE", help="serve this knowledge pack (repeatable)"
    )
    serve.add_argument(
        "--workers", type=_positive_int, default=1, metavar="N", help="worker processes (N > 1: stateless)"
    )
    team = serve.add_argument_group("for a team (see docs/serve.md)")
    team.add_argument(
        "--upstream",
        nargs="?",
        const=GOOGLE_ENDPOINT,
        metavar="URL",
        help="forward the tools to this MCP endpoint (default URL: Google's) with the server's DEVKNOW_API_KEY; "
        "the served documents answer when it can't be reached",
    )
    team.add_argument("--users", metavar="FILE", help="TOML file of users and tokens ([users.NAME] token_sha256 = ...)")
    team.add_argument(
        "--quota",
        action="append",
        default=[],
        metavar="KIND=N/PERIOD",
        help="per-user quota, e.g. search=60/min, get=120/min, answer=20/day (repeatable)",
    )
    team.add_argument("--redis", metavar="URL", help="count quotas in this Redis (shared by several servers)")
    team.add_argument("--quota-db", metavar="FILE", help="SQLite file of the quota counts (default: in the cache)")
    team.add_argument("--access-log", metavar="FILE", help="JSON-lines access log to FILE ('-': stderr)")
    team.add_argument("--log-queries", action="store_true", help="write each query's text in the access log")


def _pack_parser(pack: argparse.ArgumentParser) -> None:
    actions = pack.add_subparsers(dest="pack_command", metavar="ACTION", required=True)
    build = actions.add_parser("build", help="build one pack file from recipes, folders or git repositories")
    what = "a shipped recipe (go), a .toml, a folder or a git URL"
    build.add_argument("sources", nargs="+", metavar="RECIPE", help=what)
    build.add_argument("-o", "--output", required=True, metavar="FILE", help="the pack file to write")
    build.add_argument("--name", help="the pack's name (default: the file name without .pack)")
    build.add_argument(
        "--repo", action="append", default=[], metavar="NAME=PATH", help="read recipe NAME from this repository copy"
    )
    build.add_argument("--keep-going", action="store_true", help="skip sources that cannot be fetched or give no page")
    build.add_argument(
        "--license", metavar="SPDX", help="the licence of the folders' pages (default: front matter or LICENSE file)"
    )
    build.add_argument("--attribution", metavar="TEXT", help="the attribution hits from the folders' pages carry")
    add = actions.add_parser("add", help="install a pack (searched with the default index)")
    add.add_argument("file", metavar="FILE")
    actions.add_parser("list", help="the installed packs, their sources and licences")
    actions.add_parser("remove", help="uninstall a pack").add_argument("name", metavar="NAME")
    actions.add_parser("recipes", help="the recipes shipped with devknow")


# -- output -----------------------------------------------------------------------------------------


def _emit(result: Any, args: argparse.Namespace, out: TextIO) -> None:
    """The service's JSON shape with ``--json``, else the result's view's CLI text (controls escaped)."""
    if args.json:
        _print_json(result.to_dict(), out)
    else:
        from .render.views import view_for

        TerminalWriter(out).write(view_for(result).cli(result))


def _print_json(data: Any, out: TextIO) -> None:
    # json.dumps leaves DEL, C1 and bidi controls raw; json_safe escapes them without changing the data.
    out.write(json_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n")


def _one_line(text: str) -> str:
    # A title or name from a server is one line: a newline in it would fake a line of our own.
    return terminal_safe(text, one_line=True)


def _note(lines: Sequence[str]) -> None:
    for line in lines:
        print(f"{PROG}: note: {_one_line(line)}", file=sys.stderr)


# -- subcommands ------------------------------------------------------------------------------------


def _config(args: argparse.Namespace) -> Any:
    """The :class:`~devknow_jupyter.config.DevKnowConfig` of the config file (``--config``, ``DEVKNOW_CONFIG``)."""
    from .config import config_from_file

    return config_from_file(args.config)


def _client(args: argparse.Namespace) -> Any:
    from .client import DevKnowClient

    given = {"endpoint": args.endpoint, "protocol": args.protocol, "timeout": args.timeout}  # the options win
    return DevKnowClient.from_config(_config(args), **{name: value for name, value in given.items() if value})


#: How much of stdin ``devknow search -`` reads: a long log's end (where its error is) and no more.
MAX_STDIN_BYTES = 1 << 20
_STDIN_HINT = "Pipe the error in (`python app.py 2>&1 | devknow search -`) or type the query after `search`."


def _query_from_stdin() -> str:
    """The query for ``devknow search -``: a traceback's error line (see :mod:`.error_query`), else the text.

    Reads to the end of the pipe but keeps only its last :data:`MAX_STDIN_BYTES` (a program's error comes last).
    """
    from .error_query import query_from_text

    if sys.stdin is None or sys.stdin.isatty():  # nothing is piped in: waiting for typed input would look like a hang
        raise ConfigurationError(
            "`devknow search -` reads the query from a pipe, and nothing is piped in.",
            hint=_STDIN_HINT,
        )
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    kept = bytearray()
    while chunk := stream.read(1 << 16):
        kept += chunk.encode() if isinstance(chunk, str) else chunk
        del kept[:-MAX_STDIN_BYTES]
    query = query_from_text(kept.decode("utf-8", errors="replace")).strip()
    if not query:
        raise ConfigurationError("Nothing to search for came on standard input.", hint=_STDIN_HINT)
    return query


def _cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    query = _query_from_stdin() if args.query == ["-"] else " ".join(args.query)
    with _client(args) as client:
        results = client.search_documents(
            query, source=args.source, since=args.since, page_size=args.n, page_token=args.page_token
        )
    _note(results.info.notices)
    _emit(results, args, out)
    if results.next_page_token:  # on stderr, so that --json output stays one JSON value
        _note([f"more hits: run the same search with --page-token {results.next_page_token}"])
    return 0


def _cmd_get(args: argparse.Namespace, out: TextIO) -> int:
    with _client(args) as client:
        try:
            documents = client.get_documents(args.names)
        except DocumentNotFoundError as exc:
            # Show what was found, then fail: nothing fetched is lost, and scripts still see the error.
            if exc.documents:
                _note(exc.documents.info.notices)
                _emit(exc.documents, args, out)
            raise
    _note(documents.info.notices)  # e.g. the local index answered because the service was unreachable
    _emit(documents, args, out)
    return 0


def _cmd_ask(args: argparse.Namespace, out: TextIO) -> int:
    with _client(args) as client:
        question = " ".join(args.question)
        result = client.ask(question, fallback=not args.no_fallback, source=args.source, since=args.since)
    _note(result.info.notices)  # the quota fallback, or the local index standing in for the service
    _emit(result, args, out)  # an answer, or search results standing in when the answer quota is used up
    return 0


def _cmd_index(args: argparse.Namespace, out: TextIO) -> int:
    from .local.backend import open_cache_index
    from .local.paths import default_index_path
    from .local.report import IndexReport

    report = IndexReport()
    index = open_cache_index(default_index_path(), report=report)
    try:
        report.merge(index.add_folder(args.path, follow_symlinks=args.follow_symlinks))
        where = index.path
    finally:
        index.close()
    if args.json:
        _print_json(dataclasses.asdict(report), out)
        return 0
    text = TerminalWriter(out)  # file names are the folder's, whatever characters they hold
    text.write(f"Indexed {os.path.abspath(args.path)} into {where}\n{report.summary()}\n")
    lines = report.skip_lines(verbose=args.verbose)
    for line in lines:
        text.write(f"  {line}\n")
    if len(lines) < len(report.skipped):
        text.write("  (--verbose lists every file skipped)\n")
    for path, note in report.warnings:
        text.write(f"  warning {path}: {note}\n")
    return 0


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    try:
        from .local import server
        from .service.options import TeamOptions
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in _SERVER_PACKAGES:
            raise missing_extra("server", "`devknow serve` needs the MCP SDK") from None
        raise
    token = args.token if args.token is not None else os.environ.get("DEVKNOW_SERVE_TOKEN") or None
    config = _config(args)  # the upstream's timeout, and the cache's sizes
    server.serve(
        docs=args.docs,
        host=args.host,
        port=args.port,
        token=token,
        json_response=args.json_response,
        stateless=args.stateless,
        allow_hosts=args.allow_host,
        packs=args.pack,
        workers=args.workers,
        team=TeamOptions(
            upstream=args.upstream,
            users=args.users,
            quotas=tuple(args.quota),
            redis=args.redis,
            quota_db=args.quota_db,
            access_log=args.access_log,
            log_queries=args.log_queries,
            upstream_timeout=args.timeout or config.timeout,
        ),
        out=out,
    )
    return 0


def _cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    from .fallback import FALLBACK_BACKEND, is_unreachable

    with _client(args) as client:
        status: dict[str, Any] = client.status()
        if client.backend_kind == "local":
            from .local.backend import LocalBackend

            if isinstance(client.backend, LocalBackend):
                figures = client.backend.index.stats()
                status.update(
                    index_path=figures["path"],
                    index_documents=figures["documents"],
                    index_passages=figures["chunks"],
                    index_folders=figures["folders"],
                )
        problem: DevKnowError | None = None
        try:
            status["tools"] = [tool.get("name") for tool in client.list_tools()]
        except DevKnowError as exc:  # still show the settings; the error is the finding
            status["tools"] = None
            problem = exc
            if client.offline_fallback and is_unreachable(exc):
                # Not a failure: search, get and ask work, from the local index; say so and exit 0.
                status["answered_by"] = FALLBACK_BACKEND
                _note([f"{exc.message} Until it can, search, get and ask answer from the local index."])
                problem = None
        from .status import installed_pack_lines, protocol_line

        figures = client.status()  # after the tools call: the MCP era is known by now
        status.update(era=figures["era"], protocol_version=figures["protocol_version"], protocol=figures["protocol"])
        status["packs"] = installed_pack_lines(client.backend)
    if not args.json:  # one row for the protocol and its era (the JSON keeps them apart)
        status["protocol"] = protocol_line(status)
        status.pop("era", None)
        status.pop("protocol_version", None)
    if args.json:
        _print_json(status, out)
    else:
        text = TerminalWriter(out)
        width = max(len(key) for key in status)
        for key, value in status.items():
            if isinstance(value, list):
                value = ", ".join(map(str, value)) or "none"
            elif isinstance(value, float):
                value = f"{value:.4g}"
            text.write(f"{key.replace('_', ' '):<{width}}  {'-' if value is None else value}\n")
    if problem is not None:
        raise problem
    return 0


def _pack_build(args: argparse.Namespace, out: TextIO, text: TerminalWriter) -> int:
    """`devknow pack build`: the pack written, skipped sources and notes on stderr, the summary on stdout."""
    from . import packs

    repos = {}
    for item in args.repo:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigurationError(f"--repo {item!r}: expected NAME=PATH")
        repos[name] = path
    progress = packs.pack.TerminalProgress(sys.stderr)
    try:
        report = packs.build(
            args.sources,
            args.output,
            name=args.name,
            repos=repos,
            keep_going=args.keep_going,
            progress=progress,
            license=args.license,
            attribution=args.attribution,
        )
    finally:
        progress.finish()
    for reason in report.skipped:
        print(f"{PROG}: skipped: {_one_line(reason)}", file=sys.stderr)
    for note in report.notes:
        print(f"{PROG}: note: {_one_line(note)}", file=sys.stderr)
    if args.json:
        _print_json({"path": str(report.path), "size_bytes": report.size_bytes, **report.manifest}, out)
    else:
        text.write(
            f"Built {report.path}: {report.pages} pages from {len(report.manifest['sources'])} sources, "
            f"{report.size_bytes / 1e6:.1f} MB in {report.seconds:.1f} s\n"
        )
    return 0


def _cmd_pack(args: argparse.Namespace, out: TextIO) -> int:
    from . import packs

    text = TerminalWriter(out)
    if args.pack_command == "recipes":
        for name in packs.shipped_recipes():
            recipe = packs.load_recipe(name)
            text.write(f"{name:<12} {recipe.title} ({recipe.license})\n")
        return 0
    if args.pack_command == "build":
        return _pack_build(args, out, text)
    if args.pack_command == "add":
        _print_added(packs.add(args.file), text)
        return 0
    if args.pack_command == "remove":
        removed = packs.remove(args.name)
        text.write(f"Removed the pack {args.name}: {removed} pages\n")
        return 0
    listing = packs.installed()
    if args.json:
        _print_json(listing, out)
        return 0
    if not listing:
        text.write("No packs installed: `devknow pack build go -o go.pack`, then `devknow pack add go.pack`.\n")
    for manifest in listing:
        pages = sum(source["pages"] for source in manifest["sources"])
        text.write(f"{manifest['name']}: {pages} pages, built {manifest.get('built', '?')}\n")
        for source in manifest["sources"]:
            text.write(f"  {source['name']}: {source['pages']} pages, {source['license']}, {source['commit'][:12]}\n")
    return 0


def _print_added(added: Any, text: TerminalWriter) -> None:
    """What `pack add` did: pages added, and for names the index had already, which copy is kept and why."""
    verb = "Replaced" if added.replaced else "Added"
    text.write(f"{verb} the pack {added.name}: {added.pages} pages in {added.seconds:.1f} s\n")
    for copy, count in sorted(added.kept.items()):
        # The pack's licence line is shown on these pages whichever copy is kept.
        if copy == "file":
            text.write(
                f"  {count} of its pages are in the index from your indexed folders (same names): your files'"
                " copies are kept (your own files always win); the pack's licence line is shown on them\n"
            )
        else:
            text.write(f"  {count} of its pages are kept from the {copy}, installed earlier (same names)\n")


_COMMANDS = {
    "search": _cmd_search,
    "get": _cmd_get,
    "ask": _cmd_ask,
    "index": _cmd_index,
    "serve": _cmd_serve,
    "status": _cmd_status,
    "pack": _cmd_pack,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``devknow`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: 2 after a usage message, 0 after --help or --version
        return exc.code if isinstance(exc.code, int) else 0
    out = sys.stdout
    try:
        if getattr(args, "registry_tool", None):
            from .tool_faces import run_cli

            return run_cli(args, out, _client(args))
        return _COMMANDS[args.command](args, out)
    except DevKnowError as exc:
        print(f"{PROG}: error: {_one_line(exc.message)}", file=sys.stderr)
        hint = exc.hint_for("cli")  # in the command line's words: its flags, never a magic
        if hint:
            print(f"{PROG}: hint: {_one_line(hint)}", file=sys.stderr)
        return exit_status(exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `devknow get ... | head`: the reader left; don't let Python complain at exit either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

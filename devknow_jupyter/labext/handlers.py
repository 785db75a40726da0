"""The ``devknow/api/*`` request handlers and the server-side settings (``c.DevKnowServer.*``).

Every handler is an :class:`~jupyter_server.base.handlers.APIHandler` behind ``tornado.web.authenticated``:
the Jupyter server's token or cookie login and its XSRF check guard each request. Nothing that blocks runs on
tornado's event loop: client calls (HTTP to the service, SQLite for the offline index) and rendering go to
worker lanes (:mod:`.lanes`), each bounded, under the request's deadline (``c.DevKnowServer.timeout``, time
waiting for a worker included). Replies are the service's JSON shapes plus the HTML our renderer made; errors
are ``{"error": {"type", "message", "hint"}}`` with a status that says what went wrong.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from traitlets import Integer, Unicode
from traitlets.config import LoggingConfigurable

from .._version import __version__
from ..config import DevKnowConfig
from ..errors import (
    AuthenticationError,
    ConfigurationError,
    DevKnowError,
    DocumentNotFoundError,
    QuotaExceededError,
    RequestTimeout,
    redact,
)
from ..render.style import CSS
from .body import read_json_object
from .lanes import Deadline, Lane, ServerBusy
from .sites import SiteSuggestions
from .views import answer_reply, as_json, documents_reply, search_reply, section_reply

__all__ = ["DevKnowServer", "setup_handlers", "teardown"]

#: Most names one ``POST documents`` may ask for (the client batches them 20 a call).
MAX_NAMES = 50
#: Threads for cheap work (status, building the client), apart from the service calls so it never waits on them.
QUICK_WORKERS = 2


class DevKnowServer(DevKnowConfig, LoggingConfigurable):
    """Server-side settings of the JupyterLab panel, and the one client it shares between requests.

    Its connection settings (endpoint, protocol, timeout, cache, offline store) are
    :class:`~devknow_jupyter.config.DevKnowConfig`'s: ``c.DevKnowConfig.*`` and ``c.DevKnowServer.*`` both set them.
    """

    token = Unicode(
        None,
        allow_none=True,
        config=True,
        help="The token of a team's devknow serve (sent as Authorization: Bearer). Default: DEVKNOW_TOKEN.",
    )
    max_hits = Integer(50, config=True, help="Most hits one search request may ask for (its n).")
    workers = Integer(8, config=True, help="Threads calling the documentation service (search, pages, answers).")
    render_workers = Integer(1, config=True, help="Worker processes rendering whole pages to HTML.")
    max_waiting = Integer(
        32,
        config=True,
        help="Requests that may wait for a busy service or render worker; more are refused with 503.",
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._client: Any = None
        self._lock = threading.Lock()
        #: Status and client start-up: never behind a slow call.
        self.quick = Lane("status", QUICK_WORKERS, self.max_waiting)
        #: Calls to the service (and the small renders of hit lists and answers that follow them).
        self.calls = Lane("service", self.workers, self.max_waiting)
        #: Whole pages to HTML: CPU-bound and unbounded in size, so in processes of their own (off the GIL).
        self.render = Lane("render", self.render_workers, self.max_waiting, processes=True)
        #: The site box's suggestions (they follow the index that answered last).
        self.sites = SiteSuggestions()
        self.configure_cache()

    def close(self) -> None:
        """Close the shared client and stop the worker lanes (the Jupyter server is stopping)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        self.sites.close()
        for lane in (self.quick, self.calls, self.render):
            lane.close()

    def deadline(self) -> Deadline:
        """The deadline of a request arriving now."""
        return Deadline(self.timeout)

    def client(self) -> Any:
        """The shared :class:`~devknow_jupyter.client.DevKnowClient`, built on first use (key from the env)."""
        with self._lock:
            if self._client is None:
                from ..client import DevKnowClient

                try:
                    self._client = DevKnowClient.from_config(self, token=self.token or None, announce=False)
                except ConfigurationError as exc:
                    hint = "Check c.DevKnowServer.endpoint or DEVKNOW_ENDPOINT."
                    raise ServerConfigError(exc.message, hint=hint) from None
            return self._client


class ServerConfigError(DevKnowError):
    """The server's own devknow configuration is unusable (an error of the server, not of the request)."""


def _status_for(exc: DevKnowError) -> int:
    """The HTTP status that says what kind of failure ``exc`` is."""
    if isinstance(exc, ServerConfigError):
        return 500
    if isinstance(exc, ConfigurationError):
        return 400
    if isinstance(exc, AuthenticationError):
        return 403 if exc.status == 403 else 401
    if isinstance(exc, DocumentNotFoundError):
        return 404
    if isinstance(exc, QuotaExceededError):
        return 429
    if isinstance(exc, RequestTimeout):
        return 504
    if isinstance(exc, ServerBusy):
        return 503
    return 502  # TransportError, ProtocolError, ToolError: the upstream service failed


def _replying(method: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    """Turn a :class:`DevKnowError` (or any crash) inside a handler method into a JSON error reply."""

    @functools.wraps(method)
    async def wrapper(self: _DevKnowHandler, *args: Any, **kwargs: Any) -> None:
        try:
            await method(self, *args, **kwargs)
        except DevKnowError as exc:
            if isinstance(exc, (QuotaExceededError, ServerBusy)) and exc.retry_after:
                self.set_header("Retry-After", str(int(exc.retry_after)))
            self.reply_error(_status_for(exc), type(exc).__name__, exc.message, exc.hint)
        except Exception as exc:  # a bug of ours: one line for the user, the traceback in the server log
            self.log.exception("devknow: %s failed", self.request.path)
            self.reply_error(500, "InternalError", redact(f"{type(exc).__name__}: {exc}")[:300], None)

    return wrapper


class _DevKnowHandler(APIHandler):
    """Common parts: the shared settings object, JSON replies and JSON errors."""

    @property
    def devknow(self) -> DevKnowServer:
        return self.settings["devknow_server"]

    def reply(self, data: dict[str, Any] | str) -> None:
        """Send ``data`` (a dict, or its JSON text made in a worker lane) as the JSON reply."""
        self.set_header("Content-Type", "application/json")
        self.finish(data if isinstance(data, str) else json.dumps(data))

    def reply_error(self, status: int, kind: str, message: str, hint: str | None) -> None:
        self.set_status(status)
        self.reply({"error": {"type": kind, "message": message, "hint": hint}})

    def json_body(self) -> dict[str, Any]:
        """The request's JSON object, checked (size, depth, valid Unicode): else a 400."""
        return read_json_object(self.request.body)

    def decode_argument(self, value: bytes, name: str | None = None) -> str:
        """Query arguments that are not UTF-8 are a 400 in our error shape, not tornado's HTML one."""
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigurationError(f"The {name or 'request'} argument is not valid UTF-8.") from None

    async def client(self, deadline: Deadline) -> Any:
        """The shared client, built in the quick lane on first use."""
        return await self.devknow.quick.run(deadline, self.devknow.client)


class SearchHandler(_DevKnowHandler):
    """``GET devknow/api/search?query=&source=&n=``: up to n hits for a query, optionally from one site."""

    @tornado.web.authenticated
    @_replying
    async def get(self) -> None:
        deadline = self.devknow.deadline()
        query = self.get_query_argument("query", "")
        if self.get_query_argument("error", "") == "1":  # an error's output: its type, message and libraries
            from ..error_query import query_from_text

            query = query_from_text(query)
        source = self.get_query_argument("source", "").strip() or None
        n_text = self.get_query_argument("n", "10")
        try:
            n = int(n_text)
        except ValueError:
            raise ConfigurationError(f"n must be a whole number, not {n_text[:20]!r}.") from None
        if not 1 <= n <= self.devknow.max_hits:
            raise ConfigurationError(f"n must be between 1 and {self.devknow.max_hits}.")
        client = await self.client(deadline)
        self.reply(await self.devknow.calls.run(deadline, _search_json, client, query, source, n))


def _search_json(client: Any, query: str, source: str | None, n: int) -> str:
    """One search of ``n`` hits (the backend's page size allowing; cut here where the server has none), as JSON."""
    results = client.search_documents(query, source=source, page_size=n)
    return json.dumps({**search_reply(results), "source": source})  # hit HTML is small: rendered here


class DocumentsHandler(_DevKnowHandler):
    """``POST devknow/api/documents`` with ``{"names": [...]}`` (names or page URLs): whole pages."""

    @tornado.web.authenticated
    @_replying
    async def post(self) -> None:
        deadline = self.devknow.deadline()
        names = self.json_body().get("names")
        if not isinstance(names, list) or not names or not all(isinstance(name, str) for name in names):
            raise ConfigurationError('Send {"names": [...]} with one or more document names or page URLs.')
        if len(names) > MAX_NAMES:
            raise ConfigurationError(f"At most {MAX_NAMES} names a request.")
        client = await self.client(deadline)
        docs = await self.devknow.calls.run(deadline, client.get_documents, names)
        self.reply(await self.devknow.render.run(deadline, as_json, documents_reply, docs))


class SectionHandler(_DevKnowHandler):
    """``POST devknow/api/section`` with ``{"name", "index", "number"}``: one section of a long page, rendered
    (the panel asks for each as it scrolls into view; the page itself comes from the client's cache)."""

    @tornado.web.authenticated
    @_replying
    async def post(self) -> None:
        deadline = self.devknow.deadline()
        body = self.json_body()
        name, index, number = body.get("name"), body.get("index"), body.get("number")
        if not isinstance(name, str) or not all(_whole(value) for value in (index, number)):
            raise ConfigurationError('Send {"name": "...", "index": N, "number": N} from the page\'s "sections".')
        client = await self.client(deadline)
        docs = await self.devknow.calls.run(deadline, client.get_documents, [name])
        self.reply(await self.devknow.render.run(deadline, as_json, functools.partial(
            _section_of, index=index, number=number), docs))


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _section_of(docs: Any, *, index: int, number: int) -> dict[str, Any]:
    return section_reply(docs[0], index, number)


class AnswerHandler(_DevKnowHandler):
    """``POST devknow/api/answer`` with ``{"query": ...}``: a grounded answer, or hits once the quota is out."""

    @tornado.web.authenticated
    @_replying
    async def post(self) -> None:
        deadline = self.devknow.deadline()
        query = self.json_body().get("query")
        if not isinstance(query, str):
            raise ConfigurationError('Send {"query": "..."} with the question.')
        client = await self.client(deadline)
        self.reply(await self.devknow.calls.run(deadline, _answer_json, client, query))


def _answer_json(client: Any, query: str) -> str:
    """The answer to ``query`` (or the hits of the quota fallback), as JSON: its render is small."""
    return as_json(answer_reply, client.ask(query))


class ToolHandler(_DevKnowHandler):
    """``GET devknow/api/tools/FACE?text=``: a registry tool without a route of its own (:mod:`..tool_faces`)."""

    @tornado.web.authenticated
    @_replying
    async def get(self, face: str) -> None:
        from ..tool_faces import tool_reply

        deadline = self.devknow.deadline()
        text = self.get_query_argument("text", "")
        client = await self.client(deadline)
        self.reply(json.dumps(await self.devknow.calls.run(deadline, tool_reply, client, face, text)))


class StatusHandler(_DevKnowHandler):
    """``GET devknow/api/status``: endpoint, backend and where the key came from (never the key)."""

    @tornado.web.authenticated
    @_replying
    async def get(self) -> None:
        devknow = self.devknow
        status = await devknow.quick.run(devknow.deadline(), _status, devknow)  # one hop
        status["endpoint"] = redact(str(status["endpoint"]))
        self.reply({**status, "version": __version__, "stylesheet": CSS})


def _status(devknow: DevKnowServer) -> dict[str, Any]:
    """The client's status, with the sites the site box suggests (those of the index that answers)."""
    client = devknow.client()
    try:
        sites = devknow.sites.for_client(client)
    except DevKnowError:  # an offline index that can't be read suggests nothing; the status still comes
        sites = []
    return {**client.status(), "sites": sites}


def setup_handlers(serverapp: Any) -> DevKnowServer:
    """Add the handlers under ``{base_url}devknow/api/`` to ``serverapp``'s web application; returns the settings
    object they share (its ``close()`` ends the client and the workers).

    The devknow config file (:func:`~devknow_jupyter.config.load_config`) applies under the server's own config.
    """
    from traitlets.config import Config

    from ..config import load_config

    try:
        config = load_config()
    except ConfigurationError as exc:  # the server still starts, on its own config
        serverapp.log.error("devknow: %s", exc.message)
        config = Config()
    config.merge(serverapp.config)
    web_app = serverapp.web_app
    devknow = web_app.settings["devknow_server"] = DevKnowServer(parent=serverapp, config=config)
    base = url_path_join(web_app.settings["base_url"], "devknow", "api")
    routes = [("search", SearchHandler), ("documents", DocumentsHandler), ("answer", AnswerHandler)]
    routes += [("status", StatusHandler), ("section", SectionHandler)]
    routes.append((r"tools/([a-z][a-z0-9_-]*)", ToolHandler))  # the registry's tools, by face verb
    web_app.add_handlers(".*$", [(url_path_join(base, name), handler) for name, handler in routes])
    serverapp.log.info("devknow: Developer docs API at %s", base)
    return devknow



def teardown(serverapp: Any) -> None:
    """Close the extension's client and stop its workers (the server is stopping); safe to call twice."""
    devknow = serverapp.web_app.settings.get("devknow_server")
    if devknow is not None:
        devknow.close()

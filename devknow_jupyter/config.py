"""One configuration for every face: :class:`DevKnowConfig`, a traitlets ``Configurable`` (as jupysql's and
jupyter-ai's settings are).

The magics (``DevKnowMagics``) and the server extension (``DevKnowServer``) are subclasses, so
``c.DevKnowConfig.timeout = 60`` in ``ipython_config.py`` or ``jupyter_server_config.py`` applies to both,
and the older ``c.DevKnowMagics.timeout`` / ``c.DevKnowServer.timeout`` keep working (a subclass's section wins).
The ``devknow`` command and ``devknow serve`` build one from a config file and their options.

A config file (``devknow_config.py`` holding ``c.DevKnowConfig.timeout = 60``, or ``devknow_config.json``
holding ``{"DevKnowConfig": {"timeout": 60}}``) is read by all four faces: the one ``DEVKNOW_CONFIG`` names,
else ``devknow_config.py`` / ``.json`` in ``$XDG_CONFIG_HOME/devknow`` (``~/.config/devknow``).
Environment variables are only defaults of the traits (the table in ``docs/configuration.md``); keys and
tokens are never traits (``%config`` prints traits), so they stay in the environment or a hidden prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from traitlets import Bool, Float, Int, TraitError, Unicode, default, validate
from traitlets.config import Config, Configurable

__all__ = ["DevKnowConfig", "client_options", "config_file", "config_from_file", "load_config"]

_PROTOCOLS = ("", "mcp", "rest")


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


class DevKnowConfig(Configurable):
    """The settings every face of devknow_jupyter reads: where to connect, how long to wait, what to keep."""

    endpoint = Unicode(
        help="MCP server URL, or 'local' for the offline index ('local:PATH' for your own). Empty: Google's "
        "server when a key is set, else the offline index. Default: DEVKNOW_ENDPOINT.",
    ).tag(config=True)
    protocol = Unicode(
        help="'mcp' or 'rest' (the API's REST surface; the rest extra). Empty: mcp. Default: DEVKNOW_PROTOCOL."
    ).tag(config=True)
    timeout = Float(30.0, help="Seconds one call may take in all (retries and waits included).").tag(config=True)
    cache_ttl = Float(3600.0, help="Seconds a result stays cached (0 caches nothing).").tag(config=True)
    cache_size = Int(512, help="How many results the process's cache keeps (0 caches nothing).").tag(config=True)
    offline_store = Bool(True, help="Keep pages fetched from the service on disk, searchable offline.").tag(
        config=True
    )
    offline_fallback = Bool(True, help="Answer from the local index when the service cannot be reached.").tag(
        config=True
    )

    @default("endpoint")
    def _endpoint_from_env(self) -> str:
        return _env("DEVKNOW_ENDPOINT")

    @default("protocol")
    def _protocol_from_env(self) -> str:
        return _env("DEVKNOW_PROTOCOL").lower()

    @validate("endpoint")
    def _check_endpoint(self, proposal: Any) -> str:
        value = str(proposal["value"]).strip()
        if value in ("", "local") or value.startswith("local:"):
            return value
        parts = urlsplit(value)
        if parts.scheme in ("http", "https") and parts.netloc:
            return value
        name = type(self).__name__
        raise TraitError(f"{name}.endpoint must be an http(s) URL, 'local' or '' (automatic), not {value!r}.")

    @validate("protocol")
    def _check_protocol(self, proposal: Any) -> str:
        value = str(proposal["value"]).strip().lower()
        if value not in _PROTOCOLS:
            raise TraitError(f"{type(self).__name__}.protocol must be 'mcp', 'rest' or '' (mcp), not {value!r}.")
        return value

    @validate("cache_ttl", "cache_size")
    def _check_cache(self, proposal: Any) -> Any:
        if proposal["value"] < 0:
            raise TraitError(f"{type(self).__name__}.{proposal['trait'].name} cannot be negative.")
        return proposal["value"]

    @validate("timeout")
    def _check_timeout(self, proposal: Any) -> float:
        if proposal["value"] <= 0:
            raise TraitError(f"{type(self).__name__}.timeout must be more than 0 seconds.")
        return proposal["value"]

    def configure_cache(self) -> None:
        """Apply ``cache_size`` and ``cache_ttl`` to the process's shared cache."""
        from .cache import shared_cache

        shared_cache().configure(max_entries=self.cache_size, ttl=self.cache_ttl)


def client_options(config: DevKnowConfig) -> dict[str, Any]:
    """The :class:`~devknow_jupyter.DevKnowClient` keyword arguments ``config`` stands for.

    An endpoint equal to ``DEVKNOW_ENDPOINT`` is left to the client, so its status still says where it came from.
    """
    endpoint = config.endpoint.strip() or None
    if endpoint is not None and endpoint == _env("DEVKNOW_ENDPOINT"):
        endpoint = None
    return {
        "endpoint": endpoint,
        "protocol": config.protocol or None,
        "timeout": config.timeout,
        "offline_store": config.offline_store,
        "offline_fallback": config.offline_fallback,
    }


def config_file() -> Path | None:
    """The config file every face reads: ``DEVKNOW_CONFIG``, else ``devknow_config.py`` or ``.json`` in
    ``$XDG_CONFIG_HOME/devknow`` (``~/.config/devknow``); None when there is none."""
    named = _env("DEVKNOW_CONFIG")
    if named:
        return Path(named).expanduser()
    folder = Path(_env("XDG_CONFIG_HOME") or Path.home() / ".config") / "devknow"
    for name in ("devknow_config.py", "devknow_config.json"):
        if (folder / name).is_file():
            return folder / name
    return None


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """The traitlets ``Config`` in ``path`` (default: :func:`config_file`); empty when there is no file.

    A named file that is missing or broken is a :class:`~devknow_jupyter.errors.ConfigurationError`.
    """
    from traitlets.config.loader import ConfigFileNotFound, JSONFileConfigLoader, PyFileConfigLoader

    chosen = Path(path) if path is not None else config_file()
    if chosen is None:
        return Config()
    loader_class = JSONFileConfigLoader if chosen.suffix == ".json" else PyFileConfigLoader
    try:
        return loader_class(chosen.name, path=str(chosen.parent) or ".").load_config()
    except ConfigFileNotFound:
        from .errors import ConfigurationError

        raise ConfigurationError(f"No devknow config file at {chosen}.", hint="Fix DEVKNOW_CONFIG.") from None
    except Exception as exc:  # a syntax error, bad JSON: one line, not the loader's traceback
        from .errors import ConfigurationError

        raise ConfigurationError(f"The devknow config file {chosen} could not be read: {exc}") from None


def config_from_file(path: str | os.PathLike[str] | None = None) -> DevKnowConfig:
    """A :class:`DevKnowConfig` from the config file (``path``, else :func:`config_file`), with the shared cache
    set to its sizes: what the ``devknow`` command and ``devknow serve`` read. A value the file sets wrongly is a
    :class:`~devknow_jupyter.errors.ConfigurationError`."""
    loaded = load_config(path)
    try:
        config = DevKnowConfig(config=loaded)
    except TraitError as exc:
        from .errors import ConfigurationError

        raise ConfigurationError(f"In the devknow config file: {exc}") from None
    config.configure_cache()
    return config

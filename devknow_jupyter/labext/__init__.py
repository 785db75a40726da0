"""The Jupyter Server extension behind the JupyterLab "Developer docs" panel.

The panel in the browser never talks to the documentation service itself: it calls this extension's
endpoints under ``{base_url}devknow/api/`` (the Jupyter server's own token/cookie authentication and XSRF
checks apply), and the extension calls :class:`~devknow_jupyter.client.DevKnowClient` in the server process,
where the API key stays. Configure it like any Jupyter application (``DevKnowConfig`` is the settings every
face of devknow_jupyter shares; ``DevKnowServer`` adds the server's own, and also takes the shared ones)::

    c.DevKnowConfig.endpoint = "local"      # or an MCP server URL; default: DEVKNOW_ENDPOINT, key, else local
    c.DevKnowServer.timeout = 30.0

Enabled by ``etc/jupyter/jupyter_server_config.d/devknow_jupyter.labext.json``, which the wheel installs. Jupyter
Server runs it as an ``ExtensionApp`` (:class:`DevKnowExtension`), whose ``stop_extension`` closes the client
and stops the workers when the server stops.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_jupyter_server_extension"]

#: The name to list in ``ServerApp.jpserver_extensions`` (what the enable file lists).
EXTENSION_NAME = "devknow_jupyter.labext"


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Where Jupyter Server finds this extension: this module, run as :class:`DevKnowExtension`."""
    from .app import DevKnowExtension

    return [{"module": EXTENSION_NAME, "app": DevKnowExtension}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the ``devknow/api/*`` handlers on ``serverapp`` (servers that load modules, not apps)."""
    from .handlers import setup_handlers

    setup_handlers(serverapp)


def _unload_jupyter_server_extension(serverapp: Any) -> None:
    """Close the extension's client and stop its workers (the server is stopping); safe to call twice."""
    from .handlers import teardown

    teardown(serverapp)


# The name older Jupyter Server releases and notebook_shim look for.
load_jupyter_server_extension = _load_jupyter_server_extension

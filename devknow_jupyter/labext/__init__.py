"""The Jupyter Server extension behind the JupyterLab "Developer docs" panel.

The panel in the browser never talks to the documentation service itself: it calls this extension's
endpoints under ``{base_url}devknow/api/`` (the Jupyter server's own token/cookie authentication and XSRF
checks apply), and the extension calls :class:`~devknow_jupyter.client.DevKnowClient` in the server process,
where the API key stays. Configure it like any Jupyter application::

    c.DevKnowServer.endpoint = "local"      # or an MCP server URL; default: DEVKNOW_ENDPOINT, key, else local
    c.DevKnowServer.timeout = 30.0

Enabled by ``etc/jupyter/jupyter_server_config.d/devknow_jupyter.labext.json``, which the wheel installs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_jupyter_server_extension"]

#: The name to list in ``ServerApp.jpserver_extensions`` (what the enable file lists).
EXTENSION_NAME = "devknow_jupyter.labext"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where Jupyter Server finds this extension (the module holding ``_load_jupyter_server_extension``)."""
    return [{"module": EXTENSION_NAME}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the ``devknow/api/*`` handlers on ``serverapp`` (called by Jupyter Server at start-up)."""
    from .handlers import setup_handlers

    setup_handlers(serverapp)


# The name older Jupyter Server releases and notebook_shim look for.
load_jupyter_server_extension = _load_jupyter_server_extension

"""The server extension as a Jupyter Server ``ExtensionApp``: handlers added at load, resources closed at stop
(as jupyter-ai's extension does), which a plain module extension has no hook for."""

from __future__ import annotations

from jupyter_server.extension.application import ExtensionApp

__all__ = ["DevKnowExtension"]


class DevKnowExtension(ExtensionApp):
    """Adds the ``devknow/api/*`` handlers; ``stop_extension`` closes the shared client and the worker lanes."""

    name = "devknow_jupyter.labext"
    load_other_extensions = True

    def initialize_handlers(self) -> None:
        """Register the handlers on the server's web application (their routes are absolute already)."""
        from .handlers import setup_handlers

        setup_handlers(self.serverapp)

    async def stop_extension(self) -> None:
        """Close the client (its MCP session ends) and stop the workers, as the Jupyter server stops."""
        from .handlers import teardown

        teardown(self.serverapp)

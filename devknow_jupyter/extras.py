"""The optional extras (``pip install 'devknow-jupyter[rest]'`` ...): whether one is installed, and the one line
that names it when a feature needs it and it is missing.

Core and cheap: it looks modules up without importing them, so a base install (no extras) can ask before it
imports ``rest/``, ``local/server.py`` or ``local/semantic.py``, whose top-level imports need the extras.
"""

from __future__ import annotations

import importlib.util

from .errors import ConfigurationError

__all__ = ["EXTRA_MODULES", "extra_installed", "install_hint", "missing_extra"]

#: The modules each extra brings that our code imports, by extra (``[lab]``: the JupyterLab panel's server side).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "rest": ("google.developer_knowledge_v1", "google.api_core", "requests", "urllib3"),
    "server": ("mcp", "uvicorn", "starlette"),
    "semantic": ("wordllama", "safetensors", "tokenizers"),
    "lab": ("jupyter_server", "jupyterlab"),
}


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'devknow-jupyter[rest]'``."""
    return f"pip install 'devknow-jupyter[{extra}]'"


def extra_installed(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported (looked up, not imported)."""
    for module in EXTRA_MODULES[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):  # a parent package missing, or a broken half-installed one
            return False
    return True


def missing_extra(extra: str, needs: str, hint: str | None = None) -> ConfigurationError:
    """The error for a feature that needs ``extra`` when it is not installed, naming the command on one line:
    ``{needs}, which is not installed: pip install 'devknow-jupyter[...]'``."""
    return ConfigurationError(f"{needs}, which is not installed: {install_hint(extra)}", hint=hint)

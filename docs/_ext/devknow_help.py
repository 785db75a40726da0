"""Two directives that put the package's own help text into a page, so the reference cannot drift from the code.

``{magic-help} devsearch`` inserts the help of a magic (what ``%devsearch?`` shows: the usage and options that
``IPython.core.magic_arguments`` writes into its docstring); ``{cli-help} search`` inserts ``devknow search
--help`` (``{cli-help}`` alone: ``devknow --help``). Both read the package of this checkout (``conf.py`` puts
it first on ``sys.path``). A magic or command that does not exist is a build error.
"""

from __future__ import annotations

import argparse
import inspect
import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

WIDTH = "100"  # columns argparse formats help for, whatever the terminal that builds the site


def _magic_classes() -> list[type]:
    from devknow_jupyter.deverror import DevErrorMagics
    from devknow_jupyter.magics import DevKnowMagics

    return [DevKnowMagics, DevErrorMagics]


def magic_help(name: str) -> str:
    """The help text of the magic ``name`` (without ``%``), as ``%name?`` shows it."""
    for cls in _magic_classes():
        method = getattr(cls, name, None)
        if method is not None and method.__doc__:
            return inspect.cleandoc(method.__doc__).removeprefix("::").strip("\n")
    raise ExtensionError(f"magic-help: no magic named {name!r}")


def cli_help(command: str | None) -> str:
    """``devknow COMMAND --help`` (``devknow --help`` for None)."""
    os.environ["COLUMNS"] = WIDTH
    from devknow_jupyter.cli import build_parser

    parser = build_parser()
    if command is None:
        return parser.format_help()
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command].format_help()
    raise ExtensionError(f"cli-help: no devknow command named {command!r}")


class _HelpDirective(SphinxDirective):
    optional_arguments = 1

    def text(self) -> str:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        text = self.text().rstrip() + "\n"
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        self.set_source_info(block)
        return [block]


class MagicHelp(_HelpDirective):
    """``{magic-help} NAME``: the help of ``%NAME``."""

    required_arguments = 1
    optional_arguments = 0

    def text(self) -> str:
        return magic_help(self.arguments[0].lstrip("%"))


class CliHelp(_HelpDirective):
    """``{cli-help} [COMMAND]``: ``devknow [COMMAND] --help``."""

    def text(self) -> str:
        return cli_help(self.arguments[0] if self.arguments else None)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register ``magic-help`` and ``cli-help``."""
    app.add_directive("magic-help", MagicHelp)
    app.add_directive("cli-help", CliHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

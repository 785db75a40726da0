"""Tab completion and "did you mean" for the magics' options (and the ``devknow`` command's subcommands).

``%devsearch --so<Tab>`` offers ``--source`` (not Python names such as ``sorted``), ``%devknow <Tab>`` its
subcommands, ``%devget <Tab>`` the variables that hold results or names; a mistyped option is answered
with the nearest real one (:func:`did_you_mean`). Registered through IPython's ``complete_command`` hook,
the documented way for a magic to complete its own line.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["SUBCOMMANDS", "did_you_mean", "install", "install_options", "option_strings"]

#: The words ``%devknow`` takes besides options.
SUBCOMMANDS = ("explore",)
_UNRECOGNIZED = re.compile(r"unrecognized arguments?: (.+)")
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.+)\)")


def option_strings(magic: Any) -> list[str]:
    """Every option a magic built with ``magic_arguments`` takes, long ones first (``--source``, ``-n``...)."""
    parser = getattr(magic, "parser", None)
    found = list(getattr(parser, "_option_string_actions", {}))
    return sorted((option for option in found if option not in ("-h", "--help")), key=lambda o: (len(o) < 3, o))


def did_you_mean(message: str, options: Iterable[str]) -> str:
    """``message`` (argparse's) with "did you mean --source?" added when a mistyped option is close to one,
    or "did you mean search?" when a mistyped subcommand is close to one of the choices the message lists."""
    choice = _INVALID_CHOICE.search(message)
    if choice:
        known = re.findall(r"'([^']*)'", choice.group(2))
        close = difflib.get_close_matches(choice.group(1), known, n=1, cutoff=0.6)
        return f"{message} (did you mean {close[0]}?)" if close else message
    match = _UNRECOGNIZED.search(message)
    if not match:
        return message
    known = list(options)
    for word in match.group(1).split():
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=")[0], known, n=1, cutoff=0.6)
            if close:
                return f"{message} (did you mean {close[0]}?)"
    return message


def _completer(complete: Callable[[Any, str], list[str]]) -> Callable[[Any, Any], list[str]]:
    def hook(shell: Any, event: Any) -> list[str]:
        return complete(shell, event.symbol or "")

    return hook


def _options_or(words: Callable[[Any], Iterable[str]], options: list[str]) -> Callable[[Any, str], list[str]]:
    def complete(shell: Any, symbol: str) -> list[str]:
        pool = options if symbol.startswith("-") else list(words(shell))
        return [word for word in pool if word.startswith(symbol)]

    return complete


def result_variables(shell: Any) -> list[str]:
    """Names in the user's namespace whose value ``%devget`` can fetch (results, hits, documents)."""
    from .models import Document, DocumentChunk, Documents, SearchResults

    kinds = (SearchResults, DocumentChunk, Document, Documents)
    hidden = getattr(shell, "user_ns_hidden", {})
    names = []
    for name, value in list(shell.user_ns.items()):
        if name.startswith("__") or (name in hidden and hidden[name] is value):
            continue
        if isinstance(value, kinds) or (isinstance(value, (list, tuple)) and value and all(
            isinstance(item, kinds) for item in value
        )):
            names.append(name)
    return sorted(names)


def install(shell: Any, magics: Any) -> None:
    """Register the completers of ``magics`` (a DevKnowMagics) on ``shell``."""
    table = {
        "%devsearch": _options_or(lambda shell: (), option_strings(magics.devsearch)),
        "%devget": _options_or(result_variables, option_strings(magics.devget)),
        "%%devask": _options_or(lambda shell: (), option_strings(magics.devask)),
        "%devknow": _options_or(lambda shell: SUBCOMMANDS, option_strings(magics.devknow)),
    }
    for command, complete in table.items():
        shell.set_hook("complete_command", _completer(complete), str_key=command)


def install_options(shell: Any, command: str, magic: Any) -> None:
    """Complete the options of one more magic (``%deverror``, in its own module) as :func:`install` does."""
    complete = _options_or(lambda shell: (), option_strings(magic))
    shell.set_hook("complete_command", _completer(complete), str_key=command)

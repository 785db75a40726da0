"""The faces of the registry's tools that have no hand-written face: one magic, one CLI command, one panel route
each, made from the registry entry (:mod:`.registry`), so a new tool needs no change to the faces.

An entry with ``face="outline"`` gets ``%devoutline TEXT`` (its view's notebook output), ``devknow outline
TEXT`` (its view's CLI text, or the tool's JSON with ``--json``) and ``GET {base_url}devknow/api/tools/outline
?text=TEXT`` (the tool's JSON and the view's HTML fragment). Each passes ``TEXT`` as the entry's
``text_field`` to :meth:`DevKnowClient.run_tool <devknow_jupyter.DevKnowClient.run_tool>`. The three
built-in tools keep their own faces (``%devsearch``, ``devknow search``, ``/devknow/api/search`` ...).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, TextIO

from .registry import ToolEntry, face_entries, find_entry

__all__ = ["add_cli_commands", "magic_name", "register_magics", "run_cli", "tool_reply", "unregister_magics"]


def magic_name(entry: ToolEntry) -> str:
    """The line magic of a registry tool: ``dev`` and its face verb."""
    return f"dev{entry.face}"


def add_cli_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """One ``devknow`` command per registry tool with a face (``command(name, help)`` makes a subparser)."""
    for entry in face_entries():
        sub = command(str(entry.face), str(entry.definition.get("title") or entry.name) + ".")
        sub.add_argument("text", nargs="+", metavar=entry.text_field.upper())
        sub.set_defaults(registry_tool=entry.name)


def run_cli(args: argparse.Namespace, out: TextIO, client: Any) -> int:
    """Run the registry tool ``args.registry_tool`` on ``args.text`` and print it (its view's CLI text)."""
    entry = find_entry(args.registry_tool)
    assert entry is not None  # the command exists because the entry does
    with client:
        result = client.run_tool(entry.name, " ".join(args.text))
    if args.json:
        import json

        out.write(json.dumps(entry.result_from(result), indent=2, ensure_ascii=False) + "\n")
    else:
        from .terminal import TerminalWriter

        TerminalWriter(out).write(entry.load_view()().cli(result))
    return 0


def register_magics(ipython: Any, client: Callable[[], Any]) -> list[str]:
    """A line magic per registry tool with a face on ``ipython``, through ``client()`` (the shared client);
    returns their names. Each shows the model through its view and keeps it in ``_dev<face>``."""
    names = []
    for entry in face_entries():

        def magic(line: str, tool: str = entry.name, name: str = magic_name(entry)) -> None:
            from IPython.display import display

            from .display import mimebundle

            result = client().run_tool(tool, line.strip())
            ipython.user_ns[f"_{name}"] = result
            display(mimebundle(result, widgets=False), raw=True)

        magic.__doc__ = f"{entry.definition.get('description') or entry.name} (registry tool {entry.name})"
        ipython.register_magic_function(magic, "line", magic_name(entry))
        names.append(magic_name(entry))
    return names


def unregister_magics(ipython: Any) -> None:
    """Take the registry tools' magics off ``ipython`` again (``%unload_ext``)."""
    table = ipython.magics_manager.magics["line"]
    for entry in face_entries():
        table.pop(magic_name(entry), None)


def tool_reply(client: Any, face: str, text: str) -> dict[str, Any]:
    """The panel API's reply for the registry tool ``face`` on ``text``: its JSON result and the view's HTML."""
    entry = find_entry(face)
    if entry is None or not entry.face:
        from .errors import ConfigurationError

        raise ConfigurationError(f"No tool {face!r}.", hint="The registry's tools: " + ", ".join(
            str(item.face) for item in face_entries()) + ".")
    result = client.run_tool(entry.name, text)
    return {"tool": entry.name, "result": entry.result_from(result), "html": entry.load_view()().fragment(result)}

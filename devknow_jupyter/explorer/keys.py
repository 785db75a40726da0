"""Keys pressed over one of the explorer's lists (the hits, an answer's references).

ipywidgets has no keyboard events, and in a JupyterLab notebook ArrowUp/ArrowDown on a focused output
element that is not a text field run the notebook's "select the cell above/below" shortcut. The keys come
from `ipyevents <https://github.com/mwcraig/ipyevents>`_ instead: an ``Event`` widget watching ``keydown``
on the list's panel listens while the pointer is over it, and takes every key there in the capture phase
(stopPropagation + preventDefault), before JupyterLab's shortcuts. Where ipyevents is not installed,
:func:`watch_keys` returns None and Tab / Enter on the hit buttons remain.

:func:`list_key` is the pure part: a keydown message (the fields of the DOM event, as ipyevents sends
them), the highlighted row and the row count in, what to do out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Open the highlighted row (what :func:`list_key` returns for Enter and Space).
OPEN = "open"

# What a key does over a list: a step, or "first"/"last"/"open".
_LIST_KEYS: dict[str, int | str] = {
    "ArrowDown": 1,
    "ArrowUp": -1,
    "Tab": 1,  # ipyevents stops every key over the list, so Tab would do nothing; it steps like ArrowDown
    "Home": "first",
    "End": "last",
    "Enter": OPEN,
    " ": OPEN,
}


def list_key(message: dict[str, Any], current: int | None, count: int) -> int | str | None:
    """What a keydown over a list of ``count`` rows does, with row ``current`` highlighted (None: none).

    Returns the row to highlight, :data:`OPEN` (open row ``current``), or None (nothing: another key, a
    key with Ctrl/Alt/Meta, a keyup, an empty list, the highlight already at that end, Enter with nothing
    highlighted). Arrows stop at the ends (no wrap); ArrowDown with nothing highlighted starts at the
    first row, ArrowUp at the last; Shift+Tab steps back.
    """
    if message.get("type") != "keydown" or any(message.get(mod) for mod in ("ctrlKey", "altKey", "metaKey")):
        return None
    key = str(message.get("key"))
    action = _LIST_KEYS.get(key)
    if action is None or count <= 0:
        return None
    if action == OPEN:
        return OPEN if current is not None else None
    if key == "Tab" and message.get("shiftKey"):
        action = -1
    if action == "first":
        target = 0
    elif action == "last":
        target = count - 1
    elif current is None:
        target = 0 if int(action) > 0 else count - 1
    else:
        target = min(max(current + int(action), 0), count - 1)
    return None if target == current else target


def watch_keys(panel: Any, handler: Callable[[dict[str, Any]], None]) -> Any:
    """An ipyevents ``Event`` sending the keydowns over ``panel`` to ``handler``; None without ipyevents.

    Where the frontend lacks ipyevents' module (its labextension disabled, VS Code without its CDN,
    Colab), the model never listens and the widget manager logs one console error; nothing else breaks.
    """
    try:
        from ipyevents import Event
    except ImportError:  # an install without it: Tab/Enter on the hit buttons still work
        return None
    keys = Event(source=panel, watched_events=["keydown"])
    keys.on_dom_event(handler)
    return keys

"""Hints in each front end's own words: an error says what went wrong (its ``advice``, a fact such as
"timeout"), and the front end that shows it words what to do about it.

Two front ends word hints: ``"notebook"`` (IPython and Jupyter: the magics, and the Python API used there;
it is what ``DevKnowError.hint`` gives) and ``"cli"`` (the ``devknow`` command). The CLI never suggests a
magic, and the notebook never a command-line flag.
"""

from __future__ import annotations

__all__ = ["FRONT_ENDS", "no_key_notice", "worded"]

#: The front ends that word hints; the first is the default.
FRONT_ENDS = ("notebook", "cli")

_WORDS: dict[str, dict[str, str]] = {
    "credentials": {
        "notebook": (
            "Set DEVKNOW_API_KEY (or GOOGLE_API_KEY) in the environment, or run `%devknow --api-key`; "
            "`%devknow --endpoint local` uses the offline index instead."
        ),
        "cli": (
            "Set DEVKNOW_API_KEY (or GOOGLE_API_KEY) in the environment; `--endpoint local` uses the offline "
            "index instead."
        ),
    },
    "network": {
        "notebook": (
            "Check the network (HTTPS_PROXY, SSL_CERT_FILE for a corporate CA), or use the offline index with "
            "`%devknow --endpoint local`."
        ),
        "cli": (
            "Check the network (HTTPS_PROXY, SSL_CERT_FILE for a corporate CA), or use the offline index with "
            "`--endpoint local`."
        ),
    },
    "timeout": {
        "notebook": "Raise the timeout: `%config DevKnowMagics.timeout = 60` (in Python: DevKnowClient(timeout=60)).",
        "cli": "Raise the timeout, e.g. `--timeout 60`.",
    },
    "quota": {
        "notebook": (
            "answer_query allows about 50 answers a day and 10 a minute per project; %devsearch still works, "
            "and %%devask falls back to it."
        ),
        "cli": (
            "answer_query allows about 50 answers a day and 10 a minute per project; `devknow search` still "
            "works, and `devknow ask` falls back to it."
        ),
    },
    "document names": {
        "notebook": "Names look like documents/<page URL without https://>; %devsearch finds them.",
        "cli": "Names look like documents/<page URL without https://>; `devknow search` finds them.",
    },
}


def worded(advice: str, front_end: str = FRONT_ENDS[0]) -> str | None:
    """The hint for ``advice`` in ``front_end``'s words (the notebook's for a front end without its own);
    None for an advice nobody words."""
    words = _WORDS.get(advice)
    if words is None:
        return None
    return words.get(front_end, words[FRONT_ENDS[0]])


def no_key_notice(front_end: str, documentation: str | None = None, *, said: bool = False) -> str | None:
    """The notice that no API key is set, so the offline index answers, in ``front_end``'s words.

    ``documentation``: how to add documentation (the offline index holds only the starter guide), or None.
    ``said``: the notebook said at ``%load_ext`` already that the offline index answers; then only the
    documentation part is left to say (None when there is none).
    """
    if front_end == "cli":
        line = "devknow: no API key set, so using the offline index. For the live service set DEVKNOW_API_KEY."
        return f"{line} {documentation}" if documentation else line
    where = f" {documentation.rstrip('.')}, in a terminal." if documentation else ""
    if said:
        return f"With no API key set, the offline index answers.{where}" if documentation else None
    return (
        "There is no API key set, so the offline index answers. For the live service, set `DEVKNOW_API_KEY` "
        f"before starting Jupyter, or run `%devknow --api-key`.{where}"
    )

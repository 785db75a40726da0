"""Errors to docs (issue 27): a pasted traceback that starts with a frame line, ``devknow search -``, ``%deverror``
in a real kernel, and the opt-in docs button under tracebacks. The pages are written here, in our own words."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import pytest

from devknow_jupyter.cli import main
from devknow_jupyter.error_query import query_from_exception, query_from_text
from tests.test_kernel import _run_in_kernel

ENCODING_PAGE = "documents/agents.test/models/relay"
MESSAGE = "UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 1043: character maps to <undefined>"
POSIX_FRAME = 'File "/home/me/venv/lib/python3.11/site-packages/relaykit/__init__.py", line 1043, in <module>'
WINDOWS_FRAME = r'File "C:\Users\me\venv\Lib\site-packages\relaykit\__init__.py", line 1043, in <module>'


def first_hit(out: str) -> str:
    """The page of the first hit in ``devknow search`` output or a hit list's text (by name or URL)."""
    found = re.search(r"agents\.test/([\w/-]+)", out)
    assert found, out
    return f"documents/agents.test/{found.group(1)}"


def page(folder: Path, slug: str, title: str, body: str) -> None:
    path = folder / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"---\nname: documents/agents.test/{slug}\nuri: https://agents.test/{slug}\ntitle: {title}\n---\n"
    path.write_text(front + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A page about the relay kit's decode error on Windows, among pages full of what a frame line holds."""
    folder = tmp_path / "docs"
    page(
        folder,
        "models/relay",
        "Relay kit model connector",
        """
        # Relay kit model connector

        On Windows the relay kit may fail with a `UnicodeDecodeError` when it reads its cached files: the
        charmap codec cannot decode a byte that the default code page does not map. Set `PYTHONUTF8=1`.
        """,
    )
    for number in range(4):
        page(
            folder,
            f"setup/venv-{number}",
            f"Set up a virtual environment, part {number}",
            f"""
            # Set up a virtual environment, part {number}

            Create a venv in your home folder: the file lib/python3.11/site-packages holds each module; a line
            in __init__.py runs when the module is imported. Users on Windows find it under Users, Lib.
            """,
        )
    return folder


@pytest.mark.parametrize("frame", [POSIX_FRAME, WINDOWS_FRAME], ids=["posix", "windows"])
def test_a_pasted_traceback_that_starts_with_a_frame_line_finds_its_page(
    docs: Path, frame: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Joined into one line, as a pasted traceback reaches the index (the client collapses whitespace).
    assert main(["--endpoint", f"local:{docs}", "search", "-n", "3", f"{frame} {MESSAGE}"]) == 0
    out = capsys.readouterr().out
    assert "No results" not in out
    assert first_hit(out) == ENCODING_PAGE


def test_devknow_search_dash_reads_the_query_from_a_pipe(docs: Path, tmp_path: Path) -> None:
    app = tmp_path / "app.py"  # a real program that prints, then fails inside an installed package
    packages = tmp_path / "venv" / "lib" / "site-packages" / "relaykit"
    packages.mkdir(parents=True)
    (packages / "__init__.py").write_text("def load():\n    return b'\\x9d'.decode('cp1252')\n", encoding="utf-8")
    app.write_text("print('starting the relay')\nimport relaykit\nrelaykit.load()\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{packages.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    program = subprocess.run([sys.executable, str(app)], capture_output=True, text=True, env=env, timeout=60)
    assert program.returncode == 1 and "Traceback" in program.stderr
    piped = program.stdout + program.stderr  # `python app.py 2>&1 | devknow search -`

    search = [sys.executable, "-m", "devknow_jupyter", "--endpoint", f"local:{docs}", "search", "-n", "2", "-"]
    done = subprocess.run(search, input=piped, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert first_hit(done.stdout) == ENCODING_PAGE
    assert str(tmp_path) not in done.stdout  # the user's paths are not the query

    long_log = "".join(f"step {number}: fetched users\n" for number in range(200_000)) + piped  # 5 MB, error last
    done = subprocess.run(search, input=long_log, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and first_hit(done.stdout) == ENCODING_PAGE, done.stderr

    empty = subprocess.run(search, input="", capture_output=True, text=True, timeout=60)
    assert empty.returncode == 3 and empty.stdout == ""
    assert empty.stderr.splitlines()[0] == "devknow: error: Nothing to search for came on standard input."
    assert "Traceback" not in empty.stderr

    import pty  # a terminal on stdin: nothing is piped, so say so rather than wait for typing

    controller, terminal = pty.openpty()
    try:
        typed = subprocess.run(search, stdin=terminal, capture_output=True, text=True, timeout=60)
    finally:
        os.close(terminal)
        os.close(controller)
    assert typed.returncode == 3
    assert typed.stderr.splitlines()[0].startswith("devknow: error: `devknow search -` reads the query from a pipe")


def test_the_query_for_an_exception_names_its_libraries_not_the_users_paths(tmp_path: Path, monkeypatch) -> None:
    packages = tmp_path / "site-packages"
    (packages / "relaykit").mkdir(parents=True)
    (packages / "relaykit" / "__init__.py").write_text("def load():\n    return b'\\x9d'.decode('cp1252')\n")
    user_file = tmp_path / "my_project" / "pipeline.py"
    user_file.parent.mkdir()
    user_file.write_text("import relaykit\n\ndef run():\n    return relaykit.load()\n")
    monkeypatch.syspath_prepend(str(packages))
    monkeypatch.syspath_prepend(str(user_file.parent))
    pipeline = importlib.import_module("pipeline")
    with pytest.raises(UnicodeDecodeError) as caught:
        pipeline.run()
    query = query_from_exception(caught.value)
    assert query.startswith("UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d")
    assert query.endswith(" relaykit")
    assert "my_project" not in query and "pipeline" not in query and str(tmp_path) not in query

    from devknow_jupyter.errors import register_secret

    secret = "AIzaSyDeverrorTestKey0123456789abcdef"  # a key passed in, now in the exception's message
    register_secret(secret)
    assert secret not in query_from_exception(ValueError(f"API key not valid: {secret}"))

    printed = "".join(traceback.format_exception(caught.value))
    assert query_from_text(f"some output\n{printed}") == query  # the same query from the printed traceback


# -- %deverror and the docs button in a real kernel ------------------------------------------------------------


def _text(outputs: list[dict]) -> str:
    return "\n".join(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")) for out in outputs)


def test_deverror_in_a_real_kernel_after_a_real_exception(docs: Path, tmp_path: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "DEVKNOW_ENDPOINT": f"local:{docs}"}
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    try:
        assert not [o for o in _run_in_kernel(km, kc, "%load_ext devknow_jupyter") if o["type"] == "error"]
        (nothing,) = _run_in_kernel(km, kc, "%deverror")  # a UsageError: IPython prints its one line
        assert nothing["name"] == "stderr" and nothing["text"].startswith("UsageError: No exception to search for yet")

        failed = _run_in_kernel(km, kc, "b'\\x9d'.decode('cp1252')")  # a real UnicodeDecodeError, button off
        assert [o["type"] for o in failed] == ["error"] and failed[0]["ename"] == "UnicodeDecodeError"

        _run_in_kernel(km, kc, "%devsearch --bogus x")  # the magics' own errors are not what %deverror searches for
        shown = _run_in_kernel(km, kc, "%deverror -n 2 -o hits")
        (result,) = [o for o in shown if o["type"] == "execute_result"]
        assert first_hit(result["data"]["text/plain"]) == ENCODING_PAGE
        assert "text/html" in result["data"] and "application/vnd.jupyter.widget-view+json" in result["data"]
        (bound,) = _run_in_kernel(km, kc, "print(hits is _deverror, len(_deverror), _deverror.query)")
        assert bound["text"].startswith("True 2 UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d")

        assert not [o for o in _run_in_kernel(km, kc, "%devknow --on-error") if o["type"] == "error"]
        with_button = _run_in_kernel(km, kc, "1 / 0")
        assert [o["type"] for o in with_button] == ["error", "display_data"]
        assert "application/vnd.jupyter.widget-view+json" in with_button[1]["data"]
        assert [o["name"] for o in _run_in_kernel(km, kc, "%devsearch --bogus x")] == ["stderr"]  # no button
        _run_in_kernel(km, kc, "%devknow --no-on-error")
        assert [o["type"] for o in _run_in_kernel(km, kc, "1 / 0")] == ["error"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_docs_button_shows_the_hits_in_its_place(ip, docs: Path) -> None:
    from IPython.utils.capture import capture_output
    from ipywidgets.widgets.widget import _instances

    from devknow_jupyter import display
    from devknow_jupyter.deverror import BUTTON_LABEL

    assert ip.complete("", "%deverror --so", 14)[1] == ["--source"]
    help_text = ip.find_line_magic("deverror").__doc__  # what %deverror? shows
    assert "last exception raised in this kernel" in help_text and "-n N" in help_text and "--source" in help_text
    display.options.widgets_outside_kernel = True  # the ip fixture restores the display options
    ip.run_line_magic("devknow", f"--endpoint local:{docs}")
    with capture_output() as off:
        ip.run_cell("b'\\x9d'.decode('cp1252')")
    assert off.outputs == []  # off by default: the traceback alone

    ip.run_line_magic("devknow", "--on-error")
    with capture_output() as on:
        ip.run_cell("b'\\x9d'.decode('cp1252')")
        (shown,) = on.outputs
        button = _instances[shown.data["application/vnd.jupyter.widget-view+json"]["model_id"]]
        assert button.description == BUTTON_LABEL
        button.click()
    (update,) = on.outputs[1:]
    assert update.update and update.transient["display_id"] == shown.transient["display_id"]  # in its place
    assert first_hit(update.data["text/plain"]) == ENCODING_PAGE
    assert ip.user_ns["_deverror"].names[0] == ENCODING_PAGE

    display.options.widgets_outside_kernel = False  # no widgets (a terminal): one line that names the magic
    with capture_output() as plain:
        ip.run_cell("1 / 0")
    assert [output.data["text/plain"] for output in plain.outputs] == [f"{BUTTON_LABEL}: run %deverror"]


# -- message templates ------------------------------------------------------------------------------------------


def test_a_message_with_the_users_own_names_finds_the_diagnostic_page_stating_its_template(tmp_path: Path) -> None:
    from devknow_jupyter.local.index import LocalIndex

    folder = tmp_path / "docs"
    page(
        folder,
        "diagnostics/undefined_function",
        "undefined_function",
        """
        _The function '{0}' isn't defined._

        ## Description

        The analyzer produces this diagnostic when a name that looks like a call names nothing in scope.

        ```dart
        void main() => print(emty());
        ```
        """,
    )
    page(folder, "diagnostics/undefined_getter", "undefined_getter", "_The getter '{0}' isn't defined for '{1}'._\n")
    for number in range(5):  # pages full of the user's own words, and of "function" and "defined"
        page(
            folder,
            f"guides/fetch-users-{number}",
            f"Fetch users with a function, part {number}",
            """
            # Fetch users

            Write a function fetchUsers that fetches users: the function is defined once and fetches users
            from the server; fetchUsers returns the users it fetched. A defined function fetches users.
            """,
        )
    message = "lib/main.dart:7:3: Error: The function 'fetchUsers' isn't defined."
    with LocalIndex(tmp_path / "index.sqlite3") as index:
        index.add_folder(folder)
        assert index.search(message)[0]["parent"] == "documents/agents.test/diagnostics/undefined_function"
        assert index.search("The function `loadAll` isn't defined")[0]["parent"].endswith("/undefined_function")
        getter = index.search("The getter 'name' isn't defined for 'User'.")[0]["parent"]
        assert getter == "documents/agents.test/diagnostics/undefined_getter"
        # A question that happens to share the template's words is ranked by its words, as before.
        assert index.search("how do I fetch users with a function")[0]["parent"].startswith(
            "documents/agents.test/guides/fetch-users-"
        )


def test_a_traceback_as_a_notebook_shows_it_gives_its_exception_and_libraries() -> None:
    """The panel's "Search developer docs for this error" sends an error output's text: IPython's format."""
    from devknow_jupyter.error_query import query_from_text

    shown = (
        "---------------------------------------------------------------------------\n"
        "ValueError                                Traceback (most recent call last)\n"
        "Cell In[1], line 4\n      1 def check(key):\n----> 4 check('/home/me/project/secret.txt')\n\n"
        "File ~/venv/lib/python3.11/site-packages/litellm/main.py:12, in check(key)\n"
        "---> 12 raise ValueError('restrict an API key')\n\nValueError: restrict an API key\n"
    )
    query = query_from_text(shown)
    assert query == "ValueError: restrict an API key litellm"
    assert "/home/me" not in query

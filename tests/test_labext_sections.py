"""The panel's big pages come in sections (issue 25, item 1): ``POST devknow/api/documents`` sends the first
sections rendered and the others as placeholders, ``POST devknow/api/section`` renders each one asked for.

A real Jupyter server with the extension over a loopback MCP service serving two 1 MB pages.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tests.conftest import start_sdk_server, stop_process
from tests.test_labext import JupyterServer, start_jupyter_server
from tests.test_labext_responsive import big_pages


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[JupyterServer, list[str]]]:
    folder = tmp_path_factory.mktemp("sections")
    names = big_pages(folder / "big")[:2]
    (folder / "sdk").mkdir()
    mcp = start_sdk_server(folder / "sdk", "--fetch-only", str(folder / "big"))
    server = start_jupyter_server(folder / "lab", config={"DevKnowServer": {"endpoint": mcp.url, "timeout": 60}})
    try:
        yield server, names
    finally:
        stop_process(server.proc)
        mcp.stop()


def test_a_big_page_comes_with_its_first_sections_and_every_heading(served: tuple[JupyterServer, list[str]]) -> None:
    server, names = served
    started = time.perf_counter()
    status, reply, text = server.call("POST", "documents", {"names": [names[0]]})
    elapsed = time.perf_counter() - started
    assert status == 200, text
    (doc,) = reply["documents"]
    sections = doc["sections"]
    assert sections["pending"] and isinstance(sections["number"], int)
    page = doc["html"]
    body = page.split('<div class="devknow-body">', 1)[1]  # after the contents list (thousands of entries)
    first = body.split('class="devknow-pending"')[0]
    assert "<p>" in first and len(first) < 0.1 * len(body), "only the first part is rendered"
    last = re.findall(r"^## (Step \d+ of guide 0)$", doc["content"], re.MULTILINE)[-1]
    assert f">{last}</a>" in page, "the contents list reaches the last heading"
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    assert not [a for a in re.findall(r'href="#([^"]+)"', page) if a not in ids], "every anchor lands"
    assert elapsed < 10, f"{elapsed:.1f} s for the first reply of a 1 MB page"


def test_each_pending_section_renders_on_request_with_the_promised_ids(
    served: tuple[JupyterServer, list[str]],
) -> None:
    server, names = served
    _, reply, _ = server.call("POST", "documents", {"names": [names[1]]})
    (doc,) = reply["documents"]
    number, pending = doc["sections"]["number"], doc["sections"]["pending"]
    placeholder_ids = set(re.findall(r'<h[1-6] id="([^"]+)"', doc["html"]))
    last = pending[-1]
    status, section, text = server.call("POST", "section", {"name": names[1], "index": last, "number": number})
    assert status == 200, text
    assert section["index"] == last and "<table>" in section["html"] and "<code>" in section["html"]
    filled_ids = re.findall(r'<h[1-6][^>]*\bid="([^"]+)"', section["html"])
    assert filled_ids and set(filled_ids) <= placeholder_ids  # the contents list's links land in the filled part


@pytest.mark.parametrize("body", [{"name": "x"}, {"name": "x", "index": "1", "number": 1},
                                  {"name": "x", "index": True, "number": 1}, {"index": 1, "number": 1}])
def test_a_bad_section_request_is_400(served: tuple[JupyterServer, list[str]], body: dict) -> None:
    server, _ = served
    status, reply, _ = server.call("POST", "section", body)
    assert status == 400 and "index" in reply["error"]["message"]


def test_a_section_past_the_end_is_400(served: tuple[JupyterServer, list[str]]) -> None:
    server, names = served
    status, reply, _ = server.call("POST", "section", {"name": names[0], "index": 10_000, "number": 1})
    assert status == 400 and "not 10000" in reply["error"]["message"]

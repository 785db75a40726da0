"""A notice's commands show as code in the HTML of a result, never as raw backticks."""

from __future__ import annotations

from devknow_jupyter import DevKnowClient
from devknow_jupyter.display import mimebundle


def test_a_weak_match_notice_shows_its_command_as_code() -> None:
    with DevKnowClient("local") as client:
        results = client.search_documents("firestore collection reference", page_size=3)
    assert any("`" in notice for notice in results.info.notices), results.info.notices  # else this tests nothing
    page = mimebundle(results, widgets=False)["text/html"]
    notices = [part.split("</div>", 1)[0] for part in page.split('class="devknow-notice">')[1:]]
    assert notices and all("`" not in notice for notice in notices), notices
    assert any("<code>devknow index DIR</code>" in notice for notice in notices), notices

"""The explorer's parts alone: the history without widgets, the runner with plain callables and threads,
the widget model's ES module and stylesheet as shipped (the keys themselves are tested in the browser)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from devknow_jupyter.explorer.history import HISTORY_VARIABLE, History, HistoryEntry, Visits, kernel_history
from devknow_jupyter.explorer.runner import RequestRunner
from devknow_jupyter.explorer.widget import ExplorerWidget


def search(key: str, source: str | None = None) -> HistoryEntry:
    return HistoryEntry("search", key, [key], source)


def page(name: str) -> HistoryEntry:
    return HistoryEntry("document", name, {"name": name})


# -- history ------------------------------------------------------------------------------------------


def test_visits_go_back_and_forward_and_a_new_visit_drops_the_ones_ahead():
    visits = Visits()
    assert visits.current is None and visits.position == -1 and not visits.can_go_back
    for entry in (search("a"), page("p1"), page("p2")):
        assert visits.visit(entry)
    assert visits.step(-1) == page("p1") and visits.step(-1) == search("a")
    assert visits.step(-1) is None and visits.position == 0  # the start: no move
    assert visits.can_go_forward and not visits.can_go_back
    assert visits.step(+1) == page("p1")
    visits.visit(page("p3"))
    assert [entry.key for entry in visits.entries] == ["a", "p1", "p3"] and not visits.can_go_forward


def test_visiting_the_same_place_replaces_it_and_the_kernel_records_only_new_visits():
    kernel = History()
    visits = Visits(kernel)
    visits.visit(search("a"))
    assert not visits.visit(HistoryEntry("search", "a", ["newer"]))  # the same search again
    assert len(visits) == 1 and visits.current.result == ["newer"]
    assert visits.visit(search("a", source="site.example"))  # another filter is another place
    assert [entry.label() for entry in kernel] == ["search: a", "search: a (site site.example)"]


def test_visits_start_from_the_kernel_history_and_are_capped():
    kernel = History([search("old"), page("p")])
    visits = Visits(kernel, limit=3)
    assert visits.current == page("p") and visits.can_go_back
    for number in range(5):
        visits.visit(search(f"q{number}"))
    assert [entry.key for entry in visits.entries] == ["q2", "q3", "q4"] and visits.position == 2
    assert visits.search_before() == search("q4")


def test_the_search_before_a_page_is_the_hits_beside_it():
    visits = Visits()
    for entry in (search("a"), page("p1"), search("b"), page("p2"), page("p3")):
        visits.visit(entry)
    assert visits.search_before(1).key == "a" and visits.search_before().key == "b"
    assert Visits().search_before() is None


def test_a_question_leaves_no_hits_of_the_search_before_it_beside_its_answer_or_its_pages():
    visits = Visits()
    for entry in (search("a"), HistoryEntry("answer", "why?", None), page("p1"), search("b")):
        visits.visit(entry)
    assert [visits.search_before(position) for position in (1, 2)] == [None, None]
    assert visits.search_before(0).key == "a" and visits.search_before(3).key == "b"


def test_the_kernel_history_lives_in_the_namespace_and_keeps_only_entries():
    namespace: dict = {HISTORY_VARIABLE: [search("a"), "not an entry"]}
    history = kernel_history(namespace)
    assert isinstance(history, History) and list(history) == [search("a")]
    assert kernel_history(namespace) is history
    assert repr(history) == "<History 1 visit: … search: a>"


# -- runner -------------------------------------------------------------------------------------------


def make_runner() -> tuple[RequestRunner, list]:
    errors: list = []
    return RequestRunner(errors.append), errors


def test_the_newest_request_wins_and_an_older_reply_is_dropped():
    runner, errors = make_runner()
    shown: list[str] = []
    release = threading.Event()

    def slow() -> object:
        release.wait(10)
        return lambda: shown.append("slow")

    assert runner.submit("first", slow)
    assert runner.pending == "first" and runner.busy
    fast_shown = threading.Event()
    assert runner.submit("second", lambda: lambda: (shown.append("fast"), fast_shown.set()))
    assert fast_shown.wait(10) and not runner.wait(0.05)  # the first request is still running
    release.set()
    assert runner.wait(10)
    assert shown == ["fast"] and errors == [] and runner.pending is None and not runner.busy
    runner.close()


def test_asking_again_for_what_is_in_flight_does_nothing():
    runner, _errors = make_runner()
    release = threading.Event()
    calls: list[int] = []

    def job() -> object:
        calls.append(1)
        release.wait(10)
        return lambda: None

    assert runner.submit("same", job)
    assert not runner.submit("same", job)  # a double click
    release.set()
    assert runner.wait(10) and calls == [1]
    runner.close()


def test_supersede_drops_the_reply_in_flight():
    runner, _errors = make_runner()
    shown: list[str] = []
    release = threading.Event()
    runner.submit("k", lambda: (release.wait(10), lambda: shown.append("late"))[1])
    runner.supersede()  # the user went back
    release.set()
    assert runner.wait(10) and shown == [] and runner.pending is None
    runner.close()


def test_errors_of_the_newest_request_and_of_its_apply_are_reported_on_the_lock():
    runner, errors = make_runner()
    held: list[bool] = []

    def failing_job() -> object:
        raise ValueError("fetch failed")

    def failing_apply() -> None:
        raise KeyError("show failed")

    def on_error(exc: BaseException) -> None:
        held.append(runner.lock._is_owned())  # RLock: held by this thread
        errors.append(exc)

    runner._on_error = on_error
    runner.submit("a", failing_job, wait=True)
    runner.submit("b", lambda: failing_apply, wait=True)
    assert [type(exc) for exc in errors] == [ValueError, KeyError] and held == [True, True]
    runner.close()


def test_wait_runs_on_the_calling_thread_and_a_closed_runner_refuses_work():
    runner, _errors = make_runner()
    threads: list[str] = []
    runner.submit("a", lambda: (threads.append(threading.current_thread().name), lambda: None)[1], wait=True)
    runner.submit("b", lambda: (threads.append(threading.current_thread().name), lambda: None)[1])
    assert runner.wait(10)
    assert threads[0] == threading.current_thread().name and threads[1].startswith("devknow-explorer")
    runner.close()
    with pytest.raises(RuntimeError, match="closed"):
        runner.submit("c", lambda: lambda: None)


# -- the widget model's browser half -------------------------------------------------------------------


def test_the_es_module_and_stylesheet_ship_in_the_package_and_are_what_the_model_sends():
    import devknow_jupyter.explorer as package

    folder = Path(package.__file__).parent / "esm"
    widget = ExplorerWidget()
    try:
        keys = (folder.parent.parent / "render" / "esm" / "keys.js").read_text(encoding="utf-8")
        # The keys every devknow view keeps (shared with the result views), then the explorer's own module.
        assert widget._esm == keys + (folder / "explorer.js").read_text(encoding="utf-8")
        assert widget._css == (folder / "explorer.css").read_text(encoding="utf-8")
        assert "export default { render }" in widget._esm
        assert not re.search(r"^\s*import\s", widget._esm, re.M)  # no dependencies, nothing fetched
    finally:
        widget.close()


def test_the_es_module_puts_html_only_from_the_sanitized_traits():
    module = (Path(__file__).parents[1] / "devknow_jupyter" / "explorer" / "esm" / "explorer.js").read_text()
    assignments = re.findall(r"\.(innerHTML|outerHTML)\s*=\s*([^;]+);", module)
    assert assignments, "the module shows no HTML at all?"
    for _prop, value in assignments:
        assert re.fullmatch(r"get\('\w+_html'\)", value.strip()), value
    assert "insertAdjacentHTML" not in module and "document.write" not in module and "eval(" not in module
    html_traits = {name for name in ExplorerWidget.class_trait_names(sync=True) if name.endswith("_html")}
    assert {match for match in re.findall(r"get\('(\w+_html)'\)", module)} == html_traits


def test_every_message_the_module_sends_is_one_the_explorer_handles():
    import inspect

    from devknow_jupyter.explorer import Explorer

    module = (Path(__file__).parents[1] / "devknow_jupyter" / "explorer" / "esm" / "explorer.js").read_text()
    sent = set(re.findall(r"send\('(\w+)'", module))
    assert sent == {"search", "ask", "open", "back", "forward", "more", "whole"}
    handler = inspect.getsource(Explorer._on_message)
    assert all(f'"{event}"' in handler for event in sent)


# -- size -----------------------------------------------------------------------------------------------


def test_no_class_of_the_explorer_is_over_400_lines_and_no_function_over_60():
    import ast
    from pathlib import Path

    import devknow_jupyter.explorer as package

    too_long = []
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            limit = 400 if isinstance(node, ast.ClassDef) else 60
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.end_lineno - node.lineno + 1 > limit:
                too_long.append(f"{path.name}:{node.name}")
    assert too_long == []

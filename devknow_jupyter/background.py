"""``--background`` for the magics: the call runs in a worker thread, the kernel is free meanwhile.

:func:`start` runs ``work()`` in a daemon thread and returns a :class:`BackgroundCall` at once. Displayed (the
magic's return value is the cell's output), the handle shows a spinner line with a ``display_id``; when the reply
arrives the worker replaces that line in place with the result (every MIME type, the widget included) or with
the error on one line. The worker runs in a copy of the calling cell's :mod:`contextvars` context, which is
where ipykernel (6.x and later) keeps each thread's parent message header: its displays are routed to the cell
that started the call, not to whichever cell runs when the reply comes.

The work function binds the magic's variables itself (``_devask``, ``-o NAME``), so they appear when the reply
does. This module is small and imports only the standard library at ``%load_ext`` (the magics declare
``-b`` with :data:`background_argument`); the display and error modules load when a call finishes.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Future
from typing import Any

from IPython.core.magic_arguments import argument

__all__ = ["BackgroundCall", "background_argument", "start"]

#: The ``-b/--background`` option, declared once for the three magics (as IPython's ``script_args`` does).
background_argument = argument(
    "-b",
    "--background",
    action="store_true",
    help="Run the call in the background: the view shows at once and fills in when the reply arrives; "
    "the kernel runs other cells meanwhile. Returns a handle with .wait(timeout) and .result().",
)


class BackgroundCall:
    """A magic's call running in the background (``h = %devsearch -b q`` or the output of ``%%devask -b``).

    ``wait(timeout)`` says whether it has finished; ``result(timeout)`` returns what the magic would have
    returned without ``-b`` (or raises its error). Displaying the handle shows the call's view: a spinner line
    while it runs, replaced in place by the result or a one-line error.
    """

    def __init__(self, label: str, working_text: str) -> None:
        self.label = label
        self._working_text = working_text
        self._future: Future[Any] = Future()  # the reply or the error; waiting and raising are the Future's
        self._started = time.monotonic()
        self._elapsed: float | None = None
        self._lock = threading.Lock()  # a display and the reply's arrival don't cross
        self._views: list[Any] = []  # display handles to fill in when the reply arrives

    def __repr__(self) -> str:
        if not self._future.done():
            state = f"running for {time.monotonic() - self._started:.1f} s"
        elif self._future.exception() is None:
            state = f"done in {self._elapsed:.2f} s: {type(self._future.result()).__name__}"
        else:
            state = f"failed in {self._elapsed:.2f} s: {_one_line(self._future.exception())}"
        return f"<BackgroundCall {self.label} {state}>"

    def done(self) -> bool:
        """True once the reply (or an error) has arrived."""
        return self._future.done()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the call finishes or ``timeout`` seconds pass; True when it has finished."""
        return not futures.wait([self._future], timeout).not_done

    def result(self, timeout: float | None = None) -> Any:
        """What the magic returns without ``-b`` (waiting up to ``timeout`` s); raises the call's error.

        ``TimeoutError`` when it is still running after ``timeout`` seconds.
        """
        try:
            return self._future.result(timeout)
        except futures.TimeoutError:
            raise TimeoutError(f"{self.label} is still running after {timeout:g} s.") from None

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The call's error, or None when it succeeded (waits up to ``timeout`` s, as :meth:`result`)."""
        try:
            return self._future.exception(timeout)
        except futures.TimeoutError:
            raise TimeoutError(f"{self.label} is still running after {timeout:g} s.") from None

    # -- display ----------------------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        from IPython.display import display

        with self._lock:
            if not self._future.done():
                self._views.append(display(_spinner(self._working_text), raw=True, display_id=True))
                return
        shown = self._shown()
        display(shown, raw=isinstance(shown, dict))

    def _shown(self) -> Any:
        error = self._future.exception()
        if error is not None:
            from .display import message_bundle

            return message_bundle(_one_line(error), kind="error")
        value = self._future.result()
        if value is None:  # a line, not an empty output that a saved notebook would keep as a blank
            return {"text/plain": f"{self.label}: done, nothing to show."}
        return value

    def _finish(self, value: Any, error: BaseException | None) -> None:
        with self._lock:
            self._elapsed = time.monotonic() - self._started
            if error is not None:
                self._future.set_exception(error)
            else:
                self._future.set_result(value)
            views, self._views = self._views, []
        if not views:
            return
        try:
            shown = self._shown()
            for view in views:
                view.update(shown, raw=isinstance(shown, dict))
        except Exception as exc:  # a view that cannot render still leaves one line, not a silent spinner
            from .display import message_bundle

            for view in views:
                view.update(message_bundle(_one_line(exc), kind="error"), raw=True)


def start(label: str, working_text: str, work: Callable[[], Any]) -> BackgroundCall:
    """Run ``work()`` in a daemon thread, in a copy of the caller's context; returns its handle at once."""
    call = BackgroundCall(label, working_text)
    context = contextvars.copy_context()  # ipykernel's parent header: outputs go to the calling cell

    def run() -> None:
        try:
            value = work()
        except BaseException as exc:
            call._finish(None, exc)
        else:
            call._finish(value, None)

    threading.Thread(target=context.run, args=(run,), name=f"devknow {label}", daemon=True).start()
    return call


def _spinner(text: str) -> dict[str, Any]:
    from .display import placeholder

    return dict(placeholder(text, spinner=True))


def _one_line(error: BaseException | None) -> str:
    """The error as one line (a DevKnowError's short message without its hint line)."""
    from .errors import DevKnowError

    if isinstance(error, DevKnowError):
        return error.short_message().splitlines()[0]
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__

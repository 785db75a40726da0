"""The error tree: short notebook rendering, debug switch, secrets masked everywhere."""

from __future__ import annotations

import pytest

from devknow_jupyter import errors
from devknow_jupyter.errors import (
    AuthenticationError,
    DevKnowError,
    DocumentNotFoundError,
    QuotaExceededError,
    RequestTimeout,
    TransportError,
    register_secret,
    set_short_errors,
)


def test_every_error_is_a_devknow_error():
    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type):
            assert issubclass(obj, DevKnowError)
    assert issubclass(RequestTimeout, TransportError)


def test_registered_secrets_never_appear_in_messages_or_hints():
    secret = "test-secret-value-0123456789"
    register_secret(secret)
    error = AuthenticationError(f"key {secret} rejected", status=403, hint=f"not {secret}")
    assert secret not in str(error) and secret not in error.short_message() and secret not in repr(error)
    assert "***" in str(error)
    assert all(secret not in line for line in error._render_traceback_())


def test_short_rendering_and_debug_switch():
    error = QuotaExceededError("quota used up", retry_after=7)
    lines = error._render_traceback_()
    assert "QuotaExceededError: quota used up" in lines[0] and len(lines) == 2
    assert error.retry_after == 7
    set_short_errors(False)
    try:
        assert not hasattr(error, "_render_traceback_")
    finally:
        set_short_errors(True)
    assert hasattr(error, "_render_traceback_")
    with pytest.raises(AttributeError):
        _ = error.no_such_attribute


def test_not_found_names_the_missing_documents_and_keeps_found_ones():
    error = DocumentNotFoundError(["documents/a.dev/x"], documents=["found"])  # type: ignore[arg-type]
    assert "documents/a.dev/x" in str(error) and error.documents == ["found"]
    assert "1 other document" in str(error)


def test_not_found_is_decided_where_the_reply_is_read() -> None:
    from devknow_jupyter.transport.replies import http_failure, rpc_failure, tool_result

    with pytest.raises(errors.ToolError) as missing:
        tool_result({"isError": True, "content": [{"type": "text", "text": "NOT_FOUND: no page x"}]}, tool="get")
    assert missing.value.not_found
    with pytest.raises(errors.ToolError) as other:
        tool_result({"isError": True, "content": [{"type": "text", "text": "INVALID_ARGUMENT: bad"}]}, tool="get")
    assert not other.value.not_found
    said = {"code": -32000, "message": "m", "data": {"status": "NOT_FOUND"}}
    assert rpc_failure(said, tool="t", method="m").not_found
    # "Method not found" speaks of the method, not of a document.
    assert not rpc_failure({"code": -32601, "message": "Method not found"}, tool=None, method="tools/call").not_found
    body = {"jsonrpc": "2.0", "error": {"code": -32001, "message": "document not found"}}
    failure = http_failure(400, body, text="", retry_after=None, endpoint="e", method="m", tool="t", credentials=None)
    assert isinstance(failure, errors.ToolError) and failure.not_found


def test_rest_replies_say_not_found_from_the_status() -> None:
    from devknow_jupyter.rest.errors import api_failure

    body = {"error": {"status": "NOT_FOUND", "message": "Requested entity was not found."}}
    assert api_failure(404, body, endpoint="e", tool="get_documents", credentials=None).not_found
    assert not api_failure(400, {"error": {"message": "no"}}, endpoint="e", tool="t", credentials=None).not_found


def test_each_front_end_words_the_hint_of_an_errors_advice():
    timeout = RequestTimeout("no reply within 0.5 s")
    assert "%config DevKnowMagics.timeout" in timeout.hint and timeout.hint == timeout.hint_for("notebook")
    assert "--timeout 60" in timeout.hint_for("cli") and "%" not in timeout.hint_for("cli")
    for error in (AuthenticationError("no"), TransportError("down"), QuotaExceededError("used up")):
        assert "%" in error.hint and "%" not in error.hint_for("cli"), type(error).__name__
    own = TransportError("down", hint="Ask the proxy's admin.")  # a hint given to the error is the same everywhere
    assert own.hint == own.hint_for("cli") == "Ask the proxy's admin."
    assert DevKnowError("plain").hint is None and DevKnowError("plain").hint_for("cli") is None

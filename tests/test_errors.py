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

"""What ``%devknow``'s options change: the key or token (typed at a hidden prompt), endpoint, protocol, cache and
error display. Each change is said back in one sentence; nothing secret is ever echoed."""

from __future__ import annotations

from typing import Any

from IPython.core.error import StdinNotImplementedError, UsageError
from traitlets import TraitError

__all__ = ["change_settings", "prompt_secret"]


def change_settings(magics: Any, args: Any) -> list[str]:
    """Apply ``%devknow``'s options to ``magics`` (a ``DevKnowMagics``); one sentence for each change."""
    said: list[str] = []
    if args.api_key:
        key = prompt_secret("Developer Knowledge API key", "DEVKNOW_API_KEY", "key")
        magics.session.configure(api_key=key)
        said.append("API key set for this kernel (kept in memory only, never saved).")
    if args.token:
        token = prompt_secret("Token for the team's documentation service", "DEVKNOW_TOKEN", "token")
        magics.session.configure(token=token)
        said.append("Token set for this kernel (kept in memory only, never saved).")
    if args.endpoint is not None:
        endpoint = "" if args.endpoint.strip().lower() in ("auto", "default") else args.endpoint
        try:
            magics.endpoint = endpoint
        except TraitError as exc:
            raise UsageError(str(exc)) from None
        from .errors import split_url_credentials  # a key typed into the URL is never echoed

        shown = split_url_credentials(magics.endpoint)[0] if magics.endpoint else "automatic"
        said.append(f"Endpoint: {shown} (the client reconnects on next use).")
    if args.protocol is not None:
        magics.protocol = args.protocol  # a trait of the magics' config: the client is rebuilt on next use
        said.append(f"Protocol: {args.protocol} (the client reconnects on next use).")
    if args.clear_cache:
        from .cache import shared_cache

        dropped = len(shared_cache())
        shared_cache().clear()
        said.append(f"Cache cleared ({dropped} entr{'y' if dropped == 1 else 'ies'} dropped).")
    if args.debug is not None:
        magics.short_errors = not args.debug
        said.append("Errors now show full tracebacks." if args.debug else "Errors now show as one short line.")
    if args.on_error is not None:
        magics.on_error = args.on_error
        said.append(f"Docs button under tracebacks: {'on' if magics.on_error else 'off'} (%deverror works anyway).")
    return said


def prompt_secret(label: str, variable: str, what: str) -> str:
    """A secret typed at a hidden prompt, registered so no message shows it (UsageError when none is typed)."""
    import getpass

    from .errors import register_secret

    try:
        secret = getpass.getpass(f"{label} (input hidden): ")
    except StdinNotImplementedError:
        message = f"This frontend cannot prompt for input; set {variable} in the kernel's environment."
        raise UsageError(message) from None
    except (EOFError, KeyboardInterrupt):
        secret = ""
    secret = (secret or "").strip()
    register_secret(secret)
    if not secret:
        raise UsageError(f"No {what} entered; nothing changed.")
    return secret

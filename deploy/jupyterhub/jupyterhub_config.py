"""JupyterHub with the team documentation service: one key on the hub, one token per user.

The hub starts ``devknow serve`` as a managed service on the hub's machine, and gives every user's server
the service's address and that user's own token, so the magics and the JupyterLab panel search through the
service (its quotas per user) and no user needs a Google key. Each user's token is derived from one secret
the hub keeps (``DEVKNOW_TEAM_SECRET``), and the users file the service reads is written from the same
derivation when the hub starts, so adding a user to the hub is all it takes.

On Kubernetes (Zero to JupyterHub) run the service from ``deploy/kubernetes/`` instead, point
``DEVKNOW_ENDPOINT`` at ``http://devknow:8765/mcp``, and keep ``devknow_token`` below for the tokens.
"""

import hashlib
import hmac
import os
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub's config loader defines it

SECRET = os.environ["DEVKNOW_TEAM_SECRET"].encode()  # long and random; the hub's alone
USERS_FILE = Path(os.environ.get("DEVKNOW_USERS_FILE", "/srv/devknow/users.toml"))
SERVICE_PORT = 8765
TEAM = sorted(c.Authenticator.allowed_users or {"alice", "bob"})  # the hub's users


def devknow_token(user_name: str) -> str:
    """A user's token for the documentation service: an HMAC of the name under the hub's secret."""
    return hmac.new(SECRET, user_name.encode(), hashlib.sha256).hexdigest()


def write_users_file(names: list[str]) -> None:
    """The service's users file: each user's token as its SHA-256 (the file never holds a token)."""
    lines = []
    for name in names:
        digest = hashlib.sha256(devknow_token(name).encode()).hexdigest()
        lines += [f'[users."{name}"]', f'token_sha256 = "{digest}"', ""]
    USERS_FILE.parent.mkdir(parents=True, exist_ok=True)
    USERS_FILE.write_text("\n".join(lines), encoding="utf-8")


write_users_file(TEAM)

c.JupyterHub.services = [
    {
        "name": "devknow",
        "url": f"http://127.0.0.1:{SERVICE_PORT}",
        "command": [
            "devknow", "serve", "--port", str(SERVICE_PORT), "--upstream",
            "--users", str(USERS_FILE),
            "--quota", "search=60/min", "--quota", "get=120/min", "--quota", "answer=20/day",
            "--workers", "2", "--access-log", "-",
        ],
        # The key lives in the hub's environment and goes to the service only.
        "environment": {"DEVKNOW_API_KEY": os.environ.get("DEVKNOW_API_KEY", "")},
    }
]

# Every user's server: the service's address and the user's own token (JupyterHub calls the function).
c.Spawner.environment = {
    "DEVKNOW_ENDPOINT": f"http://127.0.0.1:{SERVICE_PORT}/mcp",
    "DEVKNOW_TOKEN": lambda spawner: devknow_token(spawner.user.name),
}

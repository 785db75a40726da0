"""Fresh virtualenvs as a user's shell has them, and the README's install commands, for tests/install."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import ROOT

PROBE = Path(__file__).with_name("probe.py")
UV = [sys.executable, "-m", "uv"]


@dataclass
class Venv:
    """A folder with a virtualenv in ``venv/`` and how to run things in it, away from the checkout."""

    name: str
    folder: Path
    node: bool = True  # whether Node (in /usr/bin) is on PATH
    seconds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.env = clean_env(self.folder, self.bin, node=self.node)

    @property
    def bin(self) -> Path:
        return self.folder / "venv" / "bin"

    def create(self, *, pip: bool) -> None:
        """The virtualenv: with pip (``python -m venv --upgrade-deps``, as users make one: the pip this Python
        bundles resolves 4 times slower), or an empty one by uv (faster)."""
        if pip:
            self.run(sys.executable, "-m", "venv", "--upgrade-deps", self.folder / "venv")
        else:
            self.run(*UV, "venv", "-q", "--python", sys.executable, self.folder / "venv")

    def run(self, *args: str | Path, timeout: float = 800, check: bool = True) -> subprocess.CompletedProcess:
        """``args`` (a command of this venv's bin when the first is a bare name) with its environment."""
        head = args[0]
        command = [str(self.bin / head) if isinstance(head, str) and "/" not in head else str(head)]
        return self._checked([*command, *map(str, args[1:])], timeout, check)

    def shell(self, line: str, timeout: float = 800) -> subprocess.CompletedProcess:
        """One line of shell, as typed at a prompt with this venv activated."""
        return self._checked(["bash", "-c", line], timeout, True)

    def probe(self, step: str, *args: str | Path) -> dict:
        """A step of probe.py, run with this venv's Python: its JSON report."""
        return json.loads(self.run("python", PROBE, step, *args, timeout=180).stdout.splitlines()[-1])

    def timed(self, what: str, started: float) -> None:
        self.seconds[what] = round(time.monotonic() - started, 1)

    def _checked(self, command: list[str], timeout: float, check: bool) -> subprocess.CompletedProcess:
        result = subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=self.folder,
                                timeout=timeout)
        if check:
            assert result.returncode == 0, f"{self.name}: {command}\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        return result


def clean_env(folder: Path, venv_bin: Path, *, node: bool) -> dict[str, str]:
    """The environment of a shell with ``venv_bin`` activated: none of this checkout's PYTHONPATH or venv, the
    installers' settings and caches kept (HOME), devknow's and Jupyter's state in ``folder``."""
    path = [str(venv_bin)] + (["/usr/local/bin", "/usr/bin", "/bin"] if node else [])
    env = {name: value for name, value in os.environ.items() if not name.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update({
        "PATH": os.pathsep.join(path),
        "VIRTUAL_ENV": str(venv_bin.parent),
        "DEVKNOW_CACHE_DIR": str(folder / "devknow-cache"),
        "IPYTHONDIR": str(folder / "ipython"),
        "JUPYTER_CONFIG_DIR": str(folder / "jupyter-config"),
        "JUPYTER_DATA_DIR": str(folder / "jupyter-data"),
        "JUPYTER_PLATFORM_DIRS": "1",
    })
    env.pop("DEVKNOW_SEMANTIC", None)  # as users have it: semantic ranking on where the extra is installed
    return env


def readme_install_commands() -> list[str]:
    """The command lines of the README's Install section (its ```bash blocks), comments left out."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Install\n")
    section = readme[start : readme.index("\n## ", start + 1)]
    lines = [line.split("  #", 1)[0].strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)
             for line in block.splitlines()]
    return [line for line in lines if line]

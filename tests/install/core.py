"""What a base install (``pip install devknow-jupyter``, no extras) has: the core dependencies and everything they
pull in, read from pyproject.toml and this environment's installed metadata; and a ``sitecustomize`` that makes
every other installed package unimportable, so this environment can stand in for a base install."""

from __future__ import annotations

import importlib.metadata as metadata
import json
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

_BLOCKER = '''"""Written by tests/install/core.py: the packages outside the core dependencies cannot be imported."""
import importlib.abc
import sys

BLOCKED = frozenset({blocked})


class _OutsideCore(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (not a core dependency)", name=name)
        return None


sys.meta_path.insert(0, _OutsideCore())
'''


def core_distributions() -> set[str]:
    """The names of the core dependencies (pyproject's ``dependencies``, markers applied) and of theirs."""
    pending = list(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])
    found: set[str] = set()
    while pending:
        requirement = Requirement(pending.pop())
        name = canonicalize_name(requirement.name)
        if name in found or (requirement.marker and not requirement.marker.evaluate({"extra": ""})):
            continue
        found.add(name)
        try:
            pending.extend(metadata.distribution(name).requires or [])
        except metadata.PackageNotFoundError:
            continue  # not needed on this Python (a marker the environment's metadata already applied)
    return found


def modules_outside_core() -> set[str]:
    """The top-level modules of installed distributions a base install would not have."""
    keep = core_distributions() | {"devknow-jupyter"}
    return {
        module
        for module, owners in metadata.packages_distributions().items()
        if not any(canonicalize_name(owner) in keep for owner in owners)
    }


def write_blocker(folder: Path) -> Path:
    """``folder/sitecustomize.py`` that blocks :func:`modules_outside_core`; put ``folder`` on PYTHONPATH."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sitecustomize.py"
    path.write_text(_BLOCKER.format(blocked=json.dumps(sorted(modules_outside_core()))), encoding="utf-8")
    return path

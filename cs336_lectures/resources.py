"""What the package carries besides code: the viewer, the trace format's contract, its version.

An installed wheel holds `viewer/` and `trace/` under `cs336_lectures/share/` (build_hooks.py
copies them there at build time); a clone, and an editable install of it, keeps them at the
repository's top level. The installed copy is looked for first, the clone's second.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from pathlib import Path

DISTRIBUTION = "cs336-lectures"
PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED_DIR = PACKAGE_DIR / "share"
CLONE_DIR = PACKAGE_DIR.parent


def shared_path(relative: str) -> Path:
    """Where `relative` (`viewer`, `trace/schema.json`) is: in the installed package, else in the
    clone; the installed place when neither has it, so that an error names where it belongs."""
    installed = INSTALLED_DIR / relative
    if installed.exists():
        return installed
    cloned = CLONE_DIR / relative
    return cloned if cloned.exists() else installed


VIEWER_DIR = shared_path("viewer")
TRACE_SCHEMA = shared_path("trace/schema.json")


@functools.cache
def version() -> str:
    """The package's version, as pyproject.toml sets it: from the installed metadata, or from
    pyproject.toml itself when the clone runs without being installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        found = re.search(r'^version\s*=\s*"([^"]+)"', (CLONE_DIR / "pyproject.toml").read_text(), re.MULTILINE)
    except OSError:
        found = None
    return found.group(1) if found else "unknown"

"""The shipped probe scripts (``probes/``, installed as ``pytest_enconda.probes``) as real files.

Probe scripts are copied into containers or run by the agent's interpreter, so callers need a
path on disk, not an importlib resource. The package is found through the import system, so the
same call works from a source checkout, an editable install and a regular one.
"""

from __future__ import annotations

import importlib.resources
import shutil
import tempfile
from pathlib import Path

__all__ = ["IMPORTS_SCAN", "PROBES_PACKAGE", "PYTHON_FACTS", "probe_script", "probe_scripts"]

PROBES_PACKAGE = "pytest_enconda.probes"
IMPORTS_SCAN = "imports_scan.py"
PYTHON_FACTS = "python_facts.py"

_extracted: dict[str, Path] = {}


def probe_scripts() -> list[str]:
    """Names of the shipped standard-library scripts (the ``probe_*.py`` test modules excluded)."""
    root = importlib.resources.files(PROBES_PACKAGE)
    return sorted(
        entry.name
        for entry in root.iterdir()
        if entry.name.endswith(".py")
        and not entry.name.startswith(("probe_", "__init__"))
        and entry.is_file()
    )


def probe_script(name: str) -> Path:
    """The path of the shipped script ``name`` (e.g. ``"imports_scan.py"``).

    Raises ``FileNotFoundError`` naming the scripts there are when ``name`` is not one of them.
    """
    if "/" in name or "\\" in name or not name.endswith(".py"):
        raise FileNotFoundError(
            f"expected a probe script's file name (like {IMPORTS_SCAN!r}), got {name!r}"
        )
    resource = importlib.resources.files(PROBES_PACKAGE) / name
    if not resource.is_file():
        raise FileNotFoundError(
            f"no probe script {name!r} in {PROBES_PACKAGE}; there are: {', '.join(probe_scripts())}"
        )
    if isinstance(resource, Path):
        return resource
    # Installed inside a zip: extract once per process into a folder of our own.
    if name not in _extracted:
        folder = Path(tempfile.mkdtemp(prefix="enconda-probes-"))
        with importlib.resources.as_file(resource) as path:
            target = folder / name
            shutil.copyfile(path, target)
        _extracted[name] = target
    return _extracted[name]

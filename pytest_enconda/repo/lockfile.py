"""The versions a repository's lock file pins, as pip constraints for the reference recipe.

An unpinned install of an old checkout takes today's releases of its dependencies, and those
drift: strawberry-django-auth's tests import `strawberry.field`, which later strawberry-graphql
releases no longer have, and memegen's install spent its whole budget in pip's resolver. A lock
file committed at the pinned revision says which versions the project was tested with. Read
here: ``poetry.lock``, ``pdm.lock`` and ``uv.lock`` (TOML, ``[[package]]`` with ``name`` and
``version``) and ``Pipfile.lock`` (JSON, ``default`` and ``develop``). Packages from a git
repository, a folder, a file or a URL are left out (pip cannot be constrained to them by
version), and so are the build tools (``setuptools``, ``wheel``, ``pip``): pip applies
``PIP_CONSTRAINT`` to the isolated build environments too, where a locked old setuptools would
break a build that asks for a newer one.
"""

from __future__ import annotations

import re
from pathlib import Path

from packaging.utils import canonicalize_name

from ..textio import parse_json, parse_toml

__all__ = ["LOCK_FILES", "lock_constraints"]

LOCK_FILES = ("poetry.lock", "pdm.lock", "uv.lock", "Pipfile.lock")
MAX_LOCK_BYTES = 8 * 1024 * 1024
_BUILD_TOOLS = {"setuptools", "wheel", "pip"}
_NOT_FROM_AN_INDEX = {"git", "directory", "file", "url", "editable", "virtual", "path"}
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.!+_-]*$")


def _from_toml(text: str, own: set[str]) -> dict[str, str]:
    data = parse_toml(text)
    packages = data.get("package") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for package in packages if isinstance(packages, list) else []:
        if not isinstance(package, dict):
            continue
        name, version = package.get("name"), package.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        source = package.get("source")
        # poetry: source.type = "git"; uv: source = {git = ...} or {editable = "."}.
        kinds = set(source) if isinstance(source, dict) else set()
        if isinstance(source, dict) and isinstance(source.get("type"), str):
            kinds.add(source["type"])
        if kinds & _NOT_FROM_AN_INDEX:
            continue
        out[canonicalize_name(name)] = version
    return {name: version for name, version in out.items() if name not in own}


def _from_pipfile(text: str, own: set[str]) -> dict[str, str]:
    data = parse_json(text)
    out: dict[str, str] = {}
    for section in ("default", "develop"):
        entries = data.get(section) if isinstance(data, dict) else None
        for name, entry in (entries or {}).items() if isinstance(entries, dict) else []:
            version = entry.get("version") if isinstance(entry, dict) else None
            if isinstance(version, str) and version.startswith("=="):
                out.setdefault(canonicalize_name(name), version[2:])
    return {name: version for name, version in out.items() if name not in own}


def lock_constraints(
    repo: Path, own: set[str] | frozenset[str] = frozenset()
) -> tuple[str, list[str]]:
    """(the lock file read, ``name==version`` lines) for the first lock file at the top of
    ``repo`` that yields any; ``("", [])`` when there is none. ``own`` are the project's own
    distribution names (canonical), never constrained: the checkout is what is installed."""
    for name in LOCK_FILES:
        path = Path(repo) / name
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_LOCK_BYTES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            pins = (
                _from_pipfile(text, set(own))
                if name == "Pipfile.lock"
                else _from_toml(text, set(own))
            )
        except (ValueError, TypeError):
            continue  # a lock file that does not parse is no evidence of anything
        lines = [
            f"{package}=={version}"
            for package, version in sorted(pins.items())
            if package not in _BUILD_TOOLS and _VERSION.match(version)
        ]
        if lines:
            return name, lines
    return "", []

"""Bounded reads of a checkout's files, and the one reading of its ``pyproject.toml``.

A repository is untrusted input: a file is read only when it is a regular file inside the
checkout (a symlink may point anywhere on this host), at most ``MAX_READ`` bytes of it, and bytes
that are not UTF-8 are replaced rather than refused. Every module that wants pyproject's tables
asks ``read_pyproject``; TOML goes through ``textio.parse_toml``, which bounds what a hostile
literal can cost.
"""

from __future__ import annotations

import configparser
import copy
import functools
from pathlib import Path
from typing import Any

from ..textio import parse_toml

__all__ = ["MAX_READ", "pyproject_parses", "read_ini", "read_pyproject", "read_text"]

MAX_READ = 1 << 20


def read_text(path: Path) -> str:
    """The file's text ("" when it is missing, a symlink or unreadable), cut at ``MAX_READ``."""
    try:
        if not path.is_file() or path.is_symlink():
            return ""
        with path.open("rb") as handle:
            return handle.read(MAX_READ).decode("utf-8", errors="replace")
    except OSError:
        return ""


def read_ini(text: str) -> configparser.RawConfigParser | None:
    """An INI text (setup.cfg, tox.ini) as a parser; None when it does not parse."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def read_pyproject(repo: Path) -> dict[str, Any]:
    """``pyproject.toml``'s tables; empty when there is none or it does not parse.

    The parse is kept by the file's text, so the heuristic agent, the profile and verify reading
    one checkout parse it once; each caller gets its own copy to read (or change) freely."""
    return copy.deepcopy(_parsed(read_text(Path(repo) / "pyproject.toml")) or {})


def pyproject_parses(repo: Path) -> bool:
    """Whether the checkout's ``pyproject.toml`` is a TOML document this reader can use (an
    empty file is one; a missing or oversized one is not)."""
    path = Path(repo) / "pyproject.toml"
    return path.is_file() and not path.is_symlink() and _parsed(read_text(path)) is not None


@functools.lru_cache(maxsize=32)
def _parsed(text: str) -> dict[str, Any] | None:
    try:
        return parse_toml(text)
    except ValueError:  # a repository's pyproject: deep or huge literals are its problem
        return None

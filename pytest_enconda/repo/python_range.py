"""The Python versions a repository declares it runs on, read from its manifests, never run.

``pytest-enconda verify`` picks the base image (and so the interpreter) of a repository's
reference from it (``sandbox.recipes.choose_base``): a project declaring ``<3.10,>=3.9`` cannot be
installed by pip on bookworm's 3.11.2, whatever its README says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .files import read_ini, read_pyproject, read_text
from .poetry import poetry_specifier
from .setup_py import setup_keywords

__all__ = ["DeclaredPython", "declared_python"]

# Poetry's `python = "3.9"` is the 3.9 series (its marker is python_version == "3.9"), not 3.9.0.
_SERIES = re.compile(r"\d+\.\d+")


@dataclass(frozen=True)
class DeclaredPython:
    """One declaration: the text as written, where, and its PEP 440 reading."""

    text: str
    source: str = ""
    alternatives: tuple[str, ...] = ()
    problem: str = ""

    @property
    def readable(self) -> bool:
        return not self.problem

    def allows(self, version: str) -> bool:
        """Whether interpreter ``version`` (a full micro version: 3.11.2) is in the range."""
        try:
            wanted = Version(version)
        except InvalidVersion:
            return False
        return any(SpecifierSet(spec).contains(wanted) for spec in self.alternatives)

    def describe(self) -> str:
        return f"{self.source} {self.text!r}"


def _pep440(text: str, source: str) -> DeclaredPython:
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        return DeclaredPython(text, source, problem="not a PEP 440 version specifier")
    return DeclaredPython(text, source, alternatives=(text,))


def _poetry(text: str, source: str) -> DeclaredPython:
    """Poetry's constraint: ``||`` joins alternatives, each translated by ``poetry_specifier``."""
    alternatives: list[str] = []
    for part in re.split(r"\|\|?", text):
        part = part.strip()
        if _SERIES.fullmatch(part):
            part += ".*"
        spec = poetry_specifier(part)
        if spec is None:
            return DeclaredPython(text, source, problem=f"Poetry constraint {part!r} not read")
        try:
            SpecifierSet(spec)
        except InvalidSpecifier:
            return DeclaredPython(text, source, problem=f"{spec!r} is not PEP 440")
        alternatives.append(spec)
    return DeclaredPython(text, source, alternatives=tuple(alternatives))


def _setup_py(repo: Path) -> str | None:
    """``python_requires=`` of setup.py's call, a literal or a module-level name."""
    value = setup_keywords(read_text(repo / "setup.py")).get("python_requires")
    return value if isinstance(value, str) else None


def declared_python(repo: Path) -> DeclaredPython | None:
    """The first declaration found, in the order an installer trusts them: pyproject's
    ``[project] requires-python``, Poetry's ``[tool.poetry.dependencies] python``, setup.cfg's
    ``[options] python_requires``, setup.py's ``python_requires=``; None when none declares one
    (or the text is empty)."""
    repo = Path(repo)
    pyproject = read_pyproject(repo)
    project = pyproject.get("project")
    if isinstance(project, dict) and isinstance(project.get("requires-python"), str):
        text = project["requires-python"].strip()
        if text:
            return _pep440(text, "pyproject.toml [project] requires-python")
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    dependencies = poetry.get("dependencies") if isinstance(poetry, dict) else None
    if isinstance(dependencies, dict) and isinstance(dependencies.get("python"), str):
        text = dependencies["python"].strip()
        if text and text != "*":
            return _poetry(text, "pyproject.toml [tool.poetry.dependencies] python")
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_option("options", "python_requires"):
        text = setup_cfg.get("options", "python_requires").strip()
        if text:
            return _pep440(text, "setup.cfg [options] python_requires")
    text = (_setup_py(repo) or "").strip()
    if text:
        return _pep440(text, "setup.py python_requires")
    return None

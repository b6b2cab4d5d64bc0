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

__all__ = [
    "POETRY",
    "PYPROJECT",
    "SETUP_CFG",
    "SETUP_PY",
    "DeclaredPython",
    "PythonDeclaration",
    "declared_python",
    "python_declarations",
]

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


PYPROJECT = "pyproject.toml [project] requires-python"
POETRY = "pyproject.toml [tool.poetry.dependencies] python"
SETUP_CFG = "setup.cfg [options] python_requires"
SETUP_PY = "setup.py python_requires"


@dataclass(frozen=True)
class PythonDeclaration:
    """One manifest's Python constraint as written (not stripped; may be empty), and where."""

    text: str
    source: str  # PYPROJECT, POETRY, SETUP_CFG or SETUP_PY


def python_declarations(repo: Path) -> tuple[PythonDeclaration, ...]:
    """Every Python constraint the manifests declare, in the order an installer trusts them:
    pyproject's ``[project] requires-python``, Poetry's ``[tool.poetry.dependencies] python``,
    setup.cfg's ``[options] python_requires``, setup.py's ``python_requires=``. Only a string
    value counts; each text is as written, so a reader decides what an empty one means."""
    repo = Path(repo)
    found: list[PythonDeclaration] = []
    pyproject = read_pyproject(repo)
    project = pyproject.get("project")
    if isinstance(project, dict) and isinstance(project.get("requires-python"), str):
        found.append(PythonDeclaration(project["requires-python"], PYPROJECT))
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    dependencies = poetry.get("dependencies") if isinstance(poetry, dict) else None
    if isinstance(dependencies, dict) and isinstance(dependencies.get("python"), str):
        found.append(PythonDeclaration(dependencies["python"], POETRY))
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_option("options", "python_requires"):
        found.append(PythonDeclaration(setup_cfg.get("options", "python_requires"), SETUP_CFG))
    setup_py = _setup_py(repo)
    if setup_py is not None:
        found.append(PythonDeclaration(setup_py, SETUP_PY))
    return tuple(found)


def declared_python(repo: Path) -> DeclaredPython | None:
    """The first declaration (``python_declarations``) that says something: an empty text, or
    Poetry's ``*``, does not; None when none does."""
    for declaration in python_declarations(repo):
        text = declaration.text.strip()
        if not text or (declaration.source == POETRY and text == "*"):
            continue
        if declaration.source == POETRY:
            return _poetry(text, POETRY)
        return _pep440(text, declaration.source)
    return None

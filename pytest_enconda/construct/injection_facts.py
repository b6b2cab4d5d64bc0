"""What a rule injector may rely on: the README's command lines and the repository's own facts.

Facts are read from files, never by running code: the project name, its dependencies with their
constraints (``pyproject.toml`` PEP 621, ``setup.cfg``), optional extras, console scripts,
``requires-python``, pinned requirement files, and the tree's paths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..agents.readme_commands import extract_commands
from ..repo.facts import PoetryTable, read_repository
from ..repo.facts import RepoFacts as DeclaredFacts

# The repository is downloaded data: its files are read bounded, never through a link or a FIFO.
from ..repo.files import read_text as read_repo_file
from ..repo.poetry import poetry_specifier
from ..repo.python_range import POETRY, SETUP_PY
from ..sandbox.repo import iter_tree

__all__ = ["CommandLine", "RepoFacts", "Requirement", "command_lines", "read_facts"]

_PROMPT = re.compile(r"^\s*(?:\([\w.@-]+\)\s*)?(?:[$%>]\s)?")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


@dataclass(frozen=True)
class CommandLine:
    """A README command the literal agent runs, and the README line it is written on."""

    step: int
    line: int
    command: str
    text: str  # the whole README line (prompt and indentation kept)


@dataclass(frozen=True)
class Requirement:
    name: str
    spec: str  # e.g. '>=8.0' or '==2.9.0.post0' (empty: unconstrained)
    source: str  # the file (and field) it was declared in

    @property
    def text(self) -> str:
        return f"{self.name}{self.spec}"


@dataclass
class RepoFacts:
    name: str = ""
    dependencies: list[Requirement] = field(default_factory=list)
    extras: dict[str, list[Requirement]] = field(default_factory=dict)
    scripts: list[str] = field(default_factory=list)
    requires_python: str = ""
    pinned: dict[str, list[Requirement]] = field(default_factory=dict)  # requirement file -> pins
    paths: frozenset[str] = frozenset()

    def has_path(self, path: str) -> bool:
        return path.strip("/").removeprefix("./") in self.paths


def command_lines(readme: str, name: str = "README.md") -> list[CommandLine]:
    """Each README command the literal agent runs that sits on one README line of its own."""
    lines = readme.split("\n")
    found: list[CommandLine] = []
    start = 0
    for step, command in enumerate(extract_commands(readme, name)):
        for index in range(start, len(lines)):
            text = lines[index]
            stripped = _PROMPT.sub("", text.strip(), count=1).strip().strip("`").strip()
            if stripped == command:
                found.append(CommandLine(step=step, line=index, command=command, text=text))
                start = index + 1
                break
    return found


def _requirement(text: str, source: str) -> Requirement | None:
    text = text.split(";", 1)[0].split("#", 1)[0].strip()
    if not text or text.startswith(("-", "git+", "http")):
        return None
    match = _REQ.match(text)
    if not match:
        return None
    return Requirement(name=match.group(1), spec=match.group(3).replace(" ", ""), source=source)


def _poetry_facts(poetry: PoetryTable, facts: RepoFacts) -> None:
    """Name, dependencies, extras and scripts of a Poetry project ([tool.poetry]), where
    [project] did not give them: ``^``/``~`` constraints become PEP 440 specifiers so that the
    E1 and E7 rules read them as they read [project]'s."""
    if not facts.name:
        facts.name = poetry.name or ""  # a Poetry project names itself here
    declared: dict[str, Requirement] = {}
    optional: set[str] = set()
    if poetry.dependencies:
        where = "pyproject.toml [tool.poetry.dependencies]"
        for name, value in poetry.dependencies.items():
            constraint = value
            if isinstance(value, dict):
                if any(key in value for key in ("git", "path", "url", "file")):
                    continue  # not from the index: no version to contradict
                if value.get("optional"):
                    optional.add(name.lower())
                constraint = value.get("version", "*")
            if not isinstance(constraint, str):
                continue  # several constraints by marker: not read
            spec = poetry_specifier(constraint)
            if spec is None:
                continue
            if name.lower() == "python":
                continue  # the Python range: ``_requires_python``
            declared[name.lower()] = Requirement(name=name, spec=spec, source=where)
    if not facts.dependencies:
        facts.dependencies = [r for key, r in declared.items() if key not in optional]
    if not facts.extras:
        for extra, names in poetry.extras.items():
            facts.extras[extra] = [r for n in names if (r := declared.get(n.lower())) is not None]
    if not facts.scripts:
        facts.scripts = sorted(poetry.scripts)


def _requires_python(declared: DeclaredFacts) -> str:
    """The first Python constraint that says something, as written: pyproject's [project],
    Poetry's (as a PEP 440 specifier, so that the E7 rule reads it as it reads [project]'s),
    setup.cfg's; setup.py's is not read."""
    for declaration in declared.python_declarations:
        text: str | None = declaration.text
        if declaration.source == SETUP_PY:
            continue
        if declaration.source == POETRY:
            text = poetry_specifier(declaration.text)
        if text:
            return text
    return ""


def read_facts(repo: Path) -> RepoFacts:
    repo = Path(repo)
    facts = RepoFacts()
    paths = set()
    for rel, _ in iter_tree(repo):
        paths.add(rel)
    facts.paths = frozenset(paths)
    declared = read_repository(repo)
    project = declared.project
    if project is not None:
        facts.name = project.name or ""
        for dep in project.dependencies:
            req = _requirement(dep, "pyproject.toml [project] dependencies")
            if req:
                facts.dependencies.append(req)
        for extra, deps in project.optional_dependencies.items():
            where = f"pyproject.toml [project.optional-dependencies] {extra}"
            facts.extras[extra] = [r for d in deps if (r := _requirement(d, where))]
        facts.scripts = sorted(project.scripts)
    if declared.poetry is not None:
        _poetry_facts(declared.poetry, facts)
    facts.requires_python = _requires_python(declared)
    parser = declared.setup_cfg
    if parser is not None:
        if parser.has_section("metadata") and not facts.name:
            facts.name = parser.get("metadata", "name", fallback="")
        if parser.has_section("options") and not facts.dependencies:
            for dep in parser.get("options", "install_requires", fallback="").splitlines():
                req = _requirement(dep, "setup.cfg [options] install_requires")
                if req:
                    facts.dependencies.append(req)
        if parser.has_section("options.extras_require") and not facts.extras:
            for extra, deps in parser.items("options.extras_require"):
                where = f"setup.cfg [options.extras_require] {extra}"
                facts.extras[extra] = [
                    r for d in deps.splitlines() if (r := _requirement(d, where))
                ]
        if parser.has_section("options.entry_points") and not facts.scripts:
            text = parser.get("options.entry_points", "console_scripts", fallback="")
            facts.scripts = sorted(
                line.split("=", 1)[0].strip() for line in text.splitlines() if "=" in line
            )
    for rel in sorted(paths):
        if rel.endswith(".txt") and "requirement" in rel.lower():
            text = read_repo_file(repo / rel)
            pins = [r for line in text.splitlines() if (r := _requirement(line, rel)) and r.spec]
            facts.pinned[rel] = pins
    if not facts.name:
        # setup.py is code, never run: the first ``name=`` a call in it passes (setup's, or
        # the dict splatted into it), as ``repo`` reads it.
        facts.name = next(
            (
                value
                for keyword, value in declared.setup_py_calls
                if keyword == "name" and isinstance(value, str) and _NAME.fullmatch(value)
            ),
            "",
        )
    return facts

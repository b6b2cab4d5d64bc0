"""Programs the project's own Python requirements provide are never Debian packages to install.

pytest-xdist's README runs ``pytest``; in the readme attempt the command failed before pytest
was installed ("pytest: command not found"), ``verify`` read the line as a system program the
image lacked, and the next recipe installed Debian's ``python3-pytest``: the reference then ran on
Debian's pytest, not the one the project's requirements pin. A missing program whose name is a
distribution the requirements name (or one of its console scripts below) is left to pip.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cases.sidecar import RepoVerification
    from ..repo.facts import RepoFacts

__all__ = ["project_requirements", "requirement_programs", "without_own_tools"]

# Console scripts whose name differs from their distribution's, for the distributions the
# requirements name (pytest installs py.test too).
_SCRIPTS = {
    "pytest": ("pytest", "py.test"),
    "tox": ("tox",),
    "nox": ("nox",),
    "coverage": ("coverage", "coverage3"),
    "sphinx": ("sphinx-build", "sphinx-apidoc", "sphinx-autogen", "sphinx-quickstart"),
    "pre-commit": ("pre-commit",),
    "poetry": ("poetry",),
    "hatch": ("hatch",),
    "pdm": ("pdm",),
    "flake8": ("flake8",),
    "mypy": ("mypy", "dmypy", "stubgen"),
    "black": ("black",),
    "ruff": ("ruff",),
    "invoke": ("invoke", "inv"),
}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_programs(requirements: Iterable[str]) -> set[str]:
    """The programs the distributions named in ``requirements`` (PEP 508 lines, option lines
    and paths skipped) install: each distribution's own name and its known console scripts."""
    programs: set[str] = set()
    for line in requirements:
        match = _NAME.match(line)
        if not match or line.lstrip().startswith(("-", ".", "/")):
            continue
        name = _canonical(match.group(1))
        programs.add(name)
        programs.update(_canonical(script) for script in _SCRIPTS.get(name, ()))
    return programs


def without_own_tools(programs: Iterable[str], requirements: Iterable[str]) -> list[str]:
    """``programs`` less those the requirements' Python distributions provide."""
    own = requirement_programs(requirements)
    return [program for program in programs if _canonical(program) not in own]


def project_requirements(record: RepoVerification, facts: RepoFacts) -> list[str]:
    """Every requirement the project names: test tools and requirements, runtime and optional
    dependencies (PEP 621, Poetry, setup.py, setup.cfg) and what its CI job installs."""
    names = [*record.test_tools, *record.test_requirements, *facts.install_requirements]
    names += [req for reqs in facts.extras.values() for req in reqs]
    names += facts.ci_job_requirements
    if facts.project is not None:
        names += facts.project.dependencies
        names += [r for reqs in facts.project.optional_dependencies.values() for r in reqs]
    if facts.poetry is not None:
        names += list(facts.poetry.dependencies) + list(facts.poetry.dev_dependencies)
        names += [name for group in facts.poetry.groups.values() for name in group]
    return names

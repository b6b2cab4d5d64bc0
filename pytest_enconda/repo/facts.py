"""One reading of a checkout's declared facts: ``read_repository(path) -> RepoFacts``.

The heuristic agent, the codebase profile, construct's rules and verify each used to open
``pyproject.toml`` and read ``requires-python`` and the extras their own way. They now ask this
model: pyproject's tables typed once (a value of the wrong type is left out rather than read as
something else), and the readers of this package (Python range, extras, test command and
requirements, CI services, tox/nox, Makefile targets, lockfiles, VCS version tools, the
registered ecosystems whose files it has) behind properties computed on first use. One checkout
is read once: the model is kept per path while the files it depends on are unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .files import pyproject_parses, read_ini, read_pyproject, read_text

if TYPE_CHECKING:
    import configparser

    from .ci_services import CiService
    from .python_range import DeclaredPython, PythonDeclaration
    from .test_commands import TestCommand
    from .test_deps import TestRequirement
    from .vcs_version import VersionTool

__all__ = [
    "BuildSystem",
    "PoetryTable",
    "ProjectTable",
    "RepoFacts",
    "read_repository",
]


def _strings(value: object) -> tuple[str, ...]:
    """The strings of a TOML array; nothing for any other value."""
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _keys(value: object) -> tuple[str, ...]:
    return tuple(str(key) for key in value) if isinstance(value, dict) else ()


@dataclass(frozen=True)
class ProjectTable:
    """pyproject's PEP 621 ``[project]`` table."""

    name: str | None = None
    requires_python: str | None = None
    dependencies: tuple[str, ...] = ()
    # ``optional-dependencies``: each extra whose value is an array, with its strings.
    optional_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    scripts: tuple[str, ...] = ()

    @classmethod
    def read(cls, table: dict[str, Any]) -> ProjectTable:
        optional = _table(table.get("optional-dependencies"))
        return cls(
            name=table["name"] if isinstance(table.get("name"), str) else None,
            requires_python=(
                table["requires-python"] if isinstance(table.get("requires-python"), str) else None
            ),
            dependencies=_strings(table.get("dependencies")),
            optional_dependencies={
                str(extra): _strings(value)
                for extra, value in optional.items()
                if isinstance(value, list)
            },
            scripts=_keys(table.get("scripts")),
        )


@dataclass(frozen=True)
class PoetryTable:
    """``[tool.poetry]``: Poetry's own names for the same facts (specs as written)."""

    name: str | None = None
    # ``dependencies.python`` when it is a string ("^3.8", "3.9", ">=3.8,<4").
    python: str | None = None
    dependencies: Mapping[str, object] = field(default_factory=dict)  # python left out
    dev_dependencies: Mapping[str, object] = field(default_factory=dict)
    groups: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # group: its deps
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    scripts: tuple[str, ...] = ()

    @classmethod
    def read(cls, table: dict[str, Any]) -> PoetryTable:
        dependencies = _table(table.get("dependencies"))
        python = dependencies.get("python")
        groups = _table(table.get("group"))
        return cls(
            name=table["name"] if isinstance(table.get("name"), str) else None,
            python=python if isinstance(python, str) else None,
            dependencies={str(k): v for k, v in dependencies.items() if k != "python"},
            dev_dependencies={str(k): v for k, v in _table(table.get("dev-dependencies")).items()},
            groups={
                str(name): _table(_table(group).get("dependencies"))
                for name, group in groups.items()
                if isinstance(group, dict)
            },
            extras={
                str(extra): tuple(str(name) for name in names)
                for extra, names in _table(table.get("extras")).items()
                if isinstance(names, list)
            },
            scripts=_keys(table.get("scripts")),
        )


@dataclass(frozen=True)
class BuildSystem:
    """``[build-system]``: what builds the checkout."""

    requires: tuple[str, ...] = ()
    backend: str | None = None


@dataclass(frozen=True)
class RepoFacts:
    """What the checkout at ``root`` declares. The fields are read at once (pyproject's tables);
    the properties run this package's readers on first use and keep their answer."""

    root: Path
    # A file named pyproject.toml is there (it may still not parse).
    has_pyproject: bool = False
    # It parses as TOML within the read bound (an empty file does).
    pyproject_parses: bool = False
    # Its tables as parsed; empty without one. Read it, never change it: it is shared.
    pyproject: Mapping[str, Any] = field(default_factory=dict)
    project: ProjectTable | None = None  # None: no [project] table
    poetry: PoetryTable | None = None  # None: no (or an empty) [tool.poetry] table
    build_system: BuildSystem = field(default_factory=BuildSystem)
    tools: frozenset[str] = frozenset()  # the names under [tool]

    # ------------------------------------------------------------------ Python

    @functools.cached_property
    def python(self) -> DeclaredPython | None:
        """The declared Python range (``python_range.declared_python``)."""
        from .python_range import declared_python

        return declared_python(self.root)

    @functools.cached_property
    def python_declarations(self) -> tuple[PythonDeclaration, ...]:
        """Every Python constraint the manifests declare, as written, with its source, in the
        order an installer trusts them (``python_range.python_declarations``); ``python`` is
        the first that says something."""
        from .python_range import python_declarations

        return python_declarations(self.root)

    # ------------------------------------------------------------------ setup.cfg, setup.py

    @functools.cached_property
    def setup_cfg(self) -> configparser.RawConfigParser | None:
        """setup.cfg parsed (``files.read_ini``); None when there is none or it does not parse.
        Read it, never change it: it is shared."""
        path = self.root / "setup.cfg"
        if not path.is_file() or path.is_symlink():
            return None
        return read_ini(read_text(path))

    @functools.cached_property
    def setup_py_calls(self) -> tuple[tuple[str, object], ...]:
        """Every keyword of every call in setup.py with its value (``setup_py.call_keywords``);
        empty when there is none or it does not parse."""
        from .setup_py import call_keywords

        return tuple(call_keywords(read_text(self.root / "setup.py")))

    @functools.cached_property
    def setup_py(self) -> dict[str, object]:
        """The keywords of setup.py's ``setup(...)`` call (``setup_py.setup_keywords``)."""
        from .setup_py import setup_keywords

        return setup_keywords(read_text(self.root / "setup.py"))

    @functools.cached_property
    def extras(self) -> dict[str, list[str]]:
        """Every extra with its requirements: pyproject, Poetry, setup.cfg and setup.py."""
        from .test_deps import extra_requirements

        return extra_requirements(self.root)

    @functools.cached_property
    def install_requirements(self) -> list[str]:
        """setup.py's and setup.cfg's ``install_requires``."""
        from .test_deps import install_requirements

        return install_requirements(self.root)

    @functools.cached_property
    def depends_on_pip(self) -> bool:
        from .test_deps import depends_on_pip

        return depends_on_pip(self.root)

    @functools.cached_property
    def name(self) -> str:
        """The distribution name as declared ("" when none is)."""
        from .project import declared_name

        return declared_name(self.root)

    @functools.cached_property
    def packages(self) -> list[str]:
        """The checkout's top-level packages (``checkout.checkout_packages``)."""
        from .checkout import checkout_packages

        return checkout_packages(self.root)

    # ------------------------------------------------------------------ tests and CI

    @functools.cached_property
    def test_command(self) -> TestCommand:
        """The command that runs the tests, and where it was found."""
        from .test_commands import discover_test_command

        return discover_test_command(self.root)

    @functools.cached_property
    def ci_job_requirements(self) -> list[str]:
        """What the CI job giving the test command installs before it."""
        from .test_deps import ci_job_requirements

        return ci_job_requirements(self.root, self.test_command)

    @functools.cached_property
    def test_tools(self) -> list[str]:
        """pytest and the plugins the test command and the configuration need."""
        from .test_tools import test_tools

        return test_tools(self.root, self.test_command.command, self.ci_job_requirements)

    @functools.cached_property
    def ci_services(self) -> tuple[list[CiService], list[str]]:
        """The services CI starts beside the tests, and the images it names that are not known."""
        from .ci_services import ci_services

        return ci_services(self.root, self.test_command)

    def test_requirements(self, python: str = "3.11") -> list[TestRequirement]:
        """The declared test requirements as read for interpreter ``python``."""
        from .test_deps import declared_test_requirements

        return declared_test_requirements(self.root, python=python)

    @functools.cached_property
    def tox_sections(self) -> tuple[str, ...]:
        """Where tox is configured (tox.ini, setup.cfg, pyproject's legacy_tox_ini)."""
        from .test_commands import _tox_sections

        return tuple(
            name
            for name, parser in _tox_sections(self.root)
            if any(s in ("tox", "tox:tox") or s.startswith("testenv") for s in parser.sections())
        )

    @functools.cached_property
    def nox(self) -> bool:
        return (self.root / "noxfile.py").is_file()

    @functools.cached_property
    def make_targets(self) -> tuple[str, ...]:
        """The targets of the first Makefile, in their order."""
        from .test_commands import MAKEFILES, _make_rules

        for name in MAKEFILES:
            if (self.root / name).is_file():
                return tuple(_make_rules(read_text(self.root / name)))
        return ()

    # ------------------------------------------------------------------ installs

    @functools.cached_property
    def lockfiles(self) -> tuple[str, ...]:
        from .lockfile import LOCK_FILES

        return tuple(name for name in LOCK_FILES if (self.root / name).is_file())

    @functools.cached_property
    def version_tools(self) -> tuple[VersionTool, ...]:
        """The VCS version tools (setuptools-scm, versioneer, ...) the configuration names."""
        from .vcs_version import CONFIG_FILES, named_tools

        return tuple(named_tools("\n".join(read_text(self.root / n) for n in CONFIG_FILES)))

    @functools.cached_property
    def ecosystems(self) -> tuple[str, ...]:
        """The registered ecosystems whose files are at the top of the checkout, in the order
        its language is decided (``ecosystems.detection_order``)."""
        from ..ecosystems import detection_order

        return tuple(eco.name for eco in detection_order() if eco.detected(self.root))


def _read(root: Path) -> RepoFacts:
    pyproject = read_pyproject(root)
    tool = _table(pyproject.get("tool"))
    build = _table(pyproject.get("build-system"))
    project = pyproject.get("project")
    poetry = _table(tool.get("poetry"))
    return RepoFacts(
        root=root,
        has_pyproject=(root / "pyproject.toml").is_file(),
        pyproject_parses=pyproject_parses(root),
        pyproject=pyproject,
        project=ProjectTable.read(project) if isinstance(project, dict) else None,
        poetry=PoetryTable.read(poetry) if poetry else None,
        build_system=BuildSystem(
            requires=_strings(build.get("requires")),
            backend=build["build-backend"] if isinstance(build.get("build-backend"), str) else None,
        ),
        tools=frozenset(str(key) for key in tool),
    )


# The checkouts read lately, by path: (the state of their files when read, the facts).
_KEPT = 16
_kept: OrderedDict[Path, tuple[tuple[object, ...], RepoFacts]] = OrderedDict()
_lock = threading.Lock()


def _state(root: Path) -> tuple[object, ...]:
    """What the facts depend on, cheaply: the entries at the top of the checkout and in its
    workflow folder (name, size, modification time), and the manifests' own bytes (a rewrite
    of the same size within one clock tick changes no time)."""
    entries: list[object] = []
    for folder in (root, root / ".github" / "workflows"):
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    stat = entry.stat(follow_symlinks=False)
                    entries.append((folder.name, entry.name, stat.st_size, stat.st_mtime_ns))
        except OSError:
            continue
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        digest.update(read_text(root / name).encode("utf-8", "replace") + b"\0")
    return (tuple(sorted(entries, key=repr)), digest.hexdigest())


def read_repository(path: Path) -> RepoFacts:
    """The declared facts of the checkout at ``path``, the same object while it is unchanged."""
    root = Path(path).resolve()
    state = _state(root)
    with _lock:
        kept = _kept.get(root)
        if kept is not None and kept[0] == state:
            _kept.move_to_end(root)
            return kept[1]
    facts = _read(root)
    with _lock:
        _kept[root] = (state, facts)
        _kept.move_to_end(root)
        while len(_kept) > _KEPT:
            _kept.popitem(last=False)
    return facts

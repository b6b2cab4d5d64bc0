"""The project's runtime requirements, and which test requirements the graded test step may install.

The graded test step installs the test tools and the test requirements before the test command,
for the reference and every agent alike. A test declaration often names what the project itself
needs to run (rollbar's test requirements held its runtime ``requests``; a tox ``deps`` line
``-r requirements.txt``; ``.[test]``, which installs the project and all its dependencies): the
step then did the setup's job, and an empty setup script passed. So the step installs no test
requirement whose name (PEP 503) is one of the project's runtime requirements, and never the
project itself. What a kept test requirement pulls in on its own (``requests-mock`` brings
``requests``) still installs: the null-setup check of ``verify`` is what shows such an instance.

Runtime requirements are read, never run: setup.py's and setup.cfg's ``install_requires``,
``[project] dependencies``, Poetry's ``dependencies`` (optional ones are extras, not runtime),
flit's old ``requires``, and the requirement files the project installs from: the root
``requirements.txt``, those ``[tool.setuptools.dynamic]`` or setup.cfg's ``file:`` name, and
those setup.py opens under an install file's name (``requirements/base.txt``, not
``requirements-all.txt``), with their ``-r`` includes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from packaging.utils import canonicalize_name

from .files import read_ini, read_pyproject, read_text
from .install_lines import _requirements_file
from .test_deps import install_requirements

__all__ = [
    "graded_requirements",
    "requirement_name",
    "runtime_names",
    "runtime_requirements",
    "self_install",
]

_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?=$|[\[<>=!~;@\s(,])")
_URL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")
# Requirement files setup.py reads by path: ``open("requirements/base.txt")``.
_FILE_IN_SETUP = re.compile(r"""["']([\w./-]*requirements[\w./-]*\.(?:txt|in))["']""")
# Named for tests or development: never the install file, whatever reads it.
_TEST_FILE = re.compile(r"(?:^|[/_.-])(?:tests?|testing|dev|develop|ci|docs?|lint)(?:$|[/_.-])")
# Of the files setup.py names, those named as the install file: setup.py reads its extras' files
# too (``requirements-all.txt``), which are no runtime requirement.
_BASE_FILE = re.compile(
    r"(?:.*/)?requirements(?:[/_.-](?:base|main|prod|production|runtime|install|core|common|"
    r"default|requirements))?\.(?:txt|in)"
)


def self_install(spec: str) -> bool:
    """Whether a requirement line installs the checkout (``.``, ``-e .``, ``.[test]``,
    ``./sub``, a ``file:`` URL or path): that installs the project with every runtime
    requirement, the setup's job."""
    words = spec.strip().split()
    if words and words[0] in ("-e", "--editable"):
        words = words[1:]
    if not words:
        return False
    target = words[0]
    return target.startswith((".", "/", "~", "file:")) or target.startswith("$")


def requirement_name(spec: str) -> str:
    """The canonical name of a PEP 508 line (``requests[socks]>=2 ; python_version>"3"`` →
    ``requests``); "" for an option line, a path or a URL."""
    if spec.lstrip().startswith(("-", ".", "/", "~", "$")) or _URL.match(spec):
        return ""
    match = _NAME.match(spec)
    return canonicalize_name(match.group(1)) if match else ""


def _applies(spec: str, python: str) -> bool:
    """Whether the line's environment marker holds in a box (Linux, CPython ``python``);
    a marker that does not parse counts as holding."""
    _, semi, marker = spec.partition(";")
    if not semi or not marker.strip():
        return True
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison

    environment = {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    try:
        return Marker(marker.strip()).evaluate(environment)
    except (InvalidMarker, UndefinedComparison, ValueError):
        return True


def runtime_names(specs: Iterable[str], python: str = "3.11") -> list[str]:
    """The canonical names, sorted, of the requirements in ``specs`` that apply on ``python``."""
    names = {requirement_name(spec) for spec in specs if _applies(spec, python)}
    return sorted(names - {""})


def _install_files(repo: Path, pyproject: Mapping[str, object]) -> list[Path]:
    """The requirement files the project installs from (not those named for tests)."""
    named: list[str] = ["requirements.txt"]
    tool = pyproject.get("tool")
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    dynamic = setuptools.get("dynamic") if isinstance(setuptools, dict) else None
    dependencies = dynamic.get("dependencies") if isinstance(dynamic, dict) else None
    files = dependencies.get("file") if isinstance(dependencies, dict) else None
    named += [files] if isinstance(files, str) else [f for f in files or [] if isinstance(f, str)]
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_option("options", "install_requires"):
        value = setup_cfg.get("options", "install_requires").strip()
        if value.startswith("file:"):
            named += [part.strip() for part in value.removeprefix("file:").split(",")]
    named += [
        f for f in _FILE_IN_SETUP.findall(read_text(repo / "setup.py")) if _BASE_FILE.fullmatch(f)
    ]
    paths: list[Path] = []
    for name in dict.fromkeys(named):
        if not name or name.startswith("/") or ".." in Path(name).parts:
            continue
        if _TEST_FILE.search(name.lower().removesuffix(".txt").removesuffix(".in")):
            continue
        path = repo / name
        if path.is_file() and path not in paths:
            paths.append(path)
    return paths


def runtime_requirements(repo: Path) -> list[str]:
    """Every runtime requirement the checkout declares, as written (see the module's note)."""
    repo = Path(repo)
    pyproject = read_pyproject(repo)
    found = [line.strip() for line in install_requirements(repo) if line.strip()]
    project = pyproject.get("project")
    if isinstance(project, dict) and isinstance(project.get("dependencies"), list):
        found += [spec for spec in project["dependencies"] if isinstance(spec, str)]
    tool = pyproject.get("tool") if isinstance(pyproject.get("tool"), dict) else {}
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    table = poetry.get("dependencies") if isinstance(poetry, dict) else None
    if isinstance(table, dict):
        for name, value in table.items():
            optional = isinstance(value, dict) and value.get("optional") is True
            if str(name).lower() != "python" and not optional:
                found.append(str(name))
    flit = tool.get("flit") if isinstance(tool, dict) else None
    metadata = flit.get("metadata") if isinstance(flit, dict) else None
    requires = metadata.get("requires") if isinstance(metadata, dict) else None
    if isinstance(requires, list):
        found += [spec for spec in requires if isinstance(spec, str)]
    for path in _install_files(repo, pyproject):
        found += _requirements_file(repo, path, set())
    return list(dict.fromkeys(found))


def graded_requirements(
    test_requirements: Iterable[str], runtime: Collection[str] | None, own: str = ""
) -> tuple[list[str], list[str]]:
    """``(kept, left out)``: the test requirements the graded step installs, and those it does
    not because they install the checkout or name one of the ``runtime`` requirements (canonical
    names; None where the record predates them: only the checkout's own installs are left out).
    ``own``: the project's own distribution name, left out too."""
    names = {canonicalize_name(name) for name in runtime or ()}
    if own:
        names.add(canonicalize_name(own))
    kept: list[str] = []
    left: list[str] = []
    for spec in test_requirements:
        if self_install(spec) or requirement_name(spec) in names:
            left.append(spec)
        else:
            kept.append(spec)
    return kept, left

"""Every test dependency a repository declares, wherever it declares it, with where it came from.

A reference environment that installs the project but not what its tests import (cantools' tox
``deps = parameterized``, testfixtures' ``extras_require=dict(test=[...])`` in setup.py) makes
those tests fail in the reference, so they never enter the PASS set, and Pass@1 then measures a
smaller suite than the repository has. The harness installs these *test requirements* before the
test command, for the reference and every graded agent alike (like the test tools): the project's
own dependencies stay the agent's job, what only the tests need does not decide Pass@1.

Read, without running any of the repository's code:
- extras and groups named for tests (``test``, ``tests``, ``testing``, ``dev``, ``ci``, ...):
  PEP 621 ``optional-dependencies``, PEP 735 ``dependency-groups`` (with ``include-group``),
  Poetry groups and ``dev-dependencies``, PDM ``dev-dependencies``, Hatch test environments
  (``dependencies``, ``extra-dependencies``, ``features``), setup.cfg ``extras_require`` and
  ``tests_require``;
- ``setup.py``'s ``extras_require``/``tests_require`` as Python: a dict literal or ``dict(...)``
  call, values that are lists, names of lists assigned earlier, and list concatenations;
- requirement files named for tests (``-r`` includes followed inside the repository);
- tox ``deps`` and ``extras`` of every test environment; nox ``session.install(...)``;
- ``pip install`` lines of the CI workflows, and ``conda``/``mamba install`` lines.
"""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

from pydantic import BaseModel

from .files import read_ini, read_pyproject, read_text
from .install_lines import (
    _install_line_specs,
    _installer_extras,
    _norm,
    _pip_line,
    _pip_words,
    _requirements_file,
)
from .poetry import poetry_requirement
from .project import poetry_dependency_table, project_name
from .setup_py import setup_keywords
from .test_commands import (
    MAKEFILES,
    TestCommand,
    _tox_sections,
    _workflows,
    ci_setup_lines,
)
from .test_tools import _TEST_EXTRAS, _requirement_files, _valid_requirement

__all__ = [
    "TestRequirement",
    "ci_job_requirements",
    "declared_test_requirements",
    "extra_requirements",
    "install_requirements",
]

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# Packages that run or lint tests but are no test's import: installing them is only slower.
_TOOLING = {
    "tox",
    "nox",
    "pre-commit",
    "black",
    "flake8",
    "isort",
    "ruff",
    "mypy",
    "pylint",
    "sphinx",
    "twine",
    "build",
    "wheel",
    "setuptools",
    "pip",
    "check-manifest",
    "bump2version",
    "codecov",
    "coveralls",
}
# Names starting so are linters, docs themes or type stubs. Not every "mypy*": mypy-protobuf is
# the protoc plugin protoletariat's tests generate stubs with, mypy-extensions a runtime library.
_TOOLING_PREFIXES = (
    "sphinx",
    "flake8",
    "mypy-boto3",
    "types-",
    "tox-",
    "pre-commit",
    "pylint",
)
_TOOLING |= {
    "virtualenv",
    "poetry",
    "cython",
    "minimum-dependencies",
    "codespell",
    "bandit",
    "darglint",
    "pyroma",
    "check-wheel-contents",
    "myst-parser",
    "furo",
    "rstcheck",
    "toml-sort",
    "coverage",
    "pydocstyle",
    "pyupgrade",
    "autopep8",
    "yapf",
}
# Windows-only packages that CI installs under a Windows matrix entry.
_WINDOWS_ONLY = {"pypiwin32", "pywin32", "wmi", "pywinpty", "colorama-win"}


class TestRequirement(BaseModel):
    """One declared test dependency (a PEP 508 specifier) and the file and field it is from."""

    __test__ = False

    spec: str
    source: str


def _strings(value: object) -> list[str]:
    return [i for i in value if isinstance(i, str)] if isinstance(value, list) else []


def install_requirements(repo: Path) -> list[str]:
    """setup.py's and setup.cfg's ``install_requires`` (pyproject's are read as TOML where used)."""
    repo = Path(repo)
    found = _strings(setup_keywords(read_text(repo / "setup.py")).get("install_requires"))
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_option("options", "install_requires"):
        value = setup_cfg.get("options", "install_requires")
        found += [line for line in value.splitlines() if line.strip()]
    return found


def depends_on_pip(repo: Path) -> bool:
    """Whether the project declares pip itself as a runtime dependency ([project], Poetry,
    setup.py, setup.cfg): pip-tools calls pip's internals, which change with every pip."""
    from packaging.requirements import InvalidRequirement, Requirement

    project = read_pyproject(repo).get("project")
    declared = project.get("dependencies") if isinstance(project, dict) else None
    specs = [*_strings(declared), *install_requirements(repo)]
    if any(str(name).lower() == "pip" for name in poetry_dependency_table(Path(repo))):
        return True
    for spec in specs:
        try:
            if Requirement(spec.strip()).name.lower() == "pip":
                return True
        except InvalidRequirement:
            continue
    return False


def _setup_py(repo: Path) -> tuple[dict[str, list[str]], list[str]]:
    """``(extras_require, tests_require)`` of setup.py, read as Python, never run."""
    keywords = setup_keywords(read_text(repo / "setup.py"))
    extras: dict[str, list[str]] = {}
    value = keywords.get("extras_require")
    if isinstance(value, dict):
        for key, items in value.items():
            if isinstance(items, list):
                extras[key] = [i for i in items if isinstance(i, str)]
            elif isinstance(items, str):
                extras[key] = [items]
    return extras, _strings(keywords.get("tests_require"))


def extra_requirements(repo: Path) -> dict[str, list[str]]:
    """Every declared extra (any name) and its requirement specifiers."""
    repo = Path(repo)
    extras: dict[str, list[str]] = {}
    pyproject = read_pyproject(repo)
    optional = pyproject.get("project", {}).get("optional-dependencies", {})
    if isinstance(optional, dict):
        for name, value in optional.items():
            if isinstance(value, list):
                extras[_norm(str(name))] = [v for v in value if isinstance(v, str)]
    poetry = pyproject.get("tool", {}).get("poetry", {})
    poetry_deps = poetry.get("dependencies", {}) if isinstance(poetry, dict) else {}
    poetry_extras = poetry.get("extras", {}) if isinstance(poetry, dict) else {}
    if isinstance(poetry_extras, dict) and isinstance(poetry_deps, dict):
        for name, members in poetry_extras.items():
            if isinstance(members, list):
                extras[_norm(str(name))] = [
                    poetry_requirement(m, poetry_deps.get(m)) for m in members if isinstance(m, str)
                ]
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        for name, value in setup_cfg.items("options.extras_require"):
            extras[_norm(name)] = [line for line in value.splitlines() if line.strip()]
    for name, value in _setup_py(repo)[0].items():
        extras.setdefault(_norm(name), value)
    return extras


def _nox(repo: Path, extras: dict[str, list[str]]) -> list[str]:
    try:
        tree = ast.parse(read_text(repo / "noxfile.py"))
    except (SyntaxError, ValueError):
        return []
    specs: list[str] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef) or not _is_test_name(function.name):
            continue
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "install"
            ):
                words = [
                    arg.value
                    for arg in node.args
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                ]
                specs += _pip_words(words, repo, extras)
    return specs


def _is_test_name(name: str) -> bool:
    return bool(re.search(r"test|pytest|unit|ci|check", name, re.IGNORECASE))


def _local_actions(repo: Path) -> list[Path]:
    """The repository's own composite actions, which its workflows run as steps (nonebot2's
    ``uses: ./.github/actions/setup-python`` runs ``poetry install --all-extras``)."""
    folder = repo / ".github" / "actions"
    if not folder.is_dir() or folder.is_symlink():
        return []
    found = [*folder.glob("*/action.yml"), *folder.glob("*/action.yaml")]
    return sorted(path for path in found if path.is_file() and not path.is_symlink())


# A root Makefile's install lines: CI often runs `make ci`, whose `deps` target installs the
# extras the tests import (tortoise-orm: `poetry install -E asyncpg -E aiomysql ...`).


def _ci(repo: Path, extras: dict[str, list[str]]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    makefiles = [repo / name for name in MAKEFILES if (repo / name).is_file()]
    for workflow in [*_workflows(repo), *_local_actions(repo), *makefiles[:1]]:
        rel = workflow.relative_to(repo).as_posix()
        for line in read_text(workflow).splitlines():
            found += [(spec, rel) for spec in _install_line_specs(line, repo, extras)]
    return found


def ci_job_requirements(repo: Path, found: TestCommand) -> list[str]:
    """Specifiers the CI job that gave ``found`` installs before it, pytest plugins included
    (``declared_test_requirements`` leaves those to ``test_tools``, which reads these): litgpt's
    link check runs ``pip install pytest pytest-check-links`` a step before its command."""
    repo = Path(repo)
    extras = extra_requirements(repo)
    specs: list[str] = []
    for line in ci_setup_lines(repo, found):
        specs += _install_line_specs(line, repo, extras)
    return specs


def _group_tables(pyproject: dict) -> list[tuple[str, dict]]:
    tool = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    poetry = tool.get("poetry", {}) if isinstance(tool.get("poetry"), dict) else {}
    pdm = tool.get("pdm", {}) if isinstance(tool.get("pdm"), dict) else {}
    return [
        ("pyproject.toml [dependency-groups]", pyproject.get("dependency-groups", {})),
        ("pyproject.toml [tool.poetry.group]", poetry.get("group", {})),
        ("pyproject.toml [tool.poetry.dev-dependencies]", {"dev": poetry.get("dev-dependencies")}),
        ("pyproject.toml [tool.pdm.dev-dependencies]", pdm.get("dev-dependencies", {})),
    ]


def _group_specs(table: dict, name: str, depth: int = 0) -> list[str]:
    value = table.get(name)
    if isinstance(value, dict) and "dependencies" in value:
        value = value["dependencies"]
    specs: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                specs.append(item)
            elif (
                isinstance(item, dict) and isinstance(item.get("include-group"), str) and depth < 4
            ):
                specs += _group_specs(table, item["include-group"], depth + 1)
    elif isinstance(value, dict):
        for key, spec in value.items():
            if str(key).lower() != "python" and isinstance(spec, str | dict):
                specs.append(poetry_requirement(str(key), spec))
    return specs


def declared_test_requirements(repo: Path, python: str = "3.11") -> list[TestRequirement]:
    """Every test dependency, deduplicated by name (the first declaration wins), valid only;
    tox lines are those of the environment on Python ``python`` (major.minor, the base's)."""
    repo = Path(repo)
    factors = tox_factors(python)
    extras = extra_requirements(repo)
    found: list[tuple[str, str]] = []
    for name, value in extras.items():
        if _TEST_EXTRAS.match(name) and name != "all":
            found += [(spec, f"extra [{name}]") for spec in value]
    pyproject = read_pyproject(repo)
    for source, table in _group_tables(pyproject):
        if not isinstance(table, dict):
            continue
        for name in table:
            if _TEST_EXTRAS.match(str(name)) and str(name).lower() != "all":
                found += [(spec, f"{source} {name}") for spec in _group_specs(table, name)]
    envs = pyproject.get("tool", {}).get("hatch", {}).get("envs", {})
    if isinstance(envs, dict):
        for name, env in envs.items():
            if not isinstance(env, dict) or not (_is_test_name(name) or name == "default"):
                continue
            source = f"pyproject.toml [tool.hatch.envs.{name}]"
            for field in ("dependencies", "extra-dependencies"):
                value = env.get(field)
                if isinstance(value, list):
                    found += [(s, source) for s in value if isinstance(s, str)]
            features = env.get("features")
            if isinstance(features, list):
                for feature in features:
                    found += [(s, source) for s in extras.get(_norm(str(feature)), [])]
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_option("options", "tests_require"):
        value = setup_cfg.get("options", "tests_require")
        found += [(line, "setup.cfg tests_require") for line in value.splitlines()]
    found += [(spec, "setup.py tests_require") for spec in _setup_py(repo)[1]]
    for path in _requirement_files(repo):
        rel = path.relative_to(repo).as_posix()
        found += [(spec, rel) for spec in _requirements_file(repo, path, set())]
    for name, parser in _tox_sections(repo):
        for section in parser.sections():
            if (
                not section.startswith("testenv")
                or _tests_another_project(parser, section)
                or _other_versions(section)
            ):
                continue
            source = f"{name} [{section}]"
            deps = parser.get(section, "deps", fallback="")
            for line in _tox_lines(deps, factors):
                line = line.replace("{toxinidir}/", "")
                if line.startswith("#") or "{" in line:
                    continue  # a tox substitution cannot be resolved here
                if ";" in line and not line.startswith("-"):
                    # One requirement with an environment marker, kept whole as requirement files
                    # keep it (split into words, btrack's "pytest-xvfb ; sys_platform == 'linux'"
                    # became a requirement named sys_platform and refused the repository).
                    found.append((line, source))
                    continue
                # "jaraco.develop >= 7.23" is one requirement (pypa/distutils): split into words
                # it was two, a bare jaraco.develop and a project named "7.23".
                words = _SPACED_OPERATOR.sub(r"\1", line).split()
                found += [(spec, source) for spec in _pip_words(words, repo, extras)]
            for field in ("commands_pre", "commands"):
                for line in _tox_lines(parser.get(section, field, fallback=""), factors):
                    # connexion's tox runs `poetry install --all-extras --with tests`.
                    specs = _pip_line(line, repo, extras) + _installer_extras(line, extras)
                    found += [(spec, f"{source} {field}") for spec in specs]
            for line in _tox_lines(parser.get(section, "extras", fallback=""), factors):
                for extra in re.split(r"[\s,]+", line):
                    if extra and "{" not in extra:
                        found += [(s, f"{source} extras") for s in extras.get(_norm(extra), [])]
    found += [(spec, "noxfile.py session.install") for spec in _nox(repo, extras)]
    found += _ci(repo, extras)
    return _dedupe(repo, found)


# Blanks from the start of their run only: from each blank of a long run the rest was
# rescanned. (Or none: the match may start right after the last one took the blanks.)
_SPACED_OPERATOR = re.compile(r"(?:(?<!\s)\s+)?(===|[<>!=~]=|[<>]|,)\s*")


# The factors of the environment a reference runs the tests in: tox's plain test environment on
# the base image's Python. A line conditioned on any other factor (oldestdeps, devdeps, docs, a
# numpy matrix entry, cov) belongs to another environment of the matrix: photutils'
# "oldestdeps: scipy==1.8" pins do not install on Python 3.11 and were read as test requirements.
_PLAIN_FACTORS = frozenset({"test", "tests", "testing", "py", "py3"})


def tox_factors(python: str) -> frozenset[str]:
    """The factors of tox's test environment on Python ``python`` (``3.9``: py39, python3.9)."""
    major, _, minor = python.partition(".")
    return _PLAIN_FACTORS | {f"py{major}{minor}", f"python{major}.{minor}"}


TOX_FACTORS = tox_factors("3.11")
_TOX_CONDITION = re.compile(r"^(!?[A-Za-z0-9_.]+(?:[-,]!?[A-Za-z0-9_.]+)*):\s+(.*)$")


def _tox_lines(value: str, factors: frozenset[str] = TOX_FACTORS) -> list[str]:
    """A tox setting's lines for the environment with ``factors``: ``a,b: x`` (either), ``a-b: x``
    (both) and ``!a: x`` (not) are kept only where the condition holds, without it."""
    kept = []
    for raw in value.splitlines():
        line = raw.strip()
        match = _TOX_CONDITION.match(line)
        if match:
            terms = match.group(1).split(",")
            if not any(
                all((f[1:] not in factors) if f.startswith("!") else (f in factors) for f in t)
                for t in (term.split("-") for term in terms)
            ):
                continue
            line = match.group(2).strip()
        if line:
            kept.append(line)
    return kept


# Words of a tox environment's name that mark another point of the version matrix (its oldest
# supported or its unreleased dependencies), as the same words do as factors in TOX_FACTORS' note.
_OTHER_VERSIONS = frozenset(
    {
        "min",
        "mins",
        "minimal",
        "minimum",
        "mindeps",
        "oldest",
        "oldestdeps",
        "lowest",
        "devdeps",
        "nightly",
        "upstream",
    }
)


def _other_versions(section: str) -> bool:
    """A tox environment pinning another point of the version matrix: apiflask's
    ``[testenv:min-versions]`` pins flask-httpauth==4.0.0 and werkzeug==2.0.0; read as test
    requirements beside its tests' werkzeug==3.0.2, the old flask-httpauth imports what
    werkzeug 3 removed and the conftest stops pytest before any test."""
    name = section.partition(":")[2].lower()
    return any(word in _OTHER_VERSIONS for word in re.split(r"[-_.,\s]+", name))


def _tests_another_project(parser: configparser.RawConfigParser, section: str) -> bool:
    """A tox environment that clones another repository, or leaves the project's folder, runs
    *that* project's tests against this one (asdf's downstream jwst, sunpy, ... environments):
    its dependencies are not this project's test dependencies."""
    if section == "testenv":
        return False
    steps = " ".join(parser.get(section, key, fallback="") for key in ("commands_pre", "commands"))
    change_dir = parser.get(section, "change_dir", fallback="") or parser.get(
        section, "changedir", fallback=""
    )
    return "git clone" in steps or "{env_tmp_dir}" in change_dir or "{envtmpdir}" in change_dir


def _dedupe(repo: Path, found: list[tuple[str, str]]) -> list[TestRequirement]:
    own = project_name(repo)
    seen: set[str] = set()
    out: list[TestRequirement] = []
    for raw, source in found:
        # Markers (``; python_version < "3.8"``) are kept: pip evaluates them in the container.
        spec = raw.split(" #", 1)[0].strip()
        match = _NAME.match(spec)
        if not match or spec.startswith("-"):
            continue
        name = _norm(match.group(1))
        if name in seen or name == own or name in _TOOLING or name in _WINDOWS_ONLY:
            continue
        # pytest and its plugins are the test tools, pinned with pytest by test_tools().
        if name == "pytest" or name.startswith(("pytest-", "pytest_")):
            continue
        if name.startswith(_TOOLING_PREFIXES):
            continue
        if not _valid_requirement(spec):
            continue
        seen.add(name)
        out.append(TestRequirement(spec=spec, source=source))
    return out

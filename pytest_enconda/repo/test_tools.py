"""The test tools a repository's test command needs: pytest and the plugins its test
requirements (extras, requirement files, tox ``deps``), its CI job and its options (``--cov``,
``addopts``) name. The harness installs only these before the test command (see ``test_commands``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .files import read_ini, read_pyproject, read_text
from .poetry import poetry_requirement
from .test_commands import _tox_sections, django_settings

DEFAULT_PYTEST = "pytest<9"

# Options that need a plugin: the plugin is a test tool.
_OPTION_PLUGINS = {
    "--cov": "pytest-cov",
    "--no-cov": "pytest-cov",
    "-n": "pytest-xdist",
    "--numprocesses": "pytest-xdist",
    "--dist": "pytest-xdist",
    "--timeout": "pytest-timeout",
    "--reruns": "pytest-rerunfailures",
    "--doctest-plus": "pytest-doctestplus",
    "--doctest-rst": "pytest-doctestplus",
    "--remote-data": "pytest-remotedata",
    "--mpl": "pytest-mpl",
    "--benchmark": "pytest-benchmark",
    "--asyncio-mode": "pytest-asyncio",
    "--mypy": "pytest-mypy",
    "--flake8": "pytest-flake8",
    "--black": "pytest-black",
    "--ruff": "pytest-ruff",
    "--isort": "pytest-isort",
    "--randomly": "pytest-randomly",
    "--html": "pytest-html",
    "--snapshot-update": "syrupy",
    "--hypothesis": "hypothesis",
    "--ignore-flaky": "pytest-flaky",
    "--ds": "pytest-django",
    "--dc": "pytest-django",
    "--nomigrations": "pytest-django",
    "--no-migrations": "pytest-django",
    "--migrations": "pytest-django",
    "--create-db": "pytest-django",
    "--reuse-db": "pytest-django",
    "--liveserver": "pytest-django",
    # Options only their plugin defines (a name a conftest may define too, such as pytest-repeat's
    # --count, is left out: installing the plugin beside that conftest fails argparse).
    "--check-links": "pytest-check-links",
    "--check-anchors": "pytest-check-links",
    "--nbval": "nbval",
    "--nbmake": "nbmake",
    "--xdoctest": "xdoctest",
    "--doctest-cython": "pytest-cython",
    "--arraydiff": "pytest-arraydiff",
    "--pylint": "pytest-pylint",
    "--pycodestyle": "pytest-pycodestyle",
    "--pydocstyle": "pytest-pydocstyle",
    "--flakes": "pytest-flakes",
    "--instafail": "pytest-instafail",
    "--forked": "pytest-forked",
    "--only-rerun": "pytest-rerunfailures",
    "--disable-socket": "pytest-socket",
    "--allow-hosts": "pytest-socket",
    "--block-network": "pytest-recording",
    "--testmon": "pytest-testmon",
    "--random-order": "pytest-random-order",
    "--codeblocks": "pytest-codeblocks",
    "--markdown-docs": "pytest-markdown-docs",
    "--memray": "pytest-memray",
    "--typeguard-packages": "typeguard",
    "--beartype-packages": "beartype",
    "--codspeed": "pytest-codspeed",
    # `-p NAME` loads a plugin by its entry point or module name (rdmo's CI: `-p randomly`);
    # pytest stops at once when no installed distribution provides it. Only names known here: a
    # repository's own plugin module (`-p pytest_myproject`) is no distribution on the index.
    "-p randomly": "pytest-randomly",
    "-p pytest_randomly": "pytest-randomly",
    "-p xdist": "pytest-xdist",
    "-p pytest_cov": "pytest-cov",
    "-p pytest_mock": "pytest-mock",
    "-p asyncio": "pytest-asyncio",
    "-p pytest_asyncio": "pytest-asyncio",
    "-p timeout": "pytest-timeout",
    "-p pytest_timeout": "pytest-timeout",
    "-p rerunfailures": "pytest-rerunfailures",
    "-p django": "pytest-django",
    "-p pytest_django": "pytest-django",
}
_TEST_EXTRAS = re.compile(r"^(tests?|testing|check|dev|develop|ci|all)$", re.IGNORECASE)
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _requirement_lines(repo: Path) -> list[str]:
    """Test requirements as written: test extras, test requirement files, tox deps."""
    lines: list[str] = []
    pyproject = read_pyproject(repo)
    extras = pyproject.get("project", {}).get("optional-dependencies", {})
    groups = pyproject.get("dependency-groups", {})
    poetry = pyproject.get("tool", {}).get("poetry", {})
    for table in (extras, groups, poetry.get("group", {}), {"dev": poetry.get("dev-dependencies")}):
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            if not _TEST_EXTRAS.match(str(name)):
                continue
            if isinstance(value, dict) and "dependencies" in value:
                value = value["dependencies"]
            if isinstance(value, list):
                lines += [item for item in value if isinstance(item, str)]
            elif isinstance(value, dict):
                lines += [poetry_requirement(key, spec) for key, spec in value.items()]
    setup_cfg = read_ini(read_text(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        for name, value in setup_cfg.items("options.extras_require"):
            if _TEST_EXTRAS.match(name):
                lines += value.splitlines()
    setup_py = read_text(repo / "setup.py")
    for match in re.finditer(r"['\"](pytest[A-Za-z0-9._-]*[^'\"]*)['\"]", setup_py):
        lines.append(match.group(1))
    for path in _requirement_files(repo):
        lines += read_text(path).splitlines()
    for _, parser in _tox_sections(repo):
        for section in parser.sections():
            if section.startswith("testenv"):
                lines += parser.get(section, "deps", fallback="").splitlines()
    return lines


def _valid_requirement(spec: str) -> bool:
    """Whether pip would accept ``spec`` (a wrong one would fail the whole tools install)."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # pragma: no cover - packaging comes with pip and setuptools
        return bool(re.match(r"^[A-Za-z0-9._\[\],-]+((==|>=|<=|!=|~=|<|>)[^~^]*)?$", spec))
    try:
        Requirement(spec)
    except InvalidRequirement:
        return False
    return True


def _requirement_files(repo: Path) -> list[Path]:
    # Requirement files only (named so, or in a requirements folder): a stub-test allowlist or a
    # test data file is not one.
    patterns = [
        "requirements*test*.txt",
        "test*requirements*.txt",
        "*[-_]test*[-_]requirements*.txt",
        "requirements*dev*.txt",
        "dev*requirements*.txt",
        "requirements*/*test*.txt",
        "requirements*/dev*.txt",
        "test*/requirements*.txt",
    ]
    found: list[Path] = []
    for pattern in patterns:
        for path in sorted(repo.glob(pattern)):
            if path.is_file() and not path.is_symlink() and path not in found:
                found.append(path)
    return found


def _addopts(repo: Path) -> str:
    options = []
    pyproject = read_pyproject(repo)
    ini = pyproject.get("tool", {}).get("pytest", {}).get("ini_options", {})
    value = ini.get("addopts")
    options.append(" ".join(value) if isinstance(value, list) else str(value or ""))
    required = ini.get("required_plugins")
    if isinstance(required, list):
        options += [f"--required-plugin={name}" for name in required if isinstance(name, str)]
    elif isinstance(required, str):
        options += [f"--required-plugin={name}" for name in required.split()]
    for name, section in (
        ("pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        parser = read_ini(read_text(repo / name))
        if parser is not None and parser.has_section(section):
            options.append(parser.get(section, "addopts", fallback=""))
            options += [
                f"--required-plugin={plugin}"
                for plugin in parser.get(section, "required_plugins", fallback="").split()
            ]
    return " ".join(options)


def test_tools(repo: Path, command: str, installed: Sequence[str] = ()) -> list[str]:
    """Requirement specifiers of pytest and the plugins ``command`` and the configuration need.

    ``installed``: specifiers the command's CI job installs before it (``test_deps``'
    ``ci_job_requirements``), read after the repository's declared test requirements."""
    repo = Path(repo)
    tools: dict[str, str] = {}
    for line in [*_requirement_lines(repo), *installed]:
        line = line.split("#", 1)[0].strip()
        match = _REQUIREMENT_NAME.match(line)
        if not match or line.startswith("-"):
            continue
        name = match.group(1).lower().replace("_", "-")
        if (name == "pytest" or name.startswith(("pytest-", "pytest_"))) and name not in tools:
            # Only the specifier: environment markers and URLs are left to pip's defaults.
            spec = line.split(";", 1)[0].strip().replace(" ", "")
            tools[name] = spec if _valid_requirement(spec) else name
    words = (_addopts(repo) + " " + command).split()
    for index, word in enumerate(words):
        name = word.split("=", 1)[0]
        if word == "-p" and index + 1 < len(words):
            name = f"-p {words[index + 1]}"
        elif word.startswith("-p") and len(word) > 2 and word[2] not in "=-":
            name = f"-p {word[2:]}"
        if name == "--required-plugin":
            plugin = word.split("=", 1)[1]
            spec = re.split(r"[<>=!~]", plugin, maxsplit=1)[0].lower()
            tools.setdefault(spec, plugin)
        plugin = _OPTION_PLUGINS.get(name) or (
            "pytest-xdist" if re.match(r"^-n\d+$", word) else None
        )
        if plugin is None and name.startswith("--"):
            # Plugins' options share a prefix: --benchmark-disable, --cov-report, --mypy-...
            plugin = next(
                (tool for option, tool in _OPTION_PLUGINS.items() if name.startswith(option + "-")),
                None,
            )
        if plugin:
            tools.setdefault(plugin, plugin)
    if "pytest-django" not in tools and django_settings(repo) is not None:
        tools["pytest-django"] = "pytest-django"
    # Unpinned, the newest pytest would judge old suites by its new deprecations (pytest 9 turns
    # some into errors, fatal under a suite's filterwarnings=error); the released data predates it.
    # A declared pytest with only a lower bound (asdf's `pytest>=7`) is as open as no pin at all.
    tools["pytest"] = _capped_pytest(tools.get("pytest", "pytest"))
    # pytest first: a plugin's own pin of pytest then resolves against it in one pip call.
    return [tools["pytest"], *(spec for name, spec in sorted(tools.items()) if name != "pytest")]


def _capped_pytest(spec: str) -> str:
    """``spec`` with ``<9`` added when nothing in it bounds pytest from above."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        return DEFAULT_PYTEST
    if requirement.url or any(
        item.operator in ("<", "<=", "==", "===", "~=") for item in requirement.specifier
    ):
        return spec
    bounds = ",".join([*(str(item) for item in requirement.specifier), "<9"])
    return f"pytest{bounds}"


# A function of this module, not a test: pytest would collect it wherever it is imported.
test_tools.__test__ = False  # type: ignore[attr-defined]

"""Which command runs a repository's tests and which test tools it needs, with their sources.

Sources, in order of trust: the CI workflows (a step that runs pytest, or tox/nox, followed into
their configuration), tox/nox configuration, pytest's own configuration (``pyproject.toml``,
``setup.cfg``, ``pytest.ini``, ``tox.ini``), the README, then the default ``python -m pytest``.

The command is always normalised to ``python -m pytest ARGS`` because Pass@1 reads pytest's own
JUnit XML report, never the printed text: options that stop early (``-x``), select by cache
(``--lf``), spread over workers (``-n``) or write their own reports are dropped, since the PASS set
must hold every test that runs. CI variables and tox substitutions cannot be resolved here and are
dropped with the word that carries them.

*Test tools* are the pytest packages (pytest and its plugins) the command needs: taken from the
repository's test requirements (extras, requirement files, tox ``deps``), from what the CI job
giving the command installs before it, and from the options the command and pytest's ``addopts``
pass (``--cov`` needs pytest-cov, ``--check-links`` pytest-check-links). The harness installs
only these before the test command, for every agent alike, so "No module named pytest" never
decides Pass@1; the repository's own dependencies stay the agent's job.
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from .command_normalise import (
    _BENCHMARK,
    DEFAULT_COMMAND,
    _from_lines,
    _inside_checkout,
    _logical_lines,
    _words,
    normalise,
    normalise_unittest,
)
from .files import read_ini, read_pyproject, read_text

__all__ = [
    "DjangoSettings",
    "TestCommand",
    "ci_setup_lines",
    "discover_test_command",
    "django_settings",
]

Source = Literal["ci", "tox", "nox", "makefile", "pytest-config", "readme", "default"]


class TestCommand(BaseModel):
    """A test command and where it was found."""

    __test__ = False  # a model, not a pytest test class

    command: str
    source: Source
    detail: str = Field(default="", description="the file (and line) it came from")
    raw: str = Field(default="", description="the line as written there")


def _working_directory(*places: object) -> str:
    """The first ``working-directory`` of a step, its job's or the workflow's ``defaults.run``."""
    for place in places:
        if not isinstance(place, dict):
            continue
        value = place.get("working-directory")
        if value is None and isinstance(place.get("defaults"), dict):
            run = place["defaults"].get("run")
            value = run.get("working-directory") if isinstance(run, dict) else None
        if value is not None:
            folder = str(value).strip().rstrip("/")
            while folder.startswith("./"):
                folder = folder[2:]
            # A CI expression cannot be resolved here: the repository root is the best guess.
            return "" if folder in ("", ".") or "${{" in folder else folder
    return ""


class _WorkflowHit(NamedTuple):
    """The first CI step running pytest: the command, its line, and what its job ran before."""

    command: str
    raw: str
    before: tuple[str, ...] = ()


def _tests_elsewhere(repo: Path | None, command: str, folder: str) -> bool:
    """Whether every test path ``command`` names is missing from the checkout: the step tests
    another repository its job clones (roiextractors' dev-testing runs neuroconv's
    ``neuroconv/tests/test_ophys``, and its own tests never ran)."""
    if repo is None:
        return False
    words = _words(command.removeprefix(DEFAULT_COMMAND)) or []
    paths = [
        word.split("::", 1)[0].rstrip("/")
        for word in words
        if not word.startswith("-") and "=" not in word and ("/" in word or word.endswith(".py"))
    ]
    if not paths:
        return False
    base = repo / folder if folder else repo
    return not any(
        not Path(path).is_absolute() and ".." not in Path(path).parts and (base / path).exists()
        for path in paths
    )


def _from_workflow(
    text: str, repo: Path | None = None, *, unittest: bool = False
) -> _WorkflowHit | None:
    """Like ``_from_lines``, in the folder the step runs in: a step with ``working-directory:
    ./src`` running ``pytest tests`` (pretalx) finds no ``tests`` at the repository root. With
    ``repo``, a step whose test paths the checkout lacks is passed over (``_tests_elsewhere``)."""
    import yaml

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        document = None
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if isinstance(jobs, dict):
        for job in jobs.values():
            steps = job.get("steps") if isinstance(job, dict) else None
            before: list[str] = []
            for step in steps if isinstance(steps, list) else []:
                if not isinstance(step, dict) or not isinstance(step.get("run"), str):
                    continue
                found = _from_lines(step["run"], repo, unittest=unittest)
                folder = _working_directory(step, job, document)
                if not found or _tests_elsewhere(repo, found[0], folder):
                    before += _logical_lines(step["run"])
                    continue
                # The step's own lines above the test command ran before it too.
                lines = _logical_lines(step["run"])
                raw = [line.strip() for line in lines]
                before += lines[: raw.index(found[1])] if found[1] in raw else lines
                command = f"cd {shlex.quote(folder)} && {found[0]}" if folder else found[0]
                matrix = _linux_matrix(job)
                before = [_with_matrix(line, matrix) for line in before]
                return _WorkflowHit(command, found[1], tuple(before))
    # No step of a job ran it (or not a workflow this reader understands): the first line that
    # runs pytest, at the root.
    found = _from_lines(text, repo, unittest=unittest)
    return _WorkflowHit(*found) if found and not _tests_elsewhere(repo, found[0], "") else None


def _linux_matrix(job: dict) -> dict[str, str]:
    """One entry of a job's ``strategy.matrix``: its first Linux ``include`` entry (else its
    first), and each list's first value. wwrando's job installs ``-r ${{ matrix.reqs_file }}``,
    named only by its matrix entries, and without it pytest-dotenv never loaded CI's ``.env``."""
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    if not isinstance(matrix, dict):
        return {}
    chosen: dict[str, str] = {}
    for key, value in matrix.items():
        if isinstance(value, list) and value and isinstance(value[0], str | int | float):
            chosen[str(key)] = str(value[0])
    entries = [entry for entry in matrix.get("include") or [] if isinstance(entry, dict)]
    linux = [e for e in entries if re.search(r"ubuntu|linux", str(e.get("os", "")), re.I)]
    for key, value in (linux or entries or [{}])[0].items():
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            chosen[str(key)] = str(value)
    return chosen


def _with_matrix(line: str, matrix: dict[str, str]) -> str:
    """``line`` with each ``${{ matrix.KEY }}`` the matrix entry gives replaced by its value."""
    if not matrix:
        return line

    def value(found: re.Match[str]) -> str:
        chosen = matrix.get(found.group(1))
        # Only a plain value: a word with shell syntax in it is no file name or version.
        if chosen is None or not re.fullmatch(r"[\w.+=<>~!/-]+", chosen):
            return found.group(0)
        return chosen

    return re.sub(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", value, line)


def ci_setup_lines(repo: Path, found: TestCommand) -> list[str]:
    """The shell lines the CI job that gave ``found`` runs before it (its earlier steps, and its
    own step's lines above the command): litgpt's link check installs pytest-check-links in the
    step before ``pytest --check-links``. Empty for a command from elsewhere."""
    if found.source != "ci" or not found.detail:
        return []
    text = read_text(Path(repo) / found.detail)
    for unittest in (False, True):
        hit = _from_workflow(text, Path(repo), unittest=unittest)
        if hit is not None and hit.raw == found.raw:
            return list(hit.before)
    return []


def _workflows(repo: Path) -> list[Path]:
    folder = repo / ".github" / "workflows"
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if p.suffix in (".yml", ".yaml")]

    # Workflows named for tests first, then generic CI ones: a release workflow may run a smoke
    # test only, and a "check-links" one runs pytest over the README (litgpt) while its
    # cpu-tests.yml runs the suite.
    def rank(path: Path) -> tuple[int, str]:
        if re.search(r"test", path.name):
            return 0, path.name
        return (1 if re.search(r"ci|check|main|build", path.name) else 2), path.name

    return sorted(files, key=rank)


def _tox_sections(repo: Path) -> list[tuple[str, configparser.RawConfigParser]]:
    found = []
    for name in ("tox.ini", "setup.cfg"):
        parser = read_ini(read_text(repo / name))
        if parser is not None:
            found.append((name, parser))
    pyproject = read_pyproject(repo)
    legacy = pyproject.get("tool", {}).get("tox", {}).get("legacy_tox_ini")
    if isinstance(legacy, str):
        parser = read_ini(legacy)
        if parser is not None:
            found.append(("pyproject.toml [tool.tox] legacy_tox_ini", parser))
    return found


def _from_tox(repo: Path, *, unittest: bool = False) -> tuple[str, str, str] | None:
    for name, parser in _tox_sections(repo):
        sections = [s for s in parser.sections() if s == "testenv" or s.startswith("testenv")]
        sections.sort(key=lambda s: (s != "testenv", s))
        for section in sections:
            commands = parser.get(section, "commands", fallback="")
            found = _from_lines(commands, repo, unittest=unittest)
            if found:
                folder = _tox_changedir(parser, section)
                command = f"cd {shlex.quote(folder)} && {found[0]}" if folder else found[0]
                return command, f"{name} [{section}] commands", found[1]
    return None


def _tox_changedir(parser: configparser.RawConfigParser, section: str) -> str:
    """The folder tox runs the section's commands in, relative to the repository root: the test
    paths of django-autocomplete-light's ``pytest ... secure_data rename_forward`` lie under
    ``changedir = {toxinidir}/test_project``, not at the root."""
    value = parser.get(section, "changedir", fallback="")
    if not value and section != "testenv" and parser.has_section("testenv"):
        value = parser.get("testenv", "changedir", fallback="")
    folder = value.strip().replace("{toxinidir}", ".").replace("{tox_root}", ".")
    parts = [part for part in Path(folder).parts if part != "."]
    # An absolute path, a way out of the checkout or an unresolved substitution: the root.
    if not parts or folder.startswith("/") or ".." in parts or "{" in folder:
        return ""
    return "/".join(parts)


def _from_nox(repo: Path) -> tuple[str, str, str] | None:
    """The pytest command of the noxfile's test session: a session named ``tests`` or ``test``
    first, then those naming a test, then any (meltano/sdk's first pytest call is its
    ``update_snapshots`` session's ``--snapshot-update``, its ``tests`` session runs ``coverage
    run -m pytest``)."""
    text = read_text(repo / "noxfile.py")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: list[tuple[int, int, str, str]] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        name = function.name.lower()
        rank = 0 if name in ("tests", "test") else 1 if "test" in name else 2
        for node in ast.walk(function):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
            ):
                continue
            words: list[str] = []
            for arg in node.args:
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    break
                words.append(arg.value)
            command = normalise(" ".join(shlex.quote(word) for word in words)) if words else None
            if command and not _BENCHMARK.search(command):
                raw = ast.get_source_segment(text, node) or ""
                found.append((rank, node.lineno, command, raw.strip()))
    if not found:
        return None
    _, _, command, raw = min(found)
    return command, "noxfile.py session.run", raw


MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_MAKE_TEST_TARGETS = ("test", "tests", "check", "unittest", "unittests", "test-unit", "unit")
_MAKE_RULE = re.compile(r"^([A-Za-z0-9_./-]+(?:[ \t]+[A-Za-z0-9_./-]+)*)[ \t]*::?(?![=])(.*)$")
_MODULE_RUN = re.compile(r"(?:^|\s)(?:\S*/)?python[0-9.]*\s+(?:-m\s+([A-Za-z_][\w.]*)|(\S+\.py))")


def _make_rules(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each rule of a Makefile: (prerequisites, recipe lines without their ``@-+`` prefixes)."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] | None = None
    for line in _logical_lines(text):
        if line.startswith("\t"):
            if current is not None:
                current.append(line.strip().lstrip("@-+").strip())
            continue
        match = _MAKE_RULE.match(line)
        if match is None:
            if line.strip() and not line.lstrip().startswith("#"):
                current = None
            continue
        current = []
        prerequisites = match.group(2).split(";", 1)[0].split()
        for target in match.group(1).split():
            rules.setdefault(target, (prerequisites, current))
    return rules


def _module_runner(line: str, repo: Path) -> str | None:
    """``python -m pytest PATH`` for ``python -m tests.all`` or ``python tests/run.py`` whose
    file is a unittest suite of the checkout: pytest collects the test cases the file holds,
    imported ones too."""
    match = _MODULE_RUN.search(line)
    if match is None:
        return None
    module, script = match.groups()
    path = f"{module.replace('.', '/')}.py" if module else script.removeprefix("./")
    if module in ("pytest", "unittest") or not _inside_checkout(path, repo, folder=False):
        return None
    if "unittest" not in read_text(repo / path):
        return None
    return f"{DEFAULT_COMMAND} {shlex.quote(path)}"


def _from_makefile(repo: Path) -> tuple[str, str, str] | None:
    """The command of the Makefile's test target (``test``, ``tests``, ``check``, ...) or of the
    targets it depends on: pytest, unittest, or a unittest suite run as a module."""
    for name in MAKEFILES:
        rules = _make_rules(read_text(repo / name))
        for target in _MAKE_TEST_TARGETS:
            queue, seen = [target], set()
            while queue:
                current = queue.pop(0)
                if current in seen or current not in rules or len(seen) > 20:
                    continue
                seen.add(current)
                prerequisites, recipe = rules[current]
                for line in recipe:
                    command = (
                        normalise(line)
                        or normalise_unittest(line, repo)
                        or _module_runner(line, repo)
                    )
                    if command and not _BENCHMARK.search(command):
                        return command, f"{name} target {current}", line
                queue += prerequisites
    return None


def _pytest_config(repo: Path) -> str | None:
    """The file holding pytest's configuration, if any."""
    if (repo / "pytest.ini").is_file():
        return "pytest.ini"
    if "pytest" in read_pyproject(repo).get("tool", {}):
        return "pyproject.toml [tool.pytest.ini_options]"
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = read_ini(read_text(repo / name))
        if parser is not None and parser.has_section(section):
            return f"{name} [{section}]"
    return None


def _readmes(repo: Path) -> list[Path]:
    try:
        entries = sorted(repo.iterdir())
    except OSError:
        return []
    return [
        p for p in entries if p.is_file() and p.stem.lower() == "readme" and p.suffix != ".json"
    ]


def discover_test_command(repo: Path) -> TestCommand:
    """The repository's test command with its source (never fails: the default is the floor).

    A Django project whose settings module only its ``manage.py``, ``runtests.py`` or tox
    ``setenv`` names (django-bootstrap4 tests with ``python manage.py test``) gets ``--ds=MODULE``:
    under bare pytest every Django ``TestCase`` errors at setup with "settings are not configured".
    """
    found = _discover(Path(repo))
    settings = django_settings(Path(repo))
    # A command run from another folder would resolve the module elsewhere: left as found.
    if (
        settings is None
        or settings.configured
        or found.command.startswith("cd ")
        or _names_django_settings(found.command)
    ):
        return found
    command = f"{found.command} --ds={settings.module}"
    return found.model_copy(update={"command": command})


def _names_django_settings(command: str) -> bool:
    return bool(re.search(r"(^|\s)(--ds(=|\s)|DJANGO_SETTINGS_MODULE=)", command))


_BENCHMARK_WORKFLOW = re.compile(r"^(codspeed|bench)", re.I)


def _discover(repo: Path) -> TestCommand:
    uses_tox = uses_nox = False
    workflows = [(workflow, read_text(workflow)) for workflow in _workflows(repo)]
    for workflow, text in workflows:
        found = _from_workflow(text, repo)
        rel = workflow.relative_to(repo).as_posix()
        if found and not _BENCHMARK_WORKFLOW.match(workflow.name):
            return TestCommand(command=found[0], source="ci", detail=rel, raw=found[1])
        uses_tox = uses_tox or bool(re.search(r"(^|\s)(tox|tox-gh-actions)(\s|$)", text, re.M))
        uses_nox = uses_nox or bool(re.search(r"(^|\s)nox(\s|$)", text, re.M))
    # tox/nox next (CI that delegates to them first, then on their own).
    order = [("tox", _from_tox), ("nox", _from_nox)]
    if uses_nox and not uses_tox:
        order.reverse()
    for source, finder in order:
        hit = finder(repo)
        if hit:
            command, detail, raw = hit
            return TestCommand(command=command, source=source, detail=detail, raw=raw)  # type: ignore[arg-type]
    # No pytest there: a suite run with unittest by CI or tox, or the Makefile's test target
    # (Reticulum's `make test` runs `python -m tests.all`; its test files are not named test_*).
    for workflow, text in workflows:
        found = _from_workflow(text, repo, unittest=True)
        if found:
            rel = workflow.relative_to(repo).as_posix()
            return TestCommand(command=found[0], source="ci", detail=rel, raw=found[1])
    unittest_finders = (
        ("tox", lambda: _from_tox(repo, unittest=True)),
        ("makefile", lambda: _from_makefile(repo)),
    )
    for source, finder in unittest_finders:
        hit = finder()
        if hit:
            command, detail, raw = hit
            return TestCommand(command=command, source=source, detail=detail, raw=raw)  # type: ignore[arg-type]
    config = _pytest_config(repo)
    if config:
        return TestCommand(command=DEFAULT_COMMAND, source="pytest-config", detail=config)
    readmes = [(readme, read_text(readme)) for readme in _readmes(repo)]
    for unittest in (False, True):
        for readme, text in readmes:
            found = _from_lines(text, repo, unittest=unittest)
            if found:
                return TestCommand(
                    command=found[0], source="readme", detail=readme.name, raw=found[1]
                )
    return TestCommand(
        command=DEFAULT_COMMAND, source="default", detail="no CI, tox, nox or pytest configuration"
    )


# ----------------------------------------------------------------------------- Django

# `os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.app.settings")` and
# `os.environ["DJANGO_SETTINGS_MODULE"] = "pkg.settings.testing"` in a launcher script.
_SETTINGS_IN_SCRIPT = re.compile(
    r"""['"]DJANGO_SETTINGS_MODULE['"]\s*(?:,|\]\s*=)\s*['"]([A-Za-z_][\w.]*)['"]"""
)
# Scripts that run a Django project's tests and name its settings, in order of trust.
_DJANGO_SCRIPTS = ("runtests.py", "manage.py", "tests/runtests.py", "tests/manage.py")


class DjangoSettings(BaseModel):
    """The settings module a Django project's tests run under, and where it is named."""

    module: str
    source: str = Field(description="the file (and section) naming it")
    configured: bool = Field(
        default=False, description="pytest's own configuration names it: pytest-django reads it"
    )


def _settings_in_pytest_config(repo: Path) -> DjangoSettings | None:
    ini = read_pyproject(repo).get("tool", {}).get("pytest", {}).get("ini_options", {})
    value = ini.get("DJANGO_SETTINGS_MODULE") if isinstance(ini, dict) else None
    if isinstance(value, str) and value.strip():
        source = "pyproject.toml [tool.pytest.ini_options]"
        return DjangoSettings(module=value.strip(), source=source, configured=True)
    for name, section in (
        ("pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        parser = read_ini(read_text(repo / name))
        if parser is None or not parser.has_section(section):
            continue
        # configparser lower-cases keys: DJANGO_SETTINGS_MODULE is read as written either way.
        value = parser.get(section, "django_settings_module", fallback="").strip()
        if value:
            return DjangoSettings(module=value, source=f"{name} [{section}]", configured=True)
        # `addopts = --ds=...` configures it too.
        match = re.search(
            r"--ds[=\s]+([A-Za-z_][\w.]*)", parser.get(section, "addopts", fallback="")
        )
        if match:
            return DjangoSettings(
                module=match.group(1), source=f"{name} [{section}]", configured=True
            )
    match = re.search(r"--ds[=\s]+([A-Za-z_][\w.]*)", str(ini.get("addopts", "")))
    if match:
        source = "pyproject.toml [tool.pytest.ini_options]"
        return DjangoSettings(module=match.group(1), source=source, configured=True)
    return None


def _settings_module_exists(repo: Path, module: str) -> bool:
    """Whether ``module`` is a file of the checkout, at its root or under ``src/``: a module it
    does not hold (an example project's, a deleted one) would stop pytest-django before any test."""
    parts = module.split(".")
    for base in (repo, repo / "src"):
        folder = base.joinpath(*parts)
        if folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file():
            return True
    return False


def _conftest_configures_django(repo: Path) -> bool:
    """A conftest that sets the settings itself (``settings.configure()``) must not be overruled."""
    for rel in ("conftest.py", "tests/conftest.py", "test/conftest.py", "src/conftest.py"):
        text = read_text(repo / rel)
        if "DJANGO_SETTINGS_MODULE" in text or "settings.configure(" in text:
            return True
    return False


def django_settings(repo: Path) -> DjangoSettings | None:
    """The Django settings module the repository's tests need, or None for a project that is
    not Django's (or configures Django itself in a conftest).

    pytest's own configuration first (``configured``: the command needs only pytest-django), then
    tox ``setenv``, then the scripts its maintainers run the tests with (``runtests.py``,
    ``manage.py``); a module the checkout does not hold is not taken.
    """
    repo = Path(repo)
    configured = _settings_in_pytest_config(repo)
    if configured is not None:
        return configured
    if _conftest_configures_django(repo):
        return None
    candidates: list[DjangoSettings] = []
    for name, parser in _tox_sections(repo):
        for section in parser.sections():
            if not section.startswith("testenv"):
                continue
            setenv = parser.get(section, "setenv", fallback="")
            match = re.search(r"DJANGO_SETTINGS_MODULE\s*=\s*([A-Za-z_][\w.]*)", setenv)
            if match:
                candidates.append(
                    DjangoSettings(module=match.group(1), source=f"{name} [{section}] setenv")
                )
    for rel in _DJANGO_SCRIPTS:
        match = _SETTINGS_IN_SCRIPT.search(read_text(repo / rel))
        if match:
            candidates.append(DjangoSettings(module=match.group(1), source=rel))
    return next((c for c in candidates if _settings_module_exists(repo, c.module)), None)

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
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from .files import read_ini, read_pyproject, read_text
from .poetry import poetry_requirement

__all__ = [
    "DjangoSettings",
    "TestCommand",
    "ci_setup_lines",
    "discover_test_command",
    "django_settings",
    "test_tools",
]

Source = Literal["ci", "tox", "nox", "makefile", "pytest-config", "readme", "default"]
DEFAULT_COMMAND = "python -m pytest"
DEFAULT_PYTEST = "pytest<9"

# Options whose value is the next word unless written with '='.
_DROP_WITH_VALUE = {
    "-n",
    "--numprocesses",
    "--dist",
    "--junitxml",
    "--junit-xml",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--basetemp",
    "--html",
    "--maxfail",
    "--durations",
    "--splits",
    "--group",
    "--reruns",
    "--timeout",
}
_DROP_FLAGS = {
    "-x",
    "--exitfirst",
    "--lf",
    "--last-failed",
    "--ff",
    "--failed-first",
    "--sw",
    "--stepwise",
    "--cov-append",
    "--no-cov",
    "--pdb",
    "-s",
    "--capture=no",
    "--self-contained-html",
    "--benchmark-skip",
}
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
# A pytest invocation inside a shell line: the word before it may be python, coverage run, a
# tool runner (poetry run, hatch run, uv run, pdm run, pipenv run) or nothing.
_PYTEST_WORD = re.compile(r"(?:^|[\s;&|(])(?:py\.test|pytest)(?:\s|$)|-m\s+pytest(?:\s|$)")
_UNITTEST_WORD = re.compile(r"(?:^|[\s;&|(])-m\s+unittest(?:\s|$)")
# Django's test runner at the checkout's root: `python manage.py test`, `./manage.py test`,
# `coverage run manage.py test` (peering-manager's CI).
_DJANGO_TEST_WORD = re.compile(r"(?:^|[\s;&|(])(?:\./)?manage\.py\s+test(?:\s|$)")
# Options of `manage.py test` that change how, not which, tests run; with the number of words
# each takes (1: its value follows unless written with "=").
_DJANGO_RUNNER_OPTIONS = {
    "--noinput": 0,
    "--no-input": 0,
    "--keepdb": 0,
    "--failfast": 0,
    "--timing": 0,
    "--buffer": 0,
    "-b": 0,
    "--debug-mode": 0,
    "--debug-sql": 0,
    "-d": 0,
    "--force-color": 0,
    "--no-color": 0,
    "--reverse": 0,
    "-r": 0,
    "--shuffle": 0,
    "--pdb": 0,
    "--traceback": 0,
    "-v": 1,
    "--verbosity": 1,
    "--testrunner": 1,
}
# unittest's discover options and the place of each among its positional arguments.
_DISCOVER_OPTIONS = {
    "-s": 0,
    "--start-directory": 0,
    "-p": 1,
    "--pattern": 1,
    "-t": 2,
    "--top-level-directory": 2,
}


class TestCommand(BaseModel):
    """A test command and where it was found."""

    __test__ = False  # a model, not a pytest test class

    command: str
    source: Source
    detail: str = Field(default="", description="the file (and line) it came from")
    raw: str = Field(default="", description="the line as written there")


def _words(line: str) -> list[str] | None:
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return None


def _unknown(word: str) -> bool:
    return "{" in word or "$" in word or "%" in word


def _command_words(line: str, runs: re.Pattern[str]) -> list[str] | None:
    """The words of the shell command in ``line`` that ``runs`` matches, or None."""
    if not runs.search(line):
        return None
    # CI expressions may hold spaces: one unknown word each before the line is split into words.
    line = re.sub(r"\$\{\{.*?\}\}", " ${{}} ", line)
    # Only the command that runs the tests: shell sequences around it are someone else's steps.
    for segment in re.split(r"&&|\|\||;|\|", line):
        if runs.search(segment):
            line = segment
            break
    return _words(line.strip())


def normalise(line: str) -> str | None:
    """``python -m pytest ARGS`` from a shell line that runs pytest, or None if none does."""
    words = _command_words(line, _PYTEST_WORD)
    if not words:
        return None
    start = None
    for index, word in enumerate(words):
        if word in ("pytest", "py.test") or word.endswith(("/pytest", "/py.test")):
            start = index + 1
            break
        if word == "-m" and index + 1 < len(words) and words[index + 1] == "pytest":
            start = index + 2
            break
    if start is None:
        return None
    args: list[str] = []
    skip_next = False
    rest = words[start:]
    for index, word in enumerate(rest):
        if skip_next:
            skip_next = False
            continue
        name = word.split("=", 1)[0]
        if _unknown(word):
            continue  # tox substitutions, CI expressions, shell variables: unknown here
        following = rest[index + 1] if index + 1 < len(rest) else ""
        if word.startswith("-") and "=" not in word and _unknown(following):
            # An option whose value is unknown goes with it: datasets' `-m ${{ matrix.test }}`
            # left `-m` to take `-n` as its marker expression, and pytest refused the line.
            skip_next = True
            continue
        if name in _DROP_WITH_VALUE:
            # pytest itself takes the next word as the value (--cov's is optional, but a word
            # after it is taken too), so it goes with the option.
            following = rest[index + 1] if index + 1 < len(rest) else "-"
            skip_next = "=" not in word and not following.startswith("-")
            continue
        if word in _DROP_FLAGS or word.startswith(("--cov-", "--junit")):
            continue
        if re.fullmatch(r"-n(\d+|auto|logical)", word):
            continue
        args.append(word)
    return " ".join([DEFAULT_COMMAND, *(shlex.quote(arg) for arg in args)]).strip()


def normalise_unittest(line: str, repo: Path | None = None) -> str | None:
    """``python -m pytest ARGS`` collecting what a ``python -m unittest ...`` line runs.

    pytest runs unittest's test cases and writes the JUnit report Pass@1 reads, but collects
    only files named like its ``python_files`` (``test_*.py``, ``*_test.py``) while unittest
    discovers ``test*.py`` or its ``-p`` pattern: the pattern goes to ``-o python_files``. Test
    names (``tests.test_io``, ``tests/test_io.py``, ``tests.test_io.TestRead``) become paths of
    the checkout; a name that is none (or a line with CI variables) is not translated.
    """
    words = _command_words(line, _UNITTEST_WORD) or []
    starts = [i + 2 for i in range(len(words) - 1) if words[i : i + 2] == ["-m", "unittest"]]
    if not starts:
        return None
    rest = words[starts[0] :]
    discover = not rest or rest[0] == "discover"
    rest = rest[1:] if rest and rest[0] == "discover" else rest
    places = {0: ".", 1: "test*.py", 2: ""}
    selections: list[str] = []
    names: list[str] = []
    index = 0
    while index < len(rest):
        word = rest[index]
        if _unknown(word):
            return None
        option, has_value, value = word.partition("=")
        if option in _DISCOVER_OPTIONS or option in ("-k", "--durations"):
            if not has_value:
                index += 1
                value = rest[index] if index < len(rest) else ""
            if _unknown(value):
                return None
            if option in _DISCOVER_OPTIONS:
                places[_DISCOVER_OPTIONS[option]] = value
            elif option == "-k" and not re.search(r"[*?\[]", value):
                selections.append(value)  # a plain substring means the same to pytest's -k
        elif not word.startswith("-"):
            names.append(word)
        index += 1
    args: list[str] = []
    if discover or not names:
        places.update(dict(enumerate(names[:3])))
        folder = places[0].strip().rstrip("/")
        if not _inside_checkout(folder, repo, folder=True):
            return None
        if folder not in ("", "."):
            args.append(folder.removeprefix("./"))
        args += ["-o", f"python_files={places[1]}"]
    else:
        for name in names:
            path = _unittest_path(name, repo)
            if path is None:
                return None
            args.append(path)
    for selection in selections:
        args += ["-k", selection]
    return " ".join([DEFAULT_COMMAND, *(shlex.quote(arg) for arg in args)])


def normalise_django(line: str, repo: Path | None = None) -> str | None:
    """``python -m pytest ARGS`` collecting what a ``manage.py test ...`` line runs (pytest-django
    runs Django's test cases, and ``discover_test_command`` adds the settings module): test
    labels become paths as unittest names do, Django's ``test*.py`` pattern (or ``-p``) goes to
    ``-o python_files`` (pytest's own pattern misses Django's usual ``app/tests.py``),
    ``--settings`` to ``--ds``. A ``manage.py`` elsewhere than the root, an option not known
    here, or a label that is no path of the checkout is not translated."""
    words = _command_words(line, _DJANGO_TEST_WORD) or []
    starts = [
        i + 2
        for i in range(len(words) - 1)
        if words[i] in ("manage.py", "./manage.py") and words[i + 1] == "test"
    ]
    if not starts or (repo is not None and not (repo / "manage.py").is_file()):
        return None
    rest = words[starts[0] :]
    pattern, settings, names = "test*.py", "", []
    index = 0
    while index < len(rest):
        word = rest[index]
        option, has_value, value = word.partition("=")
        if _unknown(word):
            index += 1
            continue  # tox's {posargs}, a CI expression: nothing the tests need
        if option in ("-p", "--pattern", "--settings"):
            if not has_value:
                index += 1
                value = rest[index] if index < len(rest) else ""
            if not value or _unknown(value):
                return None
            if option == "--settings":
                settings = value
            else:
                pattern = value
        elif option == "--parallel":
            # Its number is optional: `--parallel 4`, `--parallel auto`, or none.
            following = rest[index + 1] if index + 1 < len(rest) else ""
            index += int(not has_value and (following.isdigit() or following == "auto"))
        elif option in _DJANGO_RUNNER_OPTIONS:
            index += 0 if has_value else _DJANGO_RUNNER_OPTIONS[option]
        elif word.startswith("-"):
            return None
        else:
            names.append(word)
        index += 1
    args: list[str] = []
    for name in names:
        path = _unittest_path(name, repo) or (
            name.rstrip("/") if _inside_checkout(name.rstrip("/"), repo, folder=True) else None
        )
        if path is None:
            return None
        args.append(path)
    args += ["-o", f"python_files={pattern}"]
    if settings:
        args.append(f"--ds={settings}")
    return " ".join([DEFAULT_COMMAND, *(shlex.quote(arg) for arg in args)])


def _inside_checkout(path: str, repo: Path | None, *, folder: bool) -> bool:
    parts = Path(path).parts
    if not path or Path(path).is_absolute() or ".." in parts:
        return path in ("", ".")
    if repo is None:
        return True
    target = repo / path
    return target.is_dir() if folder else target.is_file()


def _unittest_path(name: str, repo: Path | None) -> str | None:
    """The pytest path of a unittest test name: a file, or a module with its class and test."""
    if name.endswith(".py"):
        return name.removeprefix("./") if _inside_checkout(name, repo, folder=False) else None
    parts = name.split(".")
    if repo is None or not all(part.isidentifier() for part in parts):
        return None
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut])
        if _inside_checkout(f"{module}.py", repo, folder=False):
            return f"{module}.py" + "".join(f"::{part}" for part in parts[cut:])
        if cut == len(parts) and _inside_checkout(module, repo, folder=True):
            return module
    return None


def _from_lines(
    text: str, repo: Path | None = None, *, unittest: bool = False
) -> tuple[str, str] | None:
    """(normalised command, raw line) of the first line running pytest; with ``unittest``, of
    the first running unittest instead."""
    for raw in _logical_lines(text):
        stripped = raw.strip().lstrip("-").strip()
        if stripped.startswith(("run:", "- run:")):
            stripped = stripped.split(":", 1)[1].strip()
        if stripped.startswith(("#", "name:")) or "pip install" in stripped:
            continue
        command = (
            normalise_unittest(stripped, repo) or normalise_django(stripped, repo)
            if unittest
            else normalise(stripped)
        )
        if command and not _BENCHMARK.search(command):
            return command, raw.strip()
    return None


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


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


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


# A benchmark job's command selects benchmarks only (meltano/sdk's codspeed workflow ran 6 of
# its 469 tests, the rest deselected): it is no test command, passed over like a lint job.
_BENCHMARK = re.compile(r"--codspeed\b|--benchmark-only\b|--benchmark-enable\b")
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


# ----------------------------------------------------------------------------- test tools


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

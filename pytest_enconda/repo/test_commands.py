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
from pathlib import Path, PurePosixPath
from typing import Literal, NamedTuple

from packaging.utils import canonicalize_name
from pydantic import BaseModel, Field

from ..textio import parse_toml
from .lockfile import lock_constraints
from .poetry import poetry_requirement
from .setup_py import setup_keywords
from .vcs_version import CONFIG_FILES, version_setup

__all__ = [
    "DjangoSettings",
    "TestCommand",
    "ci_file_steps",
    "ci_setup_lines",
    "discover_test_command",
    "django_settings",
    "recipe_script",
    "test_tools",
    "with_file_steps",
]

Source = Literal["ci", "tox", "nox", "makefile", "pytest-config", "readme", "default"]
DEFAULT_COMMAND = "python -m pytest"
DEFAULT_PYTEST = "pytest<9"
_MAX_READ = 1 << 20

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


def _read(path: Path) -> str:
    try:
        if not path.is_file() or path.is_symlink():
            return ""
        with path.open("rb") as handle:
            return handle.read(_MAX_READ).decode("utf-8", errors="replace")
    except OSError:
        return ""


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
    text = _read(Path(repo) / found.detail)
    for unittest in (False, True):
        hit = _from_workflow(text, Path(repo), unittest=unittest)
        if hit is not None and hit.raw == found.raw:
            return list(hit.before)
    return []


# The file steps of a CI job the recipe repeats: a settings file made from the checkout's example
# (peering-manager: `cp peering_manager/configuration.example.py peering_manager/configuration.py`;
# readux: `mkdir logs && touch logs/debug.log`). Only these programs, their plain options, and
# `echo TEXT > FILE` with fixed text.
_FILE_STEP_OPTIONS = {"cp": {"-r", "-R", "-f", "-n", "-a", "-p"}, "mkdir": {"-p"}, "touch": set()}


def ci_file_steps(repo: Path, found: TestCommand) -> list[str]:
    """The CI job's steps before the tests that copy a file of the checkout or make a folder or
    an empty file in it (``cp``, ``mkdir``, ``touch``), as shell lines for the recipe: without
    the settings file a Django project's CI copies from its example, no test imports. A step
    naming a path outside the checkout, a variable or a pattern is left out; so is a copy whose
    source the checkout lacks (CI made it in an earlier step)."""
    repo = Path(repo)
    root = repo.resolve()
    steps: list[str] = []
    for line in ci_setup_lines(repo, found):
        for segment in re.split(r"&&|\|\||;", line):
            written = _echo_step(segment.strip(), root)
            if written:
                steps.append(written)
                continue
            words = _words(segment.strip())
            if not words or words[0] not in _FILE_STEP_OPTIONS:
                continue
            options = [word for word in words[1:] if word.startswith("-")]
            paths = [word for word in words[1:] if not word.startswith("-")]
            if not paths or not set(options) <= _FILE_STEP_OPTIONS[words[0]]:
                continue
            if not all(_plain_path(path, root) for path in paths):
                continue
            if words[0] == "cp" and (len(paths) != 2 or not (repo / paths[0]).exists()):
                continue
            steps.append(shlex.join(words))
    return list(dict.fromkeys(steps))


# `echo "WW_RANDO_OUTPUT_DIR=/wwrando-output" > .env` (wwrando's CI, read by pytest-dotenv).
_ECHO_STEP = re.compile(r"echo\s+(?P<text>.+?)\s*(?P<op>>>?)\s*(?P<path>[^\s<>|&;]+)")


def _echo_step(segment: str, root: Path) -> str:
    """A CI line writing fixed text into a file of the checkout, as a recipe line ("" if not)."""
    match = _ECHO_STEP.fullmatch(segment)
    if not match:
        return ""
    words = _words(match.group("text"))
    # No variables, substitutions or options: the text must be what CI wrote, word for word.
    if not words or words[0].startswith("-") or any(re.search(r"[$`\\]", w) for w in words):
        return ""
    if not _plain_path(match.group("path"), root):
        return ""
    text = shlex.quote(" ".join(words))
    return f"echo {text} {match.group('op')} {shlex.quote(match.group('path'))}"


def with_file_steps(script: str, steps: list[str], source: str) -> str:
    """``script`` ending with the CI file ``steps`` (``ci_file_steps``), each allowed to fail."""
    if not steps:
        return script
    lines = [f"# the files CI makes before the tests ({source})"] + [
        f"{step} || echo {shlex.quote(f'recipe: CI step {step!r} failed')}" for step in steps
    ]
    return script.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def _plain_path(path: str, root: Path) -> bool:
    """A relative path without variables, patterns or '..' that resolves inside ``root``."""
    if re.search(r"[$`*?\[\]{}~]", path) or Path(path).is_absolute() or ".." in Path(path).parts:
        return False
    return (root / path).resolve().is_relative_to(root)


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


def _ini(text: str) -> configparser.RawConfigParser | None:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _tox_sections(repo: Path) -> list[tuple[str, configparser.RawConfigParser]]:
    found = []
    for name in ("tox.ini", "setup.cfg"):
        parser = _ini(_read(repo / name))
        if parser is not None:
            found.append((name, parser))
    pyproject = _toml(repo / "pyproject.toml")
    legacy = pyproject.get("tool", {}).get("tox", {}).get("legacy_tox_ini")
    if isinstance(legacy, str):
        parser = _ini(legacy)
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
    text = _read(repo / "noxfile.py")
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
    return f"{DEFAULT_COMMAND} {shlex.quote(path)}" if "unittest" in _read(repo / path) else None


def _from_makefile(repo: Path) -> tuple[str, str, str] | None:
    """The command of the Makefile's test target (``test``, ``tests``, ``check``, ...) or of the
    targets it depends on: pytest, unittest, or a unittest suite run as a module."""
    for name in MAKEFILES:
        rules = _make_rules(_read(repo / name))
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


def _toml(path: Path) -> dict:
    try:
        return parse_toml(_read(path))
    except ValueError:  # a repository's pyproject: deep or huge literals are its problem
        return {}


def _pytest_config(repo: Path) -> str | None:
    """The file holding pytest's configuration, if any."""
    if (repo / "pytest.ini").is_file():
        return "pytest.ini"
    if "pytest" in _toml(repo / "pyproject.toml").get("tool", {}):
        return "pyproject.toml [tool.pytest.ini_options]"
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = _ini(_read(repo / name))
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
    workflows = [(workflow, _read(workflow)) for workflow in _workflows(repo)]
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
    readmes = [(readme, _read(readme)) for readme in _readmes(repo)]
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
    ini = _toml(repo / "pyproject.toml").get("tool", {}).get("pytest", {}).get("ini_options", {})
    value = ini.get("DJANGO_SETTINGS_MODULE") if isinstance(ini, dict) else None
    if isinstance(value, str) and value.strip():
        source = "pyproject.toml [tool.pytest.ini_options]"
        return DjangoSettings(module=value.strip(), source=source, configured=True)
    for name, section in (
        ("pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        parser = _ini(_read(repo / name))
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
        text = _read(repo / rel)
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
        match = _SETTINGS_IN_SCRIPT.search(_read(repo / rel))
        if match:
            candidates.append(DjangoSettings(module=match.group(1), source=rel))
    return next((c for c in candidates if _settings_module_exists(repo, c.module)), None)


# ----------------------------------------------------------------------------- test tools


def _requirement_lines(repo: Path) -> list[str]:
    """Test requirements as written: test extras, test requirement files, tox deps."""
    lines: list[str] = []
    pyproject = _toml(repo / "pyproject.toml")
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
    setup_cfg = _ini(_read(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        for name, value in setup_cfg.items("options.extras_require"):
            if _TEST_EXTRAS.match(name):
                lines += value.splitlines()
    setup_py = _read(repo / "setup.py")
    for match in re.finditer(r"['\"](pytest[A-Za-z0-9._-]*[^'\"]*)['\"]", setup_py):
        lines.append(match.group(1))
    for path in _requirement_files(repo):
        lines += _read(path).splitlines()
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
    pyproject = _toml(repo / "pyproject.toml")
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
        parser = _ini(_read(repo / name))
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


# ----------------------------------------------------------------------------- the recipe

_RECIPE_EXTRAS = re.compile(r"^(tests?|testing)$", re.IGNORECASE)


def _extras(repo: Path) -> list[str]:
    """Names of the repository's extras (optional dependency groups), as declared."""
    names: list[str] = []
    pyproject = _toml(repo / "pyproject.toml")
    optional = pyproject.get("project", {}).get("optional-dependencies", {})
    if isinstance(optional, dict):
        names += [str(name) for name in optional]
    poetry_extras = pyproject.get("tool", {}).get("poetry", {}).get("extras", {})
    if isinstance(poetry_extras, dict):
        names += [str(name) for name in poetry_extras]
    setup_cfg = _ini(_read(repo / "setup.cfg"))
    if setup_cfg is not None and setup_cfg.has_section("options.extras_require"):
        names += [name for name, _ in setup_cfg.items("options.extras_require")]
    setup_py = _read(repo / "setup.py")
    block = re.search(r"extras_require\s*=\s*\{(.*?)\}", setup_py, re.S)
    if block:
        names += re.findall(r"['\"]([A-Za-z0-9_.-]+)['\"]\s*:", block.group(1))
    return list(dict.fromkeys(names))


# A requirement pip takes from an index, with nothing a shell line could misread.
_INDEX_SPEC = r"[A-Za-z0-9][A-Za-z0-9._\[\],<>=!~ -]*"


def _pip_words(specs: list[str]) -> str:
    return " ".join(shlex.quote(spec.replace(" ", "")) for spec in specs)


def _group_requirements(repo: Path) -> list[str]:
    """Test requirements that pip cannot reach through an extra: dependency and Poetry groups."""
    specs: list[str] = []
    pyproject = _toml(repo / "pyproject.toml")
    groups = pyproject.get("dependency-groups", {})
    poetry = pyproject.get("tool", {}).get("poetry", {})
    tables = [groups, poetry.get("group", {}), {"dev": poetry.get("dev-dependencies")}]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            if not _TEST_EXTRAS.match(str(name)) or str(name).lower() in ("all", "ci"):
                continue
            if isinstance(value, dict) and "dependencies" in value:
                value = value["dependencies"]
            if isinstance(value, list):
                specs += [item for item in value if isinstance(item, str)]
            elif isinstance(value, dict):
                for key, spec in value.items():
                    if key.lower() == "python":
                        continue
                    if isinstance(spec, str) or (isinstance(spec, dict) and "version" in spec):
                        specs.append(poetry_requirement(key, spec))
                    elif isinstance(spec, dict) and isinstance(spec.get("path"), str):
                        # A local test package (Poetry path dependency), inside the repository.
                        path = spec["path"]
                        if not path.startswith("/") and ".." not in Path(path).parts:
                            specs.append("./" + path.removeprefix("./"))
    pattern = rf"^(\./[A-Za-z0-9._/-]*|{_INDEX_SPEC})$"
    return [spec for spec in specs if re.match(pattern, spec)]


_EGG = re.compile(r"#(?:.*&)?egg=([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.-]+\])?)")
_URL_SCHEMES = ("git+", "hg+", "svn+", "bzr+", "http:", "https:")
# A requirements file's copy with its VCS and URL lines as releases, beside it so that its own
# `-r` includes still resolve; removed after the install.
_RELEASES_COPY = ".enconda-requirements.txt"


def release_for_url(word: str) -> str | None:
    """The distribution a VCS or URL requirement names (``git+...#egg=NAME``, ``NAME @ URL``),
    whose release stands in for it: the sandbox reaches package indexes only. None when it is
    no URL requirement; "" when it names none."""
    direct = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,.-]+\])?)\s*@\s*\S", word)
    if direct and "://" in word:
        return direct.group(1)
    if not word.strip().startswith(_URL_SCHEMES):
        return None
    egg = _EGG.search(word)
    return egg.group(1) if egg else ""


def _with_releases(text: str, keep: bool = True) -> list[str] | None:
    """``text`` (a requirements file) with each URL requirement as its release (``keep``) or
    left out, as are those naming none; None when it has no URL requirement."""
    lines: list[str] = []
    changed = False
    for line in text.splitlines():
        words = line.split()
        target = words[-1] if words and words[0] in ("-e", "--editable") else line.strip()
        release = release_for_url(target.split(" #", 1)[0])
        if release is None:
            lines.append(line)
            continue
        changed = True
        if release and keep:
            lines.append(release)
    return lines if changed else None


# Where a project's CI installs its requirements file: naomi's Travis job runs
# `pip install -r python_requirements.txt` and has no requirements.txt.
_CI_FILES = (".travis.yml", ".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml")
_PIP_INSTALL_R = re.compile(r"\bpip3?\s+install\b[^\n]*?\s-r\s*([A-Za-z0-9_./-]+\.txt)\b")


def root_requirements(repo: Path) -> str | None:
    """The project's own requirements file: ``requirements.txt``, else the one its CI installs
    with ``pip install -r`` (a test requirements file is installed as one elsewhere)."""
    if (repo / "requirements.txt").is_file():
        return "requirements.txt"
    tests = _requirement_files(repo)
    for ci in [*_workflows(repo), *(repo / name for name in _CI_FILES)]:
        for match in _PIP_INSTALL_R.finditer(_read(ci)):
            rel = match.group(1).removeprefix("./")
            if rel.startswith("/") or ".." in PurePosixPath(rel).parts:
                continue
            path = repo / rel
            if path.is_file() and not path.is_symlink() and path not in tests:
                return rel
    return None


_ONE_BY_ONE = "/tmp/enconda-requirements-one-by-one.txt"


def flat_requirements(repo: Path, name: str, depth: int = 0) -> list[str]:
    """The requirements of ``name`` one per line, its ``-r`` includes (inside the repository)
    followed and ``-e`` dropped from editable lines (lnldb's requirements.txt is
    ``-r requirements_base.txt`` and a few pins); options and comments left out."""
    specs: list[str] = []
    folder = PurePosixPath(name).parent
    for raw in _read(repo / name).splitlines():
        line = re.sub(r"(^|\s)#(?!egg=).*", "", raw).strip()
        words = line.split()
        if not words:
            continue
        if words[0] in ("-r", "--requirement") and len(words) == 2:
            included = (folder / words[1]).as_posix()
            inside = not words[1].startswith("/") and ".." not in PurePosixPath(included).parts
            if inside and depth < 5 and (repo / included).is_file():
                specs += flat_requirements(repo, included, depth + 1)
        elif words[0] in ("-e", "--editable") and len(words) == 2:
            specs.append(words[1])
        elif not line.startswith("-"):
            specs.append(line)
    # A line that is the listing's heredoc terminator would end it and run what follows.
    return [spec for spec in dict.fromkeys(specs) if spec != "ENCONDA_REQUIREMENTS"][:2000]


def _requirements_install(repo: Path, lock: str, name: str = "requirements.txt") -> list[str]:
    """The root requirements file's install; where it names VCS or URL requirements, tried
    again with their releases, then without them (zulip's `git+https://github.com/zulip/
    zulint@...#egg=zulint`: the sandbox cannot clone it, zulint has no release, and the whole
    file failed). Last, its requirements one by one: one that cannot build here (naomi's
    pyaudio, without PortAudio's headers) does not keep the others out."""
    quoted = shlex.quote(name)
    install = f"python -m pip install -r {quoted}"
    specs = flat_requirements(repo, name)
    listing = [f"cat > {_ONE_BY_ONE} <<'ENCONDA_REQUIREMENTS'", *specs, "ENCONDA_REQUIREMENTS"]
    one_by_one = (
        f"{{ echo 'recipe: {name} did not install together: one by one'; "
        # Its stdin is the list being read: a build that reads stdin must not eat the rest.
        'while read -r spec; do python -m pip install "$spec" < /dev/null || '
        f'echo "recipe: $spec did not install"; done < {_ONE_BY_ONE}; }}'
    )
    text = _read(repo / name)
    releases, without = _with_releases(text), _with_releases(text, keep=False)
    if releases is None or without is None:
        # The lock's versions first, then without them (``_unless_locked``), then one by one.
        return [*listing, f"{_unless_locked(install, lock)} || {one_by_one}"]
    copies = [(releases, "as releases")]
    if without != releases:
        copies.append((without, "left out"))
    lines: list[str] = []
    retry = install
    # Beside the file: readux's requirements/local.txt includes `-r ./base.txt`, which a copy at
    # the root resolved to a file that is not there.
    folder = PurePosixPath(name).parent
    made = [shlex.quote((folder / f"{_RELEASES_COPY}.{i}").as_posix()) for i in range(len(copies))]
    for copy, (content, how) in zip(made, copies, strict=True):
        lines += [f"cat > {copy} <<'ENCONDA_REQUIREMENTS'", *content, "ENCONDA_REQUIREMENTS"]
        retry += (
            f" || {{ echo 'recipe: {name} did not install: its VCS and URL "
            f"requirements {how}'; python -m pip install -r {copy}; }}"
        )
    # An included file's own URL requirement (readux's base.txt clones python-edtf) fails every
    # copy too: then one by one, as a file without URL requirements would be.
    return [
        *listing,
        *lines,
        f"{_unless_locked(f'{{ {retry}; }}', lock)} || {one_by_one}",
        "rm -f " + " ".join(made),
    ]


def recipe_script(repo: Path, system_packages: list[str] | tuple[str, ...] = ()) -> str:
    """Install the repository from source with its test extras and test requirements.

    The fallback reference setup: what a careful maintainer runs when the README says nothing
    usable. Optional steps (system packages, test requirement files, groups) may fail without
    stopping it. ``system_packages`` are Debian packages (those its CI installs, say).
    """
    repo = Path(repo)
    safe = [name for name in system_packages if re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", name)]
    config = "\n".join(_read(repo / name) for name in CONFIG_FILES)
    versioned, unversioned = version_setup(
        config, _toml(repo / "pyproject.toml"), dist_name=declared_name(repo)
    )
    lines = [
        "#!/bin/bash",
        "# reference recipe: the repository from source, with its test extras",
        *versioned,
    ]
    if safe:
        words = " ".join(safe)
        lines.append(
            "(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
            f"--no-install-recommends {words}) || echo 'recipe: system packages did not install'"
        )
    own = project_name(repo)
    lock, pins = lock_constraints(repo, frozenset({own} - {""}))
    if pins:
        lines += [
            f"# {lock} pins what the project was tested with: every pip install below is held",
            "# to those versions (cases.lockfile); the requirements' and the checkout's installs",
            "# are tried again without them if they fail under them.",
            f"cat > {_CONSTRAINTS} <<'ENCONDA_LOCK'",
            *pins,
            "ENCONDA_LOCK",
            f"export PIP_CONSTRAINT={_CONSTRAINTS}",
        ]
    requirements = root_requirements(repo)
    if requirements is not None:
        lines += _requirements_install(repo, lock, requirements)
    extras = _extras(repo)
    wanted = [name for name in extras if _RECIPE_EXTRAS.match(name)]
    if not wanted:
        wanted = [name for name in extras if name.lower() in ("dev", "develop")]
    target = "." + (f"[{','.join(wanted)}]" if wanted else "")
    if _installable(repo):
        quoted = shlex.quote(target)
        install = f"python -m pip install -e {quoted} || python -m pip install {quoted}"
        declared, from_git = _poetry_dependencies(repo), _poetry_git_dependencies(repo)
        if declared or from_git:
            # An old Poetry build backend can write metadata today's pip refuses (django-machina:
            # `^3.2 || >=4.0` became "(>=3.2,<4.0 || >=4.0)"), or its dependencies contradict
            # its lock (OpenPulse): the declared dependencies, each git one alone, then the
            # checkout without them, so that its distribution is there for pkg_resources.
            steps = (
                [
                    f"python -m pip install {_pip_words(declared)} "
                    "|| echo 'recipe: its Poetry dependencies did not install together'"
                ]
                if declared
                else []
            )
            for spec in from_git:
                word = shlex.quote(spec)
                steps.append(
                    f"{{ python -m pip install {word} || python -m pip install --no-deps {word} "
                    f"|| echo 'recipe: {spec.split()[0]} did not install'; }}"
                )
            steps.append(
                "{ python -m pip install --no-deps -e . || python -m pip install --no-deps . "
                "|| echo 'recipe: the checkout did not install without its dependencies either'; }"
            )
            install = (
                f"{{ {install}; }} || {{ echo 'recipe: the checkout did not install: its Poetry "
                f"dependencies instead'; {'; '.join(steps)}; }}"
            )
        lines.append(_unless_locked(install, lock))
    elif (application := _poetry_application_requirements(repo)) is not None:
        lines.append("# Poetry without [build-system]: its dependencies, then the checkout if pip")
        lines.append("# can build it at all (a one-package library; not an application's folders).")
        if application:
            lines.append(_unless_locked(f"python -m pip install {_pip_words(application)}", lock))
        lines.append(
            "python -m pip install -e . || echo 'recipe: the checkout is no package pip can build'"
        )
    elif lock == "Pipfile.lock" and requirements is None:
        # A Pipenv application (nablaweb: Pipfile, Pipfile.lock, manage.py, no package): the
        # lock's packages, as pipenv would install them; one by one where they fail together
        # (a Windows-only pin, an old release that no longer builds).
        lines += [
            "# Pipfile.lock: a Pipenv application; its locked packages (default and develop)",
            f"python -m pip install -r {_CONSTRAINTS} || {{ echo 'recipe: the locked packages "
            "did not install together: one by one'; while read -r spec; do python -m pip "
            f'install "$spec" < /dev/null || echo "recipe: $spec did not install"; '
            f"done < {_CONSTRAINTS}; }}",
        ]
    for path in _requirement_files(repo):
        rel = shlex.quote(path.relative_to(repo).as_posix())
        lines.append(f"python -m pip install -r {rel} || echo 'recipe: {rel} did not install'")
    groups = _group_requirements(repo)
    if groups:
        words = _pip_words(groups)
        lines.append(f"python -m pip install {words} || echo 'recipe: test groups did not install'")
    if any((repo / base / "distutils" / "__init__.py").is_file() for base in (".", "src")):
        # setuptools' distutils-precedence.pth hands every `import distutils` its own copy
        # (pypa/distutils' reference imported setuptools/_distutils, not the checkout), where the
        # project's CI tests in a venv without setuptools: after the installs, which build with
        # setuptools as usual, its documented switch turns that off for the tests.
        lines.append("export SETUPTOOLS_USE_DISTUTILS=stdlib")
    return "\n".join([*lines, *unversioned]) + "\n"


_CONSTRAINTS = "/tmp/enconda-lock-constraints.txt"

# The verify strategy that runs the recipe with the dependencies of the revision's day.
AS_OF = "recipe:as-of"
# The first pip with --uploaded-prior-to (PIP_UPLOADED_PRIOR_TO) is 26 (checked here: 26.3 on
# Python 3.11, 26.0.1 on 3.9). Asking for 26.3 left Python 3.9 bases, which pip 26.1 dropped,
# without the as-of attempt (columnflow: "No matching distribution found for pip>=26.3").
_DATED_PIP = "pip>=26"


def as_of_script(recipe: str, moment: str, *, era_pip: bool = False) -> str:
    """``recipe`` with every pip install held to packages uploaded before ``moment`` (ISO 8601):
    what ``pip install`` resolved on the day of the revision, for a repository whose code
    imports what later releases removed (nevergrad and bayes_opt 2's ``UtilityFunction``).
    pip is upgraded first: Debian's 23.0 has no such option and would ignore the variable.

    With ``era_pip`` (a project depending on pip itself, ``test_deps.depends_on_pip``), the
    script ends by putting back the pip of that day: pip-tools' tests call pip's internals, and
    518 of its 842 failed against pip 26 (``'InstallRequirement' object has no attribute
    'use_pep517'``). That pip is downloaded under the cutoff, which an installed newer pip would
    otherwise satisfy."""
    body = recipe.removeprefix("#!/bin/bash\n")
    lines = [
        "#!/bin/bash",
        f"# the recipe as of {moment}: packages uploaded before the revision's commit",
        f"python -m pip install -q --upgrade '{_DATED_PIP}' || {{ echo 'recipe: "
        f"{_DATED_PIP} (for PIP_UPLOADED_PRIOR_TO) did not install'; exit 1; }}",
        f"export PIP_UPLOADED_PRIOR_TO={shlex.quote(moment)}",
        body,
    ]
    if era_pip:
        lines.append(
            "# the project depends on pip itself: the pip of that day, as its tests ran with\n"
            "rm -rf /tmp/enconda-era-pip && python -m pip download -q --no-deps --only-binary "
            ":all: -d /tmp/enconda-era-pip pip && python -m pip install -q --force-reinstall "
            "--no-deps /tmp/enconda-era-pip/pip-*.whl "
            "|| echo 'recipe: the pip of that day did not install'"
        )
    return "\n".join(lines)


def _unless_locked(install: str, lock: str) -> str:
    """``install``, run again without the lock's constraints if it fails under them (a pin with
    no wheel for this interpreter, or one a requirement file contradicts)."""
    if not lock:
        return install
    return (
        f"{install} || {{ echo 'recipe: {lock} versions did not install, without them'; "
        f"unset PIP_CONSTRAINT; {install}; }}"
    )


def declared_name(repo: Path) -> str:
    """The project's distribution name as declared (``[project]``, ``[tool.poetry]``,
    ``setup.cfg [metadata]``, setup.py's ``name=``); "" when none is."""
    pyproject = _toml(repo / "pyproject.toml")
    project = pyproject.get("project")
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    name = (project.get("name") if isinstance(project, dict) else None) or (
        poetry.get("name") if isinstance(poetry, dict) else None
    )
    if not name:
        setup_cfg = _ini(_read(repo / "setup.cfg"))
        if setup_cfg is not None:
            name = setup_cfg.get("metadata", "name", fallback="")
    if not name:
        name = setup_keywords(_read(repo / "setup.py")).get("name")
    return name.strip() if isinstance(name, str) else ""


def project_name(repo: Path) -> str:
    """The project's own distribution name (``declared_name``), normalised as PEP 503 does; ""
    when none is declared."""
    name = declared_name(repo)
    return canonicalize_name(name) if name else ""


def _installable(repo: Path) -> bool:
    """Whether pip can install the checkout: a ``pyproject.toml`` holding only tools' settings
    (black, isort, pytest) names no package, and pip's flat-layout discovery then refuses an
    application's several top-level folders (bitcart: api, conf, modules, ...), failing setup."""
    if (repo / "setup.py").is_file():
        return True
    if (repo / "setup.cfg").is_file() and "[metadata]" in _read(repo / "setup.cfg"):
        return True
    pyproject = _toml(repo / "pyproject.toml")
    tool = pyproject.get("tool", {})
    # A Poetry table alone is no package pip can build: without `[build-system]` pip falls back to
    # setuptools, which refuses an application's top-level folders (peering-manager's 14).
    return bool(
        pyproject.get("project")
        or pyproject.get("build-system")
        or (isinstance(tool, dict) and tool.get("flit"))
    )


def _poetry_application_requirements(repo: Path) -> list[str] | None:
    """The ``[tool.poetry.dependencies]`` of a Poetry project pip cannot build (no
    ``[build-system]``): what ``poetry install --no-root`` would install, as pip requirements;
    ``None`` when the repository is no such project."""
    pyproject = _toml(repo / "pyproject.toml")
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not poetry or not isinstance(poetry, dict):
        return None
    if pyproject.get("build-system") or pyproject.get("project"):
        return None
    return _poetry_dependencies(repo)


def _poetry_dependency_table(repo: Path) -> dict[str, object]:
    """``[tool.poetry.dependencies]`` as written; empty when there is no such table."""
    tool = _toml(repo / "pyproject.toml").get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    dependencies = poetry.get("dependencies") if isinstance(poetry, dict) else None
    return dependencies if isinstance(dependencies, dict) else {}


def _poetry_dependencies(repo: Path) -> list[str]:
    """``[tool.poetry.dependencies]`` as pip requirements from an index (path, git and URL
    sources left out); empty when there is no such table."""
    dependencies = _poetry_dependency_table(repo)
    specs = [
        poetry_requirement(name, spec)
        for name, spec in dependencies.items()
        if str(name).lower() != "python"
        and isinstance(spec, (str, dict))
        and not (isinstance(spec, dict) and ("path" in spec or "git" in spec or "url" in spec))
    ]
    return [spec for spec in specs if re.fullmatch(_INDEX_SPEC, spec)]


def _poetry_git_dependencies(repo: Path) -> list[str]:
    """``[tool.poetry.dependencies]``'s git sources as pip direct references (``name @
    git+URL@REF``): they install where git reaches the URL (a mirror's copy, ``git_deps``)."""
    dependencies = _poetry_dependency_table(repo)
    specs: list[str] = []
    for name, spec in dependencies.items():
        url = spec.get("git") if isinstance(spec, dict) else None
        if not (isinstance(url, str) and re.fullmatch(r"https://[\w.-]+/[\w./-]+", url)):
            continue
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", str(name)):
            continue
        ref = next((spec[key] for key in ("rev", "tag", "branch") if key in spec), None)
        suffix = f"@{ref}" if isinstance(ref, str) and re.fullmatch(r"[\w./-]+", ref) else ""
        specs.append(f"{name} @ git+{url}{suffix}")
    return specs


# A function of this module, not a test: pytest would collect it wherever it is imported.
test_tools.__test__ = False  # type: ignore[attr-defined]

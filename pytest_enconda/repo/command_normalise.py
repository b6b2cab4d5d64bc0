"""A test command as written (a CI step, tox, nox, a Makefile, the README) turned into the command
Pass@1 runs: ``python -m pytest ARGS`` with the options that stop early, select by cache, spread
over workers or write their own reports dropped; unittest and Django's runner are kept in their
own forms. ``test_commands`` finds the sources; this picks the test command among a source's
lines (``_from_lines``, benchmark-only runs passed over) and decides what it becomes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

DEFAULT_COMMAND = "python -m pytest"

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


# A benchmark job's command selects benchmarks only (meltano/sdk's codspeed workflow ran 6 of
# its 469 tests, the rest deselected): it is no test command, passed over like a lint job.
_BENCHMARK = re.compile(r"--codspeed\b|--benchmark-only\b|--benchmark-enable\b")


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
